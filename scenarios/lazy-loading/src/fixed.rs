//! The releasing kernel is loaded into the context (cuKernelGetFunction,
//! cuFuncLoad) before the waiting kernel starts, so its first launch has
//! nothing to load.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use casebook_runtime::worker;
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

/// The passage's other remedy, read in the same run: the broken program in
/// a worker under CUDA_MODULE_LOADING=EAGER. Is the waiter released there,
/// and does the releasing kernel's first launch return at once, its code
/// loaded before it (the passage says EAGER does not force each function to
/// load eagerly)?
pub fn with_eager(rec: &mut Recorder) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(crate::eager::ROLE) {
        return crate::broken::run(rec);
    }
    run(rec)?;
    let eager = crate::eager::under_eager(rec)?;
    rec.fact(
        UNDER_EAGER_THE_WAITER_IS_RELEASED,
        eager.check(RELEASED) == Some(true),
    );
    if let Some(returned) = eager.fact_text(LAUNCH_RETURNED) {
        rec.fact(
            UNDER_EAGER_THE_RELEASING_KERNEL_IS_LOADED_BEFORE_ITS_FIRST_LAUNCH,
            returned == crate::AT_ONCE_TEXT,
        );
    }
    Ok(())
}
// ANCHOR_END: run
