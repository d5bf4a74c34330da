//! `device-heap-exhaustion`: `new` (or `malloc`) inside a kernel draws on
//! the device heap, 8 MiB unless raised, not on the GPU's free memory. Under
//! realistic parallelism most threads get null, and code that does not check
//! writes through it and faults.

use std::sync::Arc;

use casebook_driver::device::{self, measure_bytes};
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg, sys,
};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Threads launched, each allocating FLOATS floats.
pub const THREADS: usize = 1 << 20;
/// The same under compute-sanitizer, where every store is checked.
pub const SANITIZER_THREADS: usize = 1 << 16;

/// How many threads to launch here, recording the reduced form if it is one.
pub(crate) fn threads(rec: &mut Recorder) -> usize {
    casebook_model::normal_or_reduced(rec, THREADS, SANITIZER_THREADS)
}
pub const FLOATS: usize = 1024;

casebook_model::scenario!(Scenario {
    title: "Illegal address from new/malloc inside a kernel (the device heap is only 8 MiB)",
    cause: "In-kernel new and malloc draw on the device heap, 8 MiB by default whatever the GPU's \
            free memory; most threads get null, and writing through it faults. Raise \
            cudaLimitMallocHeapSize before the first launch, from the real need, and check for null.",
    fix: "Before the first launch, raise cudaLimitMallocHeapSize with cudaDeviceSetLimit to \
          resident threads × per-thread allocation (with allocator headroom), and check every in- \
          kernel new/malloc result for null.",
    symptoms: &[
        "an illegal memory access was encountered",
        "out of memory though memory is free",
    ],
    requires: Requirement::GPU,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::ILLEGAL_ADDRESS))
            .with_broken(|v| v.faults_device()),
        // 64M device-side new[] and delete[], one a thread: 105 s beside
        // light trials on an H100, over 120 s under a full run's load.
        Variant::as_written("as-written-cpp", cpp::as_written)
            .also_differs(
                "added to the article's program: one line in its kernel that \
                 stores what thread 0's new was asked for, and the read-back \
                 of that value after the kernel.",
            )
            .timeout(std::time::Duration::from_secs(300)),
        cpp_pair!(Symptom::cuda_error(runtime::ILLEGAL_ADDRESS)).with_broken(|v| v.faults_device()),
        Variant::records("heap-fragmentation-cpp", cpp::heap_fragmentation).alone(),
        Variant::records("hole-sized-request-cpp", cpp::hole_sized_request)
            .alone()
            .one_change(
                "heap-fragmentation-cpp",
                "the request made among the holes: 8 MiB there, larger than \
             any hole; one hole's 4 KiB here",
                "return heap_fragmentation(r, kLarge);",
                "return heap_fragmentation(r, kSmall);",
            ),
        Variant::records("grid-size-cpp", cpp::grid_size).alone(),
        Variant::as_written("size-in-range-cpp", cpp::size_in_range)
            .also_differs(
                "added to the article's program, as in as-written-cpp: the \
                 line in its kernel that stores what thread 0's new was asked \
                 for, and its read-back.",
            )
            .one_change(
                "as-written-cpp",
                "the article's knob, `size`: 1024 * 1024 * 64 there, whose \
                 square wraps an int; 1024 * 16 here, whose square (2^28) \
                 does not",
                "int size = 1024 * 1024 * 64;  // Adjust to experiment with \
                 memory needs",
                "int size = 1024 * 16;  // Adjust to experiment with memory \
                 needs",
            ),
    ],
});

pub(crate) struct Kernels {
    /// Threads per launch: THREADS, or fewer under the sanitizer.
    pub threads: usize,
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub probe: CudaFunction,
    pub nulls: CudaSlice<u32>,
}

pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<Kernels> {
    let ctx = device::context(rec)?;
    let probe = device::kernel(rec, &ctx, fatbin::HEAP, "heap_probe")?;
    let stream = ctx.default_stream();
    let nulls = rec.step("cuMemAllocAsync", stream.alloc_zeros::<u32>(1))?;
    let heap = rec.step(
        "cuCtxGetLimit MALLOC_HEAP_SIZE",
        ctx.get_limit(sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE),
    )?;
    measure_bytes(rec, HEAP_LIMIT_BEFORE, heap);
    rec.fact(HEAP, format!("{} MiB", heap >> 20));
    let threads = threads(rec);
    Ok(Kernels {
        threads,
        ctx,
        stream,
        probe,
        nulls,
    })
}

pub(crate) fn config(threads: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(threads as u32)
}

/// Counts the threads whose allocation returns null; writes through none.
pub(crate) fn probe(rec: &mut Recorder, k: &mut Kernels) -> anyhow::Result<u32> {
    rec.step("cuMemsetD8Async", k.stream.memset_zeros(&mut k.nulls))?;
    let (n, floats) = (k.threads as i32, FLOATS as i32);
    let mut launch = k.stream.launch_builder(&k.probe);
    launch.arg(&n).arg(&floats).arg(&mut k.nulls);
    rec.step("cuLaunchKernel heap_probe", unsafe {
        launch.launch(config(k.threads))
    })?;
    let nulls = rec.step("cuMemcpyDtoH", k.stream.clone_dtoh(&k.nulls))?[0];
    rec.measure(NULL_ALLOCATIONS, nulls as f64);
    rec.fact(
        NULLS,
        match nulls {
            0 => "none",
            n if n as usize == k.threads => "all",
            _ => "some",
        },
    );
    Ok(nulls)
}

pub(crate) fn input(threads: usize) -> Vec<f32> {
    (0..threads).map(|i| (i % 1000) as f32).collect()
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "003-in-kernel-new-fragments-into-oom",
        source: Source::SEED_003,
        quote: "The allocation of `temp` inside the kernel creates many small blocks, leading to rapid \
                fragmentation. While `delete[] temp` is called, the released memory may not be \
                consolidated, leading to out-of-memory errors, even with smaller input sizes.",
        judged_by: "heap-fragmentation-cpp",
        control: Control::Run("hole-sized-request-cpp"),
        reach: Reach::AtBestPartly(
            "as the article writes it, the kernel's request wraps to new float[0] (an int overflow), so it makes no \
             small blocks; and the failure shows as a null pointer from new, not as an error a CUDA call returns",
        ),
        // Two halves. Fragmentation: freed blocks that add up to more than
        // a request the heap still cannot serve among them, live blocks
        // between them. Not consolidated: once the live blocks are freed
        // too, the same request is still refused (the heap does not merge
        // freed neighbours). Both: confirmed; neither: refuted.
        judge: |o: &Outcome| {
            let fragments = match (
                o.flag(THE_FREED_BLOCKS_ADD_UP_TO_MORE_THAN_THE_LARGE_REQUEST),
                o.flag(THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_AMONG_THE_HOLES),
            ) {
                (Some(more), Some(served)) => Some(more && !served),
                _ => None,
            };
            let not_consolidated = o
                .flag(THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_ONCE_THE_REST_IS_FREED)
                .map(|served| !served);
            ClaimVerdict::of_two_parts(fragments, not_consolidated)
        },
    },
    Claim {
        id: "003-as-written-kernel-fails",
        source: Source::SEED_003,
        quote: "float* temp = new float[size * size]; // Potential source of error",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        // "Potential": the pattern at a size whose product does not overflow,
        // with the default heap. As written, the product wraps (see
        // 003-size-knob-sets-memory-need) and nothing is asked for.
        judge: |o: &Outcome| match o.fact_text(NULLS) {
            Some("none") => ClaimVerdict::Refuted,
            Some(_) => ClaimVerdict::Confirmed,
            None => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "004-in-kernel-allocation-fragments",
        source: Source::SEED_004,
        quote: "Furthermore, memory allocation within multithreaded CUDA kernels itself can exacerbate this \
                situation, introducing more allocations that contribute to fragmented memory.",
        judged_by: "heap-fragmentation-cpp",
        control: Control::Parts(&[
            Part {
                part: "in-kernel allocations fragment the device heap",
                control: Control::Run("hole-sized-request-cpp"),
            },
            Part {
                part: "they fragment the memory cudaMalloc serves",
                control: Control::Impossible(
                    "the device heap is set aside whole, at the first launch of a kernel that \
                     allocates, and what kernels allocate and free stays inside it: a run in which \
                     in-kernel allocations reach cudaMalloc's memory would need a heap that grows, \
                     which CUDA's does not. What shows that the reading could see them: the same \
                     cudaMemGetInfo, read before and after, and a cudaMalloc of nearly all free memory, \
                     which would fail on memory they held.",
                ),
            },
        ]),
        // "This situation" is the GPU memory that cudaMalloc serves. In-kernel
        // allocations live in the device heap, a region set aside once: they
        // can fragment that heap, not cudaMalloc's memory.
        judge: |o: &Outcome| {
            let heap_fragmented = match (
                o.flag(THE_FREED_BLOCKS_ADD_UP_TO_MORE_THAN_THE_LARGE_REQUEST),
                o.flag(THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_AMONG_THE_HOLES),
                o.flag(THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_ONCE_THE_REST_IS_FREED),
            ) {
                (Some(true), Some(false), Some(true)) => Some(true),
                (Some(true), Some(true), _) => Some(false),
                _ => None,
            };
            let cudamalloc_touched = match (
                o.flag(IN_KERNEL_ALLOCATIONS_CHANGE_CUDAMEMGETINFO_S_FREE_MEMORY),
                o.flag(CUDAMALLOC_SERVES_NEARLY_ALL_FREE_MEMORY_WITH_THE_DEVICE_HEAP_IN_HOLES),
            ) {
                (Some(changed), Some(served)) => Some(changed || !served),
                _ => None,
            };
            match (heap_fragmented, cudamalloc_touched) {
                (_, Some(true)) => ClaimVerdict::Confirmed,
                (Some(true), Some(false)) => ClaimVerdict::Partly,
                (Some(false), Some(false)) => ClaimVerdict::Refuted,
                _ => ClaimVerdict::Undecided,
            }
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-large-launch-memory-pressure",
        source: Source::SEED_003,
        quote: "The kernel launch uses a large number of threads and blocks, further adding memory pressure for \
                registers and shared memory.",
        judged_by: "grid-size-cpp",
        control: Control::Impossible(
            "registers and shared memory are on-chip, given to each block that is resident, and local memory is reserved once for the threads that can be resident at once: nothing a launch takes grows with its grid, so a run in which free memory falls as the grid grows would need a kernel that allocates per block (in-kernel malloc, heap-fragmentation-cpp), another claim. What shows that the reading sees what a launch takes: this run's first launch reserved 140 MiB, read the same way.",
        ),
        // Registers and shared memory are on-chip, per resident block; local
        // memory is reserved per thread that can be resident at once. None of
        // it grows with the grid.
        judge: |o: &Outcome| {
            ClaimVerdict::provided(
                o.flag(EVERY_LAUNCH_RAN) == Some(true),
                ClaimVerdict::confirmed_if(o.flag(FREE_MEMORY_FALLS_AS_THE_GRID_GROWS)),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-size-knob-sets-memory-need",
        source: Source::SEED_003,
        quote: "int size = 1024 * 1024 * 64; // Adjust to experiment with memory needs",
        judged_by: "as-written-cpp",
        control: Control::Run("size-in-range-cpp"),
        // The knob sizes the two buffers (size floats each, as the driver
        // holds them) and the kernel's `new float[size * size]`, whose int
        // product may wrap. Both track it: confirmed; the buffers only:
        // partly; neither: refuted.
        judge: |o: &Outcome| match (
            o.flag(THE_BUFFERS_ARE_SIZE_FLOATS_EACH),
            o.flag(THE_REQUEST_IS_SIZE_TIMES_SIZE),
        ) {
            (Some(true), Some(true)) => ClaimVerdict::Confirmed,
            (Some(true), Some(false)) => ClaimVerdict::Partly,
            (Some(false), Some(false)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];
