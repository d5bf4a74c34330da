//! `device-assert`: an embedding lookup whose kernel asserts its index is in
//! range is given one index past the table's end. The kernel's `assert()`
//! fails, the next synchronisation returns "device-side assert triggered",
//! and from then on every call in the process returns the same error,
//! whatever it does. In Rust, cudarc's buffers free themselves in `Drop`,
//! which cannot return that error: cudarc parks it in the context, and the
//! next call through the context returns it. The fix checks the indices on
//! the host before the launch.

use std::sync::Arc;

use casebook_driver::ResultName;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, DriverError, LaunchConfig, PushKernelArg,
};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Entries in the table (as `kTableLen` in `device/gather.cuh`).
pub(crate) const TABLE_LEN: i32 = 1024;
/// Lookups per call (as `kLookups`).
pub(crate) const LOOKUPS: usize = 4096;

casebook_model::scenario!(Scenario {
    title: "CUDA error: device-side assert triggered, then every later call fails",
    cause: "A failed assert() in a kernel stops the kernel and corrupts the context, as an \
            illegal address does: the synchronisation after it returns the assert's error, \
            and so does every later call in that process. Only a new process gets a working \
            context.",
    fix: "Validate every index (class labels, embedding ids) against the table's length on the \
          host before the lookup kernel runs, and run it only with valid indices, so its assert() \
          never fires (sticky-error's validated-py does the same in PyTorch).",
    symptoms: &[
        "an error on the second call",
        "device-side assert triggered",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::ASSERT)).with_broken(|v| v.faults_device()),
        Variant::contrast_clean("in-range", cudarc!(broken::in_range)).one_change(
            "broken",
            "whether one index is past the table's end: yes there, so the kernel asserts; no \
             here, so the retries come after a lookup that worked",
            "lookup_then_retry(rec, true)",
            "lookup_then_retry(rec, false)",
        ),
        cpp_pair!(Symptom::cuda_error(runtime::ASSERT))
            // What the runtime returns on the first call after cudaDeviceReset in a
            // process whose device asserted.
            .then_shows(Symptom::cuda_error(runtime::DEVICES_UNAVAILABLE))
            .with_broken(|v| v.faults_device()),
        Variant::contrast_clean("in-range-cpp", cpp::in_range).one_change(
            "broken-cpp",
            "whether one index is past the table's end: yes there, so the kernel asserts; no \
             here, so the reset comes after a lookup that worked",
            "return lookup_then_reset(r, true);",
            "return lookup_then_reset(r, false);",
        ),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "chelsea0x3b/cudarc#396",
        shows: "a device-side assert under cudarc 0.16.0 made the whole program panic without \
                unwinding: the backtrace runs through `CudaEvent::drop`, whose `unwrap` met the \
                error as a `CudaSlice` was dropped. cudarc#399 made `Drop` park the error in the \
                context instead, where the next call returns it.",
    },
    Report {
        id: "pytorch/pytorch#2300",
        shows: "`cuda runtime error (59) : device-side assert triggered` from an out-of-range index \
                into `nn.Embedding`; afterwards \"any valid statement will fail\" with the same \
                error, and a maintainer answered that the whole CUDA context is put into an \
                incorrect state.",
    },
    Report {
        id: "pytorch/pytorch#44624",
        shows: "an out-of-range input to `binary_cross_entropy`, caught with try/except: \"now all \
                operations give a RuntimeError\".",
    },
    Report {
        id: "vllm-project/vllm#11931",
        shows: "`CUDA error: device-side assert triggered` in model execution; vLLM's own attempt to \
                save the failing inputs then failed with the same error.",
    },
    Report {
        id: "Scalsol/RepPointsV2#15",
        shows: "freeing a tensor after the assert threw `CUDA error: device-side assert triggered` \
                from PyTorch's caching allocator inside a destructor, and the process aborted: \
                the C++ form of a Rust `Drop` meeting the error.",
    },
];

static CUDA_ERROR_ASSERT: Passage = Passage {
    document: "CUDA Driver API",
    section: "Data types used by CUDA driver: CUresult, CUDA_ERROR_ASSERT",
    url: "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
    text: "A device-side assert triggered during kernel execution. The context cannot be used \
           anymore, and must be destroyed. All existing device memory allocations from this \
           context are invalid and must be reconstructed if the program is to continue using \
           CUDA.",
};

static ASSERTION: Passage = Passage {
    document: "CUDA C++ Programming Guide",
    section: "Assertion",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#assertion",
    text: "Any subsequent host-side synchronization calls made for the same device will return \
           cudaErrorAssert. No more commands can be sent to this device until cudaDeviceReset() \
           is called to reinitialize the device.",
};

static CUDA_ERROR_ASSERT_RUNTIME: Passage = Passage {
    document: "CUDA Runtime API",
    section: "Data types used by CUDA Runtime: cudaError, cudaErrorAssert",
    url: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    text: "An assert triggered in device code during kernel execution. The device cannot be used \
           again. All existing allocations are invalid. To continue using CUDA, the process must \
           be terminated and relaunched.",
};

/// The indices of one call: every entry of the table in turn, and, where
/// `past_the_end` says, one index equal to the table's length.
pub(crate) fn indices(past_the_end: bool) -> Vec<i32> {
    let mut index: Vec<i32> = (0..LOOKUPS as i32).map(|i| i % TABLE_LEN).collect();
    if past_the_end {
        index[LOOKUPS / 2] = TABLE_LEN;
    }
    index
}

pub(crate) fn table() -> Vec<f32> {
    (0..TABLE_LEN).map(|i| i as f32).collect()
}

/// Copies the table and the indices in and launches the lookup, then
/// synchronises: the launch returns before the kernel runs, so an assert
/// shows at the synchronisation. Returns the lookup's output.
pub(crate) fn lookup(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    gather: &CudaFunction,
    index: &[i32],
) -> Result<CudaSlice<f32>, DriverError> {
    let stream = ctx.default_stream();
    let table = rec.step(
        "cuMemAlloc + cuMemcpyHtoD (table)",
        stream.clone_htod(&table()),
    )?;
    let index = rec.step(
        "cuMemAlloc + cuMemcpyHtoD (indices)",
        stream.clone_htod(index),
    )?;
    let mut out = rec.step("cuMemAlloc (out)", stream.alloc_zeros::<f32>(LOOKUPS))?;
    let n = LOOKUPS as i32;
    let mut launch = stream.launch_builder(gather);
    launch
        .arg(&mut out)
        .arg(&table)
        .arg(&index)
        .arg(&n)
        .arg(&TABLE_LEN);
    rec.step("cuLaunchKernel gather", unsafe {
        launch.launch(LaunchConfig::for_num_elems(LOOKUPS as u32))
    })?;
    let synced = rec.step("cuStreamSynchronize", stream.synchronize());
    if let Err(e) = &synced {
        rec.fact(names::MESSAGE, message(e));
    }
    synced.map(|()| out)
}

pub(crate) use casebook_driver::device::message;

/// After the lookup: an unrelated call, allocating and freeing 1 MiB.
pub(crate) fn later_call(rec: &mut Recorder) {
    let name = match device::unrelated_call(rec, "later call") {
        Ok(()) => DriverError::SUCCESS.to_owned(),
        Err(e) => e.result_name(),
    };
    rec.fact(names::LATER_CALL, name);
}

/// What the driver's documentation asks after an assert: the primary
/// context destroyed (its reset), a new one retained and made current, and
/// a call in it.
pub(crate) fn destroy_and_retry(rec: &mut Recorder, ctx: &Arc<CudaContext>) {
    let dev = ctx.cu_device();
    // SAFETY: the callers forget the old context's objects (`ctx`, its
    // function) once this returns.
    let _ = unsafe { device::primary_ctx::reset(rec, dev) };
    let fresh = device::primary_ctx::retain_and_call(rec, dev, "new context");
    rec.fact(names::AFTER_DESTROY, fresh.is_ok());
    // The other way to a new context in the same process: one of its own.
    let created = (|| {
        use cudarc::driver::result;
        let created = rec.step("created context: cuCtxCreate", unsafe {
            result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
        })?;
        rec.step("created context: cuCtxSetCurrent", unsafe {
            result::ctx::set_current(created)
        })?;
        device::unrelated_call(rec, "created context")
    })();
    rec.fact(names::A_CREATED_CONTEXT_WORKS, created.is_ok());
}

/// The process started again: what it runs instead of the variant.
const RELAUNCHED: &str = "a new process";

/// In the process [`relaunch`] starts: its own context, one unrelated call
/// in it, and the lookup run again on valid indices, its result checked;
/// their results are the variant's. `None` in the trial's own process.
pub(crate) fn relaunched(rec: &mut Recorder) -> Option<anyhow::Result<()>> {
    (casebook_runtime::worker::role().as_deref() == Some(RELAUNCHED)).then(|| {
        let ctx = device::context(rec)?;
        device::unrelated_call(rec, "new process")?;
        let gather = gather(rec, &ctx)?;
        lookup_and_check(rec, &ctx, &gather, &indices(false))
    })
}

/// The lookup on indices that are all valid, its result copied back and
/// checked against the table.
pub(crate) fn lookup_and_check(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    gather: &CudaFunction,
    index: &[i32],
) -> anyhow::Result<()> {
    let found = lookup(rec, ctx, gather, index)?;
    let out = rec.step("cuMemcpyDtoH", ctx.default_stream().clone_dtoh(&found))?;
    let table = table();
    let right = out.iter().zip(index).all(|(&x, &k)| x == table[k as usize]);
    rec.check(names::GATHERED, right);
    Ok(())
}

/// The documentation's remedy: this program started again, as a process of
/// its own, makes its context and one unrelated call and runs the lookup
/// again ([`relaunched`]). (Not under compute-sanitizer, whose
/// pass runs the program itself.)
pub(crate) fn relaunch(rec: &mut Recorder) {
    if casebook_model::reduced_for_sanitizer(rec) {
        return;
    }
    use casebook_model::Termination;
    let relaunched = casebook_runtime::worker::run_replayed(
        rec,
        RELAUNCHED,
        std::time::Duration::from_secs(60),
        &[],
    );
    match relaunched {
        Ok(o) => {
            // It computes: it ran to its end, no call failed and its lookup
            // was right. It does not: it ran, and a call or the check
            // failed. A process killed or timed out is no answer.
            let ran = matches!(
                o.termination,
                Termination::Completed | Termination::ReturnedError
            );
            if ran {
                let computes = o.termination == Termination::Completed
                    && o.first_error().is_none()
                    && o.checks.iter().all(|c| c.ok)
                    && !o.checks.is_empty();
                rec.fact(names::A_NEW_PROCESS_COMPUTES, computes);
            }
        }
        Err(e) => rec.fact(names::RELAUNCH_FAILED, e.to_string()),
    }
}

/// What cudarc parked in the context from a `Drop` that met an error.
pub(crate) fn parked(rec: &mut Recorder, ctx: &Arc<CudaContext>) {
    let parked = rec.step("CudaContext::check_err", ctx.check_err());
    let name = match parked {
        Ok(()) => "none".to_owned(),
        Err(e) => e.result_name(),
    };
    rec.fact(names::PARKED, name);
}

pub(crate) fn gather(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
) -> Result<CudaFunction, DriverError> {
    device::kernel(rec, ctx, fatbin::GATHER, "gather")
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-assert-reset-reinitialises",
        source: Source::Nvidia(&ASSERTION),
        quote: "No more commands can be sent to this device until cudaDeviceReset() is called to \
                reinitialize the device.",
        judged_by: "broken-cpp",
        control: Control::Run("in-range-cpp"),
        // No more commands: an unrelated call after the assert fails. Until
        // the reset: after cudaDeviceReset a call succeeds ("confirmed"),
        // or it still fails ("partly": the reset does not bring it back).
        // The control, in-range-cpp, is the same program with every index in
        // range (one change): no assert, the later call and the call after
        // the reset both succeed.
        judge: |o: &Outcome| match o.fact_text(LATER_CALL) {
            Some("cudaSuccess") => ClaimVerdict::Refuted,
            Some(_) => ClaimVerdict::when(
                o.flag(AFTER_RESET),
                ClaimVerdict::Confirmed,
                ClaimVerdict::Partly,
            ),
            None => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-assert-process-must-be-relaunched",
        source: Source::Nvidia(&CUDA_ERROR_ASSERT_RUNTIME),
        quote: "To continue using CUDA, the process must be terminated and relaunched.",
        judged_by: "broken",
        control: Control::Run("in-range"),
        // The process after the assert: does a call in a new context, once
        // the old one is destroyed, or in one it creates, work? And does the
        // same program,
        // started again as a process of its own, compute? No and yes:
        // confirmed, the process had to be relaunched. The call in the new
        // context works: refuted, the process could go on (in-range, the
        // same program with every index in range, is the control). Neither
        // works: partly, relaunching did not help either. (The Rust variant
        // destroys the
        // primary context with cuDevicePrimaryCtxReset, what the runtime's
        // cudaDeviceReset does; broken-cpp's call after cudaDeviceReset is
        // refused the same way.)
        judge: |o: &Outcome| match (
            o.flag(AFTER_DESTROY),
            o.flag(A_CREATED_CONTEXT_WORKS),
            o.flag(A_NEW_PROCESS_COMPUTES),
        ) {
            (Some(true), _, _) | (_, Some(true), _) => ClaimVerdict::Refuted,
            (Some(false), Some(false), Some(true)) => ClaimVerdict::Confirmed,
            (Some(false), Some(false), Some(false)) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-assert-context-unusable-until-destroyed",
        source: Source::Nvidia(&CUDA_ERROR_ASSERT),
        quote: "The context cannot be used anymore, and must be destroyed. All existing device \
                memory allocations from this context are invalid and must be reconstructed if the \
                program is to continue using CUDA.",
        judged_by: "broken",
        control: Control::Run("in-range"),
        // Unusable: an unrelated call after the assert fails. Destroying it
        // and reconstructing the allocations is what the passage gives for
        // going on with CUDA: a call in a new context succeeds
        // ("confirmed"), or it fails too ("partly": destroying is not enough
        // within this process).
        judge: |o: &Outcome| match o.fact_text(LATER_CALL) {
            Some(DriverError::SUCCESS) => ClaimVerdict::Refuted,
            Some(_) => ClaimVerdict::when(
                o.flag(AFTER_DESTROY),
                ClaimVerdict::Confirmed,
                ClaimVerdict::Partly,
            ),
            None => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];
