//! `unsynced-stream`: the host reads the result of asynchronous work (a
//! kernel, then a copy into pinned memory, on a non-blocking stream) before
//! synchronising the stream, and sees what was there before. No call
//! reports an error: the data is simply stale.
//!
//! Deterministic by construction: the kernel waits 50 ms on the GPU's own
//! timer before it writes, and the host reads within microseconds.

use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use casebook_model::timing::{self, Larger};
use cudarc::driver::{CudaFunction, CudaStream, PushKernelArg, result, sys};

mod broken;
mod fixed;
mod pipeline;
mod safe_api;

casebook_model::case_modules!();

/// How many times each variant runs the pipeline.
pub const RUNS: usize = 10;
/// Elements in the result.
pub const N: usize = 1 << 20;
/// How long the kernel waits before it writes.
pub const SPIN_NS: u64 = 50_000_000;
/// What the host buffer holds before each run.
pub const SENTINEL: f32 = -1.0;
/// How long each kernel of the two-stream pipeline runs: long beside the
/// host's timer and launch costs (microseconds), short enough for five
/// pairs.
pub const PIPELINE_SPIN_NS: u64 = 50_000_000;
/// The pipelines time one kernel alone and then the two streams' pair this
/// many times, interleaved, so that a load that comes and goes stretches
/// both of a pair alike.
pub const PIPELINE_PAIRS: usize = 5;

casebook_model::scenario!(Scenario {
    title: "Wrong or stale results, no CUDA error (host reads before the stream is synchronised)",
    cause: "Kernels and cuMemcpyAsync return before the work is done; the host must wait for the \
            stream (or an event) before it reads what they write.",
    fix: "Call cudaStreamSynchronize on the stream after enqueuing the kernel and cudaMemcpyAsync, \
          and only then read the pinned host buffer.",
    symptoms: &["wrong results, no error"],
    requires: Requirement::GPU,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(FRESH)).with_broken(|v| v.states(
            "Reading pinned memory after an asynchronous copy, before \
             synchronising, reads stale data.",
            |o| o.check(FRESH).map(|fresh| !fresh),
            |o| o.measure_text(STALE_READS, " of 10"),
        )),
        Variant::contrast_clean("safe-api", cudarc!(safe_api)),
        cpp_pair!(Symptom::check_failed(FRESH)),
        Pair::new(
            Symptom::check_failed(FRESH),
            Program::cust("broken"),
            Program::cust("fixed")
        )
        .with_broken(|v| v
            .states(
                "cust's asynchronous copy is unsafe; with it the same stale \
                 read happens.",
                |o| o.check(FRESH).map(|fresh| !fresh),
                |o| o.measure_text(STALE_READS, " of 10"),
            )
            .states(
                "Stream::new drops the NON_BLOCKING flag: the stream it \
                 returns is blocking.",
                |o| o
                    .flag(THE_STREAM_CUST_MADE_IS_NON_BLOCKING_AS_ASKED)
                    .map(|nb| !nb),
                |o| {
                    Outcome::yes_no(
                        "non-blocking as asked",
                        o.flag(THE_STREAM_CUST_MADE_IS_NON_BLOCKING_AS_ASKED),
                    )
                },
            )),
        // The pipelines time their kernels: a neighbour's kernels on the
        // same GPU (time-sliced with theirs) blur the overlap, and on an
        // H200 shared with seven other trials the blocking pipeline once
        // seemed to overlap. They run alone.
        Variant::broken(
            "pipeline-cust",
            Symptom::check_failed(OVERLAP),
            Program::cust("pipeline")
        )
        .alone()
        .states(
            "Two cust streams with a synchronous copy_from between their \
             kernels run one after the other.",
            |o| o.check(OVERLAP).map(|overlap| !overlap),
            |o| o.measure_text(OVERLAP_RATIO, ""),
        ),
        Variant::fixed("pipeline-async-cust", Program::cust("pipeline_async"))
            .alone()
            .states(
                "With async_copy_from on the stream itself, cust's pipeline \
                 overlaps again.",
                |o| o.check(OVERLAP),
                |o| o.measure_text(OVERLAP_RATIO, ""),
            ),
        Variant::contrast_clean("pipeline", cudarc!(pipeline))
            .alone()
            .states(
                "The same pipeline on cudarc's non-blocking streams overlaps.",
                |o| o.check(OVERLAP),
                |o| o.measure_text(OVERLAP_RATIO, ""),
            ),
        Variant::records("pipeline-blocking", cudarc!(pipeline::blocking))
            .alone()
            .one_change(
                "pipeline",
                "the flag the two streams are made with: non-blocking there; the default flag \
                 here, so that each waits for the legacy default stream the copy runs on, and \
                 it for them",
                "pipeline(rec, CU_STREAM_NON_BLOCKING)",
                "pipeline(rec, CU_STREAM_DEFAULT)",
            ),
        Variant::contrast_clean("device-sync-cpp", cpp::device_sync),
        Variant::records("device-sync-after-cpp", cpp::device_sync_after).one_change(
            "device-sync-cpp",
            "where cudaDeviceSynchronize stands: before the host reads \
             the results there, after them here",
            "return device_sync_reads<true>(r);",
            "return device_sync_reads<false>(r);",
        ),
        Variant::records("repeated-cpp", cpp::repeated).states(
            "Repeated invocations that read before synchronising get \
             wrong results at some sizes and not others.",
            |o| o.flag(WRONG_RESULTS_COME_AND_GO_AT_SOME_SIZE),
            |o| o.measure_text(SIZES_WITH_INTERMITTENT_WRONG_RESULTS, " of 6 sizes"),
        ),
        Variant::records("repeated-synced-cpp", cpp::repeated_synced).one_change(
            "repeated-cpp",
            "whether each invocation waits for its stream before the host \
                 reads the result: no there, yes here (the same 200 \
                 invocations at each of the six sizes)",
            "return invocations<false>(r);",
            "return invocations<true>(r);",
        ),
    ],
});

/// The pipeline: a kernel writes `out`, a copy brings it to pinned `host`.
pub(crate) struct Pipeline {
    pub stream: Arc<CudaStream>,
    pub fill: CudaFunction,
    pub out: sys::CUdeviceptr,
    pub host: *mut f32,
}

impl Pipeline {
    /// Enqueues the kernel and the copy; both return at once.
    pub fn enqueue(&self, rec: &mut Recorder, value: f32) -> anyhow::Result<()> {
        let n = N as i32;
        let mut launch = self.stream.launch_builder(&self.fill);
        launch.arg(&self.out).arg(&n).arg(&value).arg(&SPIN_NS);
        let cfg = casebook_driver::device::line(8, 256);
        rec.step("cuLaunchKernel spin_then_fill", unsafe {
            launch.launch(cfg)
        })?;
        // SAFETY: `host` is pinned and N long; `out` is N floats.
        let host = unsafe { std::slice::from_raw_parts_mut(self.host, N) };
        rec.step("cuMemcpyDtoHAsync", unsafe {
            result::memcpy_dtoh_async(host, self.out, self.stream.cu_stream())
        })?;
        Ok(())
    }

    /// Fills the host buffer with the sentinel.
    pub fn reset_host(&self) {
        for i in 0..N {
            // SAFETY: in bounds; nothing is writing to it now.
            unsafe { self.host.add(i).write_volatile(SENTINEL) };
        }
    }

    /// Whether every element of the host buffer is `value`, read as the
    /// host sees it now.
    pub fn host_holds(&self, value: f32) -> bool {
        // SAFETY: in bounds; volatile, because the copy engine may write it.
        (0..N).all(|i| unsafe { self.host.add(i).read_volatile() } == value)
    }
}

/// Sets the pipeline up, runs it RUNS times with `one_run`, and tallies the
/// stale reads.
pub(crate) fn drive(
    rec: &mut Recorder,
    one_run: fn(&mut Recorder, &Pipeline, f32) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let fill = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_fill")?;
    let stream = rec.step("cuStreamCreate (non-blocking)", ctx.new_stream())?;
    let out = rec.step("cuMemAlloc", unsafe { result::malloc_sync(N * 4) })?;
    let host = rec.step("cuMemHostAlloc", unsafe { result::malloc_host(N * 4, 0) })? as *mut f32;
    let p = Pipeline {
        stream,
        fill,
        out,
        host,
    };
    let stale = stale_runs(rec, |rec, value| {
        p.reset_host();
        one_run(rec, &p, value)
    })?;
    rec.step("cuStreamSynchronize", p.stream.synchronize())?;
    rec.step("cuMemFreeHost", unsafe {
        result::free_host(p.host as *mut _)
    })?;
    rec.step("cuMemFree", unsafe { result::free_sync(p.out) })?;
    rec.measure(RUNS_MADE, RUNS as f64);
    rec.measure(STALE_READS, stale as f64);
    rec.measure(REPRODUCTION_RATE, stale as f64 / RUNS as f64);
    rec.fact(RATE, casebook_model::runs_in_words(stale, RUNS));
    rec.check(FRESH, stale == 0);
    Ok(())
}

/// Records how much of two equal kernels on two streams ran at once, from
/// interleaved pairs `(one kernel alone, the two streams' pipeline)` in
/// seconds: the medians of each, the share that overlapped (1 when the pair
/// took as long as one kernel, 0 when as long as both), and whether they
/// overlapped by [`overlapped`].
pub fn record_overlap(rec: &mut Recorder, pairs: &[(f64, f64)]) {
    let single_s = timing::median(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let both_s = timing::median(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    rec.measure(ONE_KERNEL_S, single_s);
    rec.measure(PIPELINE_S, both_s);
    let overlap = ((2.0 * single_s - both_s) / single_s).clamp(0.0, 1.0);
    rec.measure(OVERLAP_RATIO, overlap);
    rec.check(OVERLAP, overlapped(pairs));
}

/// Whether the two streams' kernels ran at the same time, from interleaved
/// pairs `(one kernel alone, the pipeline of two)`: twice the one kernel
/// exceeds the pipeline by a third (the pipeline took under one and a half
/// kernels) and by more than half a kernel, in the pairs' medians and in
/// four pairs of five ([`timing::compare_pairs`]). Run one after the other,
/// the pipeline takes as long as both, and neither side is larger.
pub fn overlapped(pairs: &[(f64, f64)]) -> bool {
    let doubled: Vec<(f64, f64)> = pairs.iter().map(|&(one, both)| (2.0 * one, both)).collect();
    let half_a_kernel = PIPELINE_SPIN_NS as f64 * 1e-9 / 2.0;
    timing::compare_pairs(&doubled, half_a_kernel, 4.0 / 3.0).larger == Larger::A
}

/// Runs `one_run` RUNS times, each in an iteration `run` and given its
/// run's value (1, 2, …), and counts the runs whose host read stale data.
/// The cudarc and the cust pipelines both run it.
pub fn stale_runs(
    rec: &mut Recorder,
    mut one_run: impl FnMut(&mut Recorder, f32) -> anyhow::Result<bool>,
) -> anyhow::Result<usize> {
    let mut stale = 0;
    for run in 0..RUNS {
        if !rec.iteration("run", |rec| one_run(rec, (run + 1) as f32))? {
            stale += 1;
        }
    }
    Ok(stale)
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-premature-host-access-errors",
        source: Source::SEED_000,
        quote: "If the CPU attempts to access GPU memory before the kernel has completed execution, it can \
                result in errors.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        // "Errors" after "unexpected behavior": wrong results count, whether
        // or not a CUDA call reports one (none does).
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.check(FRESH)),
        ..Claim::EITHER
    },
    Claim {
        id: "000-stream-sync-prevents-races",
        source: Source::SEED_000,
        quote: "By ensuring all operations within a stream have concluded before proceeding, we prevent \
                potential race conditions and errors caused by premature CPU access to GPU memory.",
        judged_by: "fixed-cpp",
        control: Control::Run("broken-cpp"),
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(FRESH)),
        ..Claim::EITHER
    },
    Claim {
        id: "000-unsynced-streams-random-errors",
        source: Source::SEED_000,
        quote: "Failure to synchronize streams can easily lead to seemingly random errors, especially during \
                repeated model invocations.",
        judged_by: "repeated-cpp",
        control: Control::Run("repeated-synced-cpp"),
        // Wrong results that come and go between invocations of one program
        // are "seemingly random"; wrong every time, they are not random.
        judge: |o: &Outcome| {
            ClaimVerdict::of_an_effect(
                o.flag(SOME_RESULT_IS_WRONG),
                o.flag(WRONG_RESULTS_COME_AND_GO_AT_SOME_SIZE),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-device-sync-waits-for-all",
        source: Source::SEED_000,
        quote: "This emphasizes the necessity for correctly using synchronization primitives like \
                `cudaDeviceSynchronize()`, which ensures the GPU completes all pending operations before the CPU proceeds.",
        judged_by: "device-sync-cpp",
        control: Control::Run("device-sync-after-cpp"),
        // Two streams' kernels and copies, one cudaDeviceSynchronize, then
        // the host reads both results.
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(FRESH)),
        ..Claim::EITHER
    },
    Claim {
        id: "000-stream-sync-completes-stream",
        source: Source::SEED_000,
        quote: "cudaStreamSynchronize(stream); // Ensure all operations on the stream have completed",
        judged_by: "fixed-cpp",
        control: Control::Run("broken-cpp"),
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(FRESH)),
        ..Claim::EITHER
    },
    Claim {
        id: "001-streams-run-kernels-concurrently",
        source: Source::SEED_001,
        quote: "Streams, within a context, manage the execution of multiple kernels concurrently.",
        judged_by: "pipeline",
        // Two streams' kernels with a synchronous copy between them: they
        // overlap (confirmed) or run one after the other (refuted). The
        // control makes the same two streams with the default flag (one
        // change), which wait for the legacy stream the copy runs on.
        control: Control::Run("pipeline-blocking"),
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(OVERLAP)),
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipeline_that_takes_as_long_as_one_kernel_overlaps() {
        // (one kernel, the pipeline) in seconds, as on an H100; a neighbour
        // stretched the pipeline of one pair.
        let pairs = [
            (0.0501, 0.0508),
            (0.0501, 0.0507),
            (0.0502, 0.0950),
            (0.0501, 0.0509),
            (0.0501, 0.0508),
        ];
        assert!(overlapped(&pairs));
    }

    #[test]
    fn a_pipeline_that_takes_as_long_as_both_kernels_does_not() {
        let pairs = [(0.0501, 0.1008); 5];
        assert!(!overlapped(&pairs));
        // One pair that seemed to overlap (the old single reading's
        // failure) does not make the pipeline overlap.
        let mut one_off = pairs;
        one_off[2] = (0.0501, 0.0510);
        assert!(!overlapped(&one_off));
    }
}
