//! The copies of request and response bytes in `uring_server`'s echo, the
//! way it drives the session (owned buffers, `lend_read_buf` and
//! `lend_output`), counted by where the bytes are: a body piece read
//! into the lent room is handed out without a copy, and queued back as it
//! is, it is the very segment the kernel writes from. Only a piece under
//! the coalescing threshold (4 KiB) is copied, once, into the output's
//! buffer, which every driver shares.

use std::time::Instant;

use bytes::Bytes;
use h1proto::{Config, Io, Segments, ServerSession, Session, Step};
use http::Response;

/// An owned read, as the kernel would do it: as much of `wire` as the
/// room the session lends holds, read into it, given back, reported. The
/// room's address and the bytes read are noted in `rooms`.
fn owned_read(s: &mut ServerSession, wire: &mut Vec<u8>, rooms: &mut Vec<(usize, usize)>) {
    let mut room = s.lend_read_buf();
    let n = room.capacity().min(wire.len());
    rooms.push((room.as_ptr() as usize, n));
    room.extend_from_slice(&wire[..n]);
    wire.drain(..n);
    s.return_read_buf(room);
    s.handle_read(n, Instant::now());
}

/// `true` when `piece` lies inside `len` bytes from `at`.
fn inside(piece: &[u8], at: usize, len: usize) -> bool {
    let (start, end) = (at, at + len);
    let p = piece.as_ptr() as usize;
    p >= start && p + piece.len() <= end
}

/// Echoes a body of `len` bytes, read as the session's rooms allow (1
/// KiB at first, doubling); each piece must go from the read room to the
/// output without a copy if it is at least the coalescing threshold, and
/// with one copy (into the output's buffer) otherwise. The body bytes
/// copied and not copied.
fn echo(len: usize) -> (usize, usize) {
    let t0 = Instant::now();
    let mut config = Config::default();
    config.read_size = 64 * 1024;
    let mut s = ServerSession::new(config, t0);
    let head = format!("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: {len}\r\n\r\n");
    let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    // The first room is small (1 KiB): the head and the start of the
    // body, then the rest in the rooms that follow.
    let mut rooms = Vec::new();
    let mut wire = [head.as_bytes(), &body].concat();
    let req = loop {
        match s.next_request(t0).unwrap() {
            Step::Ready(Some(req)) => break req,
            Step::Io(Io::Read) => owned_read(&mut s, &mut wire, &mut rooms),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(req.uri().path(), "/echo");
    let res = Response::builder().header(http::header::CONTENT_LENGTH, len);
    s.sender().send_head(res.body(()).unwrap()).unwrap();
    let (mut copied, mut moved) = (0, 0);
    let mut echoed = Vec::new();
    loop {
        match s.read_data(t0).unwrap() {
            Step::Ready(Some(piece)) => {
                let read_in_place = rooms.iter().any(|&(at, n)| inside(&piece, at, n));
                assert!(
                    read_in_place,
                    "a body piece was copied out of the read room"
                );
                let piece_at = piece.as_ptr();
                let piece_len = piece.len();
                s.sender().send_data(piece).unwrap();
                let out = s.lend_output();
                let segment = out
                    .iter()
                    .any(|b| b.as_ptr() == piece_at && b.len() == piece_len);
                let large = piece_len >= Segments::DEFAULT_COALESCE_THRESHOLD;
                assert_eq!(segment, large, "a piece of {piece_len} bytes");
                if segment {
                    moved += piece_len;
                } else {
                    copied += piece_len;
                }
                echoed.extend(out.iter().flat_map(|b| b.iter().copied()));
                let n: usize = out.iter().map(Bytes::len).sum();
                s.return_output(out);
                s.handle_write(n, t0);
            }
            Step::Ready(None) => break,
            Step::Io(Io::Read) => owned_read(&mut s, &mut wire, &mut rooms),
            other => panic!("{other:?}"),
        }
    }
    s.sender().finish(None).unwrap();
    let tail = s.lend_output();
    echoed.extend(tail.iter().flat_map(|b| b.iter().copied()));
    let text = String::from_utf8_lossy(&echoed);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text:.60}");
    assert!(echoed.ends_with(&body), "the echo differs");
    assert_eq!(copied + moved, len);
    eprintln!("{len} body bytes: {copied} copied once, {moved} not copied");
    (copied, moved)
}

#[test]
fn echo_pieces_of_4_kib_or_more_are_not_copied() {
    // Reads of 1, 2, 4, 8, 16, 32 KiB, then 64 KiB: after the first
    // few, every piece is large.
    let (copied, moved) = echo(1 << 20);
    assert!(copied < 4 * 1024, "{copied} bytes copied");
    assert!(moved > (1 << 20) - 4 * 1024);
}

#[test]
fn small_echo_pieces_are_copied_once_into_the_output_buffer() {
    assert_eq!(echo(100), (100, 0));
}
