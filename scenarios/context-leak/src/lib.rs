//! `context-leak`: each call creates a context (`cuCtxCreate`) and never
//! destroys it. A context holds device memory of its own (local memory for
//! every resident thread, the printf buffer, the device heap) and other
//! driver resources; after enough calls, creating one fails with
//! CUDA_ERROR_OUT_OF_MEMORY, and the scenario records how much device memory
//! was still free when it did.
//!
//! The limit is the driver's, whatever binding made the contexts, so one
//! variant reaches it in a run: `broken` (cudarc), which calls until
//! cuCtxCreate fails; the claims, and the figures the matrix compares across
//! GPUs (contexts before the driver refuses one, device memory per context),
//! are read from it. `broken-cust` and `broken-cpp` leak the same way for
//! a few calls and are judged on the leak itself: the memory their process
//! holds grows by a context with every call, and none of it is given back
//! when the call returns.
//!
//! The article's own case, one context left behind after a first run, is
//! run on a GPU where one context matters: `one-context-left` runs broken's
//! loop beside a ballast that leaves free memory for a context and a half,
//! and its control `one-context-destroyed` the same loop destroying each
//! context.
//!
//! What a context costs is read from NVML's count of the memory this
//! process holds, not from free memory, so the variants that leak for a few
//! calls, and the fixed ones, share the GPU with other trials, one that
//! creates contexts at a time. The one that reaches the limit has the GPU to
//! itself: the limit is device-wide, so every neighbour's context counts
//! against it, and a neighbour's long kernel slows every cuCtxCreate (on an
//! H100, 131 s to the limit beside device-heap-exhaustion's as-written
//! kernel and a full run's load, against 46 s beside light trials).

use casebook_driver::device::{measure_bytes, own_memory, own_memory_bytes};
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::driver;
use cudarc::driver::{result, sys};

mod broken;
mod fixed;
mod owns;
mod small;

casebook_model::case_modules!();

/// The broken loop stops here if nothing has failed by then: past the 101
/// contexts at which the driver refuses one on an H100 and an H200, and
/// few enough that `destroyed`, the same loop destroying each context,
/// ends in its time (0.62 s a call on an H100 in the run of 2edb1f8).
pub const MAX_CALLS: usize = 256;
/// Under compute-sanitizer both loops are cut to this: a hundred contexts
/// would take minutes there, and the matrix needs the pattern, not the end.
pub const SANITIZER_CALLS: usize = 4;

/// How many calls a loop makes: `normal`, or the reduced count under the
/// sanitizer (and then it says so).
pub fn calls(rec: &mut Recorder, normal: usize) -> usize {
    casebook_model::normal_or_reduced(rec, normal, SANITIZER_CALLS)
}
/// The leaking variants that do not run to the driver's limit make this
/// many calls: enough to show the growth call after call.
pub const LEAK_CALLS: usize = 5;
/// The fixed variants make this many calls.
pub const FIXED_CALLS: usize = 200;
/// Creating and destroying a context is slow (0.4 to 0.6 s on an H100): the
/// fixed variant that does it makes fewer calls, but more than the 101 at
/// which broken's contexts, never destroyed, are refused on an H100.
pub const DESTROY_CALLS: usize = 128;
/// What a process's memory may drift by and still count as back at its
/// baseline; a call whose context stays grows it by more (a context holds
/// hundreds of MiB).
pub const TOLERANCE: u64 = 64 << 20;
/// What the variant that leaks until the driver refuses a context holds at
/// most: 101 contexts of 518 MiB on an H100 and an H200 (51 GiB), with
/// room to spare.
pub const LEAK_HOLDS: u64 = 60 << 30;
/// What owns-created and owns-primary hold at most: the 4 GiB buffer, the
/// pool's 2 GiB block and two contexts.
pub const OWNS_HOLDS: u64 = 8 << 30;

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory after many calls that each create a context",
    cause: "A CUDA context reserves device memory and driver resources of its own; contexts \
            created per call and never destroyed add up until cuCtxCreate fails with \
            CUDA_ERROR_OUT_OF_MEMORY. Measured on an H100 and an H200, it fails at the same number \
            of contexts with much of the memory still free: what runs out is a limit on contexts, \
            reported as out of memory. Use the primary context, or destroy what you create.",
    fix: "Reuse the device's primary context for every call instead of calling cuCtxCreate per \
          call, or pair each cuCtxCreate with cuCtxDestroy before the call returns.",
    symptoms: &["out of memory", "out of memory though memory is free"],
    requires: Requirement::GPU,
    variants: variants![
        Pair::new(
            Symptom::cuda_error(driver::OUT_OF_MEMORY),
            cudarc!(broken),
            cudarc!(fixed::primary)
        )
        .with_broken(|v| v
            .states(
                "cuCtxCreate per call without cuCtxDestroy fails with \
                 CUDA_ERROR_OUT_OF_MEMORY.",
                |o| o.first_error_is(driver::OUT_OF_MEMORY),
                |o| o.measure_text(CALLS_COMPLETED, " contexts"),
            )
            .timeout(std::time::Duration::from_secs(300))
            .holds_memory(LEAK_HOLDS)
            .creates_contexts()
            .alone()),
        Variant::fixed("destroyed", cudarc!(broken::destroyed, anchored))
            .one_change(
                "broken",
                "what becomes of each call's context once its free memory \
                 is read: left there; destroyed here",
                "// BUG: the context is never destroyed (no cuCtxDestroy).",
                "let destroy = unsafe { sys::cuCtxDestroy_v2(ctx) }.result();\n\
                 rec.step(\"cuCtxDestroy\", destroy)?; // FIX",
            )
            .timeout(std::time::Duration::from_secs(400))
            .creates_contexts(),
        // The article's case, one context left after the first run, on
        // a GPU with room for one context and a half: a ballast holds the
        // rest.
        Variant::contrast(
            "one-context-left",
            Expect::Fails(Symptom::cuda_error(driver::OUT_OF_MEMORY)),
            cudarc!(small::one_context_left, anchored),
        )
        .also_differs(
            "broken's loop, run after a ballast in the device's primary context leaves \
             800 MiB free (a context and a half), as a smaller card or another process's \
             memory would, and for 8 calls, not up to 256.",
        )
        .alone()
        .creates_contexts(),
        Variant::contrast_clean(
            "one-context-destroyed",
            cudarc!(small::one_context_destroyed, anchored),
        )
        .one_change(
            "one-context-left",
            "what becomes of each call's context once its free memory is read: left there \
             (broken's loop); destroyed here (destroyed's)",
            "broken::left(rec, SMALL_CALLS)",
            "broken::destroying(rec, SMALL_CALLS)",
        )
        .alone()
        .creates_contexts(),
        Variant::fixed("fixed-destroy", cudarc!(fixed::destroy, anchored))
            .also_differs(
                "besides the cuCtxDestroy after each call's work: 128 calls (past the 101 at \
                 which broken fails) where broken makes up to 256, a first context made \
                 before the calls and made current again after them, and the process's own \
                 memory checked against its baseline where broken reads the device's free \
                 memory after each call.",
            )
            .timeout(std::time::Duration::from_secs(240))
            .creates_contexts(),
        Variant::broken(
            "broken-cust",
            Symptom::check_failed(OWN_MEMORY_RETURNS_TO_ITS_BASELINE),
            Program::cust("broken"),
        )
        .states(
            "A Context kept alive per call leaks as cuCtxCreate does: \
             each call's context keeps its device memory.",
            |o| Some(
                o.flag(GROWS_WITH_EVERY_CALL)? && !o.check(OWN_MEMORY_RETURNS_TO_ITS_BASELINE)?
            ),
            |o| Outcome::yes_no(
                "the process's memory grows with every call",
                o.flag(GROWS_WITH_EVERY_CALL)
            ),
        )
        .creates_contexts(),
        cpp_pair!(Symptom::check_failed(OWN_MEMORY_RETURNS_TO_ITS_BASELINE))
            .both(Variant::creates_contexts),
        Variant::fixed("fixed-cust", Program::cust("fixed"))
            .creates_contexts()
            .states(
                "A legacy Context dropped at the end of its call is \
                 destroyed: nothing leaks.",
                |o| o.check(OWN_MEMORY_RETURNS_TO_ITS_BASELINE),
                |o| {
                    Outcome::yes_no(
                        "the process's memory back to its baseline",
                        o.check(OWN_MEMORY_RETURNS_TO_ITS_BASELINE),
                    )
                },
            ),
        // What a context holds, and its control: the same buffer,
        // stream and pool block made in the primary context instead.
        Variant::records("owns-created", cudarc!(owns::created at "owns"))
            .holds_memory(OWNS_HOLDS)
            .creates_contexts(),
        Variant::records("owns-primary", cudarc!(owns::primary at "owns"))
            .one_change(
                "owns-created",
                "the context current while the buffer, the stream and the \
             pool's block are made: the created one there, the device's \
             primary context here",
                "owns(rec, MadeIn::Created)",
                "owns(rec, MadeIn::Primary)",
            )
            .holds_memory(OWNS_HOLDS)
            .creates_contexts(),
    ],
});

/// Free device memory as the current context sees it.
pub(crate) fn free_bytes(rec: &mut Recorder) -> Result<usize, cudarc::driver::DriverError> {
    rec.step("cuMemGetInfo", result::mem_get_info())
        .map(|(free, _)| free)
}

/// One call's work in whatever context is current: allocate, free.
pub(crate) fn work(rec: &mut Recorder) -> Result<(), cudarc::driver::DriverError> {
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(1 << 20) })?;
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })
}

pub(crate) fn device(rec: &mut Recorder) -> Result<sys::CUdevice, cudarc::driver::DriverError> {
    rec.step("cuInit", result::init())?;
    rec.step("cuDeviceGet", result::device::get(0))
}

/// Makes up to `calls` calls, each returning the device's free memory
/// after it, until one fails. After each call reads the memory the process
/// holds (NVML); records that per call, what one context costs (the growth
/// from the first call to the second) and, after a failure, how much of the
/// device was still free; returns that failure.
pub fn leak_until_failure<E: Into<anyhow::Error>>(
    rec: &mut Recorder,
    calls: usize,
    total: usize,
    mut call: impl FnMut(&mut Recorder) -> Result<usize, E>,
) -> anyhow::Result<()> {
    // NVML starts here, so that every call below records the same steps
    // (the snapshot shows them once, however many calls the driver allows).
    own_memory(rec)?;
    let mut held = Vec::new();
    let mut last_free = None;
    let mut failure = None;
    for n in 0..calls {
        let called = rec.iteration("call", |rec| -> anyhow::Result<(usize, u64)> {
            let free = call(rec).map_err(Into::into)?;
            // A call that destroys its context leaves the process with
            // none, and NVML then lists no memory for it: none held. (Where
            // NVML cannot see this process at all, a container without the
            // host's pid namespace, the variants that read the memory of a
            // live context say so: `own_memory_bytes`.)
            Ok((free, own_memory(rec)?.unwrap_or(0)))
        });
        match called {
            Ok((free, own)) => {
                rec.point(HELD_BYTES, (n + 1) as f64, own as f64);
                held.push(own);
                last_free = Some(free);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    rec.measure(CALLS_COMPLETED, held.len() as f64);
    if let [first, second, ..] = held[..] {
        record_cost(rec, second.saturating_sub(first) as usize, total);
    }
    if let (Some(_), Some(last)) = (&failure, last_free) {
        measure_bytes(rec, FREE_WHEN_IT_FAILED, last);
        // More than 5% of the device: the failure is not the device being full.
        rec.fact(
            STILL_FREE,
            if last * 20 > total {
                "more than 5% of the device"
            } else {
                "almost none"
            },
        );
    }
    failure.map_or(Ok(()), Err)
}

/// Makes `calls` calls, each of which leaves its context behind, and reads
/// after each the memory the process holds (NVML); records that per call,
/// what each leaked context costs (the growth over the calls, per call),
/// whether the memory grew by more than [`TOLERANCE`] with every call, and
/// the check that it came back to where it was before the first: the leak,
/// shown without running to the driver's limit.
pub fn leak_over_calls<E: Into<anyhow::Error>>(
    rec: &mut Recorder,
    calls: usize,
    total: usize,
    mut call: impl FnMut(&mut Recorder) -> Result<(), E>,
) -> anyhow::Result<()> {
    // Before its first context NVML lists the process with no memory.
    let baseline = own_memory(rec)?.unwrap_or(0);
    let mut held = Vec::new();
    for n in 0..calls {
        let own = rec.iteration("call", |rec| -> anyhow::Result<u64> {
            call(rec).map_err(Into::into)?;
            own_memory_bytes(rec)
        })?;
        rec.point(HELD_BYTES, (n + 1) as f64, own as f64);
        held.push(own);
    }
    let summary = Leak::of(baseline, &held);
    rec.measure(CALLS_COMPLETED, held.len() as f64);
    record_cost(rec, summary.per_call as usize, total);
    rec.fact(GROWS_WITH_EVERY_CALL, summary.grows_every_call);
    rec.check(OWN_MEMORY_RETURNS_TO_ITS_BASELINE, summary.back_at_baseline);
    Ok(())
}

/// What the memory a process held after each of its calls says about a
/// leak.
#[derive(Debug, PartialEq)]
pub struct Leak {
    /// The growth from the baseline to the last call, per call.
    pub per_call: u64,
    /// Every call added more than [`TOLERANCE`].
    pub grows_every_call: bool,
    /// After the last call the process holds at most [`TOLERANCE`] more
    /// than before the first.
    pub back_at_baseline: bool,
}

impl Leak {
    pub fn of(baseline: u64, held: &[u64]) -> Leak {
        let last = held.last().copied().unwrap_or(baseline);
        let mut before = baseline;
        let mut grows_every_call = !held.is_empty();
        for &after in held {
            grows_every_call &= after > before.saturating_add(TOLERANCE);
            before = after;
        }
        Leak {
            per_call: last.saturating_sub(baseline) / held.len().max(1) as u64,
            grows_every_call,
            back_at_baseline: last <= baseline.saturating_add(TOLERANCE),
        }
    }
}

/// Records what one context costs, as a share of the device's memory.
pub(crate) fn record_cost(rec: &mut Recorder, per_context: usize, total: usize) {
    measure_bytes(rec, BYTES_PER_CONTEXT, per_context);
    rec.measure(CONTEXT_SHARE_OF_DEVICE, per_context as f64 / total as f64);
    let share = per_context as f64 / total as f64;
    rec.fact(
        COST,
        if per_context == 0 {
            "none"
        } else if share < 0.01 {
            "under 1% of the device"
        } else if share < 0.05 {
            "1% to 5% of the device"
        } else {
            "over 5% of the device"
        },
    );
}

/// Whether the created context holds the memory made in it (the driver
/// names it as the 4 GiB cuMemAlloc buffer's, and its destroy gives back the
/// buffer and the 2 GiB block from the stream-ordered pool asked on its
/// stream, with no free) and the stream made in it (cuStreamGetCtx): both
/// confirmed, one partly, neither refuted.
/// Why no run can make a stream that the context it is made in does not
/// hold.
const STREAM_IN_THE_CONTEXT_IT_IS_MADE_IN: &str = "a stream belongs to the context current when \
     cuStreamCreate makes it, and cuStreamGetCtx names that context: no program makes a stream in \
     this context that the driver names another's. What shows that the reading can name another \
     context: owns-primary, the same stream made while the primary context is current, which the \
     driver names the primary context's";

fn context_holds_memory_and_streams(o: &Outcome) -> ClaimVerdict {
    let memory = match (
        o.flag(BUFFER_IN_THE_CONTEXT),
        o.flag(BUFFER_GOES_WITH_THE_CONTEXT),
        o.flag(POOL_BLOCK_GOES_WITH_THE_CONTEXT),
    ) {
        (Some(owned), Some(goes), Some(block_goes)) => Some(owned && goes && block_goes),
        _ => None,
    };
    ClaimVerdict::of_two_parts(memory, o.flag(STREAM_IN_THE_CONTEXT))
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-context-holds-memory-and-streams",
        source: Source::SEED_000,
        quote: "The context encapsulates device memory, streams, and other runtime resources.",
        judged_by: "owns-created",
        control: Control::Parts(&[
            Part {
                part: "the context holds the device memory made in it, the cuMemAlloc buffer and \
                       the stream-ordered pool's block alike",
                control: Control::Impossible(
                    "the stream-ordered pool's block is the device's pool's, not the context's: \
                     the driver names no context for it (cuPointerGetAttribute), and destroying \
                     the context it was asked in gives it back to no one; no program makes that \
                     destroy return it. What shows that the reading can say \"given back\": the \
                     cuMemAlloc buffer beside it, returned by the same destroy. The \"partly\" \
                     rests on that block alone: seed 000's own code allocates with cudaMalloc \
                     only, for which this part holds",
                ),
            },
            Part {
                part: "the context holds the streams made in it",
                control: Control::Impossible(STREAM_IN_THE_CONTEXT_IT_IS_MADE_IN),
            },
        ]),
        // Memory, of both kinds a program asks the driver for: the driver
        // names the created context as the 4 GiB cuMemAlloc buffer's, and
        // destroying that context gives back the buffer's memory with no
        // cuMemFree, and the 2 GiB block from the device's stream-ordered
        // pool, asked on the context's stream, with no cuMemFreeAsync.
        // Streams: cuStreamGetCtx names it as the stream's. Both parts:
        // confirmed; one: partly; neither: refuted. Neither part can have a
        // control (their reasons say why); owns-primary, the same buffer,
        // stream and block made while the primary context is current, shows
        // the readings naming another context. ("Other runtime resources"
        // names none to read.)
        judge: context_holds_memory_and_streams,
        ..Claim::EITHER
    },
    Claim {
        id: "002-context-encompasses-allocations-and-streams",
        source: Source::SEED_002,
        quote: "A fundamental runtime structure encompassing device memory allocations, streams, and \
                other resources.",
        // Seed 002's glossary says of the context what seed 000 says: read
        // the same way, on the same runs, with the same parts.
        judged_by: "owns-created",
        control: Control::Parts(&[
            Part {
                part: "the context encompasses the device memory allocations made in it, the \
                       cuMemAlloc buffer and the stream-ordered pool's block alike",
                control: Control::Impossible(
                    "the stream-ordered pool's block is the device's pool's, not the context's: \
                     the driver names no context for it (cuPointerGetAttribute), and destroying \
                     the context it was asked in gives it back to no one; no program makes that \
                     destroy return it. What shows that the reading can say \"given back\": the \
                     cuMemAlloc buffer beside it, returned by the same destroy. The \"partly\" \
                     rests on that block alone: seed 002's own code allocates with cudaMalloc \
                     only, for which this part holds",
                ),
            },
            Part {
                part: "the context encompasses the streams made in it",
                control: Control::Impossible(STREAM_IN_THE_CONTEXT_IT_IS_MADE_IN),
            },
        ]),
        judge: context_holds_memory_and_streams,
        ..Claim::EITHER
    },
    Claim {
        id: "003-context-setup-needs-memory",
        source: Source::SEED_003,
        quote: "This highlights a scenario where the initial CUDA context setup requires a significant \
                amount of memory.",
        judged_by: "broken",
        control: Control::Impossible(
            "what a context takes is set up by the driver when the context is made, before the program can change anything in it: each of the 101 contexts this run makes takes the same 518 MiB, as each does on the H200 (docs/evidence/h200-catalogue-iv.json). A run with a context under the threshold would need another driver or GPU. What shows that the reading sees memory given back: in destroyed, broken's loop with each call's context destroyed, the same reading gives 0 bytes a context, and in fixed-destroy the process's memory returns to its baseline once its contexts are destroyed.",
        ),
        reach: Reach::AtBestPartly(
            "\"This\" is the article's Example 3, and what fails there is its own 4 GiB cudaMalloc, \
             not the context: oversized-allocation's as-written-cpp runs the example whole, served on \
             the whole GPU and refused beside a ballast that leaves 2 GiB free, its context made in \
             both. The context's own cost is measured here",
        ),
        judge: |o: &Outcome| match o.measure(BYTES_PER_CONTEXT) {
            Some(b) if b >= (64 << 20) as f64 => ClaimVerdict::Confirmed,
            Some(b) if b > 0.0 => ClaimVerdict::Partly,
            Some(_) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "001-undestroyed-contexts-fail-new-ones",
        source: Source::SEED_001,
        quote: "However, if these resources are not properly released or if the context is not destroyed \
                appropriately after the first run, subsequent attempts to initialize a new context or utilize the \
                same resources might fail.",
        // The article's case, the first run's context left behind, on a
        // GPU where one context matters: the ballast leaves room for one and
        // a half ("This is exacerbated in situations with limited GPU
        // memory", two sentences on). Is the next attempt refused? (On the
        // whole 80 GB the same loop is refused at the 102nd context: broken.)
        judged_by: "one-context-left",
        // The same loop beside the same ballast, each call destroying its
        // context (one change).
        control: Control::Run("one-context-destroyed"),
        // (Of the sentence's two causes this run has the second; the first,
        // "these resources are not properly released", is missing-free's
        // second-call-large-cpp, where the second call is refused beside the
        // first call's unreleased allocation and served once it is freed:
        // 001-raw-second-run-may-fail.)
        // The attempt after the first run's context refused: confirmed;
        // only a later one: partly; none, the loop run to its end: refuted.
        judge: |o: &Outcome| match (o.first_error(), o.measure(CALLS_COMPLETED)) {
            (Some(step), Some(done)) if step.call == "cuCtxCreate" => {
                if done <= 1.0 {
                    ClaimVerdict::Confirmed
                } else {
                    ClaimVerdict::Partly
                }
            }
            (Some(_), _) => ClaimVerdict::Undecided,
            (None, _) if o.termination == casebook_model::Termination::Completed => {
                ClaimVerdict::Refuted
            }
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "004-oom-with-ample-free-memory",
        source: Source::SEED_004,
        quote: "In my experience optimizing high-performance computing applications, I've repeatedly encountered out-of-memory errors even with seemingly ample free memory.",
        judged_by: "broken",
        // The same loop, each call's context destroyed once its free memory
        // is read (one change): no call is refused.
        control: Control::Run("destroyed"),
        // cuCtxCreate reports out of memory: with how much still free?
        judge: |o: &Outcome| match (
            o.first_error_is(driver::OUT_OF_MEMORY),
            o.measure(FREE_WHEN_IT_FAILED),
        ) {
            (Some(true), Some(free)) => {
                ClaimVerdict::confirmed_if(Some(free >= (1u64 << 30) as f64))
            }
            (Some(false), _) => ClaimVerdict::Refuted,
            _ if o.termination == casebook_model::Termination::Completed => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    const CONTEXT: u64 = 518 << 20;

    fn owned(buffer: bool, goes: bool, block_goes: bool, stream: bool) -> Outcome {
        Outcome::empty().with_facts([
            (BUFFER_IN_THE_CONTEXT, buffer),
            (BUFFER_GOES_WITH_THE_CONTEXT, goes),
            (POOL_BLOCK_GOES_WITH_THE_CONTEXT, block_goes),
            (STREAM_IN_THE_CONTEXT, stream),
        ])
    }

    #[test]
    fn the_context_claim_reads_the_memory_and_the_stream() {
        let claim = CLAIMS
            .iter()
            .find(|c| c.id == "000-context-holds-memory-and-streams")
            .unwrap();
        for (buffer, goes, block_goes, stream, verdict) in [
            (true, true, true, true, ClaimVerdict::Confirmed),
            (false, false, false, false, ClaimVerdict::Refuted),
            // The driver names the context, but its destroy gives nothing back.
            (true, false, false, true, ClaimVerdict::Partly),
            (true, true, true, false, ClaimVerdict::Partly),
            // The buffer goes with the context, the pool's block stays.
            (true, true, false, true, ClaimVerdict::Partly),
        ] {
            assert_eq!(
                claim.verdict(&owned(buffer, goes, block_goes, stream)),
                verdict
            );
        }
        assert_eq!(claim.verdict(&Outcome::empty()), ClaimVerdict::Undecided);
    }

    #[test]
    fn a_context_left_behind_by_every_call_is_a_leak() {
        let held: Vec<u64> = (1..=5).map(|n| n * CONTEXT).collect();
        assert_eq!(
            Leak::of(0, &held),
            Leak {
                per_call: CONTEXT,
                grows_every_call: true,
                back_at_baseline: false,
            }
        );
    }

    #[test]
    fn contexts_destroyed_before_each_call_returns_leave_nothing() {
        // The first context is the session's; each call's comes and goes.
        let held = [CONTEXT + (2 << 20); 5];
        let leak = Leak::of(CONTEXT, &held);
        assert!(!leak.grows_every_call);
        assert!(leak.back_at_baseline);
        assert!(leak.per_call < TOLERANCE);
    }

    #[test]
    fn one_call_that_gives_its_context_back_is_not_growth_with_every_call() {
        let held = [CONTEXT, 2 * CONTEXT, 2 * CONTEXT, 3 * CONTEXT];
        let leak = Leak::of(0, &held);
        assert!(!leak.grows_every_call);
        assert!(!leak.back_at_baseline);
        assert!(!Leak::of(0, &[]).grows_every_call);
    }
}
