//! The example servers' accept-loop policy (`examples/common`), on a
//! virtual clock: the cap, the back-off on accept errors and thread
//! spawns, and the log that does not repeat itself.

use h1proto_test_support::examples::common;

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{AcceptPolicy, FIRST_BACKOFF, LOG_INTERVAL, MAX_BACKOFF};

fn policy(max: usize) -> (AcceptPolicy, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let policy = AcceptPolicy::with_log(max, move |line| sink.lock().unwrap().push(line.into()));
    (policy, lines)
}

fn emfile() -> io::Error {
    io::Error::from_raw_os_error(24)
}

#[test]
fn resource_errors_back_off_doubling_up_to_a_second_then_reset() {
    let (mut p, _) = policy(10);
    let t = Instant::now();
    let mut pauses = Vec::new();
    for i in 0..12 {
        pauses.push(p.accept_failed(&emfile(), t + Duration::from_millis(i)));
    }
    assert_eq!(pauses[0], FIRST_BACKOFF);
    assert_eq!(pauses[1], FIRST_BACKOFF * 2);
    assert!(pauses.windows(2).all(|w| w[1] >= w[0]));
    assert_eq!(*pauses.last().unwrap(), MAX_BACKOFF);
    // A failed spawn counts the same.
    let pause = p.spawn_failed(&io::Error::from(io::ErrorKind::WouldBlock), t);
    assert_eq!(pause, MAX_BACKOFF);
    p.accepted(t);
    assert_eq!(p.accept_failed(&emfile(), t), FIRST_BACKOFF);
}

#[test]
fn errors_about_one_connection_are_retried_at_once_and_not_logged() {
    let (mut p, lines) = policy(10);
    let t = Instant::now();
    for kind in [
        io::ErrorKind::ConnectionAborted,
        io::ErrorKind::ConnectionReset,
        io::ErrorKind::Interrupted,
    ] {
        assert_eq!(p.accept_failed(&kind.into(), t), Duration::ZERO);
    }
    assert!(lines.lock().unwrap().is_empty());
}

#[test]
fn a_failure_is_logged_once_per_interval_with_what_was_held_back() {
    let (mut p, lines) = policy(10);
    let t = Instant::now();
    // A thousand failures within one interval: one line.
    for i in 0..1000 {
        let _ = p.accept_failed(&emfile(), t + LOG_INTERVAL * i / 1000);
    }
    assert_eq!(
        lines.lock().unwrap().len(),
        1,
        "{:?}",
        lines.lock().unwrap()
    );
    assert!(lines.lock().unwrap()[0].contains("Too many open files"));
    // The next interval's first failure: one line, with the count.
    let _ = p.accept_failed(&emfile(), t + LOG_INTERVAL);
    let log = lines.lock().unwrap().clone();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[1].contains("999 more failures"), "{log:?}");
    // Recovery is logged; failing and recovering in a loop is not logged
    // each time.
    for i in 0..100u32 {
        let now = t + LOG_INTERVAL + Duration::from_millis(i.into());
        p.accepted(now);
        let _ = p.accept_failed(&emfile(), now);
    }
    let log = lines.lock().unwrap().clone();
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(log[2].contains("working again"), "{log:?}");
}

#[test]
fn the_cap_stops_accepting_and_says_so_once_per_interval() {
    let (mut p, lines) = policy(3);
    let t = Instant::now();
    assert!(p.may_accept(0, t));
    assert!(p.may_accept(2, t));
    for i in 0..100 {
        assert!(!p.may_accept(3, t + Duration::from_millis(i)));
    }
    assert!(!p.may_accept(4, t));
    assert!(p.may_accept(2, t));
    assert_eq!(
        *lines.lock().unwrap(),
        ["accept: 3 connections, the cap (--max-connections): new ones wait until one ends"]
    );
    assert!(!p.may_accept(3, t + LOG_INTERVAL));
    assert_eq!(lines.lock().unwrap().len(), 2);
}

#[test]
fn the_default_cap_is_below_the_open_files_limit() {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let soft: usize = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .expect("a numeric soft limit");
    let cap = common::default_max_connections();
    assert!(cap < soft, "cap {cap}, limit {soft}");
    assert!(cap >= soft / 2, "cap {cap}, limit {soft}");
}
