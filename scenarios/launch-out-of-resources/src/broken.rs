//! The kernel is launched with the largest block the device allows, 1024
//! threads, as if every kernel could take it.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::names::*;
use crate::{BIG_BLOCK, kernel, launch, max_threads, registers};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    big_block(rec, "heavy")
}

fn big_block(rec: &mut Recorder, name: &str) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let heavy = kernel(rec, &ctx, name)?;
    let regs = registers(rec, &heavy)?;
    let limit = max_threads(rec, &heavy)?;
    rec.measure(REGISTERS, regs.into());
    rec.measure(MAX_THREADS, limit.into());
    rec.fact(OVER_LIMIT, BIG_BLOCK as i32 > limit);
    // BUG: a block size chosen without asking what this kernel can take.
    let big = launch(
        rec,
        &ctx,
        &heavy,
        BIG_BLOCK,
        &format!("cuLaunchKernel {name} (1024 threads)"),
    );
    rec.fact(LAUNCHED_1024, big.is_ok());
    // The launch was refused before it ran: a smaller block still works.
    let later = launch(
        rec,
        &ctx,
        &heavy,
        256,
        &format!("later: cuLaunchKernel {name} (256 threads)"),
    );
    rec.fact(LATER_CALL, later.is_ok());
    Ok(())
}
// ANCHOR_END: run

// ANCHOR: bounded
/// The control of "failure to do so could result in too many resources
/// requested for launch": the same program, its kernel the one compiled
/// with `__launch_bounds__(1024)`.
pub fn bounded(rec: &mut Recorder) -> anyhow::Result<()> {
    big_block(rec, "heavy_bounded")
}
// ANCHOR_END: bounded
