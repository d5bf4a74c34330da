//! The block size comes from the occupancy API, which reads the kernel's
//! registers and shared memory and suggests the block that keeps the most
//! threads resident.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;

use crate::names::*;
use crate::{kernel, launch, max_threads, right};

extern "C" fn no_shared_memory(_block: std::ffi::c_int) -> usize {
    0
}

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let heavy = kernel(rec, &ctx, "heavy")?;
    // FIX: ask the driver which block this kernel can take.
    let (_grid, block) = rec.step(
        "cuOccupancyMaxPotentialBlockSize",
        heavy.occupancy_max_potential_block_size(no_shared_memory, 0, 0, None),
    )?;
    rec.measure(BLOCK, block.into());
    let limit = max_threads(rec, &heavy)?;
    rec.fact(FITS, block as i32 <= limit);
    let resident = |size: u32| {
        heavy
            .occupancy_max_active_blocks_per_multiprocessor(size, 0, None)
            .map(|blocks| blocks * size)
    };
    let best = rec.step(
        "cuOccupancyMaxActiveBlocksPerMultiprocessor (each block size)",
        (32..=limit as u32)
            .step_by(32)
            .map(resident)
            .try_fold(0, |best, threads| threads.map(|t| best.max(t))),
    )?;
    let suggested = rec.step(
        "cuOccupancyMaxActiveBlocksPerMultiprocessor (suggested block)",
        resident(block),
    )?;
    rec.fact(SUGGESTED_IS_BEST, suggested >= best);
    let out = launch(
        rec,
        &ctx,
        &heavy,
        block,
        "cuLaunchKernel heavy (suggested block)",
    )?;
    rec.check(RESULTS_RIGHT, right(&out));
    Ok(())
}
// ANCHOR_END: run
