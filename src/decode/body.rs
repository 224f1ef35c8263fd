//! Body decoders: Content-Length countdown, chunked, and until close.

use std::ops::Range;

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;
use memchr::memchr;

use crate::chunk_ext::ChunkExtensions;
use crate::error::{Error, ErrorKind};
use crate::framing::BodyKind;
use crate::grammar::HEX;
use crate::head::names::NameCache;
use crate::head::reader::Reader;
use crate::keep_alive::KeepAlive;
use crate::leniency::{Rules, Tolerance};
use crate::limits::Limits;
use crate::wire::WireTrailers;

mod trailers;

/// A trailer section decoded: its fields, and its wire view when asked
/// for.
#[derive(Debug)]
pub struct Trailers {
    /// The fields.
    pub(crate) fields: HeaderMap,
    /// The wire view.
    pub(crate) wire: Option<WireTrailers>,
}

/// What one decoding pass found: an event without its head built (the
/// same for both roles). A head is checked, its framing decided and its
/// body started, but its `http` types are built only where it is handed
/// out ([`Decoder::build`](super::Decoder::build)), so that no layer moves a
/// built head on its way up; [`Progress::event`] makes the public
/// [`Event`](super::Event).
#[derive(Debug)]
pub enum Progress {
    /// A head was found: `len` bytes at the start of the buffer (inside
    /// the decoder only, which reads it into `Head`).
    Found(usize),
    /// A head, read and checked: its bytes, and how its body is framed
    /// (`None` for an interim response).
    Head(Bytes, Option<BodyKind>),
    /// As [`Event::Data`](super::Event::Data).
    Data(Bytes),
    /// As [`Event::ChunkExtensions`](super::Event::ChunkExtensions).
    ChunkExtensions(ChunkExtensions),
    /// As [`Event::Trailers`](super::Event::Trailers) (boxed, as the body decoder made it, so
    /// that every step is small to move).
    Trailers(Box<Trailers>),
    /// As [`Event::End`](super::Event::End).
    End(KeepAlive),
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
    /// Produces the next step of the body from `buf` (data, extensions,
    /// trailers, or a need for more input), `None` once the body is
    /// complete. `eof` says the peer closed: it completes a
    /// close-delimited body and is an error in any other.
    pub(crate) fn decode(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
        eof: bool,
    ) -> Result<Option<Progress>, ErrorKind> {
        let event = match self {
            BodyDecoder::Chunked(chunked) => chunked.decode(buf, limits, names)?,
            BodyDecoder::Length(0) => None,
            BodyDecoder::UntilClose if eof && buf.is_empty() => None,
            _ if buf.is_empty() => Some(Progress::NeedMore),
            BodyDecoder::Length(remaining) => {
                let n = usize::try_from(*remaining)
                    .unwrap_or(usize::MAX)
                    .min(buf.len());
                *remaining -= n as u64;
                Some(Progress::Data(buf.split_to(n).freeze()))
            }
            BodyDecoder::UntilClose => Some(Progress::Data(buf.split().freeze())),
        };
        if eof && matches!(event, Some(Progress::NeedMore)) {
            return Err(ErrorKind::UnexpectedEof);
        }
        Ok(event)
    }

    /// `true` once every body byte has been handed out (what remains of a
    /// chunked body, if anything, is framing).
    pub(crate) fn data_complete(&self) -> bool {
        match self {
            BodyDecoder::Length(n) => *n == 0,
            // A trailer section or an error found ahead does not end the
            // state machine.
            BodyDecoder::Chunked(c) => c.state == ChunkState::Done,
            BodyDecoder::UntilClose => false,
        }
    }

    /// `true` when the body is complete and nothing is left to return:
    /// the `End` of the message is next.
    pub(crate) fn finished(&self) -> bool {
        let pending = |c: &Chunked| c.pending.is_some() || c.pending_extensions.is_some();
        self.data_complete() && !matches!(self, BodyDecoder::Chunked(c) if pending(c))
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
    /// The reader of the trailer section, made by the first one that is
    /// not empty.
    trailers: Option<Box<Reader>>,
    /// Trailers (or an error) found while looking ahead after data.
    pending: Option<Result<Box<Trailers>, ErrorKind>>,
    /// Whether chunk extensions are handed out.
    report_extensions: bool,
    /// Whether the trailer section comes with its [`WireTrailers`].
    wire: bool,
    /// Extensions found after data, returned before `pending`.
    pending_extensions: Option<ChunkExtensions>,
    /// The decoder's leniency tolerances, consulted only where the strict
    /// reading refuses.
    rules: Rules,
    /// The tolerance that would have accepted what an error refused: errors
    /// stay plain `ErrorKind`s on the hot path.
    pub(super) hint: Option<Tolerance>,
    /// What the framing has cost so far, against the limits.
    overhead: Overhead,
}

impl Chunked {
    /// A chunked body's decoder; with `report_extensions`, the chunk
    /// extensions it meets are handed out too, and with `wire`, the wire
    /// view of its trailer section.
    pub(crate) fn new(rules: Rules, report_extensions: bool, wire: bool) -> Self {
        Chunked {
            state: ChunkState::Size(0),
            trailers: None,
            pending: None,
            report_extensions,
            wire,
            pending_extensions: None,
            rules,
            hint: None,
            overhead: Overhead::default(),
        }
    }

    /// The next event of the body: its data (as much as the buffer holds,
    /// see [`Scan`]), extensions if asked for, its trailers, its end, or a
    /// need for more input.
    fn decode(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
    ) -> Result<Option<Progress>, ErrorKind> {
        if let Some(extensions) = self.pending_extensions.take() {
            return Ok(Some(Progress::ChunkExtensions(extensions)));
        }
        if let Some(pending) = self.pending.take() {
            return pending.map(|trailers| Some(Progress::Trailers(trailers)));
        }
        let (scan, stop) = self.scan(buf, limits);
        if let Ok(None) = stop
            && self.state != ChunkState::Trailers
        {
            // The usual way out: data (or nothing) and nothing found after.
            if scan.end == scan.start {
                buf.advance(scan.pos);
                return Ok(self.idle());
            }
            // One split for the data and all the framing scanned: the
            // framing around the data stays in the same allocation, out of
            // view.
            let mut data = buf.split_to(scan.pos).freeze();
            data.truncate(scan.end);
            data.advance(scan.start);
            return Ok(Some(Progress::Data(data)));
        }
        self.decode_after(buf, limits, names, scan, stop)
    }

    /// The rest of [`decode`](Self::decode), when the scan stopped at the
    /// trailer section, at extensions to hand out, or at an error: what it
    /// found comes after the data before it. Once per body, or per chunk
    /// with extensions handed out.
    #[inline(never)]
    fn decode_after(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
        scan: Scan,
        stop: Result<Option<(usize, usize)>, ErrorKind>,
    ) -> Result<Option<Progress>, ErrorKind> {
        let (mut data, mut extensions) = (None, None);
        if scan.end > scan.start || matches!(stop, Ok(Some(_))) {
            let scanned = buf.split_to(scan.pos).freeze();
            if let Ok(Some((from, to))) = stop {
                // Checked against their grammar with their line.
                extensions = Some(ChunkExtensions::from_validated(scanned.slice(from..to)));
            }
            data = (scan.end > scan.start).then(|| scanned.slice(scan.start..scan.end));
        } else {
            buf.advance(scan.pos);
        }
        // What the scan found after the data comes after it: so the body
        // is known to be complete together with its last data when the
        // last-chunk and the trailer section are already buffered.
        let next = match stop {
            Err(kind) => Err(kind),
            Ok(_) if self.state == ChunkState::Trailers => self.trailer_step(buf, limits, names),
            Ok(_) => Ok(None),
        };
        let event = match (data, extensions) {
            (Some(data), extensions) => {
                self.pending_extensions = extensions;
                Progress::Data(data)
            }
            (None, Some(extensions)) => Progress::ChunkExtensions(extensions),
            (None, None) => {
                return Ok(next?.map_or_else(|| self.idle(), |t| Some(Progress::Trailers(t))));
            }
        };
        self.pending = next.transpose();
        Ok(Some(event))
    }

    /// What a scan that found nothing to hand out leaves: the body's end
    /// (`None`), or a need for more input.
    fn idle(&self) -> Option<Progress> {
        (self.state != ChunkState::Done).then_some(Progress::NeedMore)
    }

    /// Runs the chunked state machine over `buf` from its start until the
    /// buffer ends, the trailer section starts, or the data of a chunk
    /// would have to be moved and is too long for it; the [`Scan`] says
    /// where the data passed over lies, and the stop where the extensions
    /// of a chunk-size line to hand out are. Data of chunks shorter than
    /// [`GATHER_BELOW`] is moved back over the framing before it, so that
    /// the data of many small chunks leaves as one `Data`.
    fn scan(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
    ) -> (Scan, Result<Option<(usize, usize)>, ErrorKind>) {
        // The state and the offsets live in registers through the loop.
        let mut state = self.state;
        let mut s = Scan::default();
        let stop = loop {
            match state {
                ChunkState::Data(remaining) => {
                    let avail = buf.len() - s.pos;
                    if avail == 0 {
                        break Ok(None);
                    }
                    let n = usize::try_from(remaining).unwrap_or(usize::MAX).min(avail);
                    if s.end == s.start {
                        s.start = s.pos;
                        s.end = s.pos;
                    } else if s.end != s.pos {
                        if n >= GATHER_BELOW {
                            break Ok(None);
                        }
                        buf.copy_within(s.pos..s.pos + n, s.end);
                    }
                    s.pos += n;
                    s.end += n;
                    let left = remaining - n as u64;
                    if left > 0 {
                        state = ChunkState::Data(left);
                        break Ok(None);
                    }
                    state = ChunkState::DataEnd;
                    if self.overhead.excess == 0
                        && let Some(size) =
                            gather_small_chunks(buf, &mut s, limits.max_chunk_line_bytes)
                    {
                        state = match size {
                            0 => ChunkState::Trailers,
                            size => ChunkState::Data(size),
                        };
                    }
                }
                ChunkState::DataEnd => match &buf[s.pos..] {
                    [b'\r', b'\n', ..] => {
                        s.pos += 2;
                        state = ChunkState::Size(0);
                    }
                    [b'\n', ..] if self.rules.bare_lf => {
                        s.pos += 1;
                        state = ChunkState::Size(0);
                    }
                    [] | b"\r" => break Ok(None),
                    other => break Err(self.data_end_refused(other[0])),
                },
                ChunkState::Size(mut searched) => {
                    match self.size_line(&buf[s.pos..], &mut searched, limits) {
                        Ok(Some((size, len, extensions))) => {
                            let at = s.pos;
                            s.pos += len;
                            state = match size {
                                0 => ChunkState::Trailers,
                                size => ChunkState::Data(size),
                            };
                            if self.report_extensions && !extensions.is_empty() {
                                break Ok(Some((at + extensions.start, at + extensions.end)));
                            }
                        }
                        Ok(None) => {
                            state = ChunkState::Size(searched);
                            break Ok(None);
                        }
                        Err(kind) => break Err(kind),
                    }
                }
                ChunkState::Trailers | ChunkState::Done => break Ok(None),
            }
        };
        self.state = state;
        (s, stop)
    }

    /// Reads the chunk-size line at the start of `line`, of which
    /// `searched` bytes were searched for its end before, and counts it
    /// against the limits: the chunk size, the line's length with its
    /// end, and where its extensions are in it (empty when it has none);
    /// `None` (and `searched` moved on) while its end is not there yet.
    #[inline]
    fn size_line(
        &mut self,
        line: &[u8],
        searched: &mut usize,
        limits: &Limits,
    ) -> Result<Option<(u64, usize, Range<usize>)>, ErrorKind> {
        // The usual line, with nothing counted against the limits yet: at
        // most 12 digits, CRLF and the CRLF after the data are within any
        // chunk's allowance, nothing to count.
        if let Some((size, len)) = usual_line(line, limits.max_chunk_line_bytes)
            && self.overhead.excess == 0
        {
            return Ok(Some((size, len, len..len)));
        }
        self.size_line_in_full(line, searched, limits)
    }

    /// [`size_line`](Self::size_line) for any other line: extensions,
    /// more digits, a bare LF, an error, or not all of it there yet.
    #[inline(never)]
    fn size_line_in_full(
        &mut self,
        line: &[u8],
        searched: &mut usize,
        limits: &Limits,
    ) -> Result<Option<(u64, usize, Range<usize>)>, ErrorKind> {
        let window = line.len().min(limits.max_chunk_line_bytes);
        let Some(i) = memchr(b'\n', &line[*searched..window]) else {
            if window == limits.max_chunk_line_bytes && line.len() >= window {
                return Err(ErrorKind::ChunkLineTooLong);
            }
            *searched = window;
            return Ok(None);
        };
        let lf = *searched + i;
        let end = if lf > 0 && line[lf - 1] == b'\r' {
            lf - 1
        } else {
            self.bare_lf(lf)?
        };
        let (size, digits) = chunk_size_line(&line[..end])?;
        self.overhead.charge(lf + 1, end - digits, size, limits)?;
        Ok(Some((size, lf + 1, digits..end)))
    }

    /// Keeps the tolerance an error names; returns its kind.
    #[cold]
    fn refused(&mut self, error: Error) -> ErrorKind {
        self.hint = error.tolerance();
        error.kind()
    }

    /// Chunk data followed by `first` and what comes after it instead of
    /// CRLF (or, with `bare_lf`, LF).
    #[cold]
    fn data_end_refused(&mut self, first: u8) -> ErrorKind {
        if first == b'\n' {
            self.hint = self.rules.hint(Tolerance::BareLf);
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
        self.hint = self.rules.hint(Tolerance::BareLf);
        Err(ErrorKind::BareLineFeed)
    }
}

/// Chunks whose data in the buffer is shorter than this many bytes are
/// moved back over the framing before them, joining the data of the
/// chunks before. Longer ones are never moved: they leave as a `Data` of
/// their own.
const GATHER_BELOW: usize = 1024;

/// The fast way through a run of small chunks, from the end of a chunk's
/// data at `s.pos`: while a whole chunk of the usual form follows (CRLF,
/// 1 to 12 hex digits, CRLF, and all its data, fewer than
/// [`GATHER_BELOW`] bytes), moves its data to `s.end` and goes on. The
/// framing of the usual form before any other chunk (or the last-chunk)
/// is read too, and its size returned (none of its data read); anything
/// else (an extension, a bare LF, a line not all there) is left to the
/// state machine, `None` stopping before the framing. Such
/// framing is at most 16 bytes, within any chunk's allowance, so with
/// nothing counted against the limits yet there is nothing to count.
///
/// A run of chunks usually repeats one size: once two chunks in a row
/// have the same size, and the framing after the second has the same
/// bytes as the framing before it (8 bytes at most), that is the same
/// size line, and [`gather_repeats`] reads the rest of the run by
/// comparing each framing with it.
#[inline]
fn gather_small_chunks(buf: &mut [u8], s: &mut Scan, max_line: usize) -> Option<u64> {
    // The size of the chunk gathered before (none is 0).
    let mut last = 0;
    loop {
        let rest = &buf[s.pos..];
        let line = rest.strip_prefix(b"\r\n");
        let (size, len) = line.and_then(|line| usual_line(line, max_line))?;
        // At most 12 digits: the size fits.
        let size = size as usize;
        let start = len + 2;
        if size == 0 || size >= GATHER_BELOW || rest.len() - start < size {
            s.pos += start;
            return Some(size as u64);
        }
        // A second chunk of the size before: perhaps a run. Its framing is
        // taken before the data moves over it.
        let run = size == last && start <= 8;
        let framing = run.then(|| word_at(rest)).flatten();
        let from = s.pos + start;
        buf.copy_within(from..from + size, s.end);
        s.end += size;
        s.pos = from + size;
        last = size;
        if let Some(framing) = framing {
            let mask = u64::MAX >> (64 - 8 * start);
            if let Some(next) = word_at(&buf[s.pos..])
                && (framing ^ next) & mask == 0
                && buf.len() - s.pos >= start + size
            {
                gather_repeats(buf, s, start, size, framing & mask, mask);
            }
        }
    }
}

/// Moves the data of the chunk at `s.pos`, whose framing of `len` bytes
/// is the bytes `word` masked with `mask`, to `s.end`, and of every chunk
/// after it with the same framing and all its data in `buf`. Out of line,
/// so that the way through chunks of other sizes stays as short as it was.
#[inline(never)]
fn gather_repeats(buf: &mut [u8], s: &mut Scan, len: usize, size: usize, word: u64, mask: u64) {
    // Bytes a next chunk of the same framing takes, and at least a word.
    let need = (len + size).max(8);
    let (mut pos, mut end) = (s.pos, s.end);
    loop {
        let from = pos + len;
        buf.copy_within(from..from + size, end);
        end += size;
        pos = from + size;
        if buf.len() - pos < need {
            break;
        }
        match word_at(&buf[pos..]) {
            Some(next) if next & mask == word => {}
            _ => break,
        }
    }
    s.pos = pos;
    s.end = end;
}

/// The first 8 bytes of `bytes` as a little-endian word, if it has 8.
#[inline]
fn word_at(bytes: &[u8]) -> Option<u64> {
    let first: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(first))
}

/// Where a scan of the buffer is: the data it passed over lies in
/// `start..end` (contiguous, moved there if need be), and everything
/// before `pos` has been read.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    start: usize,
    end: usize,
    pos: usize,
}

/// Framing bytes each chunk may carry at no cost, besides
/// [`FREE_PER_DATA_BYTE`] per data byte: a size of up to 12 hex digits with
/// its CRLF and the CRLF after the data, without extensions.
const FREE_PER_CHUNK: u64 = 16;

/// Framing bytes each data byte of a chunk pays for.
const FREE_PER_DATA_BYTE: u64 = 2;

/// The cost of a chunked body's framing so far: the chunk extensions
/// ([`Limits::max_chunk_extension_bytes`]) and the framing not paid for
/// by data ([`Limits::max_chunk_overhead_bytes`]). Counted per chunk-size
/// line, so it depends on the bytes of the body and never on its reads.
#[derive(Debug, Default, Clone, Copy)]
struct Overhead {
    /// Chunk-extension bytes so far.
    extensions: u64,
    /// Framing bytes beyond what the chunks' allowances paid for.
    excess: u64,
}

impl Overhead {
    /// Counts a chunk-size line of `line` bytes (its line end included)
    /// holding `extensions` bytes of extensions, for a chunk of `size`
    /// data bytes.
    #[inline]
    fn charge(
        &mut self,
        line: usize,
        extensions: usize,
        size: u64,
        limits: &Limits,
    ) -> Result<(), ErrorKind> {
        self.extensions = self.extensions.saturating_add(extensions as u64);
        if self.extensions > limits.max_chunk_extension_bytes as u64 {
            return Err(ErrorKind::ChunkExtensionsTooLarge);
        }
        // The CRLF after the data belongs to a chunk with data; the
        // last-chunk is followed by the trailer section, bounded on its own.
        let framing = line as u64 + if size > 0 { 2 } else { 0 };
        let allowance = size
            .saturating_mul(FREE_PER_DATA_BYTE)
            .saturating_add(FREE_PER_CHUNK);
        self.excess = self
            .excess
            .saturating_add(framing)
            .saturating_sub(allowance);
        if self.excess > limits.max_chunk_overhead_bytes as u64 {
            return Err(ErrorKind::ExcessiveChunkOverhead);
        }
        Ok(())
    }
}

/// The hex digits at the start of `digits` (at most 16 of them, so that
/// the value cannot overflow): the value and how many there are. The one
/// reader of a chunk size's digits.
#[inline(always)]
fn hex_digits(digits: &[u8]) -> (u64, usize) {
    let mut size = 0u64;
    let mut i = 0;
    while i < digits.len() {
        let d = HEX[usize::from(digits[i])];
        if d > 15 {
            break;
        }
        size = size << 4 | u64::from(d);
        i += 1;
    }
    (size, i)
}

/// The usual chunk-size line at the start of `line`: 1 to 12 hex digits
/// and CRLF, nothing else, within `max` bytes. Its size and its length.
#[inline(always)]
fn usual_line(line: &[u8], max: usize) -> Option<(u64, usize)> {
    let (size, digits) = hex_digits(&line[..line.len().min(12)]);
    let len = digits + 2;
    let crlf = line.get(digits..len) == Some(&b"\r\n"[..]);
    (digits > 0 && crlf && len <= max).then_some((size, len))
}

/// Parses `chunk-size [ chunk-ext ]` (without its CRLF):
/// `1*HEXDIG *( BWS ";" BWS ext-name [ BWS "=" BWS ( token / quoted-string ) ] )`.
/// Returns the size and the number of its digits (where the extensions
/// start).
fn chunk_size_line(line: &[u8]) -> Result<(u64, usize), ErrorKind> {
    // Leading zeros aside, 16 digits at most: a 17th is refused below.
    let zeros = line.iter().take_while(|&&b| b == b'0').count();
    let (size, digits) = hex_digits(&line[zeros..line.len().min(zeros + 16)]);
    let i = zeros + digits;
    if i == 0
        || line
            .get(i)
            .is_some_and(|b| !matches!(b, b';' | b' ' | b'\t'))
    {
        return Err(ErrorKind::InvalidChunkSize);
    }
    if !crate::chunk_ext::validate(&line[i..]) {
        return Err(ErrorKind::InvalidChunkExtension);
    }
    Ok((size, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size_line(b"0"), Ok((0, 1)));
        assert_eq!(chunk_size_line(b"001B"), Ok((27, 4)));
        assert_eq!(chunk_size_line(b"ffffffffffffffff"), Ok((u64::MAX, 16)));
        assert_eq!(chunk_size_line(b"5 ; a=b"), Ok((5, 1)));
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
