//! The releasing kernel is loaded into the context (cuKernelGetFunction,
//! cuFuncLoad) before the waiting kernel starts, so its first launch has
//! nothing to load.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use casebook_runtime::worker;
use cudarc::driver::sys;
use std::time::Duration;

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
/// a worker under CUDA_MODULE_LOADING=EAGER. Is the waiter released there?
/// And is the releasing kernel's code in the context before its first
/// launch (the passage says EAGER does not force each function to load
/// eagerly)? That is read from the driver (cuFuncIsLoaded) in fresh
/// workers that launch nothing: under EAGER, under LAZY (where the answer
/// must be "not loaded", or the reading cannot tell), and under the legacy
/// CUDA_MODULE_DATA_LOADING=EAGER, whose meaning the clause carries.
pub fn with_eager(rec: &mut Recorder) -> anyhow::Result<()> {
    let role = worker::role();
    if role.as_deref() == Some(crate::eager::ROLE) {
        return crate::broken::run(rec);
    }
    if PROBES.iter().any(|p| Some(p.role) == role.as_deref()) {
        return probe(rec);
    }
    run(rec)?;
    let eager = crate::eager::under_eager(rec)?;
    rec.fact(
        UNDER_EAGER_THE_WAITER_IS_RELEASED,
        eager.check(RELEASED) == Some(true),
    );
    for p in PROBES {
        let read = worker::run_replayed(rec, p.role, Duration::from_secs(60), p.env)?;
        if let Some(state) = read.fact_text(LOADING_STATE) {
            rec.fact(p.fact, state == "loaded");
        }
    }
    Ok(())
}
// ANCHOR_END: run

/// A fresh worker that reads whether the releasing kernel's code is in the
/// context, under one loading mode.
struct Probe {
    role: &'static str,
    env: &'static [(&'static str, &'static str)],
    fact: casebook_model::FactName,
}

const PROBES: [Probe; 3] = [
    Probe {
        role: "loading state under CUDA_MODULE_LOADING=EAGER",
        env: &[("CUDA_MODULE_LOADING", "EAGER")],
        fact: UNDER_EAGER_THE_RELEASING_KERNEL_IS_LOADED_BEFORE_ITS_FIRST_LAUNCH,
    },
    Probe {
        role: "loading state under CUDA_MODULE_LOADING=LAZY",
        env: &[("CUDA_MODULE_LOADING", "LAZY")],
        fact: UNDER_LAZY_THE_RELEASING_KERNEL_IS_LOADED_BEFORE_ITS_FIRST_LAUNCH,
    },
    Probe {
        role: "loading state under CUDA_MODULE_LOADING=LAZY, CUDA_MODULE_DATA_LOADING=EAGER",
        env: &[
            ("CUDA_MODULE_LOADING", "LAZY"),
            ("CUDA_MODULE_DATA_LOADING", "EAGER"),
        ],
        fact: UNDER_DATA_LOADING_EAGER_THE_RELEASING_KERNEL_IS_LOADED_BEFORE_ITS_FIRST_LAUNCH,
    },
];

/// The kernels loaded as the program loads them, the releasing kernel's
/// function for this context asked for, nothing launched: is its code in
/// the context?
fn probe(rec: &mut Recorder) -> anyhow::Result<()> {
    let _ctx = device::context(rec)?;
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
    rec.fact(LOADING_STATE, state);
    Ok(())
}
