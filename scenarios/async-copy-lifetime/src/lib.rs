//! `async-copy-lifetime`: a program copies a host buffer to the device with
//! cuMemcpyHtoDAsync / cudaMemcpyAsync and reuses the buffer at once. From
//! pinned memory the copy is truly asynchronous: the DMA reads the buffer
//! when the stream reaches it, so the device gets what the host wrote
//! afterwards. No call reports an error. The fix waits for an event
//! recorded after the copy before it touches the buffer.
//!
//! Deterministic by construction: a kernel that waits 200 ms on the GPU's
//! timer is queued on the stream first, so the copy cannot start before the
//! host has overwritten the buffer.
//!
//! Whether the copy is still queued when its call returns is read from five
//! more copies after the program, each behind the same waiting kernel and
//! timed in pairs (until the stream has done the copy, until the call
//! returned): still queued where the stream finishes well after the call
//! returns, in four pairs of five (`queued_when_the_call_returned`).

use std::time::Instant;

use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use casebook_model::timing::{self, Larger};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DriverError, PushKernelArg, result, sys,
};
use std::sync::Arc;

mod broken;
mod fixed;
mod pageable;
mod safe_api;

casebook_model::case_modules!();

/// 32-bit words copied: 16 MiB.
pub const WORDS: usize = 4 << 20;
/// What the program means to send.
pub const SENT: u32 = 0x5e5e_5e5e;
/// What it writes into the buffer right after the copy call.
pub const OVERWRITTEN: u32 = 0x0b0b_0b0b;
/// How long the kernel queued before the copy waits.
pub const SPIN_NS: u64 = 200_000_000;
/// The copies timed after the program (`kTimedCopies` in the C++).
pub const TIMED_COPIES: usize = 5;
/// A copy is still queued when its call returns if the stream finishes it
/// at least this many times later (`kQueuedRatio` in the C++)…
pub const QUEUED_RATIO: f64 = 2.0;
/// …and by at least a quarter of the kernel's wait (`kQueuedLeast`).
pub const QUEUED_LEAST_SECONDS: f64 = SPIN_NS as f64 * 1e-9 / 4.0;

const WHAT_WAS_SENT: &str = "what was sent";
const WHAT_CAME_AFTER: &str = "what was written after the call";

const SAFE_API_WAITS: &str = "A `PinnedHostSlice` cannot be written by the host while a copy \
                              from it is still queued: `as_mut_slice()` waits for the copy.";

casebook_model::scenario!(Scenario {
    title: "Wrong data on the GPU after cudaMemcpyAsync, no error (the host buffer was reused too soon)",
    cause: "cudaMemcpyAsync from pinned memory only queues the copy; the DMA reads the host \
            buffer when the stream reaches it. Writing to (or freeing) the buffer before then \
            changes what the device receives. Record an event after the copy and wait for it \
            (or synchronise the stream) before touching the buffer. From pageable memory the \
            driver stages the data before the call returns, which hides the bug.",
    fix: "After cudaMemcpyAsync from pinned memory, record an event on the stream and \
          cudaEventSynchronize it before writing to or freeing the host buffer.",
    symptoms: &[
        "wrong results, no error",
        "data copied to the GPU is corrupted",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(DEVICE_HOLDS_SENT)),
        Variant::contrast_clean("pageable", cudarc!(pageable)).also_differs(
            "the source is pageable memory (a Vec) instead of pinned memory; the copy call \
             and the reuse are the broken program's.",
        ),
        Variant::contrast_clean("safe-api", cudarc!(safe_api)).states(
            SAFE_API_WAITS,
            |o| o.check(DEVICE_HOLDS_SENT),
            device_holds_text,
        ),
        Variant::contrast(
            "safe-api-default-stream",
            Expect::Fails(Symptom::check_failed(DEVICE_HOLDS_SENT)),
            cudarc!(safe_api::default_stream at "default"),
        )
        .also_differs(
            "safe-api's code on the context's default stream, in a context that created no \
             stream of its own.",
        )
        .states(
            SAFE_API_WAITS,
            |o| o.check(DEVICE_HOLDS_SENT),
            device_holds_text,
        ),
        cpp_pair!(Symptom::check_failed(DEVICE_HOLDS_SENT)),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "chelsea0x3b/cudarc#340",
        shows: "\"The non-`sync` copy interfaces do not hold onto the host memory, so subsequent \
                modification of the host memory can race with the DMA transfer to device\": a \
                test writes into the pinned buffer right after the asynchronous copy and finds \
                the device copy changed (\"N=10000 here fails every time\").",
    },
    Report {
        id: "chelsea0x3b/cudarc#314",
        shows: "the fix as an API: record an event at the copy, keep it with the memory, and \
                synchronise on it before the host memory is dropped.",
    },
    Report {
        id: "chelsea0x3b/cudarc#591",
        shows: "the change behind `safe-api-default-stream`: \"`SyncOnDrop::Record`'s `Drop` impl \
                now skips `event.record(stream)` when `is_managing_stream_synchronization()` is \
                false\" (a fix for #590). A `PinnedHostSlice` copied on the default stream of a \
                context with no stream of its own so gets no event, and `as_mut_slice()` waits \
                for nothing; the pull request does not discuss host slices.",
    },
    Report {
        id: "chelsea0x3b/cudarc#368",
        shows: "the maintainer's account of the safe copy: \"If you use `&PinnedHostSlice<T>`, the \
                drop of the value will just do an event record, and not synchronize.\"",
    },
    Report {
        id: "NVIDIA/cudf#22284",
        shows: "a staging buffer changed from pageable to pinned memory turned a safe pattern \
                (destroy the host buffer after cudaMemcpyAsync returns) into corruption: with \
                the pinned source \"the call is a true async DMA that reads the pinned buffer \
                when the stream executes the copy\".",
    },
    Report {
        id: "Rust-GPU/rust-cuda#15",
        shows: "the pageable side: a copy from pageable memory returns once the data is staged, \
                and runs on the null stream, so it races with work on non-blocking streams; \
                cust disabled `StreamFlags::NON_BLOCKING` for it.",
    },
];

static SYNC_BEHAVIOR: Passage = Passage {
    document: "CUDA Driver API",
    section: "API synchronization behavior: Memcpy: Asynchronous",
    url: "https://docs.nvidia.com/cuda/cuda-driver-api/api-sync-behavior.html",
    text: "For transfers between device memory and pageable host memory, the function might be \
           synchronous with respect to host. For transfers from any host memory to any host \
           memory, the function is fully synchronous with respect to the host. If pageable \
           memory must first be staged to pinned memory, the driver may synchronize with the \
           stream and stage the copy into pinned memory. For all other transfers, the function \
           should be fully asynchronous.",
};

static PAGEABLE_NOTE: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "Asynchronous Execution: Launching Memory Transfers in CUDA Streams",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/02-basics/asynchronous-execution.html",
    text: "In order for memory copies involving CPU memory to be carried out asynchronously, the \
           host buffers must be pinned and page-locked. `cudaMemcpyAsync()` will function \
           correctly if host memory which is not pinned and page-locked is used, but it will \
           revert to a synchronous behavior which will not overlap with other work.",
};

/// The stream, the device buffer, and the kernel that holds the stream.
pub(crate) struct Setup {
    pub stream: Arc<CudaStream>,
    pub dst: sys::CUdeviceptr,
    spin: cudarc::driver::CudaFunction,
}

pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<(Arc<CudaContext>, Setup)> {
    let ctx = device::context(rec)?;
    let spin = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_fill")?;
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?;
    // SAFETY: freed in `finish`.
    let dst = rec.step("cuMemAlloc", unsafe { result::malloc_sync(WORDS * 4) })?;
    Ok((ctx, Setup { stream, dst, spin }))
}

impl Setup {
    /// Queues a kernel that only waits: see [`hold_stream`].
    pub fn hold_stream(&self, rec: &mut Recorder) -> anyhow::Result<()> {
        hold_stream(rec, &self.stream, &self.spin)
    }

    /// The copy call. The caller decides when `src` may be touched again.
    pub fn copy(&self, rec: &mut Recorder, src: &[u32]) -> anyhow::Result<()> {
        // SAFETY: `src` is WORDS long and `dst` holds WORDS words. The
        // caller decides when `src` may be touched again: that is the bug.
        rec.step("cuMemcpyHtoDAsync", unsafe {
            result::memcpy_htod_async(self.dst, src, self.stream.cu_stream())
        })?;
        Ok(())
    }

    /// Waits for the stream, reads the device buffer back and says what it
    /// holds; then times the same copy from `src` ([`time_copies`]); frees
    /// the device buffer.
    pub fn finish(self, rec: &mut Recorder, src: &[u32]) -> anyhow::Result<()> {
        rec.step("cuStreamSynchronize", self.stream.synchronize())?;
        let mut back = vec![0u32; WORDS];
        // SAFETY: the stream is idle; `dst` holds WORDS words.
        rec.step("cuMemcpyDtoH", unsafe {
            result::memcpy_dtoh_sync(&mut back, self.dst)
        })?;
        what_device_holds(rec, &back);
        time_copies(rec, &self.stream, &self.spin, |rec| self.copy(rec, src))?;
        // SAFETY: nothing uses the buffer any more.
        rec.step("cuMemFree", unsafe { result::free_sync(self.dst) })?;
        Ok(())
    }
}

/// Makes the program's copy [`TIMED_COPIES`] times more, each behind the
/// kernel that waits, and times each as a pair: until the stream has done
/// it, and until its call returned. Records the fastest call
/// ([`COPY_CALL_SECONDS`]) and whether the copy was still queued when its
/// call returned ([`STILL_QUEUED`], by [`queued_when_the_call_returned`]).
pub(crate) fn time_copies(
    rec: &mut Recorder,
    stream: &Arc<CudaStream>,
    spin: &CudaFunction,
    mut copy: impl FnMut(&mut Recorder) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut pairs = Vec::new();
    for _ in 0..TIMED_COPIES {
        let pair = rec.iteration(
            "the copy again, timed",
            |rec| -> anyhow::Result<(f64, f64)> {
                hold_stream(rec, stream, spin)?;
                let start = Instant::now();
                copy(rec)?;
                let returned = start.elapsed().as_secs_f64();
                rec.step("cuStreamSynchronize", stream.synchronize())?;
                Ok((start.elapsed().as_secs_f64(), returned))
            },
        )?;
        pairs.push(pair);
    }
    let fastest = pairs.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    rec.measure(COPY_CALL_SECONDS, fastest);
    rec.fact(STILL_QUEUED, queued_when_the_call_returned(&pairs));
    Ok(())
}

/// Whether copies were still queued when their calls returned, from pairs
/// `(seconds until the stream had done the copy, seconds until the call
/// returned)`, both from before the call: the stream finishes
/// [`QUEUED_RATIO`] times later and [`QUEUED_LEAST_SECONDS`] or more later,
/// in the medians and in four pairs of five ([`timing::compare_pairs`]). A
/// call that returns only once the copy is done leaves nothing between.
pub fn queued_when_the_call_returned(pairs: &[(f64, f64)]) -> bool {
    timing::compare_pairs(pairs, QUEUED_LEAST_SECONDS, QUEUED_RATIO).larger == Larger::A
}

fn device_holds_text(o: &Outcome) -> String {
    let holds = o.fact_text(DEVICE_HOLDS);
    format!("the device holds {}", holds.unwrap_or("nothing recorded"))
}

/// Queues a kernel that only waits (it fills nothing), so what is queued
/// after it on `stream` starts no sooner than SPIN_NS from now.
pub(crate) fn hold_stream(
    rec: &mut Recorder,
    stream: &Arc<CudaStream>,
    spin: &CudaFunction,
) -> anyhow::Result<()> {
    let nothing: sys::CUdeviceptr = 0;
    let n = 0i32;
    let value = 0f32;
    let mut launch = stream.launch_builder(spin);
    launch.arg(&nothing).arg(&n).arg(&value).arg(&SPIN_NS);
    rec.step(
        "cuLaunchKernel spin_then_fill (waits, fills nothing)",
        unsafe { launch.launch(casebook_driver::device::line(1, 1)) },
    )?;
    Ok(())
}

/// Records what the words read back from the device are, and the check.
pub(crate) fn what_device_holds(rec: &mut Recorder, back: &[u32]) {
    let sent = back.iter().all(|&w| w == SENT);
    let after = back.iter().all(|&w| w == OVERWRITTEN);
    rec.fact(
        DEVICE_HOLDS,
        if sent {
            WHAT_WAS_SENT
        } else if after {
            WHAT_CAME_AFTER
        } else {
            "a mix"
        },
    );
    rec.check(DEVICE_HOLDS_SENT, sent);
}

/// A pinned host buffer (cuMemHostAlloc) of WORDS words, freed on drop.
pub(crate) struct Pinned {
    ptr: *mut u32,
}

impl Pinned {
    pub fn new(rec: &mut Recorder) -> Result<Pinned, DriverError> {
        // SAFETY: WORDS words of page-locked memory, freed in Drop.
        let ptr = rec.step("cuMemHostAlloc", unsafe {
            result::malloc_host(WORDS * 4, 0)
        })?;
        Ok(Pinned { ptr: ptr.cast() })
    }

    pub fn as_mut_slice(&mut self) -> &mut [u32] {
        // SAFETY: WORDS words, owned by this value; the caller decides
        // whether a copy may still be reading them.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, WORDS) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; every copy from it is done.
        let _ = unsafe { result::free_host(self.ptr.cast()) };
    }
}

/// (the copy was still queued when the call returned, the device holds what was sent)
fn observed(o: &Outcome) -> Option<(bool, bool)> {
    Some((o.flag(STILL_QUEUED)?, o.check(DEVICE_HOLDS_SENT)?))
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-pinned-copy-fully-asynchronous",
        source: Source::Nvidia(&SYNC_BEHAVIOR),
        quote: "For all other transfers, the function should be fully asynchronous.",
        judged_by: "broken",
        control: Control::Run("pageable"),
        // From pinned memory to the device is one of "all other
        // transfers": the call must return with the copy still queued
        // behind the waiting kernel.
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(STILL_QUEUED)),
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-pageable-async-copy-reverts-to-synchronous",
        source: Source::Nvidia(&PAGEABLE_NOTE),
        quote: "`cudaMemcpyAsync()` will function correctly if host memory which is not pinned \
                and page-locked is used, but it will revert to a synchronous behavior which will \
                not overlap with other work.",
        judged_by: "pageable",
        control: Control::Run("broken"),
        // "Function correctly": the device gets what was in the buffer at
        // the call. "Revert to a synchronous behavior": the call returns
        // only when the copy is no longer queued. Both: confirmed; correct
        // data from a call that returned with the copy still queued (the
        // data was staged, the copy itself is not synchronous): partly;
        // wrong data: refuted.
        judge: |o: &Outcome| match observed(o) {
            Some((false, true)) => ClaimVerdict::Confirmed,
            Some((true, true)) => ClaimVerdict::Partly,
            Some((_, false)) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(queued: bool, sent: bool) -> Outcome {
        Outcome::empty()
            .with_fact(STILL_QUEUED, queued)
            .with_check(DEVICE_HOLDS_SENT, sent)
    }

    #[test]
    fn a_copy_the_stream_finishes_long_after_its_call_returned_was_still_queued() {
        // (until done, until returned) in seconds: a pinned copy behind the
        // 200 ms kernel; a neighbour delayed one call.
        let pairs = [
            (0.2003, 0.00003),
            (0.2002, 0.00002),
            (0.2150, 0.1200),
            (0.2004, 0.00003),
            (0.2003, 0.00002),
        ];
        assert!(queued_when_the_call_returned(&pairs));
    }

    #[test]
    fn a_copy_whose_call_returns_when_it_is_done_was_not() {
        // A pageable copy: the call waits for the kernel and stages the
        // data; what is left after it returns is the last piece's transfer.
        let pairs = [(0.2156, 0.2154); 5];
        assert!(!queued_when_the_call_returned(&pairs));
    }

    #[test]
    fn the_cpp_decides_with_the_same_margins() {
        let cpp = include_str!("../cpp/async_copy_lifetime.cu");
        for declared in [
            format!("kTimedCopies = {TIMED_COPIES};"),
            format!("kQueuedRatio = {QUEUED_RATIO:?};"),
            "kQueuedLeast = kSpinNs * 1e-9 / 4;".to_owned(),
        ] {
            assert!(
                cpp.contains(&declared),
                "the C++ does not declare {declared}"
            );
        }
        assert_eq!(QUEUED_LEAST_SECONDS, SPIN_NS as f64 * 1e-9 / 4.0);
    }

    #[test]
    fn the_pageable_claim_names_each_case() {
        let judge = CLAIMS[1].judge;
        assert_eq!(judge(&outcome(false, true)), ClaimVerdict::Confirmed);
        assert_eq!(judge(&outcome(true, true)), ClaimVerdict::Partly);
        assert_eq!(judge(&outcome(false, false)), ClaimVerdict::Refuted);
    }
}
