//! `sticky-error`: a kernel faults (an illegal address) in a first "model
//! call". Every later call in that process fails too, with the same error,
//! whatever it does; resetting the device does not bring the process back.
//! What recovers is running the risky call in a child process.

use std::sync::Arc;

use casebook_driver::ResultName;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use casebook_model::pytorch;
use cudarc::driver::{CudaContext, CudaFunction, DriverError, PushKernelArg};

mod broken;
mod fixed;

casebook_model::case_modules!();

const PYTHON: &str = "python/device_assert.py";

casebook_model::scenario!(Scenario {
    title: "CUDA error on the second call: an illegal memory access was encountered",
    cause: "A kernel fault (illegal address, misaligned access, trap) corrupts the context: \
            every later call in the process returns the same error, and cudaDeviceReset \
            does not recover it. Only a new process does.",
    fix: "Run the call that may fault in a child process started before the parent touches CUDA, \
          instead of cudaDeviceReset; after a kernel fault only a new process gets a working \
          context.",
    symptoms: &[
        "an error on the second call",
        "an illegal memory access was encountered",
        "device-side assert triggered",
        "unspecified launch failure",
    ],
    requires: Requirement::GPU,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::ILLEGAL_ADDRESS))
            .both(|v| v.faults_device())
            .with_fixed(|v| v.also_differs(
                "the risky call runs in a child process started before the \
                 parent touches CUDA, and `broken`'s attempt at recovery (the \
                 device reset) is gone: the fix is the process boundary, so \
                 the program is shaped around it.",
            )),
        Variant::records("refused-launch", cudarc!(broken::refused_launch, anchored)).one_change(
            "broken",
            "how the first call fails: its kernel faults there; its launch is refused \
             here (2048 threads a block), leaving the context as it was",
            "after_the_first_call(rec, FirstCall::Faults)",
            "after_the_first_call(rec, FirstCall::LaunchRefused)",
        ),
        Variant::as_written("as-written-cpp", cpp::as_written).faults_device(),
        Variant::broken(
            "trap-cpp",
            // What a kernel that traps gives.
            Symptom::cuda_error(runtime::LAUNCH_FAILURE),
            cpp::trap
        )
        .faults_device()
        .also_differs(
            "the first model call's kernel traps (__trap(), as a \
             device-side check that gives up without an assert's message) \
             instead of writing through a null pointer; the driver calls \
             that fault \"unspecified launch failure\".",
        ),
        Variant::fixed("fixed-cpp", cpp::fixed)
            .faults_device()
            .also_differs(
                "as in `fixed`: the first, faulting model call runs in a \
             child process forked before the parent touches CUDA, and the \
             article's cudaDeviceReset is gone.",
            ),
        Variant::broken(
            "device-assert-py",
            Symptom::cuda_error(pytorch::DEVICE_ASSERT),
            Program::pytorch(PYTHON, "broken"),
        )
        .then_shows(Symptom::cuda_error(pytorch::DEVICES_UNAVAILABLE))
        .faults_device(),
        // The control of 001-context-cleanup-beyond-empty-cache: the
        // same bad id, refused by PyTorch on the host before any kernel
        // runs, so the context is left usable.
        Variant::records("ids-on-host-py", Program::pytorch(PYTHON, "ids_on_host"))
            .one_change(
                "device-assert-py",
                "where the ids are made: on the GPU there, so the lookup's \
             kernel asserts; on the host here, so PyTorch refuses the \
             lookup before any kernel runs",
                "ids = torch.tensor([3, 7, VOCABULARY], device=\"cuda\")",
                "ids = torch.tensor([3, 7, VOCABULARY])",
            )
            // Its cudaDeviceReset, as in device-assert-py, runs under a
            // live PyTorch: what PyTorch does with memory the reset took
            // back is not declared.
            .faults_device(),
        Variant::fixed("validated-py", Program::pytorch(PYTHON, "fixed")).also_differs(
            "no device reset at the end: under a healthy PyTorch a reset \
             frees memory its allocator still hands out.",
        ),
        // It fills the GPU.
        Variant::records("cache-held-py", Program::pytorch(PYTHON, "cache_held"))
            .also_differs(
                "the first call's fault: cuBLAS's first call refused for \
             memory PyTorch's cache keeps reserved (a fault empty_cache \
             clears) instead of a device-side assert; what is read after \
             it is the same: the failed call again, after empty_cache.",
            )
            .alone(),
        Variant::as_written(
            "cnn-after-fault-py",
            Program::pytorch(PYTHON, "cnn_after_fault"),
        )
        .also_differs(
            "not the article's model: a convolution stands for the CNN \
             (cuDNN runs it), run before and after device-assert-py's \
             lookup.",
        )
        .faults_device(),
        Variant::contrast_clean("cnn-no-fault-py", Program::pytorch(PYTHON, "cnn_no_fault"))
            .one_change(
                "cnn-after-fault-py",
                "the lookup's last id: one past the table's end there, so its \
             kernel asserts; the table's last entry here",
                "_cnn_runs(rec, last_id=VOCABULARY)",
                "_cnn_runs(rec, last_id=VOCABULARY - 1)",
            ),
        Variant::records("reset-between-calls-cpp", cpp::reset_between_calls)
            .also_differs(
                "the article's example 2 with three model calls and a reset \
             after the first two: the first call raises the device-heap \
             limit (a setting the reset should clear) and leaves 1 GiB \
             allocated, as the article's example 1 leaves its buffer; the \
             second one's kernel faults as in as-written-cpp.",
            )
            // It reads the device's free memory: no other trial beside it.
            .alone(),
        Variant::records(
            "reset-after-refused-launch-cpp",
            cpp::reset_after_refused_launch
        )
        .one_change(
            "reset-between-calls-cpp",
            "how the second call fails: its kernel faults there; its \
             launch is refused here (2048 threads per block), an error \
             that leaves the context usable",
            "return resetBetweenCalls(r, SecondCall::Faults, FirstLeak::Malloc);",
            "return resetBetweenCalls(r, SecondCall::LaunchRefused, FirstLeak::Malloc);",
        )
        // It reads the device's free memory: no other trial beside it.
        .alone(),
        Variant::records("reset-after-pool-leak-cpp", cpp::reset_after_pool_leak)
            .one_change(
                "reset-between-calls-cpp",
                "where the buffer the first call leaves allocated comes from: \
             cudaMalloc there; the stream-ordered pool (cudaMallocAsync) \
             here",
                "return resetBetweenCalls(r, SecondCall::Faults, FirstLeak::Malloc);",
                "return resetBetweenCalls(r, SecondCall::Faults, FirstLeak::MallocAsync);",
            )
            // It reads the device's free memory: no other trial beside it.
            .alone(),
        Variant::contrast(
            "launch-blocking-py",
            Expect::Fails(Symptom::cuda_error(pytorch::DEVICE_ASSERT)),
            Program::pytorch(PYTHON, "launch_blocking"),
        )
        .faults_device(),
    ],
});

pub(crate) fn name<T>(result: &Result<T, DriverError>) -> String {
    match result {
        Ok(_) => DriverError::SUCCESS.to_owned(),
        Err(e) => e.result_name(),
    }
}

/// How the first model call fails.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstCall {
    /// Its kernel writes through a null pointer: a fault.
    Faults,
    /// Its launch asks for 2048 threads a block, more than a block may
    /// have: refused before it runs, with no fault.
    LaunchRefused,
}

/// The first model call. The fault (or the refusal) is provoked, so its
/// error is recorded as such.
pub(crate) fn first_call(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    fault: &CudaFunction,
    first: FirstCall,
) {
    let stream = ctx.default_stream();
    let no_wait = 0u64;
    let mut launch = stream.launch_builder(fault);
    launch.arg(&no_wait);
    let threads = match first {
        FirstCall::Faults => 32,
        FirstCall::LaunchRefused => 2048,
    };
    let _ = rec.tolerate("first call: cuLaunchKernel spin_then_fault", unsafe {
        launch.launch(casebook_driver::device::line(1, threads))
    });
    let _ = rec.tolerate("first call: cuCtxSynchronize", ctx.synchronize());
}

pub(crate) use casebook_driver::device::unrelated_call;

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-reset-gives-a-clean-context",
        source: Source::SEED_000,
        quote: "This example explicitly uses `cudaDeviceReset()` to ensure a clean context between calls.",
        judged_by: "reset-between-calls-cpp",
        control: Control::Parts(&[
            Part {
                part: "after a first call that ran, leaving a raised setting and a buffer behind \
                       (from cudaMalloc, as the article's calls allocate), the reset leaves a clean \
                       context",
                control: Control::Impossible(
                    "cudaDeviceReset destroys the primary context with everything in it: a \
                     buffer from cudaMalloc is given back and a raised setting put back, whatever \
                     the first call did, so no program leaves this context unclean across the \
                     reset. What outlives a reset is outside the context: a block of the \
                     stream-ordered pool, which belongs to no context (000-reset-completely-resets \
                     reads it the same way). What shows that the reading can say \"not given \
                     back\": reset-after-pool-leak-cpp, the same program with the first call's \
                     buffer from the pool, whose 1 GiB the same reading finds still held",
                ),
            },
            Part {
                part: "after a call that failed, the reset leaves a context the next call can use",
                control: Control::Run("reset-after-refused-launch-cpp"),
            },
        ]),
        // The first reset follows an ordinary call: "clean" is the setting
        // that call raised back at its default and the buffer it left
        // allocated given back. The sentence speaks of its own example,
        // whose calls allocate with cudaMalloc: the deciding run's first
        // call does too; the part can have no control (its reason says
        // why): reset-after-pool-leak-cpp leaves a block of the
        // stream-ordered pool instead (one change), which the reset leaves
        // held outside the context, and the reading says "not given back"
        // there. (000-reset-completely-resets, whose
        // "completely" and "entire" reach every allocator, is decided on a
        // run that holds both.) The second follows a call that failed:
        // "clean" is a context the third call can use.
        judge: |o: &Outcome| {
            let first = match (
                o.flag(THE_FIRST_CALL_RAISED_THE_DEVICE_HEAP_LIMIT),
                o.flag(THE_FIRST_RESET_PUT_THE_LIMIT_BACK),
                o.flag(THE_FIRST_RESET_GAVE_BACK_THE_FIRST_CALL_S_BUFFER),
            ) {
                (Some(true), Some(limit), Some(buffer)) => Some(limit && buffer),
                _ => None,
            };
            ClaimVerdict::of_two_parts(first, o.flag(AFTER_RESET))
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-leftover-state-fails-later-calls",
        source: Source::SEED_000,
        quote: "If a previous call leaves behind allocated memory, improperly closed streams, or an otherwise \
                inconsistent context, subsequent calls will fail.",
        judged_by: "broken",
        // The first call fails either way; in the control its launch is
        // refused before it runs, and no inconsistent context is left.
        control: Control::Run("refused-launch"),
        reach: Reach::AtBestPartly(
            "of the three leftovers the sentence names, this run tests the inconsistent context; memory left behind \
             fails no later call until memory runs out (missing-free), and open streams fail one only once there are \
             enough of them to hold the memory it asks for (open-streams: 100,000 of them)",
        ),
        judge: |o: &Outcome| match o.fact_text(SECOND) {
            Some(r) => ClaimVerdict::confirmed_if(Some(r != "CUDA_SUCCESS")),
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "001-context-cleanup-beyond-empty-cache",
        source: Source::SEED_001,
        quote: "However, for more robust management, context cleanup might be necessary, depending on the \
                specific PyTorch version and CUDA setup.",
        judged_by: "device-assert-py",
        // The same program, its ids made on the host (one change): PyTorch
        // refuses the lookup, and the context stays usable.
        control: Control::Run("ids-on-host-py"),
        reach: Reach::AtBestPartly(
            "in the article's case, memory the first run still holds, no context cleanup is needed: \
             dropping the references gives it back in the same context (second-training-run, fixed-py); \
             where it is needed is a context a device-side assert left unusable, this run. \"Context \
             cleanup\" is read as ending the process: the only cleanup within it that PyTorch can \
             reach, cudaDeviceReset, returns cudaSuccess under PyTorch and leaves its next call \
             failing (\"busy or unavailable\"). One PyTorch \
             version and one CUDA setup were run, so \"depending on\" them is not tested",
        ),
        // After a fault: empty_cache recovers nothing and a new process (a
        // new context) works: confirmed; empty_cache recovers: refuted;
        // neither does: partly. A run in which nothing failed decides
        // nothing.
        judge: |o: &Outcome| match (
            o.fact_text(THE_FAULT),
            o.fact_text(AFTER_EMPTY_CACHE),
            o.flag(NEW_PROCESS_WORKS),
        ) {
            (None | Some("none"), _, _) => ClaimVerdict::Undecided,
            (_, Some("ok"), _) => ClaimVerdict::Refuted,
            (_, Some(_), Some(true)) => ClaimVerdict::Confirmed,
            (_, Some(_), Some(false)) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "001-context-inconsistency-cudnn-errors",
        source: Source::SEED_001,
        quote: "The intermittent failure of a Convolutional Neural Network (CNN) model on subsequent runs, \
                specifically manifesting as cuDNN errors, often stems from inconsistencies in the CUDA \
                context and associated resources.",
        judged_by: "cnn-after-fault-py",
        control: Control::Run("cnn-no-fault-py"),
        reach: Reach::AtBestPartly(
            "how often such failures stem from the context, no run measures; the run shows whether \
             a context left inconsistent (by a device-side assert) makes the CNN's next run fail, and \
             whether its error is cuDNN's",
        ),
        // The CNN's second run fails with an error that names cuDNN
        // (confirmed), with another (partly: the context, not cuDNN), or
        // works (refuted).
        judge: |o: &Outcome| match o.fact_text(THE_CNN_S_SECOND_RUN) {
            Some("ok") => ClaimVerdict::Refuted,
            Some(_) => ClaimVerdict::when(
                o.flag(THE_SECOND_RUN_S_ERROR_NAMES_CUDNN),
                ClaimVerdict::Confirmed,
                ClaimVerdict::Partly,
            ),
            None => ClaimVerdict::Undecided,
        },
    },
];
