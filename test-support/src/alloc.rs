//! The counting allocator: the system allocator, with counters beside it.
//!
//! A binary installs it once, at its root:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: h1proto_test_support::alloc::Counting = h1proto_test_support::alloc::Counting;
//! ```
//!
//! and reads what it needs:
//!
//! - per thread (tests that run beside others in one binary): the heap this
//!   thread has live ([`thread_live`]) and the allocations it made
//!   ([`thread_allocations`]);
//! - per process (a binary with one test, or a bench): allocations and bytes
//!   asked for ([`counters`]), the heap live ([`live`]) and its peak
//!   ([`peak`], restarted by [`reset_peak`]).
//!
//! An allocation is an `alloc`, `alloc_zeroed` or `realloc` (which may
//! move); frees are not counted as allocations but lower the heap live.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};

/// The system allocator, counting (see the module's documentation).
pub struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    static THREAD_ALLOCS: Cell<usize> = const { Cell::new(0) };
    static THREAD_LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Notes `allocs` allocations asking for `asked` bytes, and the heap live
/// changing by `delta`.
fn note(allocs: usize, asked: usize, delta: isize) {
    if allocs > 0 {
        ALLOCS.fetch_add(allocs as u64, Ordering::Relaxed);
        BYTES.fetch_add(asked as u64, Ordering::Relaxed);
    }
    let live = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
    PEAK.fetch_max(live, Ordering::Relaxed);
    // `try_with`: the thread-locals may be gone while a thread exits.
    let _ = THREAD_ALLOCS.try_with(|n| n.set(n.get() + allocs));
    let _ = THREAD_LIVE.try_with(|l| l.set(l.get() + delta));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size(), layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size(), layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, 0, -(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(1, new_size, new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations and bytes asked for so far, by the whole process.
pub fn counters() -> (u64, u64) {
    (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    )
}

/// The heap the whole process has live (since it started).
pub fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// The most heap the whole process had live since the last
/// [`reset_peak`].
pub fn peak() -> isize {
    PEAK.load(Ordering::Relaxed)
}

/// Restarts [`peak`] from the heap live now, and returns that.
pub fn reset_peak() -> isize {
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    base
}

/// Allocations this thread made so far.
pub fn thread_allocations() -> usize {
    THREAD_ALLOCS.with(Cell::get)
}

/// The heap this thread has live: what it allocated less what it freed
/// (a block freed by another thread counts there).
pub fn thread_live() -> isize {
    THREAD_LIVE.with(Cell::get)
}
