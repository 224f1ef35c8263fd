//! What the decoders of both roles share, and what a role's code works
//! on: the events, the message heads, the shared base (limits, state,
//! head reader, verdict) and a response decoder's record of the requests
//! in flight. Nothing here depends on the role.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;
use http::{Request, Response};

use super::body::{BodyDecoder, Chunked, Progress};
use crate::chunk_ext::ChunkExtensions;
use crate::error::{Error, ErrorKind};
use crate::framing::{BodyKind, FramingFields, RequestKind, framing_close};
use crate::head::names::NameCache;
use crate::head::reader::{MAX_EMPTY_LINES, Options, Reader};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::Rules;
use crate::limits::Limits;
use crate::wire::{WireHead, WireTrailers};

/// What a decoder found in the bytes it was given.
///
/// `H` is the head of the decoded messages: `http::Request<()>` for a
/// [`RequestDecoder`](crate::RequestDecoder), `http::Response<()>` for a [`ResponseDecoder`](crate::ResponseDecoder).
/// Interim responses are part of what a client receives only: for
/// requests, [`Event::Interim`] holds a value of an empty type, and a
/// `match` may leave it out.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<H: MessageHead> {
    /// The head of a message: an `http::Request<()>` or `http::Response<()>`
    /// whose field values are slices of the input, and how its body is framed.
    Head {
        /// The start line and fields.
        head: H,
        /// How the body that follows is delimited.
        body: BodyKind,
    },
    /// An interim (1xx, other than 101) response. The final response to the
    /// same request follows. Only a [`ResponseDecoder`](crate::ResponseDecoder) produces it.
    Interim(H::Interim),
    /// Body bytes, split from the input buffer. Chunk data shorter than
    /// 1 KiB may have been moved back in the buffer over the framing
    /// before it, so that the data of many small chunks read together
    /// comes out as one `Data`; a piece of 1 KiB or more is never moved
    /// or copied. How body bytes are cut into `Data` events depends on
    /// the reads and is not part of the contract.
    Data(Bytes),
    /// The trailer section of a chunked body (only when it has fields).
    Trailers(HeaderMap),
    /// The message is complete, with its verdict on the connection: what
    /// its version, `Connection` field and framing say. A connection
    /// hands out the same; its own [`keep_alive`](crate::conn::Connection::keep_alive)
    /// adds the exchange's and the local side's reasons to close (a body
    /// refused or left unread, a close asked for), and decides whether it
    /// is reused.
    End(KeepAlive),
    /// The chunk extensions of the chunk whose data comes next, or, after
    /// the last `Data`, of the last-chunk. Only when asked for
    /// ([`Decoder::set_chunk_extensions`](crate::Decoder::set_chunk_extensions)), and only for chunk-size lines
    /// that carry any.
    ChunkExtensions(ChunkExtensions),
    /// A head read to its wire view alone, by a decoder with
    /// [`Decoder::set_wire_only`](crate::Decoder::set_wire_only) on: in place of [`Event::Head`] and, for
    /// responses, of [`Event::Interim`] (an interim response comes with
    /// [`BodyKind::Empty`], and [`WireHead::status`] tells it is 1xx).
    /// Nothing of `http` is built: the view holds the head's bytes, its
    /// field lines and start line, and the body that follows is framed as
    /// `body` says.
    Wire {
        /// The head as received.
        head: WireHead,
        /// How the body that follows is delimited.
        body: BodyKind,
    },
}

/// The head of a decoded message: `http::Request<()>` or
/// `http::Response<()>`. Sealed.
pub trait MessageHead: SealedHead + fmt::Debug {
    /// What an interim response is for this kind of message: a
    /// `Response<()>`, or for requests an empty type.
    type Interim: fmt::Debug;
}

impl MessageHead for Request<()> {
    type Interim = Infallible;
}

impl MessageHead for Response<()> {
    type Interim = Response<()>;
}

/// Seals [`MessageHead`]: the two heads are the only ones.
pub trait SealedHead {}

impl SealedHead for Request<()> {}
impl SealedHead for Response<()> {}

#[derive(Debug, Default)]
pub(super) enum DecodeStage {
    /// Waiting for (the rest of) a head.
    #[default]
    Head,
    /// Inside a body.
    Body(BodyDecoder),
    /// The body is complete; `End` is the next event.
    Ending,
    /// The last message said the connection closes: nothing more is parsed.
    Closed,
    /// The connection switched protocols: the buffer is the caller's.
    Switched,
    /// A protocol error ([`DecoderBase::failure`]); it is returned again on
    /// every call.
    Failed,
}

/// What both decoders share: limits, leniency, state, the head reader and
/// the verdict.
#[derive(Debug, Default)]
pub struct DecoderBase {
    pub(super) limits: Limits,
    pub(super) rules: Rules,
    pub(super) state: DecodeStage,
    /// The reader of the head being read, and its record.
    pub(super) reader: Reader,
    /// Empty lines skipped before a request line, and the stream offset
    /// where the last one ended: the count goes on only for a request
    /// line that starts there.
    pub(super) empty_lines: (u8, u64),
    pub(super) names: NameCache,
    /// What the last head's fields held, as the head reader noted it.
    pub(super) seen: FramingFields,
    /// An empty field map to decode the next head into.
    pub(super) spare: Option<HeaderMap>,
    /// An empty extension map for the next head that needs one.
    pub(super) spare_extensions: Option<http::Extensions>,
    pub(super) verdict: KeepAlive,
    pub(super) eof: bool,
    /// The current message is the last one this decoder decodes, whatever
    /// its verdict (a CONNECT request).
    pub(super) last: bool,
    /// Chunk extensions are handed out as events.
    pub(super) chunk_extensions: bool,
    /// Attach a [`WireHead`] to every head.
    pub(super) wire: bool,
    /// Decode heads to their [`WireHead`] alone ([`Event::Wire`]).
    pub(super) wire_only: bool,
    /// The wire view of the last trailer section handed out (with `wire`
    /// on), until the next message's head.
    pub(super) wire_trailers: Option<Box<WireTrailers>>,
    /// Bytes of the stream consumed so far, across calls.
    pub(super) consumed: u64,
    /// Where the head being parsed starts in the stream.
    pub(super) head_start: u64,
    /// The error of [`DecodeStage::Failed`], kept apart so that changing states
    /// never has an error to drop.
    pub(super) failure: Option<Error>,
}

impl Progress {
    /// The event of a body, or the end of a message, as the decoding
    /// calls return it: `None` for a head (whose event is made with its
    /// build) and when more input is needed. Each arm makes the whole
    /// value, so that it is made in the caller's place, not moved there.
    #[inline(always)]
    pub(crate) fn event<H: MessageHead>(self) -> Result<Option<Event<H>>, Error> {
        match self {
            Progress::Data(data) => Ok(Some(Event::Data(data))),
            Progress::End(verdict) => Ok(Some(Event::End(verdict))),
            Progress::ChunkExtensions(ext) => Ok(Some(Event::ChunkExtensions(ext))),
            Progress::Trailers(trailers) => Ok(Some(Event::Trailers(trailers.fields))),
            _ => Ok(None),
        }
    }
}

impl DecoderBase {
    /// Everything but parsing the head itself.
    ///
    /// Errors are plain kinds here; [`DecoderBase::fail`] gives them the tolerance
    /// that would accept the input, off the hot path.
    pub(super) fn decode_once(&mut self, buf: &mut BytesMut) -> Result<Progress, ErrorKind> {
        match &mut self.state {
            // `DecoderBase::fail` returns the stored error itself, whatever
            // the kind.
            DecodeStage::Failed => Err(ErrorKind::UnexpectedEof),
            DecodeStage::Closed | DecodeStage::Switched => Ok(Progress::NeedMore),
            DecodeStage::Ending => Ok(Progress::End(self.end())),
            DecodeStage::Body(body) => {
                let Some(mut progress) =
                    body.decode(buf, &self.limits, &mut self.names, self.eof)?
                else {
                    self.state = DecodeStage::Ending;
                    return self.decode_once(buf);
                };
                if let Progress::Trailers(trailers) = &mut progress {
                    self.wire_trailers = trailers.wire.take().map(Box::new);
                }
                // Trailers end a body, as the last data or extensions may.
                if body.finished() {
                    self.state = DecodeStage::Ending;
                }
                Ok(progress)
            }
            DecodeStage::Head => {
                if self.rules.request
                    && self.reader.in_first_line()
                    && matches!(buf.first(), Some(b'\r' | b'\n'))
                {
                    // RFC 9112 section 2.2: ignore empty lines (CRLF) before a
                    // request-line. A bare LF is not an empty line here.
                    self.skip_empty_lines(buf)?;
                }
                let options = Options {
                    trailers: false,
                    rules: &self.rules,
                    max_target: self.limits.max_target_bytes,
                    max_bytes: self.limits.max_head_bytes,
                    max_lines: self.limits.max_fields.saturating_add(1),
                    eof: self.eof,
                };
                match self.reader.read(buf, &options, &mut self.names) {
                    Ok(Some(len)) => Ok(Progress::Found(len)),
                    Ok(None) if self.eof && !buf.is_empty() => Err(ErrorKind::UnexpectedEof),
                    Ok(None) if self.eof => {
                        self.state = DecodeStage::Closed;
                        self.verdict = KeepAlive::Close(CloseReason::PeerEof);
                        Ok(Progress::NeedMore)
                    }
                    Ok(None) => Ok(Progress::NeedMore),
                    Err(error) => Err(self.head_refused(error)),
                }
            }
        }
    }

    /// Ends the message whose body is complete ([`DecodeStage::Ending`]):
    /// the decoder waits for the next head, or stops when the verdict
    /// says so. Returns the verdict, the `End` event's.
    #[inline(always)]
    pub(super) fn end(&mut self) -> KeepAlive {
        let next = match self.verdict {
            KeepAlive::Reusable if self.last => DecodeStage::Closed,
            KeepAlive::Reusable => {
                self.names.keep_names();
                DecodeStage::Head
            }
            KeepAlive::Close(CloseReason::Switched) => DecodeStage::Switched,
            KeepAlive::Close(_) => DecodeStage::Closed,
        };
        self.set_state(next);
        self.verdict
    }

    /// A head the reader refused: the error, placed in the stream, is
    /// kept for [`DecoderBase::fail`].
    #[cold]
    #[inline(never)]
    pub(super) fn head_refused(&mut self, error: Error) -> ErrorKind {
        // Where the head starts in the stream. A head is always read from
        // the start of a call (a call that ends a message returns its
        // `End`), so `buf[0]` was byte `consumed` when the call began;
        // empty lines skipped in this call moved it to where they ended
        // (`empty_lines.1`, which is never past `consumed` otherwise).
        let at = self.consumed.max(self.empty_lines.1);
        let kind = error.kind();
        self.failure = Some(error.in_head(at));
        kind
    }

    /// Fails with a kind [`DecoderBase::decode_once`] returned, and returns
    /// the error: the one the decoder failed with before, or the kind with
    /// the tolerance that would have accepted the input, placed at the first
    /// byte not consumed.
    #[cold]
    pub(super) fn fail(&mut self, kind: ErrorKind) -> Error {
        let error = match (&self.failure, &self.state) {
            (Some(failure), _) => failure.clone(),
            (None, DecodeStage::Body(BodyDecoder::Chunked(chunked))) => {
                Error::refused(kind, chunked.hint).at(self.consumed, None)
            }
            (None, _) => Error::from(kind).at(self.consumed, None),
        };
        self.failed(error)
    }

    /// Skips the empty lines at the start of `buf`, at most
    /// [`MAX_EMPTY_LINES`] before one request line. `buf[0]` is byte
    /// `consumed` of the stream (see [`DecoderBase::head_refused`]).
    #[cold]
    #[inline(never)]
    pub(super) fn skip_empty_lines(&mut self, buf: &mut BytesMut) -> Result<(), ErrorKind> {
        let mut n = 0;
        loop {
            let len = match &buf[n..] {
                [b'\r', b'\n', ..] => 2,
                [b'\n', ..] if self.rules.bare_lf => 1,
                _ => break,
            };
            let from = self.consumed + n as u64;
            let (count, end) = &mut self.empty_lines;
            // Lines before an earlier request line do not count.
            if *end != from {
                *count = 0;
            }
            if *count == MAX_EMPTY_LINES {
                // Placed at this line: the first byte not consumed.
                buf.advance(n);
                return Err(ErrorKind::TooManyEmptyLines);
            }
            *count += 1;
            *end = from + len as u64;
            n += len;
        }
        if n > 0 {
            buf.advance(n);
            self.reader.reset();
        }
        Ok(())
    }

    /// Starts the body of a message whose head was just parsed.
    pub(super) fn start_body(&mut self, body: BodyKind, verdict: KeepAlive) {
        self.reader.reset();
        // The trailers of the message before are no longer the last (most
        // messages had none: nothing to drop).
        if self.wire_trailers.is_some() {
            self.wire_trailers = None;
        }
        let close = framing_close(body, &self.seen);
        self.verdict = verdict.and(close.map_or(KeepAlive::Reusable, KeepAlive::Close));
        let next = match body {
            BodyKind::Empty | BodyKind::Length(0) => DecodeStage::Ending,
            BodyKind::Length(n) => DecodeStage::Body(BodyDecoder::Length(n)),
            BodyKind::Chunked => DecodeStage::Body(BodyDecoder::Chunked(Chunked::new(
                self.rules,
                self.chunk_extensions,
                self.wire,
            ))),
            BodyKind::CloseDelimited => DecodeStage::Body(BodyDecoder::UntilClose),
        };
        self.set_state(next);
    }

    /// Moves on from a stage that holds nothing (`Head` or `Ending`, the
    /// stages a head starts a body from and a message ends in) to `next`.
    /// The stage left is forgotten, not dropped: its drop, a call that
    /// frees nothing, is not paid twice a message.
    #[inline(always)]
    fn set_state(&mut self, next: DecodeStage) {
        debug_assert!(matches!(
            self.state,
            DecodeStage::Head | DecodeStage::Ending
        ));
        std::mem::forget(std::mem::replace(&mut self.state, next));
    }

    /// Records a protocol error, returned again on every call, and
    /// returns it.
    #[cold]
    pub(super) fn failed(&mut self, error: Error) -> Error {
        self.state = DecodeStage::Failed;
        self.failure = Some(error.clone());
        self.verdict = KeepAlive::Close(CloseReason::ProtocolError);
        error
    }
}

/// A request in flight, as much of it as its response needs: what the
/// response decoder frames it by, and what the connection checks it
/// against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Exchange {
    /// The kind of its method: HEAD and CONNECT change the framing.
    pub(crate) request: RequestKind,
    /// Its version: no chunked coding and no 1xx go to HTTP/1.0.
    pub(crate) version: http::Version,
    /// It waits for `100 Continue` before sending its body.
    pub(crate) expect: bool,
    /// It offered a protocol switch (`Upgrade` with `Connection: upgrade`).
    pub(crate) upgrade: bool,
}

impl Exchange {
    /// `true` when the request offered a protocol switch: an upgrade, or
    /// CONNECT.
    pub(crate) fn offers_switch(self) -> bool {
        self.upgrade || self.request == RequestKind::Connect
    }
}

/// What a response decoder keeps besides the shared base: the requests in
/// flight, the one the last final response answered, and the interim
/// responses to the current one.
#[derive(Debug, Default)]
pub struct InFlight {
    /// The requests whose final response has not begun, oldest first.
    pub(super) queue: VecDeque<Exchange>,
    /// The request the last final response answered.
    pub(super) answered: Exchange,
    pub(super) interim: usize,
}
