//! A counting global allocator for allocation tests. Include it with
//! `#[path = "support/counting_alloc.rs"] mod counting_alloc;` in a test file
//! of its own; counts are per thread, so parallel tests do not disturb them.
#![allow(dead_code, unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn grow(by: usize) {
    LIVE.with(|l| {
        let now = l.get() + by;
        l.set(now);
        PEAK.with(|p| p.set(p.get().max(now)));
    });
}

fn shrink(by: usize) {
    LIVE.with(|l| l.set(l.get().saturating_sub(by)));
}

// SAFETY: every method delegates to the system allocator with the caller's
// arguments; the bookkeeping touches only const-initialized thread locals.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        grow(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        grow(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        shrink(layout.size());
        grow(new_size);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations (and reallocations) made by this thread so far.
pub fn allocs() -> usize {
    ALLOCS.with(Cell::get)
}

/// Bytes this thread holds allocated now (frees from other threads of this
/// thread's blocks are not seen).
pub fn live_bytes() -> usize {
    LIVE.with(Cell::get)
}

/// Resets the peak to the current live bytes; returns the current live bytes.
pub fn reset_peak() -> usize {
    let now = live_bytes();
    PEAK.with(|p| p.set(now));
    now
}

/// The highest live bytes since the last `reset_peak`.
pub fn peak_bytes() -> usize {
    PEAK.with(Cell::get)
}
