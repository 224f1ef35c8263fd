//! Reading a head to its wire view alone, without building `http` types
//! (`Decoder::set_wire_only`): a forwarding proxy that only needs the
//! head's bytes, its field lines and its framing.
//!
//! Without `http`'s constructors nothing checks the bytes for us, so every
//! byte is checked here, as the strict parse accepts them: a head this
//! reads is one the strict parse accepts, with the same framing. Anything
//! else (a refused head, one that needs a leniency switch, an obs-fold, a
//! framing field in conflict) is not read here: the decoder then runs the
//! full parse, which refuses or accepts it exactly as without this mode.
//! So this is only ever a shortcut, never a second reading; the
//! split-invariance proptests hold it to that by decoding every input in
//! both modes.

use std::ops::Range;

use http::{StatusCode, Version};
use memchr::memchr;

use super::names::NameCache;
use super::parse::form_fits;
use crate::framing::{FieldRole as Role, FieldValues, Seen};
use crate::grammar::{is_target_char, is_tchar, is_text, trim_ows};
use crate::limits::Limits;

/// The longest field name `http` takes (`HeaderName::from_bytes`).
const MAX_NAME: usize = (1 << 16) - 1;

/// A head read whole in one pass by [`read`].
#[derive(Debug)]
pub(crate) struct Read {
    /// Its length, the final CRLF included.
    pub(crate) len: usize,
    pub(crate) start: Start,
    pub(crate) seen: Seen,
}

/// What the start line of a head [`read`] says.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Start {
    Request {
        version: Version,
        connect: bool,
    },
    Response {
        version: Version,
        status: StatusCode,
    },
}

/// The head at the start of `buf`, found and checked in one pass (no
/// search for its line ends first: checking each value finds the CR that
/// ends it), when it is all there, within `limits`, and read strictly as
/// [`request`] and [`response`] read; `None` otherwise. Names are looked up
/// in `names`, the decoder's cache, which knows them valid.
pub(crate) fn read(
    buf: &[u8],
    request: bool,
    limits: &Limits,
    names: &mut NameCache,
) -> Option<Read> {
    let buf = &buf[..buf.len().min(limits.max_head_bytes)];
    let (start, mut pos) = if request {
        request_line(buf, limits.max_target_bytes)?
    } else {
        status_line(buf)?
    };
    let mut seen = Seen::default();
    let mut lines = 0;
    loop {
        let rest = &buf[pos..];
        match rest {
            [b'\r', b'\n', ..] => {
                return Some(Read {
                    len: pos + 2,
                    start,
                    seen,
                });
            }
            [] | [b'\r'] => return None,
            _ => {}
        }
        lines += 1;
        if lines > limits.max_fields {
            return None;
        }
        let (role, colon) = names.role_of(rest)?;
        let end = text_end(rest, colon + 1);
        if rest.get(end..end + 2)? != b"\r\n" {
            return None;
        }
        if role != Role::Other {
            seen.note(role, trim_ows(&rest[colon + 1..end]));
        }
        pos += end + 2;
    }
}

/// `method SP request-target SP HTTP-version CRLF` at the start of `buf`:
/// what it says and where the line after it starts.
fn request_line(buf: &[u8], max_target: usize) -> Option<(Start, usize)> {
    let m = match buf {
        // The usual methods without a look at each byte.
        [b'G', b'E', b'T', b' ', ..] => 3,
        [b'P', b'O', b'S', b'T', b' ', ..] => 4,
        _ => buf.iter().position(|&b| !is_tchar(b))?,
    };
    if m == 0 || buf[m] != b' ' {
        return None;
    }
    let t = target_len(&buf[m + 1..]);
    let v = m + 1 + t + 1;
    if t == 0 || t > max_target || buf.get(v - 1) != Some(&b' ') {
        return None;
    }
    let line = buf.get(v..v + 10)?;
    let version = version(&line[..8])?;
    if &line[8..] != b"\r\n" {
        return None;
    }
    let method = &buf[..m];
    if !form_fits(method, &buf[m + 1..v - 1]) {
        return None;
    }
    let connect = method == b"CONNECT";
    Some((Start::Request { version, connect }, v + 10))
}

/// The length of the run of request-target bytes at the start of `buf`:
/// eight at a time, their classes combined without a branch per byte.
#[inline]
fn target_len(buf: &[u8]) -> usize {
    let mut i = 0;
    while let Some(word) = buf.get(i..i + 8) {
        if !word.iter().fold(true, |all, &b| all & is_target_char(b)) {
            break;
        }
        i += 8;
    }
    while i < buf.len() && is_target_char(buf[i]) {
        i += 1;
    }
    i
}

/// `HTTP-version SP status-code SP reason-phrase CRLF` at the start of
/// `buf`.
fn status_line(buf: &[u8]) -> Option<(Start, usize)> {
    let line = buf.get(..13)?;
    if line[8] != b' ' || line[12] != b' ' {
        return None;
    }
    let version = version(&line[..8])?;
    let code = &line[9..12];
    if !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let status = StatusCode::from_bytes(code).ok()?;
    let end = text_end(buf, 13);
    if buf.get(end..end + 2)? != b"\r\n" {
        return None;
    }
    Some((Start::Response { version, status }, end + 2))
}

/// Where the run of HTAB, SP, VCHAR and obs-text that starts at `from`
/// ends: eight bytes at a time, a word with a byte that may not be text
/// telling where the first such byte is, which is then looked at alone
/// (an HTAB, or obs-text the word test flags too, is text, and the run
/// goes on after it).
#[inline]
fn text_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(word) = bytes.get(from..from + 8) {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        let flags = maybe_not_text(u64::from_le_bytes(w));
        if flags != 0 {
            let at = from + (flags.trailing_zeros() / 8) as usize;
            if !is_text(bytes[at]) {
                return at;
            }
            from = at + 1;
        } else {
            from += 8;
        }
    }
    while from < bytes.len() && is_text(bytes[from]) {
        from += 1;
    }
    from
}

/// The high bit of each byte of `w` whose low seven bits are below SP or
/// a DEL: every byte that is not text (below SP or a DEL), and besides
/// them HTAB and the obs-text bytes 0x80 to 0x9F and 0xFF, which are. No
/// carry or borrow crosses a byte, so the flags are exact per byte.
///
/// Per byte, with `v` its low seven bits: `v + 1` is at most 0x80, and
/// it is at most 0x20 or exactly 0x80 (DEL) when the byte is flagged;
/// with the high bit set, taking 0x21 leaves the high bit clear exactly
/// then.
#[inline(always)]
fn maybe_not_text(w: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const LOW7: u64 = u64::from_ne_bytes([0x7f; 8]);
    const SPACE_PLUS_ONE: u64 = u64::from_ne_bytes([0x21; 8]);
    let u = (((w & LOW7) + ONES) | HIGH) - SPACE_PLUS_ONE;
    !u & HIGH
}

/// The request head `head`, whose non-empty lines end at `ends`, if the
/// strict parse accepts it as this reads it; `None` for anything else.
pub(crate) fn request(head: &[u8], ends: &[usize], max_target: usize) -> Option<Read> {
    final_crlf(head)?;
    let line = &head[content(head, ends, 0)?];
    // method SP request-target SP HTTP-version
    let m = line.iter().position(|&b| !is_tchar(b))?;
    if m == 0 || line[m] != b' ' {
        return None;
    }
    let rest = &line[m + 1..];
    let t = rest.iter().position(|&b| !is_target_char(b))?;
    if t == 0 || t > max_target || rest[t] != b' ' {
        return None;
    }
    let version = version(&rest[t + 1..])?;
    let (method, target) = (&line[..m], &rest[..t]);
    if !form_fits(method, target) {
        return None;
    }
    let seen = fields(head, ends)?;
    let connect = method == b"CONNECT";
    Some(Read {
        len: head.len(),
        start: Start::Request { version, connect },
        seen,
    })
}

/// The response head `head`, as [`request`] reads a request head.
pub(crate) fn response(head: &[u8], ends: &[usize]) -> Option<Read> {
    final_crlf(head)?;
    let line = &head[content(head, ends, 0)?];
    // HTTP-version SP status-code SP reason-phrase (the SP required)
    if line.len() < 13 || line[8] != b' ' || line[12] != b' ' {
        return None;
    }
    let version = version(&line[..8])?;
    let code = &line[9..12];
    if !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let status = StatusCode::from_bytes(code).ok()?;
    if !all_text(&line[13..]) {
        return None;
    }
    let seen = fields(head, ends)?;
    Some(Read {
        len: head.len(),
        start: Start::Response { version, status },
        seen,
    })
}

/// `HTTP/1.0` or `HTTP/1.x` (read as HTTP/1.1).
#[inline]
fn version(v: &[u8]) -> Option<Version> {
    match v {
        b"HTTP/1.1" => Some(Version::HTTP_11),
        b"HTTP/1.0" => Some(Version::HTTP_10),
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor] if minor.is_ascii_digit() => {
            Some(Version::HTTP_11)
        }
        _ => None,
    }
}

fn final_crlf(head: &[u8]) -> Option<()> {
    (head.len() >= 2 && head[head.len() - 2] == b'\r').then_some(())
}

/// The content of line `i` (without its CRLF); `None` for a line not
/// ended by CRLF.
#[inline]
fn content(head: &[u8], ends: &[usize], i: usize) -> Option<Range<usize>> {
    let start = if i == 0 { 0 } else { ends[i - 1] + 1 };
    let lf = ends[i];
    (lf > start && head[lf - 1] == b'\r').then_some(start..lf - 1)
}

/// The field lines: each `token ":" value` with a value of HTAB, SP,
/// VCHAR and obs-text only (no obs-fold: a line starting with whitespace
/// is not a token).
fn fields(head: &[u8], ends: &[usize]) -> Option<Seen> {
    let mut seen = Seen::default();
    for i in 1..ends.len() {
        let text = &head[content(head, ends, i)?];
        let colon = text.iter().position(|&b| !is_tchar(b))?;
        if colon == 0 || colon > MAX_NAME || text[colon] != b':' {
            return None;
        }
        let value = &text[colon + 1..];
        if !all_text(value) {
            return None;
        }
        let role = role_of(&text[..colon]);
        if role != Role::Other {
            seen.note(role, trim_ows(value));
        }
    }
    Some(seen)
}

/// What a field name means to the framing rules ([`Role::of`] without a
/// `HeaderName`).
#[inline]
fn role_of(name: &[u8]) -> Role {
    let is = |known: &[u8]| name.eq_ignore_ascii_case(known);
    match name.len() {
        4 if is(b"host") => Role::Host,
        10 if is(b"connection") => Role::Connection,
        14 if is(b"content-length") => Role::ContentLength,
        17 if is(b"transfer-encoding") => Role::TransferEncoding,
        _ => Role::Other,
    }
}

/// Every byte is HTAB, SP, VCHAR or obs-text.
#[inline]
fn all_text(bytes: &[u8]) -> bool {
    text_end(bytes, 0) == bytes.len()
}

/// The field lines of a head read by [`read`], [`request`] or
/// [`response`], for the framing rules: the values of its
/// `Transfer-Encoding` and `Connection` lines (each line is
/// `name ":" value CRLF`; the head ends with an empty line).
pub(crate) struct Lines<'a>(pub(crate) &'a [u8]);

impl Lines<'_> {
    fn values(&self, role: Role) -> impl Iterator<Item = &[u8]> {
        let head = self.0;
        // After the start line.
        let mut at = memchr(b'\n', head).map_or(head.len(), |lf| lf + 1);
        std::iter::from_fn(move || {
            loop {
                let lf = at + memchr(b'\n', head.get(at..)?)?;
                let text = &head[at..lf.saturating_sub(1).max(at)];
                at = lf + 1;
                let Some(colon) = text.iter().position(|&b| b == b':') else {
                    continue;
                };
                if role_of(&text[..colon]) == role {
                    return Some(trim_ows(&text[colon + 1..]));
                }
            }
        })
    }
}

impl FieldValues for Lines<'_> {
    fn transfer_encodings(&self) -> impl Iterator<Item = &[u8]> {
        self.values(Role::TransferEncoding)
    }

    fn connections(&self) -> impl Iterator<Item = &[u8]> {
        self.values(Role::Connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_text_is_the_byte_rule() {
        for b in 0..=255u8 {
            for at in 0..20 {
                let mut bytes = vec![b'a'; 20];
                bytes[at] = b;
                assert_eq!(all_text(&bytes), is_text(b), "byte {b:#x} at {at}");
            }
        }
    }

    #[test]
    fn the_word_test_flags_every_byte_that_is_not_text() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut w = [b'a'; 8];
                w[at] = b;
                let flags = maybe_not_text(u64::from_le_bytes(w));
                // Exact per byte: only the byte changed may be flagged.
                assert_eq!(flags & !(0x80 << (8 * at)), 0, "byte {b:#x} at {at}");
                if !is_text(b) {
                    assert_ne!(flags, 0, "byte {b:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn roles_are_the_map_roles() {
        use http::HeaderName;
        for name in [
            "Host",
            "HOST",
            "hosts",
            "Connection",
            "content-length",
            "Content-Lengths",
            "TRANSFER-ENCODING",
            "x-host",
            "Accept",
        ] {
            let header = HeaderName::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(role_of(name.as_bytes()), Role::of(&header), "{name}");
        }
    }
}
