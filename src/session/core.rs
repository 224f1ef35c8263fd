//! The session, written once for both roles: a connection with its read
//! buffer, its output lent to the driver, the wait under way, and the
//! body reading and the driver's side ([`Session`]) that do not depend on
//! the role. Where a role's policy differs (when it still reads a body,
//! what a peer's error or a shutdown does, its deadlines), the code asks
//! the role's [`Party`]: a constant, so each session is compiled with its
//! own branch alone. The calls only one role has are in `server.rs` and
//! `client.rs`.

use std::time::{Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use http::header::HeaderMap;

use super::read::ReadBuf;
use super::timer::{Timer, Waiting, after};
use super::{Io, Session, SessionError, Step, TrailerFields};
use crate::chunk_ext::ChunkExtensions;
use crate::config::{Config, Timeouts};
use crate::conn::{ConnRole, Connection, Sender, State};
use crate::decode::{Progress, Trailers};
use crate::error::{Error, ErrorKind};
use crate::role::Party;
use crate::segments::Segments;
use crate::wire::WireTrailers;

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

/// A session of role `R`: [`ServerSession`](crate::ServerSession) or
/// [`ClientSession`](crate::ClientSession), whose pages have the calls
/// each role has and an example. The calls both roles answer the same
/// way are written once here; [`Session`] is the driver's side.
#[derive(Debug)]
pub struct SessionOf<R: ConnRole> {
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
    pub(super) phase: Phase,
    /// A server's: when the connection was made (the first head's
    /// deadline runs from there). A client's: since when the connection
    /// has had no request in flight.
    pub(super) since: Instant,
    /// When the first byte of the head being received arrived (a
    /// server's), or since when the session waits for the head of the
    /// response due (a client's).
    pub(super) head_since: Option<Instant>,
    /// Request heads handed to the application (a server's).
    pub(super) requests: u64,
    /// The head `next_full_request` or `next_full_response` holds while
    /// it reads the body.
    pub(super) head: Option<Box<R::Recv>>,
    /// A graceful shutdown began.
    pub(super) shutdown: bool,
    /// `next_request` asked for a write before it waits for the next
    /// request (a server's `resume_read`).
    pub(super) write_then_read: bool,
    /// `Config::send_date`, for a server.
    pub(super) send_date: bool,
    /// The response heads a client holds back (boxed: rare).
    pub(super) held: Option<Box<Held<R::Recv>>>,
}

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Serving or sending requests.
    Open,
    /// No more exchanges: a server writes what is queued, then closes
    /// (lingering if `linger` and the peer has not closed its side); a
    /// client's next `close` closes.
    Closing { linger: bool },
    /// A server's sending half is shut down; reading and discarding until
    /// the peer closes, `until` passes or `discarded` reaches the bound.
    Lingering { until: Instant, discarded: usize },
    /// Over (or, after a protocol switch, handed to the driver).
    Closed,
}

/// The response heads a client session holds back.
#[derive(Debug, Default)]
pub(super) struct Held<H> {
    /// What `next_full_response` gathers while it reads: the interim ones.
    pub(super) interim: Vec<H>,
    /// Heads read while the request was still being sent (`look_ahead`),
    /// in order: `next_response` hands them out first.
    pub(super) ahead: Vec<H>,
}

impl<R: ConnRole> SessionOf<R> {
    /// A session for a connection made at `now`.
    pub fn new(config: Config, now: Instant) -> Self {
        SessionOf {
            read: ReadBuf::new(&config),
            timeouts: config.timeouts,
            flush_threshold: config.flush_threshold,
            linger_bytes: config.linger_bytes,
            send_date: config.send_date,
            conn: Connection::new(config),
            waiting: Waiting::No,
            body_done: true,
            pieces: Vec::new(),
            trailers: None,
            chunk_ext: None,
            failure: None,
            out_lent: 0,
            out_wanted: true,
            out_vec: Vec::new(),
            phase: Phase::Open,
            since: now,
            head_since: None,
            requests: 0,
            head: None,
            shutdown: false,
            write_then_read: false,
            held: None,
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
        !self.conn.peer_closed()
            && !self.read.lent
            && (matches!(self.waiting, Waiting::Read(_)) || self.read.buf.len() < self.read.size())
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

    /// A message head was handed out: its body is still to read (`done`:
    /// it has none, and is read), and nothing read so far belongs to it.
    #[inline(always)]
    pub(super) fn head_handed_out(&mut self, done: bool) {
        self.body_done = done;
        // Pieces are left only by a `read_body` given up half way.
        if !self.pieces.is_empty() {
            self.pieces.clear();
        }
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

    /// `poll_flush` (`bound`: `Config::flush_threshold`) and
    /// `poll_write_all` (0): the failure a timeout left, then
    /// [`write_past`](Self::write_past) while the session may still write
    /// (a server's while it closes too, a client's close drops its output).
    pub(super) fn flushed(&mut self, now: Instant, bound: usize) -> Result<Step<()>, SessionError> {
        self.failure()?;
        let writing = match R::LOCAL {
            Party::Server => self.phase != Phase::Closed,
            Party::Client => self.phase == Phase::Open,
        };
        Ok(self.write_past(now, writing, bound))
    }

    /// [`Io::Write`] while the session may still write (`writing`) and
    /// more than `bound` bytes are queued.
    #[inline]
    pub(super) fn write_past(&mut self, now: Instant, writing: bool, bound: usize) -> Step<()> {
        if writing && self.output_len() > bound {
            self.wait(Waiting::Write(now));
            Step::Io(Io::Write)
        } else {
            Step::Ready(())
        }
    }

    // ---- The application's side, for both roles ----------------------

    /// The next piece of the current message's body; `Ready(None)` at its
    /// end. On a server, also once the response is complete (what is left
    /// is the session's to drain or refuse), and a client waiting for
    /// `100 Continue` is sent it first.
    ///
    /// # Errors
    ///
    /// [`SessionError::Peer`] for a malformed body, one that stopped
    /// arriving, or a connection closed inside it (a server queues the
    /// error response where one can still be sent; call `close`).
    pub fn read_data(&mut self, now: Instant) -> Result<Step<Option<Bytes>>, SessionError> {
        self.failure()?;
        if self.body_done || !self.reading_body() {
            return Ok(Step::Ready(None));
        }
        loop {
            match self.conn.poll(&mut self.read.buf) {
                Ok(Progress::Data(data)) => {
                    self.chunk_ext_handed_out();
                    return Ok(Step::Ready(Some(data)));
                }
                Ok(Progress::Trailers(mut trailers)) => {
                    // The decoder keeps its wire view as the last one.
                    trailers.wire = self.conn.wire_trailers().cloned();
                    self.trailers = Some(trailers);
                }
                Ok(Progress::ChunkExtensions(ext)) => {
                    self.chunk_ext.get_or_insert_with(Box::default).pending = Some(ext);
                }
                Ok(Progress::End(_)) => {
                    self.chunk_ext_handed_out();
                    self.body_done = true;
                    self.body_ended(now);
                    return Ok(Step::Ready(None));
                }
                Ok(Progress::NeedMore) if self.conn.peer_closed() => {
                    return Err(self.fail(ErrorKind::UnexpectedEof.into()).into());
                }
                Ok(Progress::NeedMore) => return Ok(Step::Io(self.wait_for_input(now))),
                // Never inside a body: a head comes after its `End`.
                Ok(_) => {}
                Err(err) => return Err(self.fail(err).into()),
            }
        }
    }

    /// The rest of the current message's body in one `Bytes` (without a
    /// copy when it arrived in one piece).
    ///
    /// # Errors
    ///
    /// As [`read_data`](Self::read_data).
    pub fn read_body(&mut self, now: Instant) -> Result<Step<Bytes>, SessionError> {
        while let Some(data) = ready!(self.read_data(now)?) {
            self.pieces.push(data);
        }
        // The pieces in one `Bytes`, copied only when there are several.
        let pieces = &mut self.pieces;
        let whole = match pieces.len() {
            1 => pieces.pop().unwrap_or_default(),
            _ => pieces.concat().into(),
        };
        pieces.clear();
        Ok(Step::Ready(whole))
    }

    /// What the application sends, through the [`Sender`] lent here: a
    /// server's response, a client's requests (`send_response` or
    /// `send_request`, or `send_head`, `send_data` and `finish`). A client
    /// may queue requests while earlier responses are still due
    /// (pipelining). What is queued is written when the session next waits
    /// for the peer; past `Config::flush_threshold` queued bytes,
    /// `poll_flush` asks for a write before more is queued. Once the
    /// session is ending (a timeout or the peer's protocol error ended it:
    /// the next call that reads says which), the sender refuses every call
    /// with [`UsageError::WrongState`](crate::UsageError::WrongState), so
    /// that a sender whose peer never reads stops instead of waiting out
    /// the write timeout again and again. Once a client's shutdown began,
    /// it refuses new requests and lets the one in progress finish.
    #[inline]
    pub fn sender(&mut self) -> Sender<'_, R> {
        let open = self.phase == Phase::Open;
        let new = open && (R::LOCAL == Party::Server || !self.shutdown);
        Sender::new(&mut self.conn, new, open)
    }

    /// The trailer fields of the current message, once its body is read.
    pub fn trailers(&self) -> Option<&HeaderMap> {
        self.trailers.as_deref().map(|trailers| &trailers.fields)
    }

    /// The wire view of the current message's trailer section, once its
    /// body is read: its field lines as received, in order and spelling.
    /// Only with [`Config::wire_view`] on; `None` otherwise and without
    /// trailers. A proxy forwards the trailers in that order and spelling
    /// by passing it to `finish_in_order`.
    pub fn wire_trailers(&self) -> Option<&WireTrailers> {
        self.trailers.as_deref()?.wire.as_ref()
    }

    /// The chunk extensions of the chunk-size line read just before the
    /// body piece [`read_data`](Self::read_data) returned last (so only
    /// with the first piece of a chunk, which may arrive in several), or,
    /// once it returned `Ready(None)`, of the last-chunk; `None` when that
    /// line carried none. Read only with
    /// [`Config::chunk_extensions`] on; a proxy forwards them with
    /// [`send_chunk_extensions`](crate::Sender::send_chunk_extensions)
    /// before it forwards the piece, or before it finishes the message.
    pub fn chunk_extensions(&self) -> Option<&ChunkExtensions> {
        self.chunk_ext.as_ref()?.current.as_ref()
    }

    /// `true` once a 101 or a 2xx answer to CONNECT passed (sent by a
    /// server, received by a client): the socket and the bytes in
    /// [`take_read_buf`](Self::take_read_buf) belong to the new protocol.
    pub fn is_switched(&self) -> bool {
        self.conn.is_switched()
    }

    /// The bytes read but not decoded (after a protocol switch, the new
    /// protocol's first bytes), leaving the session's buffer empty.
    pub fn take_read_buf(&mut self) -> BytesMut {
        std::mem::take(&mut self.read.buf)
    }

    /// The connection inside, for queries.
    pub fn connection(&self) -> &Connection<R> {
        &self.conn
    }

    // ---- Where the roles' policies differ ----------------------------

    /// `true` while a body of the peer's may still be read (besides its
    /// end not having been handed out): a server's while the session is
    /// open and the request not fully answered (after that, what is left
    /// is the session's to drain or refuse); a client's until the session
    /// closes (a shutdown lets the request in progress go on, its
    /// response's body included).
    fn reading_body(&self) -> bool {
        self.phase == Phase::Open && (R::LOCAL == Party::Client || self.response_due())
    }

    /// The peer's message ended: with nothing more in flight, a client's
    /// connection is idle from now.
    pub(super) fn body_ended(&mut self, now: Instant) {
        if R::LOCAL == Party::Client && self.conn.requests_in_flight() == 0 {
            self.since = now;
            if self.shutdown {
                self.stop();
            }
            self.refuse_unsolicited();
        }
    }

    /// A client's: bytes held while no request is in flight and the
    /// application has taken every response (a server's 408 before it
    /// closes an idle connection) would answer the next request sent. The
    /// connection refuses them at once, so that a pool no longer finds it
    /// reusable and no request is sent on it (response queue poisoning).
    /// Looked at when bytes come, and when the last response ends.
    fn refuse_unsolicited(&mut self) {
        if R::LOCAL == Party::Client
            && self.phase == Phase::Open
            && self.body_done
            && !self.read.buf.is_empty()
            && (self.held.as_ref()).is_none_or(|held| held.ahead.is_empty())
            && self.conn.requests_in_flight() == 0
        {
            if let Err(err) = self.conn.poll(&mut self.read.buf) {
                self.fail_later(err);
            }
        }
    }

    /// A peer's protocol error: the answer it calls for is queued (a
    /// server's error response, in place of a response not yet drained),
    /// and the session closes.
    pub(super) fn fail(&mut self, err: Error) -> Error {
        match R::as_server(&mut self.conn) {
            Some(server) => {
                let _ = server.send_error_response(&err);
                self.start_closing();
            }
            None => self.stop(),
        }
        err
    }

    /// A peer's error found outside the application's call (a deadline
    /// passed, a refusal read ahead): the session fails as for any, and
    /// the application's next call reports it.
    pub(super) fn fail_later(&mut self, err: impl Into<Error>) {
        let err = self.fail(err.into());
        self.failure = Some(Box::new(err));
    }

    /// No more requests on a server: what is queued is written, then the
    /// connection closes, lingering unless the peer closed its side (which
    /// `close` asks when it comes to it).
    pub(super) fn start_closing(&mut self) {
        self.phase = Phase::Closing { linger: true };
    }

    /// No further request on a client: its next `close` closes.
    pub(super) fn stop(&mut self) {
        if self.phase == Phase::Open {
            self.phase = Phase::Closing { linger: false };
        }
    }

    /// A response to the current request is due or being sent.
    pub(super) fn response_due(&self) -> bool {
        matches!(self.conn.send_state(), State::Head | State::Body)
    }

    /// The deadline of what the session waits for, and what it is: a
    /// server's while it waits for the peer, lingering included; a
    /// client's while it is open, and also while it waits for nothing with
    /// no request in flight (a pool's idle connection).
    #[inline]
    fn timer(&self) -> Option<(Instant, Timer)> {
        let (t, client) = (&self.timeouts, R::LOCAL == Party::Client);
        // What expires `timeout` after `start`, in a wait begun `since`.
        // Matched by reference: copying the phase and the wait costs more
        // than the match.
        let (since, start, timeout, kind) = match (&self.phase, &self.waiting) {
            (Phase::Closed, _) => return None,
            _ if client && self.phase != Phase::Open => return None,
            (_, Waiting::No) if client && self.conn.requests_in_flight() == 0 && self.body_done => {
                (self.since, self.since, t.idle, Timer::Idle)
            }
            (_, Waiting::No) => return None,
            (Phase::Lingering { until, .. }, _) => return Some((*until, Timer::Linger)),
            (_, &Waiting::Write(since)) => {
                return after(since, t.write).map(|at| (at, Timer::Write));
            }
            (_, &Waiting::Read(since)) => match self.conn.recv_state() {
                State::Body => (since, since, t.body, Timer::Body),
                // A client waits for the head of the response due.
                _ if client => (since, self.head_since.unwrap_or(since), t.head, Timer::Head),
                // A server's first request runs from the connection's start.
                State::Idle | State::Head if self.requests == 0 => {
                    (since, self.since, t.head, Timer::Head)
                }
                // Between requests (a CR alone may be an empty line's).
                State::Idle if !self.conn.decoder.holds_head_bytes(&self.read.buf) => {
                    (since, since, t.idle, Timer::Idle)
                }
                State::Idle | State::Head => {
                    (since, self.head_since.unwrap_or(since), t.head, Timer::Head)
                }
                _ => (since, since, None, Timer::Head),
            },
        };
        let release = self.read.release_after();
        if let (Some(r), Some(d)) = (release, timeout) {
            // Both run from the same moment and the release comes first
            // (a keep-alive connection between requests): one deadline to
            // work out.
            if start == since && r < d {
                return after(since, release).map(|at| (at, Timer::Release));
            }
        }
        let expiry = after(start, timeout).map(|at| (at, kind));
        let release = after(since, release).map(|at| (at, Timer::Release));
        expiry.into_iter().chain(release).min_by_key(|&(at, _)| at)
    }

    /// A deadline other than the buffers' release passed: the wait it
    /// belonged to ends. A wait for the peer's message fails the session
    /// as the peer's error would (a server answers it, unless a new
    /// connection sent nothing); otherwise there is nothing to answer, or
    /// no way to, and the connection just closes.
    fn expire(&mut self, timer: Timer) {
        let timed_out = match timer {
            Timer::Head if R::LOCAL == Party::Client => Some(ErrorKind::ResponseTimeout),
            Timer::Head
                if self.requests == 0 && !self.conn.decoder.holds_head_bytes(&self.read.buf) =>
            {
                None
            }
            Timer::Head => Some(ErrorKind::HeadTimeout),
            Timer::Body => Some(ErrorKind::BodyTimeout),
            Timer::Write => {
                // The peer stopped reading: what is queued cannot leave.
                self.drop_output();
                self.failure = Some(Box::new(ErrorKind::WriteTimeout.into()));
                None
            }
            Timer::Idle | Timer::Linger | Timer::Release => None,
        };
        match timed_out {
            Some(kind) => self.fail_later(kind),
            None => self.phase = Phase::Closing { linger: false },
        }
    }
}

impl<R: ConnRole> Session for SessionOf<R> {
    /// While the session is open (or a server's is lingering), the peer
    /// has not closed its side and no protocol switch took the socket: up
    /// to one read's worth ahead of the messages taken, so that a server
    /// reads ahead of pipelined requests, a client reads an answer the
    /// server sends while the request is still being written (an early
    /// refusal), and an idle pooled connection learns when the server
    /// closes it (`docs/sessions.md`).
    fn wants_read(&self) -> bool {
        match self.phase {
            Phase::Open => !self.conn.is_switched() && self.may_read(),
            Phase::Lingering { .. } => !self.conn.peer_closed() && !self.read.lent,
            Phase::Closing { .. } | Phase::Closed => false,
        }
    }

    fn wants_write(&self) -> bool {
        self.out_lent == 0 && !self.conn.encoder.queued().is_empty()
    }

    fn peer_closed(&self) -> bool {
        self.conn.peer_closed()
    }

    #[inline]
    fn holds_read_buf(&self) -> bool {
        self.read.is_held()
    }

    fn read_buf(&mut self) -> &mut BytesMut {
        self.read.for_read()
    }

    #[inline]
    fn read_slice(&mut self) -> &mut [u8] {
        self.read.room()
    }

    fn lend_read_buf(&mut self) -> BytesMut {
        self.read.lend()
    }

    fn return_read_buf(&mut self, buf: BytesMut) {
        self.read.return_room(buf);
    }

    #[inline]
    fn handle_read(&mut self, n: usize, now: Instant) {
        // A read ends a wait for input, not a write under way beside it.
        if matches!(self.waiting, Waiting::Read(_)) {
            self.waiting = Waiting::No;
        }
        if n == 0 {
            self.conn.recv_eof();
            return;
        }
        self.read.read(n);
        if let Phase::Lingering { discarded, .. } = &mut self.phase {
            *discarded += n;
            self.read.buf.clear();
            return;
        }
        if R::LOCAL == Party::Server
            && self.conn.recv_state() == State::Idle
            && self.read.buf.len() == n
        {
            // The first bytes of a request head.
            self.head_since = Some(now);
        }
        self.refuse_unsolicited();
    }

    fn output(&mut self) -> &mut Segments {
        self.conn.output()
    }

    fn lend_output(&mut self) -> Vec<Bytes> {
        if self.out_lent > 0 {
            return Vec::new();
        }
        let mut out = std::mem::take(&mut self.out_vec);
        let queued = self.conn.output();
        self.out_lent = queued.len();
        queued.lend(&mut out);
        out
    }

    fn return_output(&mut self, mut output: Vec<Bytes>) {
        if self.out_lent == 0 {
            return;
        }
        self.out_lent = 0;
        if std::mem::replace(&mut self.out_wanted, true) {
            self.conn.output().return_lent(&mut output);
        } else {
            output.clear();
        }
        self.out_vec = output;
    }

    #[inline]
    fn handle_write(&mut self, n: usize, _now: Instant) {
        let out = self.conn.output();
        let n = n.min(out.len());
        bytes::Buf::advance(out, n);
        if matches!(self.waiting, Waiting::Write(_)) {
            self.waiting = Waiting::No;
        }
    }

    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        self.timer().map(|(at, _)| at)
    }

    fn handle_timeout(&mut self, now: Instant) {
        // Each deadline acted on ends the wait it belonged to, or gives
        // the buffers back, after which the next deadline is the wait's
        // own: a few turns at most.
        while let Some((_, timer)) = self.timer().filter(|&(at, _)| at <= now) {
            if timer == Timer::Release {
                // Giving the buffers back ends no wait: the deadlines
                // of the wait under way still run from its start.
                self.release();
            } else {
                self.expire(timer);
                self.waiting = Waiting::No;
            }
        }
    }

    /// A server finishes the exchange in progress (its response says
    /// `Connection: close`). A client has no exchange to finish before
    /// closing: an idle connection closes at once, a busy one when its
    /// responses are in.
    fn shutdown(&mut self, _now: Instant) {
        self.shutdown = true;
        if let Some(server) = R::as_server(&mut self.conn) {
            server.close_after_response();
        } else if self.conn.requests_in_flight() == 0 && self.body_done {
            self.stop();
        }
    }

    #[inline]
    fn set_date(&mut self, now: SystemTime) {
        if let Some(server) = R::as_server(&mut self.conn).filter(|_| self.send_date) {
            server.set_date(Some(now));
        }
    }
}
