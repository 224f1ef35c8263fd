//! The deadline of each wait of a keep-alive exchange, as the time left
//! from when the wait began (what a driver that waits for a duration, a
//! blocking socket, sets): the answer's write has the write timeout, the
//! read of the next request the buffers' release, then the idle timeout.

use std::time::{Duration, Instant};

use bytes::Buf;
use h1proto::{Config, Io, ServerSession, Session, Step};

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

/// The time left at `now` until the deadline.
fn agrees(session: &ServerSession, now: Instant) -> Option<Duration> {
    session
        .poll_timeout()
        .map(|deadline| deadline.saturating_duration_since(now))
}

/// One keep-alive exchange as a driver runs it, each step at its own
/// time: the wait of every I/O is checked when it is asked for.
fn exchange(
    session: &mut ServerSession,
    mut now: Instant,
    waits: &mut Vec<(Io, Option<Duration>)>,
) {
    let mut fed = false;
    loop {
        match session.next_request(now).unwrap() {
            Step::Ready(Some(_)) => {
                session
                    .sender()
                    .send_response(http::Response::new("hi"))
                    .unwrap();
                now += Duration::from_millis(5);
            }
            Step::Ready(None) => panic!("closed"),
            Step::Io(Io::Write) => {
                waits.push((Io::Write, agrees(session, now)));
                let n = session.output().remaining();
                now += Duration::from_millis(1);
                session.handle_write(n, now);
            }
            Step::Io(Io::Read) if fed => {
                waits.push((Io::Read, agrees(session, now)));
                return;
            }
            Step::Io(Io::Read) => {
                waits.push((Io::Read, agrees(session, now)));
                now += Duration::from_millis(2);
                session.read_buf().extend_from_slice(REQUEST);
                session.handle_read(REQUEST.len(), now);
                fed = true;
            }
            Step::Io(io) => panic!("unexpected {io:?}"),
        }
    }
}

#[test]
fn the_waits_of_a_keep_alive_exchange_agree_with_the_deadline() {
    let t0 = Instant::now();
    let config = Config::default();
    let (write, release) = (config.timeouts.write.unwrap(), config.release_after);
    let mut session = ServerSession::new(config, t0);
    let mut waits = Vec::new();
    exchange(&mut session, t0, &mut waits);
    // The first head's timeout runs from the connection's start; then the
    // answer's write, and the read of the next request, whose first
    // deadline is the buffers' release.
    assert_eq!(waits[1], (Io::Write, Some(write)));
    assert_eq!(waits[2], (Io::Read, Some(release)));
    // Once the buffers were given back, the idle timeout is next.
    let later = t0 + release + Duration::from_millis(100);
    session.handle_timeout(later);
    let idle = agrees(&session, later).expect("the idle deadline");
    assert!(
        idle < Duration::from_secs(60) && idle > Duration::from_secs(58),
        "{idle:?}"
    );
}

#[test]
fn without_a_release_before_the_idle_timeout_the_idle_timeout_is_the_wait() {
    let t0 = Instant::now();
    let mut config = Config::default();
    config.release_after = Duration::from_secs(120);
    config.timeouts.idle = Some(Duration::from_secs(5));
    config.timeouts.write = None;
    let mut session = ServerSession::new(config, t0);
    let mut waits = Vec::new();
    session.read_buf().extend_from_slice(REQUEST);
    session.handle_read(REQUEST.len(), t0);
    let Step::Ready(Some(_)) = session.next_request(t0).unwrap() else {
        panic!("a request")
    };
    session
        .sender()
        .send_response(http::Response::new("hi"))
        .unwrap();
    let now = t0 + Duration::from_millis(3);
    let Step::Io(Io::Write) = session.next_request(now).unwrap() else {
        panic!("the answer's write")
    };
    // No write timeout: no deadline.
    assert_eq!(agrees(&session, now), None);
    let n = session.output().remaining();
    session.handle_write(n, now);
    exchange(&mut session, now, &mut waits);
    assert_eq!(
        waits.last(),
        Some(&(Io::Read, Some(Duration::from_secs(5))))
    );
    // The answer's write waits without a deadline.
    assert!(waits.contains(&(Io::Write, None)), "{waits:?}");
}

#[test]
fn a_wait_that_began_earlier_counts_from_its_start() {
    let t0 = Instant::now();
    let mut session = ServerSession::new(Config::default(), t0);
    let mut waits = Vec::new();
    exchange(&mut session, t0, &mut waits);
    // Asked again later without any I/O: the wait keeps its start.
    let later = t0 + Duration::from_millis(400);
    let Step::Io(Io::Read) = session.next_request(later).unwrap() else {
        panic!("a read")
    };
    let left = agrees(&session, later).expect("a deadline");
    assert!(left < Config::default().release_after, "{left:?}");
}
