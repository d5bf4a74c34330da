//! The broken program, unchanged, in a worker process started with
//! CUDA_MODULE_LOADING=EAGER: every kernel is loaded with its module. The
//! worker reads, before any launch, whether the releasing kernel's code is
//! in the context already (cuFuncIsLoaded).

use std::time::Duration;

use casebook_model::{Outcome, Recorder, device};
use casebook_runtime::worker;
use cudarc::driver::sys;

use crate::names::*;

/// The worker's role.
pub(crate) const ROLE: &str = "broken program with CUDA_MODULE_LOADING=EAGER";

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(ROLE) {
        return in_worker(rec);
    }
    let outcome = under_eager(rec)?;
    rec.check(RELEASED, outcome.check(RELEASED) == Some(true));
    Ok(())
}

/// Runs the broken program in a worker under CUDA_MODULE_LOADING=EAGER and
/// copies what it recorded into this variant's record.
pub(crate) fn under_eager(rec: &mut Recorder) -> anyhow::Result<Outcome> {
    let outcome = worker::run(
        ROLE,
        Duration::from_secs(60),
        &[("CUDA_MODULE_LOADING", "EAGER")],
    )?;
    worker::replay(rec, ROLE, &outcome);
    Ok(outcome)
}

/// In the worker: the broken program, the releasing kernel's loading state
/// read first, before either kernel is launched.
pub(crate) fn in_worker(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let kernels = crate::load(rec)?;
    let mut release: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: a live kernel handle, an out-pointer to a local; the context
    // is current on this thread.
    unsafe {
        rec.step(
            "cuKernelGetFunction release",
            sys::cuKernelGetFunction(&mut release, kernels.release).result(),
        )?;
    }
    let state = crate::loading_state(rec, release)?;
    rec.fact(BEFORE_ITS_FIRST_LAUNCH, state);
    crate::run_pair(rec, &ctx, &kernels)
}
