//! `fork-after-init`: a process uses CUDA, then forks a worker that makes
//! CUDA calls of its own. The worker is a copy of the parent's memory
//! without its CUDA context, which cannot be copied, and CUDA does not start
//! again in the copy. In Rust and C++ the worker's first driver or runtime
//! call fails; in PyTorch (multiprocessing's `fork`, the default start
//! method on Linux before Python 3.14) it raises "Cannot re-initialize CUDA
//! in forked subprocess". Forking before the parent touches CUDA, or the
//! `spawn` start method (a fresh interpreter), gives a worker that starts
//! CUDA itself.

use casebook_model::cuda_errors::{driver, runtime};
use casebook_model::prelude::*;
use casebook_model::pytorch;

mod broken;
mod fixed;
pub mod worker;

casebook_model::case_modules!();

const FILE: &str = "python/workers.py";

casebook_model::scenario!(Scenario {
    title: "Cannot re-initialize CUDA in forked subprocess",
    cause: "fork copies a process's memory but not its CUDA context, and the CUDA runtime \
            cannot start again in the copy. Start workers with spawn (or forkserver), or \
            fork before the parent touches CUDA.",
    fix: "Start CUDA-using workers with multiprocessing's spawn start method, or fork them before \
          the parent makes any CUDA call, so each worker initialises CUDA itself.",
    symptoms: &[
        "an error in a worker process",
        "an error on the second call",
        "initialization error",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(pytorch::FORKED))
            .then_shows(Symptom::check_failed(WORKER_COMPUTED)),
        // What the worker's first driver call returns in the copy.
        cudarc_pair!(Symptom::cuda_error(driver::NOT_INITIALIZED))
            .then_shows(Symptom::check_failed(WORKER_COMPUTED)),
        // What the worker's first runtime call returns in the copy.
        cpp_pair!(Symptom::cuda_error(runtime::INITIALIZATION_ERROR))
            .then_shows(Symptom::check_failed(WORKER_COMPUTED)),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "pytorch/pytorch#17357",
        shows: "`RuntimeError: cuda runtime error (3) : initialization error` from \
                `torch.cuda.set_device` in a child process started after the parent ran \
                `torch.rand(20, 2).cuda()`; without that line the child worked. PyTorch's own \
                check for bad forks had missed the case.",
    },
    Report {
        id: "vllm-project/vllm#8893",
        shows: "its title is PyTorch's message, \"RuntimeError: Cannot re-initialize CUDA in forked \
                subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start \
                method\"; a later comment traces the parent's CUDA start to vLLM's import.",
    },
    Report {
        id: "pytorch/pytorch#81758",
        shows: "from PyTorch 1.12, `import torch` itself started CUDA, so a child that only called \
                `torch.cuda.set_device(0)` failed with \"Cannot re-initialize CUDA in forked \
                subprocess\".",
    },
    Report {
        id: "tensorflow/tensorflow#57877",
        shows: "a forked subprocess failed with `CUDA_ERROR_NOT_INITIALIZED: initialization \
                error` and then crashed with exit code -6.",
    },
    Report {
        id: "triton-lang/triton#10443",
        shows: "\"A process that was fork()ed after its parent already initialized CUDA gets \
                CUDA_ERROR_NOT_INITIALIZED (rc=3) from cuInit\", verified on an 8 × H100 host.",
    },
    Report {
        id: "chainer/chainer#1087",
        shows: "CuPy in a forked process: `cudaErrorInitializationError: initialization error`.",
    },
];

static FORK_RULE: Passage = Passage {
    document: "NVIDIA CUDA C++ Guidelines for robust and safety-critical programming, v3.0.1 \
               (rule CUDA 1.6, as reproduced by Qt Axivion)",
    section: "CUDA 1.6 [fork]: A call to fork must be immediately followed to a call to exec",
    url: "https://doc.qt.io/axivion/reference/analysis_configuration/CUDA-1.6.html",
    text: "CUDA does not duplicate any of its internal data structures or threads to other \
           processes upon a call to fork. Any use of CUDA after a call to fork and before a \
           subsequent call to exec has undefined behavior.",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-fork-does-not-duplicate-cuda",
    source: Source::Nvidia(&FORK_RULE),
    quote: "CUDA does not duplicate any of its internal data structures or threads to other \
            processes upon a call to fork.",
    judged_by: "broken",
    control: Control::Run("fixed"),
    // The parent has a working context when it forks. If the copy had
    // CUDA's state, the worker's job would run; it fails at its first call
    // (confirmed) or runs (refuted).
    judge: |o: &Outcome| match (
        o.first_error_is(driver::NOT_INITIALIZED),
        o.check(WORKER_COMPUTED),
    ) {
        (_, Some(true)) => ClaimVerdict::Refuted,
        (Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (Some(false), Some(false)) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    },
    ..Claim::EITHER
}];
