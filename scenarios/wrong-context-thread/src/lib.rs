//! `wrong-context-thread`: CUDA's driver API keeps the current context per
//! host thread. A thread the program starts has none, so a driver call on
//! it returns CUDA_ERROR_INVALID_CONTEXT ("invalid device context") until
//! a context is made current there. The runtime API never shows that
//! error: on a thread without a current context it uses the device's
//! primary context, and if the process works in a context of its own it
//! silently makes the primary one, with its device memory, beside it.

use casebook_driver::prelude::*;
use casebook_model::cuda_errors::driver;
use cudarc::driver::{DriverError, result};

mod broken;
mod fixed;

casebook_model::case_modules!();

casebook_model::scenario!(Scenario {
    title: "CUDA error: invalid device context on a worker thread",
    cause: "The driver API's current context belongs to one host thread. A new thread has \
            none, and every driver call there that works in a context returns \
            CUDA_ERROR_INVALID_CONTEXT until one is made current on it (cuCtxSetCurrent, \
            cudarc's bind_to_thread). The runtime API instead takes the device's primary \
            context on such a thread: no error, but where the process works in a context of \
            its own, a second context and its device memory appear unasked.",
    fix: "On each worker thread, make the context current with cuCtxSetCurrent (cudarc's \
          bind_to_thread) before any driver call, or use cudarc's safe API, which binds it before \
          every call.",
    symptoms: &["an error in a worker thread", "invalid device context"],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        Pair::new(
            Symptom::cuda_error(driver::INVALID_CONTEXT),
            cudarc!(broken),
            cudarc!(fixed::bind, anchored)
        )
        .then_shows(Symptom::check_failed(THREAD_ALLOCATES)),
        Variant::fixed("safe-api", cudarc!(fixed::safe_api, anchored)),
        cpp_pair!(Symptom::cuda_error(driver::INVALID_CONTEXT))
            .then_shows(Symptom::check_failed(THREAD_ALLOCATES)),
        // It reads free memory before and after the thread's call.
        Variant::contrast(
            "silent-primary-cpp",
            casebook_model::Expect::Records,
            cpp::silent_primary,
        )
        .alone(),
        Variant::contrast(
            "own-current-cpp",
            casebook_model::Expect::Records,
            cpp::own_current,
        )
        .one_change(
            "silent-primary-cpp",
            "whether the thread makes the process's own context current before its runtime \
             call: no there, yes here",
            "return runtime_on_thread(r, false);",
            "return runtime_on_thread(r, true);",
        )
        .alone(),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "chelsea0x3b/cudarc#112",
        shows: "the pull request that added `bind_to_thread`, with a test in which two threads \
                allocate through one device and one of them gets \
                `DriverError(CUDA_ERROR_INVALID_CONTEXT)`: the context was current only on the \
                thread that made it.",
    },
    Report {
        id: "chelsea0x3b/cudarc#165",
        shows: "the maintainer's account: CUDA needs a context bound to the calling thread, and \
                each driver call must make its own context current first; fixed by binding the \
                context in every safe call (#166), as cudarc 0.19 does.",
    },
    Report {
        id: "NVIDIA/TransformerEngine#734",
        shows: "`CUDA Error: invalid device context` when kernels were loaded on a thread other \
                than the main one (PyTorch's autograd thread) where no context had been made \
                current.",
    },
    Report {
        id: "pytorch/FBGEMM#530",
        shows: "the runtime-API side: cudaFree called from a thread that never used CUDA \
                \"helpfully allocates\" a context on device 0, and fails with out of memory \
                where device 0 has no room for one.",
    },
    Report {
        id: "vllm-project/vllm#37449",
        shows: "a new thread's runtime call made a context on device 0: after a benchmark, each \
                worker held about 800 MiB there.",
    },
    Report {
        id: "meta-pytorch/torchcomms#777",
        shows: "a watchdog thread's runtime calls made a primary context on GPU 0 because new \
                threads default to device 0; \"On H100, each primary context costs ~534 MiB.\"",
    },
];

static CONTEXT: Passage = Passage {
    document: "CUDA C++ Programming Guide",
    section: "Driver API: Context",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#context",
    text: "A host thread may have only one device context current at a time. When a context is \
           created with cuCtxCreate(), it is made current to the calling host thread. CUDA \
           functions that operate in a context (most functions that do not involve device \
           enumeration or context management) will return CUDA_ERROR_INVALID_CONTEXT if a valid \
           context is not current to the thread.",
};

static DRIVER_VS_RUNTIME: Passage = Passage {
    document: "CUDA Driver API",
    section: "Difference between the driver and runtime APIs: Context management",
    url: "https://docs.nvidia.com/cuda/cuda-driver-api/driver-vs-runtime-api.html",
    text: "Context management can be done through the driver API, but is not exposed in the \
           runtime API. Instead, the runtime API decides itself which context to use for a \
           thread: if a context has been made current to the calling thread through the driver \
           API, the runtime will use that, but if there is no such context, it uses a \"primary \
           context.\" Primary contexts are created as needed, one per device per process, are \
           reference-counted, and are then destroyed when there are no more references to them.",
};

/// The calls a worker thread made, in order, each with its result.
pub type Calls = Vec<(&'static str, Result<(), DriverError>)>;

/// Runs `work` on a new thread; records, as steps of this variant, which
/// context was current there when it started and every call it made, and
/// whether its allocation succeeded.
pub fn on_a_new_thread(
    rec: &mut Recorder,
    work: impl FnOnce(&mut Calls) -> Result<bool, DriverError> + Send + 'static,
) -> anyhow::Result<()> {
    let (current, calls, allocated) = std::thread::spawn(move || {
        // Which context this thread has, if any; binds nothing.
        let current = result::ctx::get_current().map(|c| c.is_some());
        let mut calls = Calls::new();
        let allocated = work(&mut calls);
        (current, calls, allocated)
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the worker thread panicked"))?;
    let current = rec.step("thread: cuCtxGetCurrent", current)?;
    rec.fact(
        CURRENT_ON_THE_THREAD,
        if current { "a context" } else { "none" },
    );
    for (call, result) in calls {
        let _ = rec.step(&format!("thread: {call}"), result);
    }
    rec.check(THREAD_ALLOCATES, allocated.unwrap_or(false));
    Ok(())
}

/// The worker's work: allocate and free 1 MiB through the raw driver layer,
/// which binds nothing. Whether the allocation succeeded.
pub fn thread_allocates(calls: &mut Calls) -> Result<bool, DriverError> {
    // SAFETY: the buffer is freed at once and never touched.
    let buf = unsafe { result::malloc_sync(1 << 20) };
    calls.push(("cuMemAlloc", buf.map(drop)));
    let Ok(buf) = buf else { return Ok(false) };
    // SAFETY: as above.
    let freed = unsafe { result::free_sync(buf) };
    calls.push(("cuMemFree", freed));
    Ok(true)
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-no-current-context-invalid-context",
        source: Source::Nvidia(&CONTEXT),
        quote: "CUDA functions that operate in a context (most functions that do not involve \
                device enumeration or context management) will return CUDA_ERROR_INVALID_CONTEXT \
                if a valid context is not current to the thread.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        // The thread starts with no context current (else the experiment did
        // not set up the condition); then its allocation fails so, or not.
        judge: |o: &Outcome| {
            ClaimVerdict::provided(
                o.fact_text(CURRENT_ON_THE_THREAD) == Some("none"),
                ClaimVerdict::confirmed_if_all([
                    o.first_error_is(driver::INVALID_CONTEXT),
                    o.check(THREAD_ALLOCATES).map(|ok| !ok),
                ]),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-runtime-takes-the-primary-context",
        source: Source::Nvidia(&DRIVER_VS_RUNTIME),
        quote: "Instead, the runtime API decides itself which context to use for a thread: if a \
                context has been made current to the calling thread through the driver API, the \
                runtime will use that, but if there is no such context, it uses a \"primary \
                context.\"",
        judged_by: "silent-primary-cpp",
        control: Control::Impossible(
            "the passage gives, for each thread, the context the runtime must use: the one current \
             there, or the primary context where none is; a run reading refuted would need a \
             runtime that breaks that rule, and no setting of this program is one. What shows \
             that the reading could give the other answer: the same program with the process's \
             own context made current on the thread first (own-current-cpp, one change) works in \
             that context and never starts the primary one; judged by the same rule, it \
             confirms the passage's first clause, as this run confirms the second.",
        ),
        // The process works in a context of its own; a new thread makes a
        // runtime call. Judged by the passage's rule for what was current
        // on the thread before the call (read there, not assumed): none
        // current, the call succeeds in the device's primary context (the
        // handle cuDevicePrimaryCtxRetain gives); one current, the call
        // succeeds in that one. As the rule says: confirmed. The call fails,
        // or works in another context: refuted. (The device memory that
        // appears, a context's worth or none, is recorded beside.)
        judge: |o: &Outcome| match (
            o.flag(A_CONTEXT_IS_CURRENT_ON_THE_THREAD_BEFORE_ITS_CALL),
            o.check(THREAD_ALLOCATES),
            o.flag(THE_THREAD_WORKED_IN_THE_PRIMARY_CONTEXT),
            o.flag(THE_THREAD_WORKED_IN_THE_PROCESS_OWN_CONTEXT),
        ) {
            (Some(false), Some(true), Some(true), _) | (Some(true), Some(true), _, Some(true)) => {
                ClaimVerdict::Confirmed
            }
            (Some(_), Some(false), _, _)
            | (Some(false), Some(true), Some(false), _)
            | (Some(true), Some(true), _, Some(false)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn judge() -> fn(&Outcome) -> ClaimVerdict {
        CLAIMS
            .iter()
            .find(|c| c.id == "nvidia-runtime-takes-the-primary-context")
            .expect("the claim")
            .judge
    }

    fn thread(current: bool, allocates: bool, primary: bool, own: bool) -> Outcome {
        Outcome::empty()
            .with_fact(A_CONTEXT_IS_CURRENT_ON_THE_THREAD_BEFORE_ITS_CALL, current)
            .with_check(THREAD_ALLOCATES, allocates)
            .with_fact(THE_THREAD_WORKED_IN_THE_PRIMARY_CONTEXT, primary)
            .with_fact(THE_THREAD_WORKED_IN_THE_PROCESS_OWN_CONTEXT, own)
    }

    #[test]
    fn each_branch_is_judged_by_what_was_current() {
        let judge = judge();
        for (current, allocates, primary, own, verdict) in [
            // None current: the primary context, as the second clause says.
            (false, true, true, false, ClaimVerdict::Confirmed),
            // One current: that one, as the first clause says.
            (true, true, false, true, ClaimVerdict::Confirmed),
            // Against the rule, either way, or the call failing.
            (false, true, false, true, ClaimVerdict::Refuted),
            (true, true, true, false, ClaimVerdict::Refuted),
            (false, false, false, false, ClaimVerdict::Refuted),
        ] {
            let thread = thread(current, allocates, primary, own);
            assert_eq!(judge(&thread), verdict, "{thread:?}");
        }
        assert_eq!(judge(&Outcome::empty()), ClaimVerdict::Undecided);
    }
}
