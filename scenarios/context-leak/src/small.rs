//! The article's own case, one context left behind after the first run, on a
//! GPU where that matters: a ballast in the device's primary context leaves
//! free memory for one context and a half, the way a smaller card or another
//! process's allocations would. Then broken's loop runs, and in the control
//! `destroyed`'s.

use casebook_driver::RecordSteps;
use casebook_driver::device::{self as driver, PAGE};
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::broken;

/// The calls each makes: past the second, the one the article's case is
/// about.
pub const SMALL_CALLS: usize = 8;

/// What the ballast leaves free: a context and a half (a context takes
/// 518 MiB of an H100 or an H200 when it is made).
pub const LEAVE: usize = 800 << 20;

/// Holds all of the device's free memory but `leave` in the primary
/// context, which stays current and alive until the process ends.
fn ballast(rec: &mut Recorder, leave: usize) -> anyhow::Result<()> {
    let ctx = driver::context(rec)?;
    let (free, _) = rec.step("cuMemGetInfo", result::mem_get_info())?;
    let bytes = free.saturating_sub(leave) / PAGE * PAGE;
    // SAFETY: the primary context is current; the ballast is never freed,
    // and goes with the process.
    rec.step("cuMemAlloc (a ballast: 800 MiB left free)", unsafe {
        result::malloc_sync(bytes)
    })?;
    std::mem::forget(ctx);
    Ok(())
}

// ANCHOR: one_context_left
pub fn one_context_left(rec: &mut Recorder) -> anyhow::Result<()> {
    ballast(rec, LEAVE)?;
    broken::left(rec, SMALL_CALLS)
}
// ANCHOR_END: one_context_left

// ANCHOR: one_context_destroyed
pub fn one_context_destroyed(rec: &mut Recorder) -> anyhow::Result<()> {
    ballast(rec, LEAVE)?;
    broken::destroying(rec, SMALL_CALLS)
}
// ANCHOR_END: one_context_destroyed
