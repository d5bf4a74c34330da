//! `sticky-error`: a kernel faults (an illegal address) in a first "model
//! call". Every later call in that process fails too, with the same error,
//! whatever it does; resetting the device does not bring the process back.
//! What recovers is running the risky call in a child process.

use std::sync::Arc;

use casebook_model::{
    Claim, ClaimVerdict, Outcome, Recorder, Requirement, ResultName, Scenario, Symptom, Variant,
    cudarc,
};
use cudarc::driver::{CudaContext, CudaFunction, DriverError, LaunchConfig, PushKernelArg, result};

mod broken;
mod fixed;

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/sticky_error.cu" {
        as_written: casebook_sticky_error_as_written_cpp,
    }
}

pub(crate) const FAULT: &str = "CUDA_ERROR_ILLEGAL_ADDRESS";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "sticky-error",
        title: "CUDA error on the second call: an illegal memory access was encountered",
        cause: "A kernel fault (illegal address, misaligned access, trap) corrupts the context: \
                every later call in the process returns the same error, and cudaDeviceReset \
                does not recover it. Only a new process does.",
        symptoms: &[
            "an error on the second call",
            "an illegal memory access was encountered",
        ],
        requires: Requirement::GPU,
        claims: CLAIMS,
        variants: vec![
            Variant::broken("broken", Symptom::cuda_error(FAULT), cudarc!(broken)),
            Variant::fixed("fixed", cudarc!(fixed)).also_differs(
                "the risky call runs in a child process started before the parent touches \
                     CUDA, and `broken`'s attempt at recovery (the device reset) is gone: the \
                     fix is the process boundary, so the program is shaped around it.",
            ),
            Variant::as_written("as-written-cpp", cpp::as_written),
        ],
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-reset-gives-a-clean-context",
        seed: "000_1633914ffce0e075.txt",
        quote: "This example explicitly uses `cudaDeviceReset()` to ensure a clean context between calls.",
        judged_by: "as-written-cpp",
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(AFTER_RESET)),
    },
    Claim {
        id: "000-second-call-error-from-missing-reset",
        seed: "000_1633914ffce0e075.txt",
        quote: "The recurring CUDA error on a second model call frequently stems from resource \
                mismanagement, specifically the failure to properly reset the CUDA context or release \
                allocated memory.",
        judged_by: "broken",
        // The second call does fail after a fault; whether a reset would
        // have prevented it decides between "confirmed" and "partly".
        judge: |o: &Outcome| {
            let second_failed = o
                .fact(SECOND)
                .and_then(|v| v.as_str())
                .is_some_and(|r| r != "CUDA_SUCCESS");
            match (second_failed, o.flag(AFTER_RESET)) {
                (true, Some(true)) => ClaimVerdict::Confirmed,
                (true, Some(false)) => ClaimVerdict::Partly,
                (false, _) => ClaimVerdict::Refuted,
                (true, None) => ClaimVerdict::Undecided,
            }
        },
    },
    Claim {
        id: "000-leftover-state-fails-later-calls",
        seed: "000_1633914ffce0e075.txt",
        quote: "If a previous call leaves behind allocated memory, improperly closed streams, or an otherwise \
                inconsistent context, subsequent calls will fail.",
        judged_by: "broken",
        // A corrupted context does fail every later call; memory left
        // behind does not (missing-free's later calls succeed until memory
        // runs out), so the sentence holds in part.
        judge: |o: &Outcome| match o.fact(SECOND).and_then(|v| v.as_str()) {
            Some(r) if r != "CUDA_SUCCESS" => ClaimVerdict::Partly,
            Some(_) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
    },
];

pub(crate) fn name<T>(result: &Result<T, DriverError>) -> String {
    match result {
        Ok(_) => DriverError::SUCCESS.to_owned(),
        Err(e) => e.result_name(),
    }
}

/// The first model call: its kernel writes through a null pointer. The
/// fault is provoked, so its error is recorded as such.
pub(crate) fn faulting_call(rec: &mut Recorder, ctx: &Arc<CudaContext>, fault: &CudaFunction) {
    let stream = ctx.default_stream();
    let no_wait = 0u64;
    let mut launch = stream.launch_builder(fault);
    launch.arg(&no_wait);
    let _ = rec.tolerate("first call: cuLaunchKernel spin_then_fault", unsafe {
        launch.launch(LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        })
    });
    let _ = rec.tolerate("first call: cuCtxSynchronize", ctx.synchronize());
}

/// A call that has nothing to do with the fault: allocate and free 1 MiB.
pub(crate) fn unrelated_call(rec: &mut Recorder, label: &str) -> Result<(), DriverError> {
    let buf = rec.step(&format!("{label}: cuMemAlloc"), unsafe {
        result::malloc_sync(1 << 20)
    })?;
    rec.step(&format!("{label}: cuMemFree"), unsafe {
        result::free_sync(buf)
    })
}
