//! The read buffer a session lends its driver, and when it is given back.

use std::time::Duration;

use bytes::BytesMut;

use crate::config::Config;
use crate::segments::Segments;

/// The bytes asked for by a read into a session that holds no buffer (a
/// new connection, or an idle one that gave its buffers back): enough for
/// a small head in one read, little for a connection to hold.
const EMPTY_READ: usize = 256;

/// The bytes a read asks for after the first one into a session that
/// held no buffer filled its room: most request and response heads fit;
/// a read that fills it doubles the next one, up to `Config::read_size`.
const BASE_READ: usize = 1024;

/// The read buffer and the idle-release policy both sessions share.
///
/// A driver reads either into `buf`'s spare capacity ([`for_read`],
/// for readers that can fill memory not yet initialized, as tokio's
/// `read_buf` does) or into `room` ([`room`], an initialized slice, for
/// `std::io::Read`). `room` is zeroed once, when it grows, and what is
/// read into it is copied into `buf` ([`read`]): a copy of the bytes read
/// costs less than zeroing the whole room before every read.
///
/// [`for_read`]: ReadBuf::for_read
/// [`room`]: ReadBuf::room
/// [`read`]: ReadBuf::read
#[derive(Debug, Default)]
pub(super) struct ReadBuf {
    pub(super) buf: BytesMut,
    /// What one read asks for at most (`Config::read_size`, up to 4 GiB).
    size: u32,
    /// After how long a wait the buffers are given back
    /// (`Config::release_after`).
    /// In milliseconds, rounded up (49 days at most): 4 bytes, not 16.
    release_after: u32,
    /// Initialized room for readers that need it (empty until one asks).
    /// A boxed slice, not a `Vec`: it only ever grows, in one step, and
    /// 8 bytes fewer in every connection.
    room: Box<[u8]>,
    /// The last read went through `room`.
    via_room: bool,
    /// No buffer is held (a new connection, or the buffers were given
    /// back) and nothing was read since: reads ask for [`EMPTY_READ`].
    empty: bool,
    /// The buffers were given back: no release is due until bytes come.
    released: bool,
    /// What the next read asks for (before the `read_size` cap).
    next: u32,
    /// The room the last `for_read`, `room` or `lend` offered.
    offered: u32,
    /// The room after `buf` is lent to the driver ([`lend`](Self::lend)).
    pub(super) lent: bool,
}

impl ReadBuf {
    /// A new connection's: it holds no read buffer until bytes come.
    pub(super) fn new(config: &Config) -> Self {
        ReadBuf {
            size: narrow(config.read_size.max(1)),
            release_after: millis(config.release_after),
            next: BASE_READ as u32,
            empty: true,
            ..ReadBuf::default()
        }
    }

    /// What the next read asks for: little while no buffer is held (at
    /// first and after the buffers were given back), then a base read,
    /// doubling while reads fill what they are offered, up to `size`. A
    /// connection that carries small messages never holds a large buffer.
    #[inline]
    fn want(&self) -> usize {
        if self.empty {
            EMPTY_READ
        } else {
            self.next.min(self.size) as usize
        }
    }

    /// What one read asks for at most: how much input a session reads
    /// ahead of the application.
    #[inline]
    pub(super) fn size(&self) -> usize {
        self.size as usize
    }

    /// The buffer, with room for one read (see [`want`](Self::want)). It
    /// is grown (or its consumed front reclaimed) only once less than
    /// half of what a read asks for is left, so that small messages take
    /// several reads' worth of a buffer before it is reclaimed.
    #[inline]
    pub(super) fn for_read(&mut self) -> &mut BytesMut {
        let want = self.want();
        if self.buf.capacity() - self.buf.len() < want.div_ceil(2) {
            self.buf.reserve(want);
        }
        self.offered = narrow(self.buf.capacity() - self.buf.len());
        self.via_room = false;
        &mut self.buf
    }

    /// The room for one read (see [`want`](Self::want)), owned: split off
    /// the end of `buf` (the same allocation, no copy), empty, its
    /// capacity the room. `buf` keeps the bytes received and not yet
    /// decoded, and may go on decoding them while the room is out.
    pub(super) fn lend(&mut self) -> BytesMut {
        // Two rooms out at once would be joined back in the order they
        // are returned, not the order they were read into.
        assert!(
            !self.lent,
            "lend_read_buf: the room lent before was not given back"
        );
        self.for_read();
        self.lent = true;
        self.buf.split_off(self.buf.len())
    }

    /// Takes back the room [`lend`](Self::lend) gave out, with what was
    /// read into it: joined to `buf` without a copy when nothing moved
    /// `buf` meanwhile (it is copied otherwise).
    pub(super) fn return_room(&mut self, room: BytesMut) {
        self.lent = false;
        self.buf.unsplit(room);
    }

    /// Initialized room for one read (see [`want`](Self::want)), zeroed
    /// only when it grows.
    #[inline]
    pub(super) fn room(&mut self) -> &mut [u8] {
        let want = self.want();
        if self.room.len() < want {
            self.room = vec![0; want].into_boxed_slice();
        }
        self.offered = narrow(want);
        self.via_room = true;
        &mut self.room[..want]
    }

    /// Notes a read of `n > 0` bytes (into `room`, if the driver used it,
    /// whence they join `buf`): the buffers are in use again, and a read
    /// that filled its room asks for twice as much next time. The first
    /// read into a session that held no buffer goes on at a base read's
    /// size if it filled its small room (a large head), at the small size
    /// if not: a connection that carried one small message holds a small
    /// buffer while it waits. From the next read on, a read asks for a
    /// base read's worth at least.
    #[inline]
    pub(super) fn read(&mut self, n: usize) {
        if self.via_room {
            self.take_from_room(n);
        }
        let n = narrow(n);
        if self.empty {
            self.empty = false;
            self.released = false;
            self.next = if n >= self.offered {
                BASE_READ
            } else {
                EMPTY_READ
            } as u32;
        } else {
            // A second read: the connection is in use, and reads ask for at
            // least a base read's worth (a small buffer would be reclaimed
            // every other message).
            let next = if n >= self.offered {
                self.next.saturating_mul(2)
            } else {
                self.next
            };
            self.next = next.max(BASE_READ as u32);
        }
    }

    /// A buffer is held (or lent out): `false` for a new connection and
    /// once the buffers were given back, until the next read allocates
    /// its room.
    #[inline]
    pub(super) fn is_held(&self) -> bool {
        !self.empty || self.lent || self.buf.capacity() != 0 || !self.room.is_empty()
    }

    /// After how long the wait under way gives the buffers back, unless
    /// they are given back already.
    #[inline]
    pub(super) fn release_after(&self) -> Option<Duration> {
        (!self.released).then(|| Duration::from_millis(self.release_after.into()))
    }

    /// Moves the `n` bytes read into `room` to the end of `buf`.
    fn take_from_room(&mut self, n: usize) {
        let read = &self.room[..n.min(self.offered as usize)];
        // Room for a whole read, not just this one: the buffer's tail then
        // takes several small reads before it is reclaimed.
        if self.buf.capacity() - self.buf.len() < read.len() {
            self.buf.reserve(self.offered as usize);
        }
        self.buf.extend_from_slice(read);
    }

    /// Gives back what the buffers hold beyond their bytes: the read
    /// buffer keeps only what it has received, the output buffer nothing.
    /// A room lent to the driver stays with it (an owned read in flight
    /// need not be cancelled for this); the next read asks for little.
    pub(super) fn release(&mut self, output: &mut Segments) {
        if !self.released {
            self.released = true;
            self.empty = true;
            self.room = Box::default();
            output.release();
            if !self.lent {
                self.buf = BytesMut::from(&self.buf[..]);
            }
        }
    }
}

/// A size as the read buffer keeps it (`u32`, so that every connection's
/// session is smaller): past 4 GiB, 4 GiB.
#[inline]
fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `d` in whole milliseconds, rounded up (a release is never earlier than
/// asked for), at most `u32::MAX`.
fn millis(d: Duration) -> u32 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    u32::try_from(ms).unwrap_or(u32::MAX)
}
