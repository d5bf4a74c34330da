//! `context-leak`: each call creates a context (`cuCtxCreate`) and never
//! destroys it. A context holds device memory of its own (local memory for
//! every resident thread, the printf buffer, the device heap) and other
//! driver resources; after enough calls, creating one fails with
//! CUDA_ERROR_OUT_OF_MEMORY, and the scenario records how much device memory
//! was still free when it did.
//!
//! What a context costs is read from NVML's count of the memory this
//! process holds, not from free memory, so the variants share the GPU with
//! other trials: the leaking ones, which hold most of a large GPU before the
//! driver refuses a context, one at a time and only where the GPU has room
//! for them and their neighbours.

use casebook_model::device::{measure_bytes, own_memory, own_memory_bytes};
use casebook_model::{
    Claim, ClaimVerdict, Control, Outcome, Program, Reach, Recorder, Requirement, Scenario, Source,
    Symptom, Variant, cudarc,
};
use cudarc::driver::{result, sys};

mod broken;
mod fixed;

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/context_leak.cu" {
        broken: casebook_context_leak_broken_cpp,
        fixed: casebook_context_leak_fixed_cpp,
    }
}

/// The broken loop stops here if nothing has failed by then.
pub const MAX_CALLS: usize = 2000;
/// Under compute-sanitizer both loops are cut to this: a hundred contexts
/// would take minutes there, and the matrix needs the pattern, not the end.
pub const SANITIZER_CALLS: usize = 4;

/// How many calls a loop makes: `normal`, or the reduced count under the
/// sanitizer (and then it says so).
pub fn calls(rec: &mut Recorder, normal: usize) -> usize {
    if casebook_model::under_sanitizer() {
        rec.fact(casebook_model::REDUCED, true);
        SANITIZER_CALLS
    } else {
        normal
    }
}
/// The fixed variants make this many calls.
pub const FIXED_CALLS: usize = 200;
/// Creating and destroying a context is slow (a tenth of a second or more):
/// the fixed variant that does it makes fewer calls.
pub const DESTROY_CALLS: usize = 20;
pub const TOLERANCE: u64 = 64 << 20;
/// What a leaking variant holds at most before the driver refuses a
/// context: 101 contexts of 524 MiB on an H100 and an H200 (52 GiB), with
/// room to spare.
pub const LEAK_HOLDS: u64 = 60 << 30;

pub const OOM: &str = "CUDA_ERROR_OUT_OF_MEMORY";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "context-leak",
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
        reports: &[],
        claims: CLAIMS,
        variants: vec![
            Variant::broken("broken", Symptom::cuda_error(OOM), cudarc!(broken)).states(
                "cuCtxCreate per call without cuCtxDestroy fails with CUDA_ERROR_OUT_OF_MEMORY.",
                |o| o.first_error_is("CUDA_ERROR_OUT_OF_MEMORY"),
                |o| o.measure_text(CALLS_COMPLETED, " contexts"),
            ).timeout(std::time::Duration::from_secs(300)).holds_memory(LEAK_HOLDS).creates_contexts(),
            Variant::fixed("fixed", cudarc!(fixed::primary)),
            Variant::fixed("fixed-destroy", cudarc!(fixed::destroy at "destroy")).creates_contexts(),
            Variant::broken("broken-cust", Symptom::cuda_error(OOM), Program::cust("broken")).states(
                "A Context kept alive per call leaks as cuCtxCreate does, and fails at the same count.",
                |o| o.first_error_is("CUDA_ERROR_OUT_OF_MEMORY"),
                |o| o.measure_text(CALLS_COMPLETED, " contexts"),
            ).timeout(std::time::Duration::from_secs(300)).holds_memory(LEAK_HOLDS).creates_contexts(),
            Variant::broken("broken-cpp", Symptom::cuda_error(OOM), cpp::broken)
                .timeout(std::time::Duration::from_secs(300))
                .holds_memory(LEAK_HOLDS)
                .creates_contexts(),
            // It reads device-wide free memory before and after its loop.
            Variant::fixed("fixed-cpp", cpp::fixed).alone(),
            Variant::fixed("fixed-cust", Program::cust("fixed")).creates_contexts().states(
                "A legacy Context dropped at the end of its call is destroyed: nothing leaks.",
                |o| o.check(OWN_MEMORY_RETURNS_TO_ITS_BASELINE),
                |o| {
                    Outcome::yes_no(
                        "the process's memory back to its baseline",
                        o.check(OWN_MEMORY_RETURNS_TO_ITS_BASELINE),
                    )
                },
            ),
        ],
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "003-context-setup-needs-memory",
        source: Source::Seed("003_a513a38b5daed103.txt"),
        quote: "This highlights a scenario where the initial CUDA context setup requires a significant \
                amount of memory.",
        judged_by: "broken",
        control: Control::Impossible(
            "what a context takes is set up by the driver when the context is made, before the program can change anything in it: each of the 101 contexts this run makes takes the same 518 MiB, as each does on the H200 (docs/evidence/h200-catalogue-iv.json). A run with a context under the threshold would need another driver or GPU. What shows that the reading sees memory given back: in fixed, the same reading of the process's memory returns to its baseline once its contexts are destroyed.",
        ),
        reach: Reach::Either,
        judge: |o: &Outcome| match o.measure(BYTES_PER_CONTEXT) {
            Some(b) if b >= (64 << 20) as f64 => ClaimVerdict::Confirmed,
            Some(b) if b > 0.0 => ClaimVerdict::Partly,
            Some(_) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "001-undestroyed-contexts-fail-new-ones",
        source: Source::Seed("001_eb72388bf55c7443.txt"),
        quote: "However, if these resources are not properly released or if the context is not destroyed \
                appropriately after the first run, subsequent attempts to initialize a new context or utilize the \
                same resources might fail.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        reach: Reach::Either,
        judge: |o: &Outcome| match o.first_error() {
            Some(step) if step.call == "cuCtxCreate" => ClaimVerdict::Confirmed,
            Some(_) => ClaimVerdict::Partly,
            None if o.termination == casebook_model::Termination::Completed => {
                ClaimVerdict::Refuted
            }
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "004-oom-with-ample-free-memory",
        source: Source::Seed("004_dd8d91b458147886.txt"),
        quote: "In my experience optimizing high-performance computing applications, I've repeatedly encountered out-of-memory errors even with seemingly ample free memory.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        reach: Reach::Either,
        // cuCtxCreate reports out of memory: with how much still free?
        judge: |o: &Outcome| match (o.first_error_is(OOM), o.measure(FREE_WHEN_IT_FAILED)) {
            (Some(true), Some(free)) => {
                ClaimVerdict::confirmed_if(Some(free >= (1u64 << 30) as f64))
            }
            (Some(false), _) => ClaimVerdict::Refuted,
            _ if o.termination == casebook_model::Termination::Completed => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
    },
];

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
            Ok((free, own_memory_bytes(rec)?))
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
