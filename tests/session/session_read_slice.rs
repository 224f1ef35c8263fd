//! `Session::read_slice`: the initialized room a `std::io::Read` driver
//! reads into. Whatever the read sizes, and however reads alternate
//! between `read_slice` and `read_buf`, the session sees the same bytes in
//! the same order; the room is sized as `read_buf`'s is, grows the same
//! way, and goes with the other buffers when an idle connection gives them
//! back.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::Bytes;
use h1proto::{ClientSession, Io, ServerSession, Session};
use http::{Request, Response};
use proptest::prelude::*;
use session_support::{Harness, Outcome, get, post, secs, test_config};

/// What a read asks for once bytes came to a connection (a read that
/// fills it doubles the next, up to `Config::read_size`).
const FIRST_READ: usize = 1024;

/// What a read asks for once the buffers were given back.
const RELEASED_READ: usize = 256;

/// Pipelined requests of every body framing, with the method, target and
/// body each must come out with.
fn requests(sizes: &[usize]) -> (String, Vec<(String, Vec<u8>)>) {
    let mut wire = String::new();
    let mut want = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let body: String = (0..size).map(|k| (b'a' + (k % 26) as u8) as char).collect();
        let path = format!("/{i}");
        match i % 3 {
            0 => wire.push_str(&get(&path)),
            1 => wire.push_str(&post(&path, &body)),
            _ => {
                wire.push_str(&format!(
                    "POST {path} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                ));
                for piece in body.as_bytes().chunks(7) {
                    wire.push_str(&format!("{:x}\r\n", piece.len()));
                    wire.push_str(std::str::from_utf8(piece).unwrap());
                    wire.push_str("\r\n");
                }
                wire.push_str("0\r\nx-t: 1\r\n\r\n");
            }
        }
        let body = if i % 3 == 0 {
            Vec::new()
        } else {
            body.into_bytes()
        };
        want.push((path, body));
    }
    (wire, want)
}

/// Serves every request on `wire`, read `read_size` bytes at a time with
/// reads chosen by `room_reads`, and returns what the server saw.
fn serve(wire: &str, read_size: usize, room_reads: u64) -> Vec<(String, Vec<u8>)> {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    h.read_size = read_size;
    h.room_reads = room_reads;
    h.send(wire);
    h.send_eof();
    let mut seen = Vec::new();
    while let Some(req) = h.call(ServerSession::next_full_request).ready() {
        seen.push((req.uri().path().to_owned(), req.body().to_vec()));
        h.s.sender()
            .send_response(Response::new(Bytes::from_static(b"ok")))
            .unwrap();
    }
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn reads_through_the_room_deliver_the_same_requests(
        sizes in prop::collection::vec(0usize..3000, 1..6),
        read_size in 1usize..5000,
        room_reads in any::<u64>(),
    ) {
        let (wire, want) = requests(&sizes);
        prop_assert_eq!(&serve(&wire, read_size, room_reads), &want);
        prop_assert_eq!(&serve(&wire, read_size, u64::MAX), &want);
        prop_assert_eq!(&serve(&wire, read_size, 0), &want);
    }
}

#[test]
fn the_room_is_sized_as_read_buf_and_doubles_when_filled() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    // Holding no buffer yet, a read asks for little.
    assert_eq!(h.s.read_slice().len(), RELEASED_READ);
    h.room_reads = u64::MAX;
    h.send(post("/", &"x".repeat(3 * FIRST_READ)));
    h.read_size = FIRST_READ;
    h.call(ServerSession::next_request).ready().unwrap();
    // Bytes came: the next read asks for a base read's worth.
    assert_eq!(h.s.read_slice().len(), FIRST_READ);
    // The body left of the first read, then a read that fills the room:
    // the next one asks for twice as much.
    h.call(ServerSession::read_data).ready().unwrap();
    h.call(ServerSession::read_data).ready().unwrap();
    assert_eq!(h.s.read_slice().len(), 2 * FIRST_READ);
    // `read_buf` offers the same: the two are one policy.
    let buf = h.s.read_buf();
    assert!(buf.capacity() - buf.len() >= 2 * FIRST_READ);
}

#[test]
fn a_read_past_the_room_is_capped_at_the_room() {
    // A driver that reports more than the room held (a bug of its own)
    // cannot make the session take bytes it never got.
    let t0 = Instant::now();
    let mut s = ServerSession::new(test_config(), t0);
    let head = get("/");
    let room = s.read_slice();
    room[..head.len()].copy_from_slice(head.as_bytes());
    s.handle_read(head.len(), t0);
    assert_eq!(&s.read_buf()[..], head.as_bytes());
}

#[test]
fn an_idle_connection_read_through_the_room_gives_it_back() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(test_config(), t0), t0);
    h.room_reads = u64::MAX;
    h.send(get("/"));
    h.call(ServerSession::next_request).ready().unwrap();
    h.s.sender()
        .send_response(Response::new(Bytes::from_static(b"ok")))
        .unwrap();
    assert_eq!(h.call(ServerSession::next_request).blocked(), Io::Read);
    assert_eq!(h.expire(), secs(1));
    // Given back: the next read asks for little, through either door.
    assert_eq!(h.s.read_slice().len(), RELEASED_READ);
    let buf = h.s.read_buf();
    assert!(buf.is_empty() && buf.capacity() < FIRST_READ);
    // And the connection goes on.
    h.send(get("/2"));
    let req = h.call(ServerSession::next_request).ready().unwrap();
    assert_eq!(req.uri(), "/2");
}

#[test]
fn a_client_reads_responses_through_the_room() {
    let t0 = Instant::now();
    let mut h = Harness::new(ClientSession::new(test_config(), t0), t0);
    h.room_reads = 0b0110;
    h.read_size = 5;
    for i in 0..3 {
        h.s.sender()
            .send_request(Request::get(format!("/{i}")).header("host", "a"))
            .unwrap();
    }
    let body = "hello, room";
    for _ in 0..3 {
        h.send(format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
    }
    for _ in 0..3 {
        let res = match h.call(ClientSession::next_full_response) {
            Outcome::Ready(Some(res)) => res,
            other => panic!("expected a response, got {other:?}"),
        };
        assert_eq!(&res.body()[..], body.as_bytes());
    }
    assert!(h.reads > 3);
}
