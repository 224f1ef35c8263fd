//! The chunked bodies the `chunked` bench and `dev/src/bin/chunked_probe.rs`
//! decode: the same bytes for both.

use bytes::{Buf, Bytes, BytesMut};

/// Bytes of body data in one wire buffer.
pub const BODY: usize = 64 * 1024;

/// The request head that opens the endless chunked body.
pub const HEAD: &[u8] =
    b"POST /upload HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n";

/// `BODY` bytes of data framed as chunks of `chunk` bytes (no last-chunk).
pub fn chunks(chunk: usize) -> Vec<u8> {
    let text = b"The quick brown fox jumps over the lazy dog; ";
    let mut out = Vec::new();
    let mut written = 0;
    while written < BODY {
        let n = chunk.min(BODY - written);
        out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        out.extend((0..n).map(|i| text[(written + i) % text.len()]));
        out.extend_from_slice(b"\r\n");
        written += n;
    }
    out
}

/// The same splits driven by `httparse::parse_chunk_size`: what a decoder
/// built on httparse does at least (no extension or CRLF checks of its
/// own). Returns the data bytes seen and the buffer.
pub fn httparse_chunks(mut buf: BytesMut) -> (usize, BytesMut) {
    let mut n = 0;
    while !buf.is_empty() {
        let httparse::Status::Complete((used, size)) = httparse::parse_chunk_size(&buf).unwrap()
        else {
            panic!("partial chunk-size line")
        };
        buf.advance(used);
        let data: Bytes = buf.split_to(size as usize).freeze();
        n += data.len();
        assert_eq!(&buf[..2], b"\r\n");
        buf.advance(2);
    }
    (n, buf)
}
