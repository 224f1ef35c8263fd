//! Server responses carry `Date` (RFC 9110 section 6.6.1) from the wall
//! clock the driver hands over: on final responses, error responses
//! included, not on 1xx; a caller's own `Date` is kept; `Config::send_date`
//! turns it off; the text follows the clock second by second.

use h1proto_test_support::session as session_support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::{Buf, BytesMut};
use h1proto::{
    Config, EncoderConfig, Event, Limits, ResponseContext, ResponseDecoder, ResponseEncoder,
    ServerSession, Session,
};
use session_support::{Harness, get, test_config};

/// RFC 9110's example date.
const T: u64 = 784_111_777;
const TEXT: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

fn at(secs: u64, millis: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
}

/// The `Date` values of the responses in `wire`, decoded back.
fn dates(wire: &[u8], methods: &[http::Method]) -> Vec<(u16, Vec<String>)> {
    let mut dec = ResponseDecoder::new(Limits::default());
    for m in methods {
        dec.expect_response_to(m);
    }
    let mut buf = BytesMut::from(wire);
    let mut out = Vec::new();
    while let Some(event) = dec.decode(&mut buf).unwrap() {
        let head = match &event {
            Event::Head { head, .. } => head,
            Event::Interim(head) => head,
            _ => continue,
        };
        let values = head.headers().get_all("date").iter();
        let values = values.map(|v| v.to_str().unwrap().to_owned()).collect();
        out.push((head.status().as_u16(), values));
    }
    out
}

#[test]
fn the_encoder_adds_date_to_final_responses_only() {
    let mut enc = ResponseEncoder::new(EncoderConfig::default());
    // No clock, no Date.
    enc.send_response(http::Response::new("a"), ResponseContext::default())
        .unwrap();
    enc.set_date(Some(at(T, 0)));
    let interim = http::Response::builder().status(100);
    enc.send_head(interim, ResponseContext::default()).unwrap();
    enc.send_response(http::Response::new("b"), ResponseContext::default())
        .unwrap();
    // The caller's own Date is kept, alone.
    let own = http::Response::builder()
        .header("Date", "Thu, 01 Jan 1970 00:00:00 GMT")
        .body("c")
        .unwrap();
    enc.send_response(own, ResponseContext::default()).unwrap();
    let not_found = http::Response::builder().status(404).body("").unwrap();
    enc.send_response(not_found, ResponseContext::default())
        .unwrap();
    enc.set_date(None);
    enc.send_response(http::Response::new("d"), ResponseContext::default())
        .unwrap();
    let out = enc.output();
    let wire = out.copy_to_bytes(out.remaining());
    let get = http::Method::GET;
    assert_eq!(
        dates(
            &wire,
            &[get.clone(), get.clone(), get.clone(), get.clone(), get]
        ),
        [
            (200, vec![]),
            (100, vec![]),
            (200, vec![TEXT.to_owned()]),
            (200, vec!["Thu, 01 Jan 1970 00:00:00 GMT".to_owned()]),
            (404, vec![TEXT.to_owned()]),
            (200, vec![]),
        ]
    );
}

#[test]
fn title_case_and_head_responses_carry_it_too() {
    let mut config = EncoderConfig::default();
    config.title_case_fields = true;
    let mut enc = ResponseEncoder::new(config);
    enc.set_date(Some(at(T, 999)));
    let head = http::Request::head("/").body(()).unwrap();
    enc.send_response(
        http::Response::new("abc"),
        ResponseContext::for_request(&head),
    )
    .unwrap();
    let out = enc.output();
    let wire = out.copy_to_bytes(out.remaining());
    assert_eq!(
        &wire[..],
        format!("HTTP/1.1 200 OK\r\nDate: {TEXT}\r\nContent-Length: 3\r\n\r\n").as_bytes()
    );
}

/// A session serving `get("/")` with the clock at `clock`, answered 200.
fn serve_one(config: Config, clock: Option<SystemTime>) -> String {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(config, t0), t0);
    if let Some(clock) = clock {
        h.s.set_date(clock);
    }
    h.send(get("/"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender()
        .send_response(http::Response::new("ok"))
        .unwrap();
    h.call(ServerSession::poll_write_all).ready();
    h.take_wire()
}

#[test]
fn a_session_sends_date_by_default_and_not_when_switched_off() {
    let wire = serve_one(test_config(), Some(at(T, 0)));
    assert!(wire.contains(&format!("\r\ndate: {TEXT}\r\n")), "{wire}");
    let mut off = test_config();
    off.send_date = false;
    let wire = serve_one(off, Some(at(T, 0)));
    assert!(!wire.contains("date:"), "{wire}");
    // No clock handed over: a server without a clock sends no Date.
    let wire = serve_one(test_config(), None);
    assert!(!wire.contains("date:"), "{wire}");
    assert!(Config::default().send_date);
}

#[test]
fn a_session_follows_the_clock_and_dates_its_error_responses() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    h.s.set_date(at(T, 0));
    h.send(get("/"));
    h.call(ServerSession::next_request).ready().unwrap();
    // The driver's next wake-up, 1.5 s on.
    h.s.set_date(at(T, 1500));
    h.s.sender()
        .send_response(http::Response::new("ok"))
        .unwrap();
    h.call(ServerSession::poll_write_all).ready();
    // Then a request with an invalid Host, at the next second.
    h.s.set_date(at(T + 2, 0));
    h.send(b"GET / HTTP/1.1\r\nHost: ###\r\n\r\n");
    assert!(
        h.call(ServerSession::next_request)
            .err()
            .to_string()
            .contains("Host")
    );
    h.call(ServerSession::close);
    let wire = h.take_wire();
    let get = http::Method::GET;
    assert_eq!(
        dates(wire.as_bytes(), &[get.clone(), get]),
        [
            (200, vec!["Sun, 06 Nov 1994 08:49:38 GMT".to_owned()]),
            (400, vec!["Sun, 06 Nov 1994 08:49:39 GMT".to_owned()]),
        ]
    );
}

/// The adapters read the wall clock once a second at most, yet each
/// response is dated with the second it was queued in: requests 600 ms
/// apart on one connection of the blocking adapter are each dated within
/// the seconds the client saw around it, and the dates move on.
#[cfg(feature = "blocking")]
#[test]
fn an_adapter_dates_each_response_with_its_second() {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    let second_of_day = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_secs() % 86_400;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        h1proto::adapter::blocking::serve(stream, Config::default(), |_| {
            http::Response::new(bytes::Bytes::from_static(b"ok"))
        })
    });
    let mut client = TcpStream::connect(addr).unwrap();
    let mut dates = Vec::new();
    for i in 0..3 {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(600));
        }
        let before = second_of_day(SystemTime::now());
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            .unwrap();
        let mut answer = Vec::new();
        while !answer.ends_with(b"\r\n\r\nok") {
            let mut buf = [0; 512];
            let n = client.read(&mut buf).unwrap();
            assert!(n > 0, "{}", String::from_utf8_lossy(&answer));
            answer.extend_from_slice(&buf[..n]);
        }
        let after = second_of_day(SystemTime::now());
        let answer = String::from_utf8(answer).unwrap();
        let date = answer
            .lines()
            .find_map(|l| l.strip_prefix("date: "))
            .unwrap_or_else(|| panic!("{answer}"))
            .to_owned();
        // `Sun, 06 Nov 1994 08:49:37 GMT`: the time of day at 17..25.
        let hms: Vec<u64> = date[17..25]
            .split(':')
            .map(|n| n.parse().unwrap())
            .collect();
        let second = hms[0] * 3600 + hms[1] * 60 + hms[2];
        let within = if before <= after {
            (before..=after).contains(&second)
        } else {
            second >= before || second <= after
        };
        assert!(within, "{date} outside {before}..={after}");
        dates.push(date);
    }
    drop(client);
    server.join().unwrap().unwrap();
    assert_ne!(dates[0], dates[2], "{dates:?}");
}
