//! `lazy-loading`: since CUDA 12.2 on Linux a kernel's code is loaded at its
//! first launch, not when its module is. A program launches a kernel that
//! waits for a flag, then, on another stream, launches for the first time
//! the kernel that sets it. Loading that kernel waits for the work already
//! running, which is the waiter: each waits for the other. The waiter here
//! gives up after a few seconds, so the hang is bounded and measured. The
//! fix loads the kernel before the waiter starts (`cuFuncLoad`,
//! `cudaFuncGetAttributes`), or runs with `CUDA_MODULE_LOADING=EAGER`.
//!
//! `footprint` measures what the fix by EAGER costs: a library of many
//! kernels, of which the program uses one, loaded under each mode.

use std::time::{Duration, Instant};

use casebook_driver::prelude::*;
use std::ffi::{CStr, c_void};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, DriverError, result, sys};

mod broken;
mod eager;
mod fixed;
mod footprint;

casebook_model::case_modules!();

/// The waiter gives up after this long; a first launch that returns only
/// then waited for it.
pub const WAITER_LIMIT: Duration = Duration::from_secs(5);
/// A launch that takes longer than this did not return at once.
const AT_ONCE: Duration = Duration::from_secs(1);
/// What the waiter writes (device/lazy_loading.cuh).
const RELEASED_CODE: u32 = 1;
const GAVE_UP_CODE: u32 = 2;

const AT_ONCE_TEXT: &str = "at once";
const AFTER_A_WAIT: &str = "after a wait";
const WAITER_RELEASED: &str = "released";
const WAITER_GAVE_UP: &str = "gave up waiting";

casebook_model::scenario!(Scenario {
    title: "A kernel launch that hangs while another kernel runs (lazy loading, CUDA 12.2 and later)",
    cause: "With lazy loading, the default since CUDA 12.2 on Linux, a kernel's code is loaded \
            into the context at its first launch, and loading it waits for the work already \
            running there. If a running kernel waits for the kernel being launched (a \
            persistent kernel polling a flag, say), each waits for the other and the program \
            hangs: through the driver's library API the launch call itself blocks; through \
            the runtime the launch returns and the kernel never starts. Load the kernels that \
            must run side by side before starting any of them (cuFuncLoad, \
            cudaFuncGetAttributes), or set CUDA_MODULE_LOADING=EAGER.",
    fix: "Load every kernel that must run alongside another before launching any of them \
          (cudaFuncGetAttributes, or cuKernelGetFunction + cuFuncLoad), or run with \
          CUDA_MODULE_LOADING=EAGER.",
    symptoms: &["a hang, no error"],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        Pair::new(
            Symptom::check_failed(RELEASED),
            cudarc!(broken),
            cudarc!(fixed::with_eager at "run")
        ),
        Variant::contrast_clean("eager", cudarc!(eager)).also_differs(
            "the broken program, unchanged, run in a worker process with \
             CUDA_MODULE_LOADING=EAGER: the variable is read when CUDA starts.",
        ),
        cpp_pair!(Symptom::check_failed(RELEASED)),
        Variant::contrast_clean("footprint", cudarc!(footprint::run at "measure"))
            // Its times compare milliseconds: a neighbour's work on the GPU
            // or the CPU stretches one side of a pair.
            .alone()
            .also_differs(
                "not the pair of kernels: a library of 1026 kernels, of which the program \
             launches one, loaded in workers under CUDA_MODULE_LOADING=LAZY and under \
             EAGER, eleven of each, interleaved (LAZY, EAGER, LAZY, …), each measuring its \
             own time and memory; each fact is read from the last ten pairs (the first \
             warms the image and the driver).",
            ),
        Variant::contrast_clean(
            "footprint-one-kernel",
            cudarc!(footprint::one_kernel, anchored)
        )
        .alone()
        .also_differs(
            "as footprint: workers under CUDA_MODULE_LOADING=LAZY and EAGER, eleven of each, \
             interleaved, each measuring its own time and memory.",
        )
        .one_change(
            "footprint",
            "the library the program loads: 1026 kernels there, of which it launches one; the \
             kernel it launches alone here (device/library_used_only.cu), so there is nothing \
             for lazy loading to leave unloaded",
            "footprint(rec, &MANY)",
            "footprint(rec, &USED_ONLY)",
        ),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "meta-pytorch/torchcomms#2334",
        shows: "a minimal reproducer of a production hang: with CUDA_MODULE_LOADING=LAZY the \
                first launch of a kernel from a module not yet loaded waits for the GPU's work \
                to drain; with a persistent kernel that polls a flag only another call can set, \
                the process wedges, and with EAGER it completes.",
    },
    Report {
        id: "NVIDIA/nvbench#136",
        shows: "\"The recent switch to lazy loading by default in CTK 12.2 seems to have broken \
                the async benchmarks\"; the deadlock is fixed by CUDA_MODULE_LOADING=EAGER.",
    },
    Report {
        id: "NVIDIA/cccl#3585",
        shows: "libcudacxx's tests deadlocked under lazy loading; the fix enables eager module \
                loading.",
    },
];

static LEGACY_DEADLOCK: Passage = Passage {
    document: "CUDA C++ Programming Guide (legacy)",
    section: "Lazy Loading: Possible Issues when Adopting Lazy Loading: Concurrent Execution",
    url: "https://docs.nvidia.com/cuda/archive/12.2.1/cuda-c-programming-guide/index.html#concurrent-execution",
    text: "Loading kernels might require context synchronization. Some programs incorrectly treat \
           the possibility of concurrent execution of kernels as a guarantee. In such cases, if \
           program assumes that two kernels will be able to execute concurrently, and one of the \
           kernels will not return without the other kernel executing, there is a possibility of \
           a deadlock. If kernel A will be spinning in an infinite loop until kernel B is \
           executing. In such case launching kernel B will trigger lazy loading of kernel B. If \
           this loading will require context synchronization, then we have a deadlock: kernel A \
           is waiting for kernel B, but loading kernel B is stuck waiting for kernel A to finish \
           to synchronize the context.",
};

static REMEDY: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "Lazy Loading: Impact on Concurrent Kernel Execution",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/lazy-loading.html",
    text: "Some programs incorrectly assume that concurrent kernel execution is guaranteed. A \
           deadlock can occur if cross-kernel synchronization is required, but kernel execution \
           has been serialized. To minimize the impact of lazy loading on concurrent kernel \
           execution, do the following: preload all kernels that you hope to execute \
           concurrently prior to launching them or run application with `CUDA_MODULE_LOADING = \
           EAGER` to force loading data eagerly without forcing each function to load eagerly",
};

static WHAT_IT_SAVES: Passage = Passage {
    document: "CUDA C++ Programming Guide (legacy)",
    section: "Lazy Loading: What is Lazy Loading?",
    url: "https://docs.nvidia.com/cuda/archive/12.2.1/cuda-c-programming-guide/index.html#what-is-lazy-loading",
    text: "Lazy Loading delays loading of CUDA modules and kernels from program initialization \
           closer to kernels execution. If a program does not use every single kernel it has \
           included, then some kernels will be loaded unneccessarily. This is very common, \
           especially if you include any libraries. Most of the time, programs only use a small \
           amount of kernels from libraries they include. Thanks to Lazy Loading, programs are \
           able to only load kernels they are actually going to use, saving time on \
           initialization. This reduces memory overhead, both on GPU memory and host memory.",
};

static EAGER_MODE: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "Environment Variables: CUDA_MODULE_LOADING",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
    text: "`EAGER`: Fully loads CUDA modules and kernels at program initialization.",
};

/// What the waiter saw: released (`Some(true)`) or gave up (`Some(false)`).
fn released(o: &Outcome) -> Option<bool> {
    match o.fact(WAITER)?.as_str()? {
        WAITER_RELEASED => Some(true),
        WAITER_GAVE_UP => Some(false),
        _ => None,
    }
}

/// The two kernels, each from a library of its own, loaded at start the
/// way the runtime loads a program's modules (cuLibraryLoadData): under lazy
/// loading a kernel's code reaches the context at its first launch.
pub(crate) struct Kernels {
    pub waiter: sys::CUkernel,
    pub release: sys::CUkernel,
}

pub(crate) fn load(rec: &mut Recorder) -> anyhow::Result<Kernels> {
    record_loading_mode(rec)?;
    Ok(Kernels {
        waiter: kernel(rec, fatbin::WAITER, c"wait_for_release")?,
        release: kernel(rec, fatbin::RELEASE, c"release")?,
    })
}

/// Records the loading mode CUDA started with (cuModuleGetLoadingMode).
pub(crate) fn record_loading_mode(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut mode = sys::CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING;
    // SAFETY: an out-pointer to a local.
    rec.step("cuModuleGetLoadingMode", unsafe {
        sys::cuModuleGetLoadingMode(&mut mode).result()
    })?;
    rec.fact(
        LOADING_MODE,
        match mode {
            sys::CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING => "eager",
            sys::CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING => "lazy",
        },
    );
    Ok(())
}

/// Loads `image` as a library (it stays loaded until the process ends) and
/// returns its kernel `name`.
fn kernel(rec: &mut Recorder, image: &[u8], name: &CStr) -> anyhow::Result<sys::CUkernel> {
    let name_text = name.to_string_lossy();
    let (_library, kernel) = library_kernel(
        rec,
        image,
        &format!("cuLibraryLoadData ({name_text})"),
        &format!("cuLibraryGetKernel ({name_text})"),
        name,
    )?;
    Ok(kernel)
}

/// Loads `image` as a library and gets its kernel `name`, each call
/// recorded under its label.
pub(crate) fn library_kernel(
    rec: &mut Recorder,
    image: &[u8],
    load_label: &str,
    kernel_label: &str,
    name: &CStr,
) -> anyhow::Result<(sys::CUlibrary, sys::CUkernel)> {
    // A Vec keeps the image aligned as the loader wants it; the library
    // keeps its own copy.
    let image = image.to_vec();
    let mut library: sys::CUlibrary = std::ptr::null_mut();
    let mut kernel: sys::CUkernel = std::ptr::null_mut();
    // SAFETY: a fatbin image, no options, out-pointers to locals.
    unsafe {
        rec.step(
            load_label,
            sys::cuLibraryLoadData(
                &mut library,
                image.as_ptr().cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            )
            .result(),
        )?;
        rec.step(
            kernel_label,
            sys::cuLibraryGetKernel(&mut kernel, library, name.as_ptr()).result(),
        )?;
    }
    Ok((library, kernel))
}

/// The releasing kernel's function for the current context
/// (cuKernelGetFunction), which on driver 580 loads its code.
pub(crate) fn release_function(
    rec: &mut Recorder,
    kernels: &Kernels,
) -> anyhow::Result<sys::CUfunction> {
    let mut release: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: a live kernel handle, an out-pointer to a local; the context
    // is current on this thread.
    rec.step("cuKernelGetFunction release", unsafe {
        sys::cuKernelGetFunction(&mut release, kernels.release).result()
    })?;
    Ok(release)
}

/// Whether `f`'s code is in the context now (cuFuncIsLoaded).
pub(crate) fn loading_state(
    rec: &mut Recorder,
    f: sys::CUfunction,
) -> anyhow::Result<&'static str> {
    let mut state = sys::CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_UNLOADED;
    // SAFETY: a live function handle and an out-pointer to a local.
    rec.step("cuFuncIsLoaded", unsafe {
        sys::cuFuncIsLoaded(&mut state, f).result()
    })?;
    Ok(state_words(state))
}

/// A function's loading state in the words the facts record.
pub(crate) fn state_words(state: sys::CUfunctionLoadingState) -> &'static str {
    match state {
        sys::CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_LOADED => "loaded",
        _ => "not loaded",
    }
}

/// Launches `kernel` as a single thread on `stream` (a CUkernel may be
/// launched as a CUfunction of the current context).
///
/// # Safety
///
/// `args` must match the kernel's parameters.
unsafe fn one_thread(
    kernel: sys::CUkernel,
    stream: &CudaStream,
    args: &mut [*mut c_void],
) -> Result<(), DriverError> {
    // SAFETY: as the caller promises.
    unsafe {
        result::launch_kernel(
            kernel as sys::CUfunction,
            (1, 1, 1),
            (1, 1, 1),
            0,
            stream.cu_stream(),
            args,
        )
    }
}

/// The program: the waiter starts on one stream, then the releasing kernel
/// is launched for the first time on another. Records how long that launch
/// and the releasing kernel's stream took, and what the waiter saw.
pub(crate) fn run_pair(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    kernels: &Kernels,
) -> anyhow::Result<()> {
    let waits = rec.step("cuStreamCreate (waiter)", ctx.new_stream())?;
    let releases = rec.step("cuStreamCreate (release)", ctx.new_stream())?;
    // SAFETY: two words, freed below; only the two kernels touch them.
    let (flag, result_word) = unsafe {
        let flag = rec.step("cuMemAlloc (flag)", result::malloc_sync(4))?;
        let word = rec.step("cuMemAlloc (result)", result::malloc_sync(4))?;
        rec.step(
            "cuMemsetD32 (flag)",
            sys::cuMemsetD32_v2(flag, 0, 1).result(),
        )?;
        rec.step(
            "cuMemsetD32 (result)",
            sys::cuMemsetD32_v2(word, 0, 1).result(),
        )?;
        (flag, word)
    };
    // The memsets run on the legacy default stream, which does not order
    // the kernels' non-blocking streams, and return before they are done: a
    // memset that lands after the kernels would erase what they wrote.
    rec.step(
        "cuCtxSynchronize (the words are zero)",
        result::ctx::synchronize(),
    )?;
    let mut limit_ns = WAITER_LIMIT.as_nanos() as u64;
    let (mut f, mut r) = (flag, result_word);
    let mut waiter_args = [
        (&mut f) as *mut _ as *mut c_void,
        (&mut r) as *mut _ as *mut c_void,
        (&mut limit_ns) as *mut _ as *mut c_void,
    ];
    // SAFETY: the arguments match wait_for_release(flag, result, limit_ns).
    rec.step("cuLaunchKernel wait_for_release", unsafe {
        one_thread(kernels.waiter, &waits, &mut waiter_args)
    })?;
    let mut f2 = flag;
    let mut release_args = [(&mut f2) as *mut _ as *mut c_void];
    let start = Instant::now();
    // SAFETY: the argument matches release(flag).
    rec.step("cuLaunchKernel release (its first launch)", unsafe {
        one_thread(kernels.release, &releases, &mut release_args)
    })?;
    let launched = start.elapsed();
    rec.measure(RELEASE_LAUNCH_SECONDS, launched.as_secs_f64());
    rec.fact(
        LAUNCH_RETURNED,
        if launched < AT_ONCE {
            AT_ONCE_TEXT
        } else {
            AFTER_A_WAIT
        },
    );
    rec.step("cuStreamSynchronize (release)", releases.synchronize())?;
    rec.measure(RELEASE_DONE_SECONDS, start.elapsed().as_secs_f64());
    rec.step("cuStreamSynchronize (waiter)", waits.synchronize())?;
    let mut seen = [0u32; 1];
    // SAFETY: one word, and both streams are idle.
    rec.step("cuMemcpyDtoH (result)", unsafe {
        result::memcpy_dtoh_sync(&mut seen, result_word)
    })?;
    rec.fact(
        WAITER,
        match seen[0] {
            RELEASED_CODE => WAITER_RELEASED,
            GAVE_UP_CODE => WAITER_GAVE_UP,
            _ => "wrote nothing",
        },
    );
    rec.check(RELEASED, seen[0] == RELEASED_CODE);
    // SAFETY: nothing uses the words any more.
    unsafe {
        rec.step("cuMemFree (flag)", result::free_sync(flag))?;
        rec.step("cuMemFree (result)", result::free_sync(result_word))?;
    }
    Ok(())
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-lazy-loading-first-launch-deadlock",
        source: Source::Nvidia(&LEGACY_DEADLOCK),
        quote: "If kernel A will be spinning in an infinite loop until kernel B is executing. In \
                such case launching kernel B will trigger lazy loading of kernel B. If this \
                loading will require context synchronization, then we have a deadlock: kernel A \
                is waiting for kernel B, but loading kernel B is stuck waiting for kernel A to \
                finish to synchronize the context.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        // Confirmed if the releasing kernel ran only once the waiting kernel
        // had given up (each waited for the other until the waiter's own
        // limit broke the tie); refuted if it ran while the waiter waited:
        // its first launch then did not wait for the running kernel.
        judge: |o: &Outcome| ClaimVerdict::refuted_if(released(o)),
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-lazy-loading-preload-remedy",
        source: Source::Nvidia(&REMEDY),
        quote: "To minimize the impact of lazy loading on concurrent kernel execution, do the \
                following: preload all kernels that you hope to execute concurrently prior to \
                launching them or run application with `CUDA_MODULE_LOADING = EAGER` to force \
                loading data eagerly without forcing each function to load eagerly",
        judged_by: "fixed",
        // Neither remedy: the waiter is never released.
        control: Control::Run("broken"),
        reach: Reach::AtBestPartly(
            "the clause \"without forcing each function to load eagerly\" does not hold of \
             CUDA_MODULE_LOADING=EAGER: it loads every function of a library with the library \
             (footprint: a library of 1026 kernels adds 6,291,456 B of device memory under EAGER \
             and none under LAZY, and the used kernel's first launch takes tens of microseconds \
             against milliseconds under LAZY, as footprint's record gives them; \
             nvidia-eager-loads-kernels-at-start). The clause is the legacy \
             CUDA_MODULE_DATA_LOADING=EAGER's, under which the remedy is not run (only a probe of the \
             loading state is). (This run's own readings of the \
             loading state cannot tell: under LAZY too every function handle a program can get \
             reads \"loaded\", asking for it loads it, and the kernel's own handle is refused.)",
        ),
        // Both remedies in one run: the fix preloads the releasing kernel
        // (cuFuncLoad) and the waiter is released; then the broken program
        // runs in a worker under CUDA_MODULE_LOADING=EAGER, and the waiter
        // is released there or not. Both release it: confirmed (capped);
        // either leaves the waiter waiting: refuted, as the control (broken,
        // neither remedy) reads. The loading-state readings the workers
        // make are on the page: they cannot tell.
        judge: |o: &Outcome| match (released(o), o.flag(UNDER_EAGER_THE_WAITER_IS_RELEASED)) {
            (Some(false), _) | (_, Some(false)) => ClaimVerdict::Refuted,
            (Some(true), Some(true)) => ClaimVerdict::Confirmed,
            _ => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "nvidia-eager-loads-kernels-at-start",
        source: Source::Nvidia(&EAGER_MODE),
        quote: "`EAGER`: Fully loads CUDA modules and kernels at program initialization.",
        judged_by: "eager",
        control: Control::Run("broken"),
        // Loaded at start, the releasing kernel has nothing to load at its
        // first launch, so it runs while the waiter waits: the variant's
        // check is the worker's.
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(RELEASED)),
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-lazy-loading-saves-time-and-memory",
        source: Source::Nvidia(&WHAT_IT_SAVES),
        quote: "Thanks to Lazy Loading, programs are able to only load kernels they are actually \
                going to use, saving time on initialization. This reduces memory overhead, both \
                on GPU memory and host memory.",
        judged_by: "footprint",
        control: Control::Run("footprint-one-kernel"),
        // The program the passage describes: it launches one kernel of a
        // library of many. Three savings are claimed: the load's time, and the
        // device and host memory the library adds by the time the program
        // has run; each counts when it is larger under EAGER by a margin
        // (and a fifth, for the time: footprint::compared). All three
        // confirm, none refutes, some are partly.
        judge: |o: &Outcome| {
            let saved = |name, word: &str| {
                o.fact_text(name)
                    .map(|v| v == format!("{word} under EAGER"))
            };
            match (
                saved(START_TIME, "longer"),
                saved(DEVICE_MEMORY, "more"),
                saved(HOST_MEMORY, "more"),
            ) {
                (Some(true), Some(true), Some(true)) => ClaimVerdict::Confirmed,
                (Some(false), Some(false), Some(false)) => ClaimVerdict::Refuted,
                (Some(_), Some(_), Some(_)) => ClaimVerdict::Partly,
                _ => ClaimVerdict::Undecided,
            }
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use casebook_model::Outcome;

    fn outcome(waiter: &str) -> Outcome {
        let mut o = Outcome::empty();
        o.facts.insert(WAITER.0.into(), waiter.into());
        o
    }

    #[test]
    fn the_deadlock_claim_is_judged_on_what_the_waiter_saw() {
        let judge = CLAIMS[0].judge;
        assert_eq!(judge(&outcome(WAITER_GAVE_UP)), ClaimVerdict::Confirmed);
        assert_eq!(judge(&outcome(WAITER_RELEASED)), ClaimVerdict::Refuted);
        assert_eq!(judge(&outcome("wrote nothing")), ClaimVerdict::Undecided);
    }
}
