//! Body decoders: Content-Length countdown, chunked, and until close.

use bytes::{Buf, Bytes, BytesMut};
use http::header::{HeaderMap, HeaderName};
use memchr::memchr;

use crate::error::{Error, ErrorKind};
use crate::head::chars::{is_tchar, is_text};
use crate::head::names::NameCache;
use crate::head::parse;
use crate::head::scan::{LineScanner, Overflow};
use crate::leniency::{Rules, Switch};
use crate::limits::Limits;

/// What a body decoder produced.
#[derive(Debug)]
pub(crate) enum BodyEvent {
    Data(Bytes),
    /// Boxed: trailers are rare, and the event stays small for the data
    /// path.
    Trailers(Box<HeaderMap>),
    /// The body is complete.
    Done,
    /// More input is needed.
    NeedMore,
}

/// The body being decoded.
#[derive(Debug)]
pub(crate) enum BodyDecoder {
    /// Bytes left of a Content-Length body.
    Length(u64),
    Chunked(Chunked),
    /// Until the peer closes.
    UntilClose,
}

impl BodyDecoder {
    /// Produces the next body event from `buf`. `eof` says the peer closed:
    /// it completes a close-delimited body and is an error in any other.
    pub(crate) fn decode(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
        eof: bool,
    ) -> Result<BodyEvent, ErrorKind> {
        let event = match self {
            BodyDecoder::Length(0) => BodyEvent::Done,
            BodyDecoder::Length(remaining) => {
                if buf.is_empty() {
                    BodyEvent::NeedMore
                } else {
                    let n = usize::try_from(*remaining)
                        .unwrap_or(usize::MAX)
                        .min(buf.len());
                    *remaining -= n as u64;
                    BodyEvent::Data(buf.split_to(n).freeze())
                }
            }
            BodyDecoder::Chunked(chunked) => chunked.decode(buf, limits, names)?,
            BodyDecoder::UntilClose => {
                if !buf.is_empty() {
                    BodyEvent::Data(buf.split().freeze())
                } else if eof {
                    BodyEvent::Done
                } else {
                    BodyEvent::NeedMore
                }
            }
        };
        if eof && matches!(event, BodyEvent::NeedMore) {
            return Err(ErrorKind::UnexpectedEof);
        }
        Ok(event)
    }

    /// The leniency switch that would have accepted what the last error
    /// refused, if one would.
    pub(crate) fn hint(&self) -> Option<Switch> {
        match self {
            BodyDecoder::Chunked(c) => c.hint,
            _ => None,
        }
    }

    /// Bytes left of a Content-Length body.
    pub(crate) fn remaining_len(&self) -> Option<u64> {
        match self {
            BodyDecoder::Length(n) => Some(*n),
            _ => None,
        }
    }

    /// `true` once every body byte has been handed out (what remains of a
    /// chunked body, if anything, is framing).
    pub(crate) fn data_complete(&self) -> bool {
        match self {
            BodyDecoder::Length(n) => *n == 0,
            BodyDecoder::Chunked(c) => {
                matches!(c.state, ChunkState::Done) && !matches!(c.pending, Some(Err(_)))
            }
            BodyDecoder::UntilClose => false,
        }
    }

    /// `true` when the body is complete and nothing is left to return:
    /// the `End` of the message is next.
    pub(crate) fn finished(&self) -> bool {
        match self {
            BodyDecoder::Chunked(c) => self.data_complete() && !c.has_pending_trailers(),
            _ => self.data_complete(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Reading a chunk-size line; `usize` bytes of it already searched.
    Size(usize),
    /// Bytes left of the current chunk's data.
    Data(u64),
    /// The CRLF after chunk data.
    DataEnd,
    /// The trailer section after the last chunk.
    Trailers,
    /// Body complete.
    Done,
}

/// The chunked transfer coding (RFC 9112 section 7.1).
#[derive(Debug)]
pub(crate) struct Chunked {
    state: ChunkState,
    trailers: LineScanner,
    /// Trailers (or an error) found while looking ahead after data.
    pending: Option<Result<Box<HeaderMap>, ErrorKind>>,
    /// The decoder's leniency switches, consulted only where the strict
    /// reading refuses.
    rules: Rules,
    /// The switch that would have accepted what an error refused: errors
    /// stay bare `ErrorKind`s on the hot path.
    hint: Option<Switch>,
}

impl Chunked {
    pub(crate) fn new(rules: Rules) -> Self {
        Chunked {
            state: ChunkState::Size(0),
            trailers: LineScanner::default(),
            pending: None,
            rules,
            hint: None,
        }
    }

    fn decode(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
    ) -> Result<BodyEvent, ErrorKind> {
        if let Some(pending) = self.pending.take() {
            return pending.map(BodyEvent::Trailers);
        }
        let event = self.run(buf, limits, names, false)?;
        if matches!(event, BodyEvent::Data(_)) && self.state == ChunkState::DataEnd {
            // Look past the chunk just handed out: if the last-chunk and the
            // trailer section are already buffered, the body is known to be
            // complete together with its last data. Trailers or an error
            // found on the way are returned by the next call.
            match self.run(buf, limits, names, true) {
                Ok(BodyEvent::Trailers(map)) => self.pending = Some(Ok(map)),
                Err(kind) => self.pending = Some(Err(kind)),
                Ok(_) => {}
            }
        }
        Ok(event)
    }

    /// `true` when trailers or an error found ahead are still to be returned.
    pub(crate) fn has_pending_trailers(&self) -> bool {
        self.pending.is_some()
    }

    /// Runs the chunked state machine until it produces an event. With
    /// `framing_only`, stops with `NeedMore` instead of producing data.
    fn run(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
        framing_only: bool,
    ) -> Result<BodyEvent, ErrorKind> {
        // Framing bytes passed over but not yet split off `buf`: they leave
        // with the data that follows them, or before returning, so a chunk
        // costs one split of the buffer rather than one per framing piece.
        let mut skip = 0;
        loop {
            match self.state {
                ChunkState::Size(searched) => {
                    let line = &buf[skip..];
                    let window = line.len().min(limits.max_chunk_line_bytes);
                    // An error in a chunk-size line consumes the framing
                    // passed over before it, so that it is found at the
                    // line's start however the input was split.
                    let Some(i) = memchr(b'\n', &line[searched..window]) else {
                        if window == limits.max_chunk_line_bytes && line.len() >= window {
                            buf.advance(skip);
                            return Err(ErrorKind::ChunkLineTooLong);
                        }
                        buf.advance(skip);
                        self.state = ChunkState::Size(window);
                        return Ok(BodyEvent::NeedMore);
                    };
                    let lf = searched + i;
                    let end = if lf > 0 && line[lf - 1] == b'\r' {
                        Ok(lf - 1)
                    } else {
                        self.bare_lf(lf)
                    };
                    let size = match end.and_then(|end| chunk_size_line(&line[..end])) {
                        Ok(size) => size,
                        Err(kind) => {
                            buf.advance(skip);
                            return Err(kind);
                        }
                    };
                    skip += lf + 1;
                    if size == 0 {
                        self.trailers.reset();
                        self.state = ChunkState::Trailers;
                    } else {
                        self.state = ChunkState::Data(size);
                    }
                }
                ChunkState::Data(remaining) => {
                    if buf.len() == skip || framing_only {
                        buf.advance(skip);
                        return Ok(BodyEvent::NeedMore);
                    }
                    let n = usize::try_from(remaining)
                        .unwrap_or(usize::MAX)
                        .min(buf.len() - skip);
                    let left = remaining - n as u64;
                    self.state = if left == 0 {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left)
                    };
                    let mut data = buf.split_to(skip + n).freeze();
                    data.advance(skip);
                    return Ok(BodyEvent::Data(data));
                }
                ChunkState::DataEnd => match &buf[skip..buf.len().min(skip + 2)] {
                    b"\r\n" => {
                        skip += 2;
                        self.state = ChunkState::Size(0);
                    }
                    [] | b"\r" => {
                        buf.advance(skip);
                        return Ok(BodyEvent::NeedMore);
                    }
                    [b'\n', ..] if self.rules.bare_lf => {
                        skip += 1;
                        self.state = ChunkState::Size(0);
                    }
                    other => return Err(self.data_end_refused(other[0])),
                },
                ChunkState::Trailers => {
                    buf.advance(skip);
                    let len = match self.trailers.find_end(
                        buf,
                        limits.max_trailer_bytes,
                        limits.max_fields,
                    ) {
                        Ok(Some(len)) => len,
                        Ok(None) => return Ok(BodyEvent::NeedMore),
                        Err(Overflow::Bytes) => return Err(ErrorKind::TrailersTooLarge),
                        Err(Overflow::Lines) => return Err(ErrorKind::TooManyFields),
                    };
                    let section = buf.split_to(len).freeze();
                    return self.trailer_section(&section, names);
                }
                ChunkState::Done => {
                    buf.advance(skip);
                    return Ok(BodyEvent::Done);
                }
            }
        }
    }
}

impl Chunked {
    /// Parses the trailer section `section` (its final empty line
    /// included). Out of line: it comes once per body, not per chunk.
    #[inline(never)]
    fn trailer_section(
        &mut self,
        section: &Bytes,
        names: &mut NameCache,
    ) -> Result<BodyEvent, ErrorKind> {
        let t = parse::Lenient {
            rules: &self.rules,
            in_head: false,
        };
        if let Err(e) = parse::check_final_crlf(section, section.len(), t) {
            return Err(self.refused(e));
        }
        self.state = ChunkState::Done;
        let ends = self.trailers.ends();
        if ends.is_empty() {
            return Ok(BodyEvent::Done);
        }
        let mut map = HeaderMap::with_capacity(ends.len());
        if let Err(e) = parse::fields(section, ends, 0, false, t, names, &mut map) {
            return Err(self.refused(e));
        }
        if map.is_empty() {
            // Every line skipped (`skip_invalid_fields`).
            return Ok(BodyEvent::Done);
        }
        if map.keys().any(forbidden_in_trailers) {
            return Err(ErrorKind::InvalidTrailer);
        }
        Ok(BodyEvent::Trailers(Box::new(map)))
    }

    /// Keeps the switch an error names; returns its kind.
    #[cold]
    fn refused(&mut self, error: Error) -> ErrorKind {
        self.hint = error.switch();
        error.kind()
    }

    /// Chunk data followed by `first` and what comes after it instead of
    /// CRLF (or, with `bare_lf`, LF).
    #[cold]
    fn data_end_refused(&mut self, first: u8) -> ErrorKind {
        if first == b'\n' {
            self.hint = self.rules.hint(Switch::BareLf);
        }
        ErrorKind::MissingChunkCrlf
    }

    /// A chunk-size line ended by LF alone, at `lf`: where its content
    /// ends with `bare_lf`, else refused.
    #[cold]
    fn bare_lf(&mut self, lf: usize) -> Result<usize, ErrorKind> {
        if self.rules.bare_lf {
            return Ok(lf);
        }
        self.hint = self.rules.hint(Switch::BareLf);
        Err(ErrorKind::BareLineFeed)
    }
}

/// Fields that may not appear in a trailer section: they would change the
/// framing, the routing or the connection after the fact (RFC 9110 section
/// 6.5.1). A trailer section carrying one is refused.
pub fn forbidden_in_trailers(name: &HeaderName) -> bool {
    use http::header::*;
    [
        CONTENT_LENGTH,
        TRANSFER_ENCODING,
        HOST,
        TRAILER,
        CONNECTION,
        TE,
        UPGRADE,
        EXPECT,
        CONTENT_TYPE,
        CONTENT_ENCODING,
        CONTENT_RANGE,
        AUTHORIZATION,
        PROXY_AUTHORIZATION,
        SET_COOKIE,
        COOKIE,
    ]
    .contains(name)
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

fn hex(b: u8) -> Option<u64> {
    match b {
        b'0'..=b'9' => Some(u64::from(b - b'0')),
        b'a'..=b'f' => Some(u64::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(b - b'A' + 10)),
        _ => None,
    }
}

/// Parses `chunk-size [ chunk-ext ]` (without its CRLF):
/// `1*HEXDIG *( BWS ";" BWS ext-name [ BWS "=" BWS ( token / quoted-string ) ] )`.
fn chunk_size_line(line: &[u8]) -> Result<u64, ErrorKind> {
    let mut size: u64 = 0;
    let mut i = 0;
    while let Some(d) = line.get(i).copied().and_then(hex) {
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(d))
            .ok_or(ErrorKind::InvalidChunkSize)?;
        i += 1;
    }
    if i == 0 {
        return Err(ErrorKind::InvalidChunkSize);
    }
    if i < line.len() && !matches!(line[i], b';' | b' ' | b'\t') {
        return Err(ErrorKind::InvalidChunkSize);
    }
    chunk_extensions(&line[i..])?;
    Ok(size)
}

fn skip_bws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && matches!(s[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

fn chunk_extensions(ext: &[u8]) -> Result<(), ErrorKind> {
    let bad = ErrorKind::InvalidChunkExtension;
    let mut i = 0;
    while i < ext.len() {
        i = skip_bws(ext, i);
        if ext.get(i) != Some(&b';') {
            return Err(bad);
        }
        i = skip_bws(ext, i + 1);
        let name_start = i;
        while i < ext.len() && is_tchar(ext[i]) {
            i += 1;
        }
        if i == name_start {
            return Err(bad);
        }
        let after_name = i;
        i = skip_bws(ext, i);
        if ext.get(i) == Some(&b'=') {
            i = skip_bws(ext, i + 1);
            if ext.get(i) == Some(&b'"') {
                i = quoted_string_end(ext, i + 1).ok_or(bad)?;
            } else {
                let value_start = i;
                while i < ext.len() && is_tchar(ext[i]) {
                    i += 1;
                }
                if i == value_start {
                    return Err(bad);
                }
            }
        } else {
            // Whitespace only counts as BWS when something follows it.
            i = after_name;
        }
    }
    Ok(())
}

/// The index after the closing quote of a quoted-string whose content starts
/// at `i`, or `None` if it is not closed on this line or holds a control.
fn quoted_string_end(s: &[u8], mut i: usize) -> Option<usize> {
    while i < s.len() {
        match s[i] {
            b'"' => return Some(i + 1),
            b'\\' => {
                if !s.get(i + 1).is_some_and(|&b| is_text(b)) {
                    return None;
                }
                i += 2;
            }
            b if is_text(b) => i += 1,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size_line(b"0"), Ok(0));
        assert_eq!(chunk_size_line(b"001B"), Ok(27));
        assert_eq!(chunk_size_line(b"ffffffffffffffff"), Ok(u64::MAX));
        for bad in [
            &b""[..],
            b"+3",
            b"-3",
            b"0x3",
            b"3 ",
            b"3\t",
            b" 3",
            b"g",
            b"10000000000000000",
            b"3 4",
        ] {
            assert!(
                chunk_size_line(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn chunk_extensions_follow_the_grammar() {
        for good in [
            &b"5;sig=abc123"[..],
            b"3 ;a = b",
            b"0\t; z",
            b"6;flag;q=\"semi;colon\"",
            b"1;a=\"esc\\\"aped\"",
            b"1;a;b;c=d",
        ] {
            assert!(
                chunk_size_line(good).is_ok(),
                "{:?}",
                String::from_utf8_lossy(good)
            );
        }
        for bad in [
            &b"3;"[..],
            b"3;a=",
            b"3;a=\"open",
            b"3;a b",
            b"3;a= ",
            b"3;a ",
            b"3;=b",
            b"3;a=\"x\x01\"",
            b"3;a=b c",
        ] {
            assert!(
                chunk_size_line(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
