//! `library-handle-leak`: each call creates a cuBLAS handle, runs a GEMM on
//! it, and never destroys it. A handle holds device memory of its own (its
//! workspace), so the leak grows with every call until a call fails. One
//! handle, kept for the program's life, uses the same memory once.
//!
//! A ballast (the model's weights) leaves 2 GiB free, so the leak reaches
//! the end in the same number of calls on every GPU.

use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_driver::prelude::*;
use cudarc::cublas::{result as blas, sys as blas_sys};
use cudarc::driver::{CudaContext, result};
use std::sync::Arc;

mod broken;
mod fixed;
mod tools;

casebook_model::case_modules!();

pub const LEFT_FREE: usize = 2 << 30;
/// The PyTorch form of the footprint (seed 003's libraries).
const FOOTPRINT_PY: &str = "python/footprint.py";
pub const MAX_CALLS: usize = 4000;
pub const FIXED_CALLS: usize = 200;
/// Under compute-sanitizer the fixed loop is cut to this: every cuBLAS call
/// is slow there, and the matrix needs the pattern, not the count.
pub const SANITIZER_FIXED_CALLS: usize = 20;

/// How many calls the fixed loop makes (fewer under the sanitizer, and
/// then it says so).
pub(crate) fn fixed_calls(rec: &mut Recorder) -> usize {
    casebook_model::normal_or_reduced(rec, FIXED_CALLS, SANITIZER_FIXED_CALLS)
}
/// The GEMM of each call: N×N floats.
pub const N: i32 = 256;
pub const TOLERANCE: usize = 64 << 20;

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory inside cuBLAS after many calls (a handle created per call)",
    cause: "A cuBLAS handle owns device memory (its workspace) until cublasDestroy; handles \
            created per call and never destroyed leak it call after call. Create one handle and \
            keep it.",
    fix: "Create one cuBLAS handle with cublasCreate before the calls, reuse it for every GEMM, \
          and cublasDestroy it once at the end instead of creating a handle per call.",
    symptoms: &["out of memory", "memory that keeps shrinking"],
    requires: Requirement::GPU_FILLED,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error("CUBLAS_STATUS_ALLOC_FAILED"))
            .then_shows(Symptom::check_failed(EVERY_CALL))
            .with_broken(|v| v.timeout(std::time::Duration::from_secs(240))),
        // Where the leak check says each leaked allocation was made.
        Variant::records(
            "handles-under-leak-check",
            cudarc!(tools::handles_under_leak_check, anchored)
        )
        .timeout(std::time::Duration::from_secs(360)),
        Variant::records(
            "own-leak-under-leak-check",
            cudarc!(tools::own_leak_under_leak_check, anchored)
        )
        .timeout(std::time::Duration::from_secs(360))
        .one_change(
            "handles-under-leak-check",
            "what each call leaks: its cuBLAS handle there; here it destroys the handle and \
             leaks 64 MiB of its own (cuMemAlloc)",
            "leak_check(rec, Leak::CublasHandle)",
            "leak_check(rec, Leak::OwnAllocation)",
        ),
        // The article's case in PyTorch: a model's step at batch size 1,
        // and what it adds to everything the process holds.
        Variant::contrast_clean("library-py", Program::pytorch(FOOTPRINT_PY, "library"))
            .shares_gpu(),
        Variant::contrast_clean(
            "large-batch-py",
            Program::pytorch(FOOTPRINT_PY, "large_batch")
        )
        .one_change(
            "library-py",
            "the batch: 1 there, 262,144 here (3 GiB of images, 7 GiB of feature maps)",
            "_footprint(rec, batch=1)",
            "_footprint(rec, batch=LARGE_BATCH)",
        )
        .holds_memory(16 << 30),
    ],
});

/// The GEMM's operands, and the ballast that leaves LEFT_FREE.
pub(crate) struct Gemm {
    pub ctx: Arc<CudaContext>,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub weights: u64,
}

impl Gemm {
    /// Frees the operands and the weights: the program ends with nothing of
    /// its own allocated, so whatever is left is the handles'.
    pub fn release(&self, rec: &mut Recorder) -> anyhow::Result<()> {
        for ptr in [self.a, self.b, self.c, self.weights] {
            rec.step("cuMemFree", unsafe { result::free_sync(ptr) })?;
        }
        Ok(())
    }
}

pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<Gemm> {
    anyhow::ensure!(
        unsafe { blas_sys::is_culib_present() },
        "cuBLAS (libcublas.so) cannot be loaded: add the toolkit's lib64 to LD_LIBRARY_PATH"
    );
    let mut g = operands(rec)?;
    let free = device::free_bytes(rec, &g.ctx)?;
    let ballast = (free - LEFT_FREE) / PAGE * PAGE;
    g.weights = rec.step("cuMemAlloc (the model's weights)", unsafe {
        result::malloc_sync(ballast)
    })?;
    rec.fact(FREE_MEMORY_LEFT_FOR_THE_CALLS, "2 GiB");
    Ok(g)
}

/// The context and the GEMM's operands (A and B zeroed), without weights.
pub(crate) fn operands(rec: &mut Recorder) -> anyhow::Result<Gemm> {
    let ctx = device::context(rec)?;
    let bytes = (N * N) as usize * 4;
    let (a, b, c) = unsafe {
        let a = rec.step("cuMemAlloc", result::malloc_sync(bytes))?;
        let b = rec.step("cuMemAlloc", result::malloc_sync(bytes))?;
        let c = rec.step("cuMemAlloc", result::malloc_sync(bytes))?;
        rec.step("cuMemsetD8", result::memset_d8_sync(a, 0, bytes))?;
        rec.step("cuMemsetD8", result::memset_d8_sync(b, 0, bytes))?;
        (a, b, c)
    };
    Ok(Gemm {
        ctx,
        a,
        b,
        c,
        weights: 0,
    })
}

/// One GEMM on `handle`.
pub(crate) fn gemm(
    rec: &mut Recorder,
    g: &Gemm,
    handle: blas_sys::cublasHandle_t,
) -> Result<(), blas::CublasError> {
    let (alpha, beta) = (1.0f32, 0.0f32);
    let op = blas_sys::cublasOperation_t::CUBLAS_OP_N;
    rec.step("cublasSgemm", unsafe {
        blas::sgemm(
            handle,
            op,
            op,
            N,
            N,
            N,
            &alpha,
            g.a as *const f32,
            N,
            g.b as *const f32,
            N,
            &beta,
            g.c as *mut f32,
            N,
        )
    })
}

pub(crate) fn record_series(rec: &mut Recorder, frees: &[usize]) {
    rec.measure(CALLS_COMPLETED, frees.len() as f64);
    if let [first, second, ..] = frees[..] {
        measure_bytes(rec, BYTES_PER_HANDLE, first.saturating_sub(second));
    }
    for (i, free) in frees.iter().enumerate() {
        rec.point(FREE_BYTES, (i + 1) as f64, *free as f64);
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "002-library-leaks-invisible-in-app",
        source: Source::SEED_002,
        quote: "In real-world scenarios, memory leaks can easily occur within third-party libraries or even \
                within complex CUDA applications if memory allocation and deallocation aren't carefully paired \
                within every function.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        judge: |o: &Outcome| match (o.check(EVERY_CALL), o.measure(BYTES_PER_HANDLE)) {
            (Some(false), Some(b)) if b > 0.0 => ClaimVerdict::Confirmed,
            (Some(false), _) => ClaimVerdict::Partly,
            (Some(true), _) => ClaimVerdict::Refuted,
            (None, _) => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-libraries-add-significant-memory",
        source: Source::SEED_003,
        quote: "Additionally, carefully consider the memory requirements of all libraries and dependencies used in your project, as these can significantly contribute to overall memory consumption.",
        judged_by: "library-py",
        control: Control::Run("large-batch-py"),
        // The article's case: a PyTorch model at batch size 1. What its
        // step's first cuBLAS and cuDNN calls add beyond the step's results
        // (handles, workspaces, kernels), as a share of the device memory
        // NVML counts for the process after it: a tenth or more is
        // significant. The control is the same step at a batch whose data
        // is gigabytes. A step whose results are wrong decides nothing.
        judge: |o: &Outcome| match (
            o.check(STEP_RIGHT),
            o.measure(LIBRARIES_SHARE_OF_PROCESS_MEMORY),
        ) {
            (Some(true), Some(share)) if share >= 0.10 => ClaimVerdict::Confirmed,
            (Some(true), Some(_)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "002-library-leak-not-apparent",
        source: Source::SEED_002,
        quote: "This is especially insidious because the leak might not be apparent within the main application's code.",
        judged_by: "handles-under-leak-check",
        control: Control::Run("own-leak-under-leak-check"),
        // Where the leak was made, as compute-sanitizer's leak check reports
        // it: each leak of 1 MiB or more allocated inside cuBLAS (the program's code
        // calls cublasCreate and allocates nothing itself): confirmed; in
        // the program's own code: refuted. A report that names none of the
        // three leaks decides nothing.
        judge: |o: &Outcome| match (
            o.measure(LEAKS_OF_A_MIB_OR_MORE_REPORTED),
            o.flag(EVERY_LARGE_LEAK_WAS_ALLOCATED_INSIDE_CUBLAS),
        ) {
            (Some(n), Some(true)) if n >= 3.0 => ClaimVerdict::Confirmed,
            (Some(n), Some(false)) if n >= 3.0 => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];
