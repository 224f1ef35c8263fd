//! What both sessions share, written once: the connection with its read
//! buffer and the wait under way ([`Core`]), and the body reading and
//! sending that do not depend on the role ([`RoleSession`]'s provided
//! methods). A session adds its own rules (when it still sends or reads,
//! what a peer's error does) through [`RoleSession`]'s hooks. These are
//! the session types' own policies, implemented by `ServerSession` and
//! `ClientSession`, not by the role: what a role does differently is the
//! one role trait (`src/role/`).

use std::time::Instant;

use bytes::Bytes;
use http::header::HeaderMap;

use super::timer::{ReadBuf, Waiting};
use super::{Io, SessionError, Step, TrailerFields};
use crate::chunk_ext::ChunkExtensions;
use crate::conn::ConnRole;
use crate::conn::Connection;
use crate::decode::Event;
use crate::error::{Error, ErrorKind};
use crate::wire::WireTrailers;
use crate::{Config, Timeouts};

/// The trailer section of the message being read: its fields, and its
/// wire view with [`Config::wire_view`] on.
#[derive(Debug)]
struct Trailers {
    fields: HeaderMap,
    wire: Option<WireTrailers>,
}

/// The chunk extensions a session has read (`Config::chunk_extensions`),
/// kept with the body piece they came before. Made by the first chunk-size
/// line that carries any, so that a session that never sees one holds a
/// null pointer.
#[derive(Debug, Default)]
pub(super) struct ChunkExtSlot {
    /// Read, and no body piece handed out since.
    pending: Option<ChunkExtensions>,
    /// Those of the piece (or the end) handed out last.
    current: Option<ChunkExtensions>,
}

/// The state both sessions keep around their connection.
#[derive(Debug)]
pub(super) struct Core<R: ConnRole> {
    pub(super) conn: Connection<R>,
    pub(super) read: ReadBuf,
    pub(super) timeouts: Timeouts,
    pub(super) flush_threshold: usize,
    /// How much the lingering close reads and discards at most.
    pub(super) linger_bytes: usize,
    pub(super) waiting: Waiting,
    /// The application has read the current message's body to its end.
    pub(super) body_done: bool,
    /// The body pieces `read_body` has collected so far.
    pub(super) pieces: Vec<Bytes>,
    /// Boxed: rare, and every idle connection would carry the room.
    trailers: Option<Box<Trailers>>,
    /// Chunk extensions read (`Config::chunk_extensions`); boxed likewise.
    pub(super) chunk_ext: Option<Box<ChunkExtSlot>>,
    /// The peer closed its side.
    pub(super) eof: bool,
    /// A timeout to report to the application's next call.
    pub(super) failure: Option<Box<Error>>,
    /// The bytes of output lent to the driver (`lend_output`) and not
    /// given back; 0: none is out.
    pub(super) out_lent: usize,
    /// What the output given back is worth: `false` once the write
    /// timeout dropped the output, so that what comes back is dropped too.
    pub(super) out_wanted: bool,
    /// The vector the output is lent in, kept empty between lends so that
    /// a write allocates none.
    pub(super) out_vec: Vec<Bytes>,
}

impl<R: ConnRole> Core<R> {
    pub(super) fn new(config: Config) -> Self {
        Core {
            read: ReadBuf::new(&config),
            timeouts: config.timeouts,
            flush_threshold: config.flush_threshold,
            linger_bytes: config.linger_bytes,
            conn: Connection::new(config),
            waiting: Waiting::No,
            body_done: true,
            pieces: Vec::new(),
            trailers: None,
            chunk_ext: None,
            eof: false,
            failure: None,
            out_lent: 0,
            out_wanted: true,
            out_vec: Vec::new(),
        }
    }

    /// The bytes to write before the output is all out: those queued, and
    /// those lent to the driver unless they are to be dropped (a write
    /// timeout: the session closes without waiting for them, and the
    /// driver cancels the write). Output pending (more than 0) is written
    /// before the session waits for input, closes or shuts down.
    #[inline]
    pub(super) fn output_len(&mut self) -> usize {
        let lent = if self.out_wanted { self.out_lent } else { 0 };
        lent + self.conn.output().len()
    }

    /// `true` while more input may be taken without the application
    /// asking for it: less than one read's worth is buffered and not yet
    /// decoded (a driver that reads while it writes reads only that far
    /// ahead), or the application's call waits for input.
    #[inline]
    pub(super) fn may_read(&self) -> bool {
        !self.eof
            && !self.read.lent
            && (matches!(self.waiting, Waiting::Read(_)) || self.read.buf.len() < self.read.size)
    }

    /// `Session::lend_output`.
    pub(super) fn lend_output(&mut self) -> Vec<Bytes> {
        if self.out_lent > 0 {
            return Vec::new();
        }
        let mut out = std::mem::take(&mut self.out_vec);
        let queued = self.conn.output();
        self.out_lent = queued.len();
        queued.lend(&mut out);
        out
    }

    /// `Session::return_output`.
    pub(super) fn return_output(&mut self, mut out: Vec<Bytes>) {
        if self.out_lent == 0 {
            return;
        }
        self.out_lent = 0;
        if std::mem::replace(&mut self.out_wanted, true) {
            self.conn.output().unlend(&mut out);
        } else {
            out.clear();
        }
        self.out_vec = out;
    }

    /// Drops every byte of output, those lent out included once they are
    /// given back: the peer stopped reading, or the message was refused.
    pub(super) fn drop_output(&mut self) {
        let out = self.conn.output();
        bytes::Buf::advance(out, out.len());
        if self.out_lent > 0 {
            self.out_wanted = false;
        }
    }

    /// Gives back the buffers an idle connection need not hold (those
    /// out with the driver stay there).
    pub(super) fn release(&mut self) {
        self.read.release(self.conn.output());
        self.conn.decoder.release();
        if self.out_lent == 0 {
            self.out_vec = Vec::new();
        }
    }

    /// The trailer fields of the current message, once its body is read.
    pub(super) fn trailers(&self) -> Option<&HeaderMap> {
        self.trailers.as_deref().map(|trailers| &trailers.fields)
    }

    /// Their wire view, with `Config::wire_view` on.
    pub(super) fn wire_trailers(&self) -> Option<&WireTrailers> {
        self.trailers.as_deref()?.wire.as_ref()
    }

    /// Moves the trailer section into the extensions of the message whose
    /// body was collected whole: the fields as [`TrailerFields`], and the
    /// wire view, if any, as [`WireTrailers`].
    pub(super) fn trailers_into(&mut self, extensions: &mut http::Extensions) {
        if let Some(trailers) = self.trailers.take() {
            extensions.insert(TrailerFields(trailers.fields));
            if let Some(wire) = trailers.wire {
                extensions.insert(wire);
            }
        }
    }

    /// The chunk extensions of the body piece handed out last.
    pub(super) fn chunk_extensions(&self) -> Option<&ChunkExtensions> {
        self.chunk_ext.as_ref()?.current.as_ref()
    }

    /// A body piece, or the end of the body, is handed out: it carries the
    /// chunk extensions read since the last one.
    #[inline]
    fn chunk_ext_handed_out(&mut self) {
        if let Some(slot) = &mut self.chunk_ext {
            slot.current = slot.pending.take();
        }
    }

    /// The error a timeout left for the application's next call.
    #[inline]
    pub(super) fn failure(&mut self) -> Result<(), SessionError> {
        self.failure.take().map_or(Ok(()), |err| Err((*err).into()))
    }

    /// A message head was handed out: its body is still to read, and
    /// nothing read so far belongs to it.
    #[inline]
    pub(super) fn head_handed_out(&mut self) {
        self.body_done = false;
        self.pieces.clear();
        self.trailers = None;
        if let Some(slot) = &mut self.chunk_ext {
            **slot = ChunkExtSlot::default();
        }
    }

    pub(super) fn wait(&mut self, what: Waiting) {
        // A wait already under way keeps its start: a deadline is not
        // pushed back by asking again.
        if std::mem::discriminant(&self.waiting) != std::mem::discriminant(&what) {
            self.waiting = what;
        }
    }

    /// The I/O that brings more input: queued output is written first, so
    /// that the peer is never left waiting for an answer (or for a
    /// request, or `100 Continue`) while the session waits for it.
    pub(super) fn wait_for_input(&mut self, now: Instant) -> Io {
        if self.output_len() == 0 {
            self.wait(Waiting::Read(now));
            Io::Read
        } else {
            self.wait(Waiting::Write(now));
            Io::Write
        }
    }

    /// [`Io::Write`] while the session may still write (`writing`) and
    /// more than `bound` bytes are queued: `poll_flush`, `poll_write_all`.
    #[inline]
    pub(super) fn write_past(&mut self, now: Instant, writing: bool, bound: usize) -> Step<()> {
        if writing && self.output_len() > bound {
            self.wait(Waiting::Write(now));
            Step::Io(Io::Write)
        } else {
            Step::Ready(())
        }
    }

    /// The common part of `Session::handle_read`: `true` when bytes came
    /// (0 means the peer closed its side).
    #[inline]
    pub(super) fn handle_read(&mut self, n: usize) -> bool {
        // A read ends a wait for input, not a write under way beside it.
        if matches!(self.waiting, Waiting::Read(_)) {
            self.waiting = Waiting::No;
        }
        if n == 0 {
            self.eof = true;
            self.conn.recv_eof();
            false
        } else {
            self.read.read(n);
            true
        }
    }

    /// `Session::handle_write`.
    #[inline]
    pub(super) fn handle_write(&mut self, n: usize) {
        let out = self.conn.output();
        let n = n.min(out.len());
        bytes::Buf::advance(out, n);
        if matches!(self.waiting, Waiting::Write(_)) {
            self.waiting = Waiting::No;
        }
    }
}

/// A session of one role: its [`Core`] and the hooks through which the
/// role's rules enter the methods written once here.
pub(super) trait RoleSession: Sized {
    type Side: ConnRole;

    fn core(&mut self) -> &mut Core<Self::Side>;

    /// `true` while a body of the peer's may still be read (besides its
    /// end not having been handed out).
    fn reading_body(&self) -> bool;

    /// The peer's message ended: the role's bookkeeping.
    fn body_ended(&mut self, _now: Instant) {}

    /// A peer's protocol error: what the role does about it.
    fn fail(&mut self, err: Error) -> Error;

    /// A peer's error found outside the application's call (a deadline
    /// passed, a refusal read ahead): the session fails as for any, and
    /// the application's next call reports it.
    fn fail_later(&mut self, err: impl Into<Error>) {
        let err = self.fail(err.into());
        self.core().failure = Some(Box::new(err));
    }

    // What follows is each session's public method of the same name,
    // written once: the public ones (with each role's documentation)
    // delegate here.

    fn read_data(&mut self, now: Instant) -> Result<Step<Option<Bytes>>, SessionError> {
        self.core().failure()?;
        if self.core().body_done || !self.reading_body() {
            return Ok(Step::Ready(None));
        }
        loop {
            let core = self.core();
            match core.conn.poll_event(&mut core.read.buf) {
                Ok(Some(Event::Data(data))) => {
                    core.chunk_ext_handed_out();
                    return Ok(Step::Ready(Some(data)));
                }
                Ok(Some(Event::Trailers(fields))) => {
                    let wire = core.conn.wire_trailers().cloned();
                    core.trailers = Some(Box::new(Trailers { fields, wire }));
                }
                Ok(Some(Event::ChunkExtensions(ext))) => {
                    core.chunk_ext.get_or_insert_with(Box::default).pending = Some(ext);
                }
                Ok(Some(Event::End(_))) => {
                    core.chunk_ext_handed_out();
                    core.body_done = true;
                    self.body_ended(now);
                    return Ok(Step::Ready(None));
                }
                Ok(Some(_)) => {}
                Ok(None) if core.eof => {
                    return Err(self.fail(ErrorKind::UnexpectedEof.into()).into());
                }
                Ok(None) => return Ok(Step::Io(core.wait_for_input(now))),
                Err(err) => return Err(self.fail(err).into()),
            }
        }
    }

    fn read_body(&mut self, now: Instant) -> Result<Step<Bytes>, SessionError> {
        while let Some(data) = ready!(self.read_data(now)?) {
            self.core().pieces.push(data);
        }
        // The pieces in one `Bytes`, copied only when there are several.
        let pieces = &mut self.core().pieces;
        let whole = match pieces.len() {
            1 => pieces.pop().unwrap_or_default(),
            _ => pieces.concat().into(),
        };
        pieces.clear();
        Ok(Step::Ready(whole))
    }
}
