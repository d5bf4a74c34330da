//! `caching-allocator-hold`: a caching allocator, in the manner of
//! PyTorch's, keeps the blocks a program frees and hands them out again
//! without asking the driver. Memory nothing uses stays reserved: another
//! process (an evaluation job, a second training run) cannot have it. The
//! fix releases the cache between phases, the analogue of
//! `torch.cuda.empty_cache()`; the fixed variant also shows where that does
//! not help: blocks still referenced are not in the cache, and stay.
//!
//! PyTorch's own allocator empties its cache and retries when the driver
//! refuses it in the same process; no allocator can do that for another
//! process, which is the failure shown here.

use std::collections::HashMap;

use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_driver::prelude::*;
use casebook_runtime::worker;
use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;

mod broken;
mod fixed;

casebook_model::case_modules!();

/// The first phase reserves this share of the free memory; the other
/// process then asks for the same share, so the two cannot both fit.
const SHARE: f64 = 0.6;
/// The first phase's blocks (activations, say).
const BLOCKS: usize = 8;

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory in the next job though the first freed everything (a caching allocator holds it)",
    cause: "A caching allocator keeps freed blocks reserved for reuse: allocated drops to zero, reserved \
            does not, and no other process can have that memory. Release the cache between phases \
            (torch.cuda.empty_cache()); it cannot release blocks still referenced.",
    fix: "Between phases, once the phase's blocks are freed, release the caching allocator's cache \
          to the driver (torch.cuda.empty_cache() in PyTorch); blocks still referenced are not \
          released, so drop them first.",
    symptoms: &["out of memory", "out of memory though memory is free"],
    requires: Requirement::GPU_FILLED,
    claims: &[],
    variants: variants![cudarc_pair!(Symptom::check_failed(OTHER)),],
});

// ANCHOR: allocator
/// Freed blocks go to a cache by size, not back to the driver.
#[derive(Default)]
pub(crate) struct Caching {
    cache: HashMap<usize, Vec<CUdeviceptr>>,
    /// Bytes taken from the driver.
    pub reserved: usize,
    /// Bytes handed out and not yet freed.
    pub allocated: usize,
}

impl Caching {
    pub fn alloc(&mut self, rec: &mut Recorder, bytes: usize) -> anyhow::Result<CUdeviceptr> {
        self.allocated += bytes;
        if let Some(ptr) = self.cache.get_mut(&bytes).and_then(Vec::pop) {
            return Ok(ptr); // reused, the driver never asked
        }
        let ptr = rec.step("cuMemAlloc", unsafe { result::malloc_sync(bytes) })?;
        self.reserved += bytes;
        Ok(ptr)
    }

    pub fn free(&mut self, ptr: CUdeviceptr, bytes: usize) {
        self.allocated -= bytes;
        self.cache.entry(bytes).or_default().push(ptr); // kept, not freed
    }

    /// `torch.cuda.empty_cache()`: every cached block back to the driver.
    /// Returns the bytes released.
    pub fn empty_cache(&mut self, rec: &mut Recorder) -> anyhow::Result<usize> {
        let mut released = 0;
        for (bytes, ptrs) in self.cache.drain() {
            for ptr in ptrs {
                rec.step("cuMemFree", unsafe { result::free_sync(ptr) })?;
                released += bytes;
            }
        }
        self.reserved -= released;
        Ok(released)
    }
}
// ANCHOR_END: allocator

impl Caching {
    /// Records reserved against allocated as points of two series.
    pub fn plot(&self, rec: &mut Recorder, x: usize) {
        rec.point(RESERVED_BYTES, x as f64, self.reserved as f64);
        rec.point(ALLOCATED_BYTES, x as f64, self.allocated as f64);
    }
}

/// The run both variants share: the first phase allocates its blocks, and
/// `phase_over` is what the program does when it ends (broken: frees them
/// to the cache; fixed: that and more). Then another process asks.
pub(crate) fn run(
    rec: &mut Recorder,
    phase_over: fn(&mut Recorder, &mut Caching, Vec<CUdeviceptr>, usize) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if let Some(done) = worker::neighbour(rec) {
        return done;
    }
    let ctx = device::context(rec)?;
    let free = device::free_bytes(rec, &ctx)?;
    let share = (free as f64 * SHARE) as usize / PAGE * PAGE;
    let block = share / BLOCKS / PAGE * PAGE;
    measure_bytes(rec, FREE_AT_START, free);
    measure_bytes(rec, BLOCK_BYTES, block);
    let mut alloc = Caching::default();
    let mut blocks = Vec::new();
    for i in 0..BLOCKS {
        blocks.push(rec.iteration("a block of the first phase", |rec| alloc.alloc(rec, block))?);
        alloc.plot(rec, i + 1);
    }
    phase_over(rec, &mut alloc, blocks, block)?;
    alloc.plot(rec, BLOCKS + 1);
    measure_bytes(rec, RESERVED_WHEN_THE_PHASE_IS_OVER_BYTES, alloc.reserved);
    measure_bytes(rec, ALLOCATED_WHEN_THE_PHASE_IS_OVER_BYTES, alloc.allocated);
    rec.fact(ALLOCATED_WHEN_THE_PHASE_IS_OVER, alloc.allocated);
    rec.fact(
        RESERVED_WHEN_THE_PHASE_IS_OVER,
        match alloc.reserved {
            0 => "nothing",
            r if r == block * BLOCKS => "the whole phase",
            _ => "part of the phase",
        },
    );
    let served = worker::neighbour_allocates(rec, block * BLOCKS)?;
    rec.check(OTHER, served);
    alloc.empty_cache(rec)?;
    Ok(())
}
