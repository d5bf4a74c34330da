//! "Even with cudaFreeAsync, the memory is not instantly available": a
//! phase whose work is done (its stream synchronised) frees its memory and
//! reads the device's free memory at once, before any other synchronise,
//! at the pool's default release threshold. The memory comes from the
//! stream-ordered pool and goes back with cuMemFreeAsync
//! (`free-async-at-once`), or from cuMemAlloc and goes back with cuMemFree
//! (`free-at-once`, the control). Then the same size is asked for again on
//! the same stream, before any synchronise: does it take memory from the
//! device, or is it served from what the free left with the allocator?

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::names::*;
use crate::{SHARE, TOLERANCE};

/// Where the phase's memory comes from and how it goes back.
#[derive(Clone, Copy)]
enum Allocator {
    /// cuMemAllocAsync and cuMemFreeAsync: the stream-ordered pool.
    Pool,
    /// cuMemAlloc and cuMemFree.
    Plain,
}

pub fn free_async(rec: &mut Recorder) -> anyhow::Result<()> {
    at_once(rec, Allocator::Pool)
}

pub fn free_plain(rec: &mut Recorder) -> anyhow::Result<()> {
    at_once(rec, Allocator::Plain)
}

// ANCHOR: at_once
fn at_once(rec: &mut Recorder, allocator: Allocator) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = ctx.default_stream();
    let s = stream.cu_stream();
    let baseline = device::free_bytes(rec, &ctx)?;
    let bytes = (baseline as f64 * SHARE) as usize / PAGE * PAGE;
    // SAFETY: the memory is used by this stream only and freed below.
    let ptr = match allocator {
        Allocator::Pool => {
            rec.step("cuMemAllocAsync", unsafe { result::malloc_async(s, bytes) })?
        }
        Allocator::Plain => rec.step("cuMemAlloc", unsafe { result::malloc_sync(bytes) })?,
    };
    rec.step("cuMemsetD8Async", unsafe {
        result::memset_d8_async(ptr, 1, bytes, s)
    })?;
    // The work is done before the free: nothing uses the memory any more.
    unsafe { device::stream::synchronize(rec, "cuStreamSynchronize (the work is done)", s)? };
    match allocator {
        Allocator::Pool => rec.step("cuMemFreeAsync", unsafe { result::free_async(ptr, s) })?,
        Allocator::Plain => rec.step("cuMemFree", unsafe { result::free_sync(ptr) })?,
    }
    let right_after = device::free_bytes(rec, &ctx)?;
    // ANCHOR_END: at_once
    measure_bytes(rec, FREE_AT_START, baseline);
    measure_bytes(rec, PHASE_BYTES, bytes);
    measure_bytes(rec, FREE_RIGHT_AFTER_THE_FREE, right_after);
    rec.fact(
        THE_FREED_MEMORY_IS_BACK_AT_ONCE,
        right_after + TOLERANCE >= baseline,
    );
    // The next request of the same size, on the same stream, before any
    // synchronise: served from what the free left with the allocator, or
    // taken from the device's free memory again.
    // SAFETY: freed at once, used by nothing.
    let again = match allocator {
        Allocator::Pool => rec.step("cuMemAllocAsync (the same size again)", unsafe {
            result::malloc_async(s, bytes)
        })?,
        Allocator::Plain => rec.step("cuMemAlloc (the same size again)", unsafe {
            result::malloc_sync(bytes)
        })?,
    };
    let after_again = device::free_bytes(rec, &ctx)?;
    measure_bytes(rec, FREE_AFTER_THE_SAME_SIZE_AGAIN, after_again);
    rec.fact(
        THE_SAME_SIZE_AGAIN_TAKES_NO_MEMORY_FROM_THE_DEVICE,
        after_again + TOLERANCE >= right_after,
    );
    match allocator {
        Allocator::Pool => rec.step("cuMemFreeAsync", unsafe { result::free_async(again, s) })?,
        Allocator::Plain => rec.step("cuMemFree", unsafe { result::free_sync(again) })?,
    }
    unsafe { device::stream::synchronize(rec, "cuStreamSynchronize", s)? };
    let synchronised = device::free_bytes(rec, &ctx)?;
    measure_bytes(rec, FREE_AFTER_A_SYNCHRONISE, synchronised);
    Ok(())
}
