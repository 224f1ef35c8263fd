//! The output queue ([`Segments`] has the contract).

use std::collections::VecDeque;
use std::fmt;
use std::io::IoSlice;

use bytes::{Buf, Bytes, BytesMut};

/// Capacity the tail buffer is given back after a full drain, so that a
/// typical head and a small body fit without growing it.
const MIN_TAIL_CAPACITY: usize = 8 * 1024;

/// The output queue of an encoder: an ordered list of byte segments that
/// implements [`Buf`].
///
/// Everything an encoder produces (heads, chunk-size lines, body data,
/// trailers) is appended to a [`Segments`] queue. Nothing leaves it until the
/// caller drains it, so every write is corked: a head and the body writes
/// queued before a drain go out in one vectored write.
///
/// # The contiguity contract
///
/// - Pieces shorter than the coalescing threshold, and all framing bytes
///   (status and request lines, fields, chunk-size lines, CRLFs, the
///   last-chunk and trailers), are copied into one contiguous tail buffer.
///   A head with a small body is therefore one segment.
/// - A [`Bytes`] at least as long as the threshold becomes a segment of its
///   own, without a copy: the very allocation the caller handed over.
/// - [`Buf::chunks_vectored`] and [`Segments::io_slices`] return the
///   remaining bytes in order, without gaps, as many segments as fit in the
///   destination. This queue is never a `bytes::Chain`.
///
/// # Allocation
///
/// The tail buffer keeps its capacity across messages: once the queue has
/// been drained completely, the next write reuses the same allocation, so a
/// server in steady state allocates nothing to encode a response.
///
/// # Draining
///
/// Drain it with [`io_slices`](Self::io_slices) (or
/// [`chunks_vectored`](Buf::chunks_vectored)), one `write_vectored`, then
/// [`advance`](Buf::advance) by the number of bytes written:
///
/// ```
/// use std::io::{IoSlice, Write};
/// use bytes::{Buf, Bytes};
/// use h1proto::Segments;
///
/// let mut out = Segments::new();
/// out.push_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n");
/// out.push_bytes(Bytes::from_static(b"hello"));
///
/// let mut socket: Vec<u8> = Vec::new();
/// while out.has_remaining() {
///     let mut slices = [IoSlice::new(&[]); 16];
///     let n = out.io_slices(&mut slices);
///     let written = socket.write_vectored(&slices[..n]).unwrap();
///     out.advance(written);
/// }
/// assert!(socket.ends_with(b"\r\n\r\nhello"));
/// ```
pub struct Segments {
    /// Sealed segments, in order; all of them come before `tail`.
    sealed: VecDeque<Bytes>,
    /// The contiguous buffer small pieces are copied into; always last.
    tail: BytesMut,
    /// Bytes not yet drained, over `sealed` and `tail`.
    remaining: usize,
    /// `Bytes` at least this long become their own segment.
    threshold: usize,
    /// Bytes queued since the queue was made: the [`Mark`] of its end.
    queued: u64,
    /// The tail buffer no longer starts where its allocation does (bytes
    /// were split off its front or advanced over): once drained, it is
    /// given its allocation back.
    tail_moved: bool,
}

/// A position in a [`Segments`] queue: the number of bytes queued before
/// it since the queue was made. Taken with [`Segments::mark`] before
/// queueing a message, it lets the message be withdrawn or amended while
/// none of it has been drained (what a server connection does to a
/// response an error response replaces, or a shutdown amends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Mark(u64);

impl Mark {
    /// The position `n` bytes after this one.
    pub(crate) fn offset(self, n: u64) -> Mark {
        Mark(self.0 + n)
    }
}

impl Segments {
    /// The default coalescing threshold: 4 KiB. `docs/benchmarks.md` has
    /// the measurements behind it.
    pub const DEFAULT_COALESCE_THRESHOLD: usize = 4 * 1024;

    /// An empty queue with the default coalescing threshold
    /// ([`DEFAULT_COALESCE_THRESHOLD`](Self::DEFAULT_COALESCE_THRESHOLD)). Allocates nothing until written to.
    pub fn new() -> Self {
        Self::with_threshold(Self::DEFAULT_COALESCE_THRESHOLD)
    }

    /// An empty queue that copies `Bytes` shorter than `threshold` into its
    /// tail buffer and queues longer ones as their own segments. A
    /// threshold of 0 never copies a `Bytes`; `usize::MAX` always does.
    pub fn with_threshold(threshold: usize) -> Self {
        Segments {
            sealed: VecDeque::new(),
            tail: BytesMut::new(),
            remaining: 0,
            threshold,
            queued: 0,
            tail_moved: false,
        }
    }

    /// The coalescing threshold.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Bytes not yet drained (the same as [`Buf::remaining`]).
    pub fn len(&self) -> usize {
        self.remaining
    }

    /// `true` when everything queued has been drained.
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }

    /// The number of contiguous segments left to drain: the number of
    /// `IoSlice`s a complete vectored write of the queue needs.
    pub fn segment_count(&self) -> usize {
        self.sealed.len() + usize::from(!self.tail.is_empty())
    }

    /// Fills `dst` with the remaining bytes, in order, one slice per
    /// segment, and returns how many slices it filled. When `dst` is shorter
    /// than [`segment_count`](Self::segment_count), the slices hold a prefix
    /// of the queue; no segment is ever skipped.
    pub fn io_slices<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let slots = dst.iter_mut().zip(self.chunks());
        slots
            .map(|(slot, chunk)| *slot = IoSlice::new(chunk))
            .count()
    }

    /// Queues `data`: copied into the tail buffer when it is shorter than
    /// the threshold, otherwise queued as its own segment without a copy.
    /// An empty `data` queues nothing.
    #[inline]
    pub fn push_bytes(&mut self, data: Bytes) {
        // An empty segment would make `chunk` empty while bytes remain.
        if data.len() < self.threshold || data.is_empty() {
            self.push_slice(&data);
        } else {
            let tail = self.split_tail();
            self.sealed.extend(tail);
            self.remaining += data.len();
            self.queued += data.len() as u64;
            self.sealed.push_back(data);
        }
    }

    /// Copies `data` into the tail buffer, after everything queued so far.
    pub fn push_slice(&mut self, data: &[u8]) {
        self.tail.extend_from_slice(data);
        self.remaining += data.len();
        self.queued += data.len() as u64;
    }

    /// Appends what `write` writes to the end of the queue's tail, as
    /// [`push_slice`](Self::push_slice) calls would, the count of queued
    /// bytes kept once for all of it: what a head writer writes to.
    #[inline]
    pub(crate) fn append<T>(&mut self, write: impl FnOnce(&mut BytesMut) -> T) -> T {
        let before = self.tail.len();
        let written = write(&mut self.tail);
        let n = self.tail.len() - before;
        self.remaining += n;
        self.queued += n as u64;
        written
    }

    /// The position after everything queued so far.
    pub(crate) fn mark(&self) -> Mark {
        Mark(self.queued)
    }

    /// Bytes drained since the queue was made.
    fn drained(&self) -> u64 {
        self.queued - self.remaining as u64
    }

    /// `true` while nothing queued at or after `mark` has been drained:
    /// what was queued from there on can still be withdrawn or amended.
    pub(crate) fn is_undrained(&self, mark: Mark) -> bool {
        self.drained() <= mark.0 && mark.0 <= self.queued
    }

    /// Withdraws everything queued at and after `mark`, if none of it has
    /// been drained; returns whether it did. The mark is then the end of
    /// the queue again.
    pub(crate) fn truncate(&mut self, mark: Mark) -> bool {
        if !self.is_undrained(mark) {
            return false;
        }
        self.take_from(mark);
        if self.remaining == 0 {
            self.reclaim();
        }
        true
    }

    /// Replaces the `remove` bytes queued at `mark` with `data`, if none of
    /// what was queued from `mark` on has been drained; returns whether it
    /// did. Everything queued after the replaced bytes follows `data`.
    pub(crate) fn splice(&mut self, mark: Mark, remove: usize, data: &[u8]) -> bool {
        if !self.is_undrained(mark) || mark.0 + remove as u64 > self.queued {
            return false;
        }
        // The bytes from `mark` to the end, taken out and queued again
        // after `data`: rare (a graceful shutdown amending a queued head),
        // so simplicity wins over copying less.
        let rest = self.take_from(mark);
        self.push_slice(data);
        let mut skip = remove;
        for mut piece in rest {
            let n = skip.min(piece.len());
            piece.advance(n);
            skip -= n;
            self.push_bytes(piece);
        }
        true
    }

    /// Takes out everything queued from `mark` on (none of it drained), in
    /// order and without a copy: the tail's part is split off its
    /// allocation, which the tail gets back once that part is dropped.
    fn take_from(&mut self, mark: Mark) -> Vec<Bytes> {
        let mut cut = (self.queued - mark.0) as usize;
        self.remaining -= cut;
        self.queued = mark.0;
        let from_tail = cut.min(self.tail.len());
        let mut taken = vec![self.tail.split_off(self.tail.len() - from_tail).freeze()];
        self.tail_moved = true;
        cut -= from_tail;
        while cut > 0 {
            let Some(mut last) = self.sealed.pop_back() else {
                break;
            };
            if cut < last.len() {
                taken.push(last.split_off(last.len() - cut));
                self.sealed.push_back(last);
                break;
            }
            cut -= last.len();
            taken.push(last);
        }
        taken.reverse();
        taken
    }

    /// The bytes queued from `mark` on, up to the end of the segment that
    /// holds it; empty when `mark` was drained or is the end of the queue.
    pub(crate) fn chunk_at(&self, mark: Mark) -> &[u8] {
        if !self.is_undrained(mark) {
            return &[];
        }
        let mut skip = (mark.0 - self.drained()) as usize;
        for chunk in self.chunks() {
            if skip < chunk.len() {
                return &chunk[skip..];
            }
            skip -= chunk.len();
        }
        &[]
    }

    /// Moves everything queued into `into`, in order, without a copy (the
    /// tail buffer's bytes are frozen into a `Bytes` that shares its
    /// allocation): the queue is then empty, and what is queued next goes
    /// behind what was moved. The moved bytes count as drained, so a mark
    /// among them can no longer be withdrawn or amended. Once they are all
    /// dropped, the tail buffer gets its whole allocation back at its next
    /// full drain, as after a large segment.
    pub(crate) fn lend(&mut self, into: &mut Vec<Bytes>) {
        into.extend(self.sealed.drain(..));
        // The tail straight into `into`, not through `sealed`: a response
        // that is all tail (a head and a small body) allocates no list.
        into.extend(self.split_tail());
        self.remaining = 0;
    }

    /// Puts bytes [`lend`](Self::lend) moved out back at the front of the
    /// queue, before anything queued since, in order: the part of them
    /// not written yet.
    pub(crate) fn return_lent(&mut self, from: &mut Vec<Bytes>) {
        for piece in from.drain(..).rev() {
            if !piece.is_empty() {
                self.remaining += piece.len();
                self.sealed.push_front(piece);
            }
        }
    }

    /// Gives the tail buffer's and the segment list's allocations back
    /// when nothing is queued: an idle connection holds no output buffer.
    pub fn release(&mut self) {
        if self.remaining == 0 {
            self.tail = BytesMut::new();
            self.sealed = VecDeque::new();
            self.tail_moved = false;
        }
    }

    /// The tail buffer's bytes, split off it (sharing its allocation) so
    /// that they can be sealed or lent; `None` when it is empty.
    fn split_tail(&mut self) -> Option<Bytes> {
        if self.tail.is_empty() {
            return None;
        }
        self.tail_moved = true;
        Some(self.tail.split().freeze())
    }

    /// The remaining segments, in order.
    fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        self.sealed
            .iter()
            .map(|b| &b[..])
            .chain((!self.tail.is_empty()).then_some(&self.tail[..]))
    }

    /// [`Buf::advance`] by less than everything, or past the end.
    fn advance_within(&mut self, mut cnt: usize) {
        assert!(
            cnt <= self.remaining,
            "advance past the end of Segments ({cnt} > {})",
            self.remaining
        );
        self.remaining -= cnt;
        while cnt > 0 {
            match self.sealed.front_mut() {
                Some(first) if cnt >= first.len() => {
                    cnt -= first.len();
                    self.sealed.pop_front();
                }
                Some(first) => {
                    first.advance(cnt);
                    cnt = 0;
                }
                None => {
                    self.tail.advance(cnt);
                    self.tail_moved = true;
                    cnt = 0;
                }
            }
        }
    }

    /// Called when everything has been drained: gives the tail buffer its
    /// whole allocation back. Every sealed segment split from it has been
    /// dropped by then (they were dropped as they were drained), so this
    /// reclaims without allocating.
    fn reclaim(&mut self) {
        self.tail.clear();
        // A tail drained whole in one go still starts where its allocation
        // does: there is nothing to win back.
        if std::mem::take(&mut self.tail_moved) {
            let _ = self.tail.try_reclaim(MIN_TAIL_CAPACITY);
        }
    }
}

impl Default for Segments {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Segments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segments")
            .field("remaining", &self.remaining)
            .field("segments", &self.segment_count())
            .field("threshold", &self.threshold)
            .finish()
    }
}

impl Buf for Segments {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        match self.sealed.front() {
            Some(first) => first,
            None => &self.tail,
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        self.io_slices(dst)
    }

    /// Consumes `cnt` bytes, across as many segments as needed.
    ///
    /// # Panics
    ///
    /// Like every [`Buf`], when `cnt` is more than [`Buf::remaining`].
    #[inline]
    fn advance(&mut self, cnt: usize) {
        if cnt != self.remaining {
            self.advance_within(cnt);
            return;
        }
        // All of it, as most writes take: nothing to split off. A
        // response all in the tail leaves no segment list to clear.
        self.remaining = 0;
        if !self.sealed.is_empty() {
            self.sealed.clear();
        }
        self.reclaim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lending_a_queue_that_is_all_tail_moves_it_without_a_list() {
        let mut s = Segments::with_threshold(64);
        s.push_slice(b"HTTP/1.1 200 OK\r\n\r\nhi");
        let mut out = Vec::new();
        s.lend(&mut out);
        assert_eq!(out, [Bytes::from_static(b"HTTP/1.1 200 OK\r\n\r\nhi")]);
        assert!(s.is_empty());
        assert_eq!(s.sealed.capacity(), 0, "no segment list allocated");
        // A large segment between two pieces of tail: all of it, in order.
        s.push_slice(b"a");
        s.push_bytes(Bytes::from(vec![b'b'; 100]));
        s.push_slice(b"c");
        out.clear();
        s.lend(&mut out);
        let all: Vec<u8> = out.iter().flat_map(|b| b.iter().copied()).collect();
        assert_eq!(all, [&b"a"[..], &[b'b'; 100], b"c"].concat());
        // What was not written goes back in front, before what came since.
        s.push_slice(b"z");
        let mut back = vec![out.pop().unwrap()];
        s.return_lent(&mut back);
        assert_eq!(s.chunk(), b"c");
        assert_eq!(s.remaining(), 2);
    }

    #[test]
    fn a_drained_tail_is_written_again_from_its_start() {
        let mut s = Segments::with_threshold(64);
        // An allocation of the size kept across drains.
        s.push_slice(&[b'x'; MIN_TAIL_CAPACITY]);
        let start = s.chunk().as_ptr();
        let n = s.remaining();
        s.advance(n);
        // Drained whole: the next write starts where the first did.
        s.push_slice(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(s.chunk().as_ptr(), start);
        let n = s.remaining();
        s.advance(n);
        // Drained in parts, or split around a large segment: given back.
        s.push_slice(b"head\r\n\r\n");
        s.advance(4);
        s.push_bytes(Bytes::from(vec![7u8; 100]));
        s.push_slice(b"\r\n");
        while s.has_remaining() {
            let n = s.chunk().len().min(5);
            s.advance(n);
        }
        s.push_slice(b"next");
        assert_eq!(s.chunk().as_ptr(), start);
        assert_eq!(s.chunk(), b"next");
    }

    #[test]
    fn small_pieces_coalesce_and_large_ones_stay_whole() {
        let mut s = Segments::with_threshold(16);
        s.push_slice(b"head\r\n");
        s.push_bytes(Bytes::from_static(b"small"));
        assert_eq!(s.segment_count(), 1);
        let big = Bytes::from(vec![7u8; 32]);
        let ptr = big.as_ptr();
        s.push_bytes(big);
        s.push_slice(b"\r\n");
        assert_eq!(s.segment_count(), 3);
        let mut slices = [IoSlice::new(&[]); 4];
        assert_eq!(s.io_slices(&mut slices), 3);
        assert_eq!(&*slices[0], b"head\r\nsmall");
        assert_eq!(slices[1].as_ptr(), ptr);
        assert_eq!(&*slices[2], b"\r\n");
    }

    #[test]
    fn a_queued_message_can_be_withdrawn_or_amended_until_drained() {
        let mut s = Segments::with_threshold(4);
        s.push_slice(b"first;");
        let mark = s.mark();
        s.push_slice(b"head\r\n\r\n");
        s.push_bytes(Bytes::from_static(b"large body"));
        s.push_slice(b"x");
        assert_eq!(s.chunk_at(mark), b"head\r\n\r\n");
        assert!(s.splice(mark.offset(4), 0, b"+ins"));
        assert!(s.splice(mark.offset(12), 5, b"LARGE"));
        let mut copy = Vec::new();
        for c in s.chunks() {
            copy.extend_from_slice(c);
        }
        assert_eq!(copy, b"first;head+ins\r\n\r\nLARGE bodyx");
        assert_eq!(s.len(), copy.len());
        assert!(s.truncate(mark));
        assert_eq!(s.len(), 6);
        assert_eq!(s.chunk(), b"first;");
        s.push_slice(b"again");
        s.advance(7);
        // Drained past the mark: nothing before the drain point moves.
        assert!(!s.truncate(mark));
        assert!(!s.splice(mark, 0, b"late"));
        assert_eq!(s.chunk(), b"gain");
        assert!(s.truncate(s.mark()));
        let end = s.mark();
        s.push_bytes(Bytes::from_static(b"0123456789"));
        assert!(s.truncate(end));
        assert_eq!(s.len(), 4);
        assert_eq!(s.segment_count(), 1);
    }

    #[test]
    fn advance_across_segments_and_reuse() {
        let mut s = Segments::with_threshold(4);
        s.push_slice(b"ab");
        s.push_bytes(Bytes::from_static(b"cdefg"));
        s.push_slice(b"hi");
        s.advance(3);
        assert_eq!(s.chunk(), b"defg");
        s.advance(5);
        assert_eq!(s.chunk(), b"i");
        s.advance(1);
        assert!(s.is_empty());
        assert_eq!(s.segment_count(), 0);
        s.push_slice(b"again");
        assert_eq!(s.chunk(), b"again");
    }
}
