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
    let release = crate::release_function(rec, &kernels)?;
    // SAFETY: a live function handle of the current context.
    rec.step("cuFuncLoad release", unsafe {
        sys::cuFuncLoad(release).result()
    })?;
    let state = crate::loading_state(rec, release)?;
    rec.fact(PRELOADED, state);
    crate::run_pair(rec, &ctx, &kernels)
}

/// The passage's other remedy, read in the same run: the broken program in
/// a worker under CUDA_MODULE_LOADING=EAGER. Is the waiter released there?
/// And is the releasing kernel's code in the context before its first
/// launch (the passage says EAGER does not force each function to load
/// eagerly)? That is read from the driver (cuFuncIsLoaded) in fresh
/// workers that launch nothing: under EAGER, under LAZY, and under the
/// legacy CUDA_MODULE_DATA_LOADING=EAGER, whose meaning the clause carries.
/// Each worker reads three ways ([`READINGS`]); a reading tells only where
/// LAZY reads "not loaded" by it, and the first that does decides.
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
    let mut read = Vec::new();
    for p in PROBES {
        read.push(worker::run_replayed(
            rec,
            p.role,
            Duration::from_secs(60),
            p.env,
        )?);
    }
    // PROBES[1] is LAZY: the first reading by which it says "not loaded",
    // else the last (by which everything reads "loaded").
    let by = READINGS
        .iter()
        .find(|r| read[1].fact_text(**r) == Some("not loaded"))
        .unwrap_or(&READINGS[READINGS.len() - 1]);
    rec.fact(THE_READING, by.0);
    for (p, outcome) in PROBES.iter().zip(&read) {
        if let Some(state) = outcome.fact_text(*by)
            && (state == "loaded" || state == "not loaded")
        {
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

/// The three readings, in the order a worker makes them (each before the
/// next can load anything): the library's kernel handle given to
/// cuFuncIsLoaded as a function, as a launch may be given it; the same
/// image loaded as a module and its function asked for by name
/// (cuModuleGetFunction); the kernel's function for the context asked for
/// (cuKernelGetFunction), which the H100 run of 2edb1f8 showed loads it.
const READINGS: [casebook_model::FactName; 3] = [
    BY_THE_KERNEL_HANDLE,
    BY_THE_MODULE_S_FUNCTION,
    LOADING_STATE,
];

/// The kernels loaded as the program loads them, nothing launched: is the
/// releasing kernel's code in the context, by each reading?
fn probe(rec: &mut Recorder) -> anyhow::Result<()> {
    let _ctx = device::context(rec)?;
    let kernels = crate::load(rec)?;
    rec.fact(
        BY_THE_KERNEL_HANDLE,
        state_of(kernels.release as sys::CUfunction),
    );
    let mut module: sys::CUmodule = std::ptr::null_mut();
    let mut function: sys::CUfunction = std::ptr::null_mut();
    let image = crate::fatbin::RELEASE.to_vec();
    // SAFETY: a fatbin image; out-pointers to locals.
    let asked = unsafe {
        sys::cuModuleLoadData(&mut module, image.as_ptr().cast())
            .result()
            .and_then(|()| {
                sys::cuModuleGetFunction(&mut function, module, c"release".as_ptr()).result()
            })
    };
    rec.fact(
        BY_THE_MODULE_S_FUNCTION,
        match asked {
            Ok(()) => state_of(function),
            Err(e) => format!("refused: {:?}", e.0),
        },
    );
    let release = crate::release_function(rec, &kernels)?;
    let state = crate::loading_state(rec, release)?;
    rec.fact(LOADING_STATE, state);
    Ok(())
}

/// cuFuncIsLoaded on `f`, in words, without stopping the worker where the
/// driver refuses the question.
fn state_of(f: sys::CUfunction) -> String {
    let mut state = sys::CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_UNLOADED;
    // SAFETY: an out-pointer to a local; the driver checks the handle.
    match unsafe { sys::cuFuncIsLoaded(&mut state, f) } {
        sys::cudaError_enum::CUDA_SUCCESS => crate::state_words(state).to_owned(),
        e => format!("refused: {e:?}"),
    }
}
