//! `kernel-stack-overflow`: a recursive device function (a tree walk, a
//! recursive parser, a recursive functor) keeps a frame per call on the
//! thread's stack. The compiler cannot size a recursion, so the stack is
//! what the context's limit says, 1 KiB per thread by default; a walk 24
//! calls deep runs past it (ptxas reports 568 bytes per frame for sm_90
//! with nvcc 13.0), and the kernel faults. On an H100 with driver 580 the
//! fault is "an illegal memory access was encountered"; the threads users
//! filed from older GPUs show "unspecified launch failure" for the same
//! cause. Either poisons the context. The fix raises the limit
//! (cudaDeviceSetLimit(cudaLimitStackSize), cuCtxSetLimit) before the
//! launch to what the recursion needs, and the walk matches the CPU's.

use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{CudaContext, DriverError, PushKernelArg, sys};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Calls deep.
pub const DEPTH: i32 = 24;
/// Floats per frame (as CASEBOOK_FRAME in device/walk.cuh).
pub const FRAME: usize = 64;
const THREADS: usize = 32;

/// Stack allowed per call in the fix: ptxas reports 568 bytes per frame
/// for sm_90 with nvcc 13.0, and another compiler or GPU may need more.
pub const PER_CALL: usize = 1024;

casebook_model::scenario!(Scenario {
    title: "An illegal memory access, or unspecified launch failure, from a recursive kernel deeper \
            than the thread's stack",
    cause: "A recursive device function keeps a frame per call on the thread's stack, whose \
            size the compiler cannot know: it is the context's limit, 1 KiB per thread by \
            default. A deeper recursion overflows it and the kernel faults (an illegal memory \
            access on an H100; unspecified launch failure on older GPUs), which poisons the \
            context.",
    fix: "Raise the per-thread stack before the launch to what the recursion needs \
          (cudaDeviceSetLimit(cudaLimitStackSize, bytes), cuCtxSetLimit), or bound the depth \
          and turn the recursion into a loop.",
    symptoms: &[
        "unspecified launch failure",
        "an illegal memory access",
        "an error on the second call",
    ],
    requires: Requirement::GPU,
    variants: variants![
        // What the overflow returns on an H100 with driver 580 (older GPUs, in
        // the threads users filed, returned CUDA_ERROR_LAUNCH_FAILED).
        // Raising the limit reserves it for every thread the GPU can
        // hold: gigabytes, so the fixes run alone.
        cudarc_pair!(Symptom::cuda_error(driver::ILLEGAL_ADDRESS))
            .then_shows(Symptom::check_failed(MATCHES))
            .with_broken(|v| v.faults_device())
            .with_fixed(|v| v.alone()),
        cpp_pair!(Symptom::cuda_error(runtime::ILLEGAL_ADDRESS))
            .then_shows(Symptom::check_failed(MATCHES))
            .with_broken(|v| v.faults_device())
            .with_fixed(|v| v.alone()),
    ],
});

static STACK_LIMIT_DOC: Passage = Passage {
    document: "CUDA Runtime API, Device Management",
    section: "cudaDeviceSetLimit",
    url: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__DEVICE.html",
    text: "cudaLimitStackSize controls the stack size in bytes of each GPU thread.",
};

fn input() -> Vec<f32> {
    (0..FRAME).map(|i| (i % 7) as f32 * 0.5).collect()
}

/// The CPU's walk, as device/walk.cuh's.
fn walk_on_cpu(x: &[f32], depth: i32) -> f32 {
    let d = depth as usize;
    let frame: Vec<f32> = (0..FRAME)
        .map(|i| x[(d + i) % FRAME] * (i + 1) as f32)
        .collect();
    if depth == 0 {
        return frame.iter().fold(0.0, |s, v| s + v);
    }
    frame[d % FRAME] + walk_on_cpu(x, depth - 1)
}

/// The context's per-thread stack limit, recorded.
pub(crate) fn record_limit(rec: &mut Recorder, ctx: &Arc<CudaContext>) {
    if let Ok(limit) = rec.step(
        "cuCtxGetLimit STACK_SIZE",
        ctx.get_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE),
    ) {
        device::measure_bytes(rec, STACK_LIMIT, limit);
    }
}

/// The walk on the GPU, compared with the CPU's; then one unrelated call,
/// whose result tells whether the process can still use the GPU.
pub(crate) fn walk(rec: &mut Recorder, ctx: &Arc<CudaContext>) -> anyhow::Result<()> {
    let f = device::kernel(rec, ctx, fatbin::WALK, "walk")?;
    let stream = ctx.default_stream();
    let x = rec.step("cuMemAlloc + copy (x)", stream.clone_htod(&input()))?;
    let mut out = rec.step("cuMemAlloc (out)", stream.alloc_zeros::<f32>(THREADS))?;
    rec.measure(DEPTH_MEASURE, f64::from(DEPTH));
    let cfg = casebook_driver::device::line(1, THREADS as u32);
    let mut b = stream.launch_builder(&f);
    b.arg(&x).arg(&mut out).arg(&DEPTH);
    // SAFETY: the kernel reads FRAME floats of x and writes THREADS of out.
    let ran: Result<(), DriverError> = rec
        .step("cuLaunchKernel walk", unsafe { b.launch(cfg) }.map(|_| ()))
        .and_then(|()| rec.step("cuStreamSynchronize", stream.synchronize()));
    let got = ran.and_then(|()| rec.step("cuMemcpyDtoH (out)", stream.clone_dtoh(&out)));
    let want = walk_on_cpu(&input(), DEPTH);
    rec.check(
        MATCHES,
        got.as_ref().is_ok_and(|g| g.iter().all(|v| *v == want)),
    );
    if !device::later_call(rec, LATER_CALL) {
        // The context is poisoned: its buffers cannot be freed.
        std::mem::forget((x, out, f, stream));
    }
    Ok(())
}

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-stack-size-limit-is-per-thread-stack",
    source: Source::Nvidia(&STACK_LIMIT_DOC),
    quote: "cudaLimitStackSize controls the stack size in bytes of each GPU thread.",
    judged_by: "fixed-cpp",
    control: Control::Run("broken-cpp"),
    // The walk that overflows the default stack, with cudaLimitStackSize
    // raised to a KiB per call: it runs and matches the CPU (confirmed), or
    // faults as before (refuted). broken-cpp, the same walk on the default
    // limit, is the control: there the walk faults.
    judge: |o: &Outcome| match (o.first_error(), o.check(MATCHES)) {
        (None, Some(true)) => ClaimVerdict::Confirmed,
        (Some(e), _) if e.result == runtime::ILLEGAL_ADDRESS => ClaimVerdict::Refuted,
        (Some(_), _) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    },
    ..Claim::EITHER
}];
