//! The releasing kernel is loaded into the context (cuKernelGetFunction,
//! cuFuncLoad) before the waiting kernel starts, so its first launch has
//! nothing to load.

use casebook_model::{Recorder, device};
use cudarc::driver::sys;

use crate::names::*;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let kernels = crate::load(rec)?;
    // FIX: load every kernel that must run side by side before starting any.
    let mut release: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: a live kernel handle, an out-pointer to a local; the context
    // is current on this thread.
    unsafe {
        rec.step(
            "cuKernelGetFunction release",
            sys::cuKernelGetFunction(&mut release, kernels.release).result(),
        )?;
        rec.step("cuFuncLoad release", sys::cuFuncLoad(release).result())?;
    }
    let state = crate::loading_state(rec, release)?;
    rec.fact(PRELOADED, state);
    crate::run_pair(rec, &ctx, &kernels)
}
// ANCHOR_END: run
