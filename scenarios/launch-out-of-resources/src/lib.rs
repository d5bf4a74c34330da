//! `launch-out-of-resources`: a kernel that needs about 120 registers a
//! thread is launched with 1024 threads a block. A block's threads share
//! one multiprocessor's register file (65536 registers on sm_80 and sm_90),
//! so the launch fails at once with "too many resources requested for
//! launch"; a block of more than 1024 threads fails whatever the kernel,
//! as "invalid argument" under CUDA 13.0 (older reports show "invalid
//! configuration argument"). Neither error touches the context.
//! The fixes: a block size from the occupancy API, which knows the
//! kernel's registers, or `__launch_bounds__`, which makes the compiler fit
//! the kernel to the block size it will be launched with.

use std::sync::Arc;

use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{CudaContext, CudaFunction, DriverError, PushKernelArg, sys};

mod broken;
mod fixed;
mod launch_bounds;
mod too_many_threads;

casebook_model::case_modules!();

/// Elements each launch computes.
pub(crate) const N: usize = 1 << 16;
/// The block size of the broken launch: the device's maximum.
pub(crate) const BIG_BLOCK: u32 = 1024;

casebook_model::scenario!(Scenario {
    title: "too many resources requested for launch",
    cause: "A block's threads share one multiprocessor's registers: a kernel that needs R \
            registers a thread can be launched with at most about 65536 / R threads a \
            block, fewer than the 1024 the device allows in general. The launch is refused \
            before the kernel runs, and the context stays usable.",
    fix: "Take the block size from cudaOccupancyMaxPotentialBlockSize for that kernel, or compile \
          it with __launch_bounds__(1024) so the compiler caps its registers to fit a 1024-thread \
          block.",
    symptoms: &[
        "a kernel does not launch",
        "too many resources requested for launch",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::LAUNCH_OUT_OF_RESOURCES)),
        Variant::contrast_clean("bounded", cudarc!(broken::bounded, anchored)).one_change(
            "broken",
            "the kernel launched with 1024 threads: heavy there, compiled as the compiler sees \
             fit; heavy_bounded here, the same code compiled with __launch_bounds__(1024)",
            "big_block(rec, \"heavy\")",
            "big_block(rec, \"heavy_bounded\")",
        ),
        Variant::fixed("launch-bounds", cudarc!(launch_bounds)),
        Variant::records("bound", cudarc!(launch_bounds::bound, anchored)),
        Variant::records("no-bound", cudarc!(launch_bounds::no_bound, anchored)).one_change(
            "bound",
            "the kernel launched with 512 threads a block: the light kernel compiled with \
             __launch_bounds__(256) there; the same code without a bound here",
            "light_launches(rec, \"light_bounded\")",
            "light_launches(rec, \"light\")",
        ),
        Variant::broken(
            "too-many-threads",
            Symptom::cuda_error(driver::INVALID_VALUE),
            cudarc!(too_many_threads),
        ),
        cpp_pair!(Symptom::cuda_error(runtime::LAUNCH_OUT_OF_RESOURCES)),
        Variant::broken(
            "too-many-threads-cpp",
            // What the runtime of CUDA 13.0 returns for a block of more than 1024
            // threads (older reports show cudaErrorInvalidConfiguration).
            Symptom::cuda_error(runtime::INVALID_VALUE),
            cpp::too_many_threads,
        ),
        Variant::records("occupancy-measured-cpp", cpp::occupancy_measured).also_differs(
            "a kernel of its own, residencyProbe, whose dynamic shared memory limits how many \
             of its blocks fit on a multiprocessor: each block counts itself in and out of \
             the multiprocessor it runs on (%smid) and stays 0.2 ms, so the most blocks \
             counted at once are the blocks resident. Both configurators' blocks (40 KiB a \
             block; 128 bytes a thread) are measured against every multiple of 32.",
        ),
        Variant::records("occupancy-fixed-block-cpp", cpp::occupancy_fixed_block).one_change(
            "occupancy-measured-cpp",
            "the block judged against every other size: the configurators' there, a block \
             of 96 threads chosen by hand here (both forms' sweeps measured the same way)",
            "return occupancy_measured(r, 0);",
            "return occupancy_measured(r, 96);",
        ),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "NVIDIA/cccl#6532",
        shows: "`701 (too many resources requested for launch)` from CUB's block_reduce test, only \
                in unoptimised builds: the kernel used too many registers for its launch grid. \
                NVIDIA/cccl#6533 fixed it with `__launch_bounds__`.",
    },
    Report {
        id: "HazyResearch/ThunderKittens#37",
        shows: "`too many resources requested for launch` on an RTX 4090: 162 registers a thread \
                allow about 65536 / 162 ≈ 404 threads a block, and the default block was 512; \
                256 threads worked.",
    },
    Report {
        id: "torch/cunn#271",
        shows: "`error=7 : too many resources requested for launch` on a Jetson TK1, fixed with \
                `__launch_bounds__(CUDA_NUM_THREADS)`, which limits the kernel's registers.",
    },
    Report {
        id: "pytorch/pytorch#11934",
        shows: "CTC loss's backward kernel ran out of resources; launch bounds were added so that \
                a block of the maximum size is sure to fit on a multiprocessor.",
    },
    Report {
        id: "tensorflow/tensorflow#34109",
        shows: "`-G` makes kernels use more registers, and many then failed to launch for lack of \
                resources: TensorFlow stopped compiling its CUDA kernels in debug mode.",
    },
    Report {
        id: "yuxianzhi/Top-K#2",
        shows: "`invalid configuration argument` from a launch; the maintainer's answer was to \
                keep a block under 1024 threads (and its shared memory within the limit).",
    },
];

const GUIDE: &str = "CUDA C++ Programming Guide";

static THREAD_HIERARCHY: Passage = Passage {
    document: GUIDE,
    section: "Thread Hierarchy",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#thread-hierarchy",
    text: "There is a limit to the number of threads per block, since all threads of a block are \
           expected to reside on the same streaming multiprocessor core and must share the \
           limited memory resources of that core. On current GPUs, a thread block may contain up \
           to 1024 threads.",
};

static LAUNCH_BOUNDS: Passage = Passage {
    document: GUIDE,
    section: "Launch Bounds",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#launch-bounds",
    text: "A kernel will fail to launch if it is executed with more threads per block than its \
           launch bound maxThreadsPerBlock.",
};

static LAUNCH_BOUNDS_ADVICE: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "Launch Bounds",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/cpp-language-extensions.html",
    text: "The per-thread resources required by a CUDA kernel may limit the maximum block size in \
           an undesirable way. To maintain forward compatibility with future hardware and \
           toolkits, and to ensure that at least one thread block can run on a streaming \
           multiprocessor, developers should include the single argument \
           __launch_bounds__(maxThreadsPerBlock) which specifies the largest block size with \
           which the kernel will launch. Failure to do so could result in “too many resources \
           requested for launch” errors.",
};

static OCCUPANCY_CALCULATOR: Passage = Passage {
    document: GUIDE,
    section: "Occupancy Calculator",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#occupancy-calculator",
    text: "The occupancy-based launch configurator APIs, cudaOccupancyMaxPotentialBlockSize and \
           cudaOccupancyMaxPotentialBlockSizeVariableSMem, heuristically calculate an execution \
           configuration that achieves the maximum multiprocessor-level occupancy.",
};

/// The host's version of `casebook_mix` (`device/heavy.cuh`).
pub(crate) fn mix(x: f32) -> f32 {
    const LIVE: usize = 96;
    let mut acc: Vec<f32> = (0..LIVE).map(|k| x + k as f32).collect();
    for _ in 0..4 {
        for k in 0..LIVE {
            acc[k] = 0.5 * acc[k] + 0.25 * acc[(k + 1) % LIVE] + 0.25 * acc[(k + 7) % LIVE];
        }
    }
    acc.iter().sum()
}

pub(crate) fn input() -> Vec<f32> {
    (0..N).map(|i| (i % 100) as f32 / 100.0).collect()
}

/// Whether the device's results match the host's, to float rounding (the
/// device may fuse a multiply and an add).
pub(crate) fn right(out: &[f32]) -> bool {
    out.len() == N
        && input()
            .iter()
            .zip(out)
            .all(|(&x, &y)| (mix(x) - y).abs() <= 1e-4 * mix(x).abs().max(1.0))
}

pub(crate) use casebook_driver::device::message;

pub(crate) fn attribute(
    rec: &mut Recorder,
    f: &CudaFunction,
    label: &str,
    attribute: sys::CUfunction_attribute,
) -> Result<i32, DriverError> {
    rec.step(
        &format!("cuFuncGetAttribute ({label})"),
        f.get_attribute(attribute),
    )
}

pub(crate) fn max_threads(rec: &mut Recorder, f: &CudaFunction) -> Result<i32, DriverError> {
    attribute(
        rec,
        f,
        "max threads per block",
        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
    )
}

pub(crate) fn registers(rec: &mut Recorder, f: &CudaFunction) -> Result<i32, DriverError> {
    attribute(
        rec,
        f,
        "registers",
        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
    )
}

pub(crate) fn kernel(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    name: &str,
) -> Result<CudaFunction, DriverError> {
    device::kernel(rec, ctx, fatbin::HEAVY, name)
}

/// Runs `f` over the input with `block` threads a block and returns the
/// output, or the error of the launch.
pub(crate) fn launch(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    f: &CudaFunction,
    block: u32,
    label: &str,
) -> Result<Vec<f32>, DriverError> {
    let stream = ctx.default_stream();
    let input = rec.step("cuMemAlloc + cuMemcpyHtoD", stream.clone_htod(&input()))?;
    let mut out = rec.step("cuMemAlloc (out)", stream.alloc_zeros::<f32>(N))?;
    let n = N as i32;
    let mut builder = stream.launch_builder(f);
    builder.arg(&mut out).arg(&input).arg(&n);
    let config = casebook_driver::device::line((N as u32).div_ceil(block), block);
    let launched = rec.step(label, unsafe { builder.launch(config) });
    if let Err(e) = &launched {
        rec.fact(names::MESSAGE, message(e));
    }
    launched?;
    rec.step("cuMemcpyDtoH", stream.clone_dtoh(&out))
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-block-up-to-1024-threads",
        source: Source::Nvidia(&THREAD_HIERARCHY),
        quote: "On current GPUs, a thread block may contain up to 1024 threads.",
        judged_by: "too-many-threads",
        control: Control::Impossible(
            "1024 threads a block is the limit of every GPU the machines have (H100 and H200); a run that reads otherwise would need a GPU with another limit. The run reads both answers itself: a block of 1024 threads launches, one of 1025 or 2048 does not.",
        ),
        // Up to 1024: a block of 1024 launches, and one of 1025 (one thread
        // past the limit) and one of 2048 do not.
        judge: |o: &Outcome| match (
            o.flag(BLOCK_1024_LAUNCHES),
            o.flag(BLOCK_1025_LAUNCHES),
            o.flag(BLOCK_2048_LAUNCHES),
        ) {
            (Some(at), Some(just_over), Some(over)) => {
                ClaimVerdict::confirmed_if(Some(at && !just_over && !over))
            }
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-launch-above-bound-fails",
        source: Source::Nvidia(&LAUNCH_BOUNDS),
        quote: "A kernel will fail to launch if it is executed with more threads per block than \
                its launch bound maxThreadsPerBlock.",
        // The light kernel, bound to 256 threads, launched with 512 and with
        // 257: both refused, confirmed; either accepted, refuted. Read only
        // where the launch at the bound, 256 threads, is accepted: a kernel
        // that launches with no block size fails for another reason. The
        // control is the same kernel compiled without a bound, launched the
        // same ways.
        judged_by: "bound",
        control: Control::Run("no-bound"),
        judge: |o: &Outcome| {
            ClaimVerdict::provided(
                o.flag(LAUNCHED_256) == Some(true),
                ClaimVerdict::confirmed_if_all([
                    o.flag(LAUNCHED_512).map(|accepted| !accepted),
                    o.flag(LAUNCHED_257).map(|accepted| !accepted),
                ]),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-no-launch-bounds-too-many-resources",
        source: Source::Nvidia(&LAUNCH_BOUNDS_ADVICE),
        quote: "Failure to do so could result in “too many resources requested for launch” errors.",
        judged_by: "broken",
        control: Control::Run("bounded"),
        // Tested where it applies: a kernel without bounds whose registers
        // do not allow the block it is launched with. The driver refuses
        // the launch (confirmed), or it accepts it (refuted). Where the
        // kernel carries its bound, the block fits and the launch is
        // accepted: no such error, the other answer. A launch refused
        // although the block fits failed for another reason, and so does
        // one refused with another error than the one the sentence names.
        judge: |o: &Outcome| match (o.flag(OVER_LIMIT), o.flag(LAUNCHED_1024)) {
            (Some(true), Some(false))
                if o.shows(&Symptom::cuda_error(driver::LAUNCH_OUT_OF_RESOURCES)) =>
            {
                ClaimVerdict::Confirmed
            }
            (Some(_), Some(true)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-occupancy-api-maximises-occupancy",
        source: Source::Nvidia(&OCCUPANCY_CALCULATOR),
        quote: "The occupancy-based launch configurator APIs, cudaOccupancyMaxPotentialBlockSize \
                and cudaOccupancyMaxPotentialBlockSizeVariableSMem, heuristically calculate an \
                execution configuration that achieves the maximum multiprocessor-level occupancy.",
        // Occupancy as the multiprocessors hold it, not as the model the
        // configurators are built on computes it: residencyProbe's blocks
        // counted resident at once on the GPU, × block size, at each
        // configurator's block against every multiple of 32 up to the
        // kernel's limit. Its dynamic shared memory is what limits the
        // blocks a multiprocessor holds (40 KiB a block for the fixed form,
        // 128 bytes a thread for the VariableSMem form), so the block size
        // decides the threads resident. No size keeps more resident than
        // the suggested ones: confirmed; one does: refuted. The control
        // judges a block of 96 threads the same way.
        judged_by: "occupancy-measured-cpp",
        control: Control::Run("occupancy-fixed-block-cpp"),
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(TAKEN_KEEPS_THE_MOST_RESIDENT)),
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_mix_stays_finite_and_depends_on_its_input() {
        let (a, b) = (mix(0.0), mix(0.99));
        assert!(a.is_finite() && b.is_finite());
        assert!((b - a).abs() > 1.0, "{a} {b}");
    }
}
