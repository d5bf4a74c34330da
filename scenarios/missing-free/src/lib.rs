//! `missing-free`: a "model call" that allocates its working buffer and never
//! frees it. Each call works; the calls after about free/leak fail with
//! CUDA_ERROR_OUT_OF_MEMORY.

use std::sync::Arc;

use casebook_driver::device::{self, PAGE};
use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};

mod broken;
mod fixed;
mod tools;

casebook_model::case_modules!();

/// Each call's buffer is this fraction of the free memory, so the leak fills
/// any GPU in about this many calls.
pub const CALLS_TO_FILL: usize = 40;
/// Both variants make this many calls: more than the leak survives.
pub const CALLS: usize = 48;
/// Elements that make the host round trip of each call.
pub const SAMPLE: usize = 1 << 20;
/// How far free memory may end from its baseline and still count as back.
pub const TOLERANCE: usize = 64 << 20;

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory after many calls (each call leaks its buffer)",
    cause: "Device memory stays allocated until it is freed or the process ends; a call that \
            forgets cuMemFree leaks its whole buffer, and the leaks add up to the free memory.",
    fix: "Free each call's device buffer before the call returns (the missing cudaFree), or hold \
          it in an owner that frees it on drop, such as cudarc's CudaSlice or cust's DeviceBuffer.",
    symptoms: &["out of memory", "memory that keeps shrinking"],
    requires: Requirement::GPU_FILLED,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::OUT_OF_MEMORY))
            .with_broken(|v| v.states(
                "A raw cuMemAlloc that is never freed leaks until cuMemAlloc \
                 fails.",
                |o| o.first_error_is(driver::OUT_OF_MEMORY),
                Outcome::first_error_text,
            ))
            .with_fixed(|v| v.also_differs(
                "its buffer is a cudarc `CudaSlice`, so it comes from the \
                 stream-ordered pool (cuMemAllocAsync) and its copies run \
                 asynchronously on the model's stream, where `broken` calls \
                 cuMemAlloc and copies synchronously. The safe layer is what \
                 frees it on every path; the C++ pair differs by the \
                 `cudaFree` alone.",
            )),
        cpp_pair!(Symptom::cuda_error(runtime::MEMORY_ALLOCATION)),
        Variant::contrast(
            "unchecked-cpp",
            Expect::Fails(Symptom::cuda_error(runtime::MEMORY_ALLOCATION)),
            cpp::unchecked,
        )
        // In the record's order: the refusal itself; then the copies
        // through the pointer no cudaMalloc set, refused (the launch's
        // cudaGetLastError returns the first copy's error, still the
        // runtime's last error: the launch itself is accepted); its fault,
        // the illegal address at the synchronise after the call; and the
        // output not copied back.
        .then_shows(Symptom::cuda_error(runtime::INVALID_VALUE))
        .then_shows(Symptom::cuda_error(runtime::ILLEGAL_ADDRESS))
        .then_shows(Symptom::check_failed(MODEL_OUTPUT_IS_RIGHT))
        .one_change(
            "fixed-unchecked-cpp",
            "the cudaFree at the end of each call, removed as in broken-cpp (from which \
             this variant differs by the check after cudaMalloc alone: there a refused \
             cudaMalloc returns its error; here the call goes on, copying to and launching \
             through the pointer no cudaMalloc set, null, set before the call)",
            "return drive(r, model_call_fixed_unchecked, FirstCalls::Article);",
            "return drive(r, model_call_unchecked, FirstCalls::Article);",
        ),
        Variant::contrast_clean("fixed-unchecked-cpp", cpp::fixed_unchecked).one_change(
            "fixed-cpp",
            "the check after cudaMalloc, removed as in unchecked-cpp (the pointer set to \
             null before the call, so that what it holds if refused is known): whether the \
             calls that free their buffers need it to avoid the exhaustion",
            "return drive(r, model_call_fixed, FirstCalls::Article);",
            "return drive(r, model_call_fixed_unchecked, FirstCalls::Article);",
        ),
        Variant::broken(
            "second-call-large-cpp",
            Symptom::cuda_error(runtime::MEMORY_ALLOCATION),
            cpp::second_call_large,
        )
        .one_change(
            "broken-cpp",
            "the buffer of the two calls it starts with: the article's 1M \
             floats there, 3/5 of the free memory here, so that what the \
             first call leaks leaves too little for the second",
            "return drive(r, model_call_broken, FirstCalls::Article);",
            "return drive(r, model_call_broken, FirstCalls::ThreeFifthsOfFree);",
        ),
        Variant::fixed("second-call-large-freed-cpp", cpp::second_call_large_freed).one_change(
            "second-call-large-cpp",
            "the model call: its buffer never freed there, so the first \
             call's allocation remains when the second asks; freed by its \
             cudaFree here, as the first run of seed 001's Example 3 frees \
             it (the leak that fills the GPU after the first two calls is \
             gone with it)",
            "return drive(r, model_call_broken, FirstCalls::ThreeFifthsOfFree);",
            "return drive(r, model_call_fixed, FirstCalls::ThreeFifthsOfFree);",
        ),
        Variant::contrast(
            "second-call-large-reset-cpp",
            Expect::Fails(Symptom::cuda_error(runtime::MEMORY_ALLOCATION)),
            cpp::second_call_large_reset,
        )
        .one_change(
            "second-call-large-cpp",
            "whether the article's cudaDeviceReset runs between the first \
             two calls: no there, yes here (the leak that fills the GPU \
             after them still ends in out of memory)",
            "return drive(r, model_call_broken, FirstCalls::ThreeFifthsOfFree);",
            "return drive(r, model_call_broken, FirstCalls::ThreeFifthsOfFreeResetBetween);",
        ),
        Variant::as_written("reuse-cpp", cpp::reuse).also_differs(
            "the article's call, its buffer never freed, then a second launch of its kernel on \
             the same d_data (each element doubled twice, copied back and checked), then more \
             device memory asked for: \"reuse the same memory for a second kernel call\" as the \
             sentence says it, in one process.",
        ),
        Variant::contrast(
            "reuse-after-reset-cpp",
            Expect::Fails(Symptom::cuda_error(runtime::INVALID_VALUE)),
            cpp::reuse_after_reset,
        )
        .one_change(
            "reuse-cpp",
            "whether the article's cudaDeviceReset runs between the two kernel calls: no there, \
             yes here, so the memory the second call reuses has been given back",
            "return reuse(r, false);",
            "return reuse(r, true);",
        ),
        Variant::records("under-ncu", cudarc!(tools::under_ncu at "report"))
            .timeout(std::time::Duration::from_secs(360)),
        Variant::records(
            "under-leak-check",
            cudarc!(tools::under_leak_check, anchored)
        )
        .timeout(std::time::Duration::from_secs(360))
        .one_change(
            "under-ncu",
            "the tool the leaking call runs under: Nsight Compute (ncu) \
             there; compute-sanitizer with its leak check here",
            "report(rec, NSIGHT_COMPUTE)",
            "report(rec, LEAK_CHECK)",
        ),
        Pair::new(
            Symptom::cuda_error(driver::OUT_OF_MEMORY),
            Program::cust("broken"),
            Program::cust("fixed")
        )
        .with_broken(|v| v.states(
            "A DeviceBuffer kept beyond its call (a cache that nothing \
             evicts) leaks exactly as much.",
            |o| o.first_error_is(driver::OUT_OF_MEMORY),
            Outcome::first_error_text,
        ))
        .with_fixed(|v| v.states(
            "A DeviceBuffer that goes out of scope is freed by its Drop: \
             the missing free cannot be written.",
            |o| o.check(FREE_MEMORY_RETURNS_TO_ITS_BASELINE),
            |o| o.measure_text(CALLS_COMPLETED, " calls"),
        )),
        Variant::records("drop-after-fault-cust", Program::cust("drop_after_fault")).states(
            "After a kernel fault, cuMemFree fails; DeviceBuffer's Drop \
             throws that error away, DeviceBuffer::drop returns it.",
            |o| {
                let lost = o.flag(AN_IMPLICIT_DROP_IN_THE_SAME_STATE_LOSES_AN_ERROR)?;
                let returned = o.flag(CUMEMFREE_FAILS_AFTER_THE_FAULT)?;
                Some(lost && returned)
            },
            |o| {
                o.steps
                    .iter()
                    .filter(|s| {
                        s.call.starts_with("cuMemFree (inside Drop")
                            || s.call.starts_with("DeviceBuffer::drop")
                    })
                    .map(|s| format!("{} → {}", s.call, s.result))
                    .collect::<Vec<_>>()
                    .join("; ")
            },
        ),
    ],
});

/// The model call's kernel, as the driver and a tool's report name it.
pub(crate) const KERNEL: &str = "scale";

/// What a model call works with.
pub(crate) struct Model {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub scale: CudaFunction,
    /// The working buffer's size: 1/CALLS_TO_FILL of the free memory.
    pub bytes: usize,
    pub input: Vec<f32>,
    pub expected: Vec<f32>,
}

/// Makes CALLS model calls, and records how far they got and where free
/// memory ended. Both Rust variants run this; only the call differs.
pub(crate) fn drive(
    rec: &mut Recorder,
    model_call: fn(&mut Recorder, &Model) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, KERNEL)?;
    let baseline = device::free_bytes(rec, &ctx)?;
    let bytes = bytes_per_call(rec, baseline);
    let (input, expected) = sample();
    let model = Model {
        stream: ctx.default_stream(),
        ctx,
        scale,
        bytes,
        input,
        expected,
    };
    model_calls(rec, baseline, bytes, |rec| {
        model_call(rec, &model)?;
        Ok(device::free_bytes(rec, &model.ctx)?)
    })?;
    rec.step("cuCtxSynchronize", model.ctx.synchronize())?;
    let after = device::free_bytes(rec, &model.ctx)?;
    back_to_baseline(rec, baseline, after);
    Ok(())
}

/// The working buffer's size for free memory `baseline`: 1/CALLS_TO_FILL
/// of it, in whole pages. Records both figures and the rule.
pub fn bytes_per_call(rec: &mut Recorder, baseline: usize) -> usize {
    let bytes = baseline / CALLS_TO_FILL / PAGE * PAGE;
    device::measure_bytes(rec, FREE_BEFORE, baseline);
    device::measure_bytes(rec, BYTES_PER_CALL, bytes);
    rec.fact(BUFFER_PER_CALL, format!("1/{CALLS_TO_FILL} of free memory"));
    bytes
}

/// A model call's input, SAMPLE floats, and the output the kernel must give.
pub fn sample() -> (Vec<f32>, Vec<f32>) {
    let input: Vec<f32> = (0..SAMPLE).map(|i| i as f32).collect();
    let expected = input.iter().map(|x| 2.0 * x).collect();
    (input, expected)
}

/// Makes up to CALLS model calls, each `call` returning the free memory
/// after it, and records that memory call by call and how many calls
/// completed. A failed call ends the loop; its error is returned, with
/// whether it came once the calls of `bytes` each had filled `baseline`.
/// The cudarc and the cust drives both run it.
pub fn model_calls(
    rec: &mut Recorder,
    baseline: usize,
    bytes: usize,
    mut call: impl FnMut(&mut Recorder) -> anyhow::Result<usize>,
) -> anyhow::Result<()> {
    let mut completed: usize = 0;
    let mut failure = None;
    for _ in 0..CALLS {
        let made = rec.iteration("model call", |rec| {
            let free = call(rec)?;
            rec.point(FREE_BYTES, (completed + 1) as f64, free as f64);
            anyhow::Ok(())
        });
        if let Err(e) = made {
            failure = Some(e);
            break;
        }
        completed += 1;
    }
    rec.measure(CALLS_COMPLETED, completed as f64);
    if let Some(e) = failure {
        rec.fact(FAILED_AFTER_FILL, completed.abs_diff(baseline / bytes) <= 2);
        return Err(e);
    }
    Ok(())
}

/// Free memory once the calls are done (`after`), against `baseline`.
pub fn back_to_baseline(rec: &mut Recorder, baseline: usize, after: usize) {
    device::measure_bytes(rec, FREE_AFTER, after);
    rec.check(
        FREE_MEMORY_RETURNS_TO_ITS_BASELINE,
        after + TOLERANCE >= baseline,
    );
}

/// Whether the second of the two calls drive() starts with was served,
/// read only where the first was: a run whose first call was refused has no
/// second call after a first that ran, and decides nothing of it.
fn second_call_ok(o: &Outcome) -> Option<bool> {
    match o.flag(FIRST_CALL_OK)? {
        true => o.flag(SECOND_CALL_OK),
        false => None,
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-no-reset-remnants-cause-errors",
        source: Source::SEED_000,
        quote: "If the context isn't correctly reset between model calls, remnants from the previous invocation can lead to conflicts and errors.",
        judged_by: "second-call-large-cpp",
        control: Control::Run("second-call-large-reset-cpp"),
        // The remnant is the article's own, the memory the first call leaks
        // (3/5 of the free memory, so that the second call cannot have it
        // beside it). Without a reset between the calls, the second call is
        // refused (confirmed) or served (refuted); the control resets
        // between them, as the article's Example 3 does.
        judge: |o| ClaimVerdict::refuted_if(second_call_ok(o)),
        ..Claim::EITHER
    },
    Claim {
        id: "000-second-call-error-from-missing-reset",
        source: Source::SEED_000,
        quote: "The recurring CUDA error on a second model call frequently stems from resource \
                mismanagement, specifically the failure to properly reset the CUDA context or release \
                allocated memory.",
        judged_by: "second-call-large-cpp",
        control: Control::Run("second-call-large-reset-cpp"),
        reach: Reach::AtBestPartly(
            "how often a second call's error has this cause, no run measures; and one that follows a \
             fault has neither cause: in sticky-error the calls after an illegal address fail, and a \
             reset between the calls does not mend it (reset-between-calls-cpp: the call after the \
             reset gets cudaErrorDevicesUnavailable)",
        ),
        // The first call's memory not released: its buffer, 3/5 of the free
        // memory, left allocated. The second call refused: the error stems
        // from it (confirmed, capped); served: refuted. The control resets
        // between the two calls (one change), and the second call is served.
        judge: |o| ClaimVerdict::refuted_if(second_call_ok(o)),
    },
    Claim {
        id: "001-check-every-call",
        source: Source::SEED_001,
        quote: "Proper error checking after every CUDA call (including `cudaMalloc`, `cudaFree`, and kernel \
                launches) and rigorous memory management are essential to avoid this.",
        // "This" is the sentence before's "fragmentation, resource
        // exhaustion, or driver-level conflicts"; "essential", that each is
        // needed. Neither seed 000's Example 1 nor seed 001's Example 3
        // checks a result: the check after cudaMalloc is the project's own
        // (the checked calls act on cudaMalloc's result and record the
        // copies' and the launch's). Decided where the sentence can fail:
        // the calls free their buffers and do not check cudaMalloc's result
        // (fixed-unchecked-cpp; the loop that drives them still stops on the
        // error a call returns, its last copy's).
        judged_by: "fixed-unchecked-cpp",
        control: Control::Parts(&[
            Part {
                part: "without the check, memory management avoids the exhaustion",
                // The same unchecked calls, their cudaFree missing (one
                // change): exhausted, and the unchecked refusal faults.
                control: Control::Run("unchecked-cpp"),
            },
            Part {
                part: "the check is not what avoids it",
                control: Control::Impossible(
                    "a check acts only on a call that was refused, and with the buffers freed \
                     none is: the same freeing calls with the check (fixed-cpp) run the same 48 \
                     calls to the same free memory, byte for byte, and no program can make the \
                     check avoid an exhaustion the free has already avoided. What shows that the \
                     reading could find the check doing something: where the calls do not free, \
                     the checked refusal ends the call (broken-cpp) and the unchecked one goes \
                     on into a fault (unchecked-cpp, the other part's control)",
                ),
            },
        ]),
        // What the run shows of the sentence, given what the program did.
        // No check, and nothing of "this" (no refusal, free memory back at
        // its baseline): the check was not needed, the free was there:
        // partly. A run that did what the sentence asks and avoided it, or
        // lacked a practice and met the failure the sentence ties to it
        // (the free missing: the exhaustion; the check missing too: the
        // refusal turned into a fault), agrees with it: confirmed. A
        // refusal before the calls had used the memory, or a checked
        // refusal that still faults: refuted.
        judge: |o| {
            let checked = o.flag(THE_CALL_CHECKS_CUDAMALLOC_S_RESULT);
            if o.shows(&Symptom::cuda_error(runtime::MEMORY_ALLOCATION)) {
                match (
                    checked,
                    o.flag(FAILED_AFTER_FILL),
                    o.flag(THE_PROCESS_SYNCHRONISES_AFTER_THE_FAILED_CALL),
                ) {
                    (Some(_), Some(false), _) => ClaimVerdict::Refuted,
                    (Some(true), Some(true), Some(true))
                    | (Some(false), Some(true), Some(false)) => ClaimVerdict::Confirmed,
                    (Some(true), Some(true), Some(false)) => ClaimVerdict::Refuted,
                    (Some(false), Some(true), Some(true)) => ClaimVerdict::Partly,
                    _ => ClaimVerdict::Undecided,
                }
            } else {
                match (checked, o.check(FREE_MEMORY_RETURNS_TO_ITS_BASELINE)) {
                    (Some(false), Some(true)) => ClaimVerdict::Partly,
                    (Some(true), Some(true)) => ClaimVerdict::Confirmed,
                    (Some(_), Some(false)) => ClaimVerdict::Refuted,
                    _ => ClaimVerdict::Undecided,
                }
            }
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-unfreed-memory-exhausts",
        source: Source::SEED_000,
        quote: "For instance, failing to free allocated device memory after a kernel launch can exhaust \
                GPU memory on subsequent calls, leading to allocation failures.",
        // The article's C++, where broken-cpp and fixed-cpp differ by the
        // cudaFree alone (the Rust pair also differs in how it allocates).
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        judge: |o| leak_verdict(o, runtime::MEMORY_ALLOCATION),
        ..Claim::EITHER
    },
    Claim {
        id: "000-allocation-exceeding-available-errors",
        source: Source::SEED_000,
        quote: "A subsequent call attempting to allocate memory in the same region or exceeding the \
                available memory will result in a CUDA error.",
        // The article's Example 1, called again and again with its leak: the
        // sentence follows it.
        judged_by: "broken-cpp",
        control: Control::Parts(&[
            Part {
                part: "a call that asks for more than the leak left free gets a CUDA error",
                control: Control::Impossible(
                    "a run in which a request for more than is free is served would need a \
                     device that hands out memory it does not have; a run that never asks for \
                     more than is free (fixed-cpp) skips the step measured. What shows that the \
                     reading sees requests served: the 40 calls before, each within what was \
                     free, were served in this run.",
                ),
            },
            Part {
                part: "the next call, allocating its buffer again beside the leaked one, gets a CUDA \
                       error",
                control: Control::Impossible(
                    "cudaMalloc takes no address: a request within the free memory is served \
                     wherever that memory lies (fragmentation's hard-form-cpp serves 90% of free memory \
                     scattered in 2 MiB holes as one block), so the only refusal a call allocating \
                     again can get is for more than is free, the sentence's other part. What shows \
                     that the reading sees a call refused: second-call-large-cpp, whose first call \
                     leaves less free than the second asks for, reads the same fact false.",
                ),
            },
        ]),
        // Two readings of one run. Exceeding: a cudaMalloc refused with
        // cudaErrorMemoryAllocation when the calls so far had leaked about
        // all the free memory. A run that never exceeded what was free
        // says nothing of it. Allocating again: the second call's
        // cudaMalloc, the first call's buffer still held, refused.
        judge: |o: &Outcome| {
            let exceeding = if o.shows(&Symptom::cuda_error(runtime::MEMORY_ALLOCATION)) {
                o.flag(FAILED_AFTER_FILL)
            } else {
                None
            };
            let again_refused = second_call_ok(o).map(|ok| !ok);
            ClaimVerdict::of_two_parts(exceeding, again_refused)
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-second-call-fails",
        source: Source::SEED_000,
        quote: "Attempting to reuse the same memory for a second kernel call will likely fail.",
        // Read as said: a second launch of the kernel on the first call's
        // d_data, never freed. Its output right: refuted; the call failing:
        // confirmed. The control resets the device between the two calls,
        // which gives that memory back.
        judged_by: "reuse-cpp",
        control: Control::Run("reuse-after-reset-cpp"),
        judge: |o| {
            ClaimVerdict::refuted_if(o.flag(A_SECOND_KERNEL_CALL_ON_THE_SAME_MEMORY_SUCCEEDS))
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-runtime-does-not-clean-up",
        source: Source::SEED_000,
        quote: "The CUDA runtime typically doesn't automatically clean up these resources after each call, \
                necessitating explicit management within the application.",
        judged_by: "broken-cpp",
        control: Control::Impossible(
            "within one process the runtime gives back a cudaMalloc buffer only when the program \
             calls cudaFree, resets the device or exits; no setting makes it free one when a call \
             returns, so no run of this program can show the runtime cleaning up by itself. \
             fixed-cpp, where each call frees its buffer (the explicit management the sentence \
             prescribes), shows that the reading sees memory come back: free memory ends where \
             it started.",
        ),
        judge: |o| leak_verdict(o, runtime::MEMORY_ALLOCATION),
        ..Claim::EITHER
    },
    Claim {
        id: "000-cuda-keeps-state-between-calls",
        source: Source::SEED_000,
        quote: "The core problem manifests because CUDA maintains state between calls.",
        judged_by: "broken-cpp",
        control: Control::Impossible(
            "CUDA keeps every allocation until the program frees it, the device is reset or the \
             process ends: no run of a program whose calls leave their buffers behind can find \
             them gone at the next call. fixed-cpp, where each call frees its buffer, shows that \
             the reading sees memory come back (free memory ends where it started); that is the \
             program giving the state back, not CUDA keeping none.",
        ),
        // Each call leaves its buffer behind, and the calls after it find
        // it there: they run out of memory after about free/leak calls.
        // Where every call frees its buffer, free memory is back where it
        // started after the calls: nothing was kept between them.
        judge: kept_between_calls,
        ..Claim::EITHER
    },
    Claim {
        id: "000-example1-memory-remains-allocated",
        source: Source::SEED_000,
        quote: "This example omits the crucial `cudaFree(d_data)` call, leaving the GPU memory allocated.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        judge: kept_between_calls,
        ..Claim::EITHER
    },
    Claim {
        id: "000-example1-further-allocation-errors",
        source: Source::SEED_000,
        quote: "// ... subsequent code attempting to use d_data or allocate more device memory will result in errors",
        // "Will result in errors": code after the call, its buffer never
        // freed, uses d_data (a second launch of the kernel on it, its output
        // checked) and allocates more. Both served: refuted; both refused:
        // confirmed; one: partly. The control resets the device before that
        // code, which gives d_data back.
        judged_by: "reuse-cpp",
        control: Control::Run("reuse-after-reset-cpp"),
        judge: |o| {
            ClaimVerdict::of_two_parts(
                o.flag(A_SECOND_KERNEL_CALL_ON_THE_SAME_MEMORY_SUCCEEDS)
                    .map(|ok| !ok),
                o.flag(MORE_DEVICE_MEMORY_IS_SERVED_AFTER_IT).map(|ok| !ok),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "001-cudafree-releases",
        source: Source::SEED_001,
        quote: "cudaFree(dev_data); // Free allocated memory",
        judged_by: "fixed-cpp",
        control: Control::Run("broken-cpp"),
        // Free memory back at its baseline after the calls: released.
        // Without the cudaFree the calls never get there: they fill the GPU
        // after about free/leak calls, so nothing was released.
        // (The second reading is made only where the first is missing, as
        // a judge reads only what its run records.)
        judge: |o| match o.check(FREE_MEMORY_RETURNS_TO_ITS_BASELINE) {
            Some(back) => ClaimVerdict::confirmed_if(Some(back)),
            None if o.flag(FAILED_AFTER_FILL) == Some(true) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "001-raw-second-run-may-fail",
        source: Source::SEED_001,
        quote: "// ... kernel launch ... // this may fail due to remaining allocations or driver issues",
        // The article's second run follows a first run that frees its
        // memory, so as written nothing remains, and on an 80 GB GPU its
        // data_size (unstated) cannot make the second run fail: the run
        // asks the nearest form that can, each of the first two calls
        // asking 3/5 of the free memory. Decided where the first call's
        // allocation remains (its cudaFree missing): is the second refused?
        // Refused: confirmed (capped); served: refuted.
        judged_by: "second-call-large-cpp",
        // The same two calls, the first one's buffer freed as the article's
        // first run frees it (one change).
        control: Control::Run("second-call-large-freed-cpp"),
        reach: Reach::AtBestPartly(
            "of the two causes the comment names, the run leaves an allocation behind; \"driver \
             issues\" names nothing a run can provoke or read",
        ),
        judge: |o| ClaimVerdict::refuted_if(second_call_ok(o)),
    },
    Claim {
        id: "001-example3-second-run-potential-failure",
        source: Source::SEED_001,
        quote: "// Second run (potential failure)",
        // Example 3 as written: its first run frees what it allocated
        // before the second asks. At 3/5 of the free memory each, the second
        // run is served (refuted: nothing the first run leaves makes it
        // fail); refused, confirmed. The control drops the first run's
        // cudaFree (one change), and the second run is refused.
        judged_by: "second-call-large-freed-cpp",
        control: Control::Run("second-call-large-cpp"),
        reach: Reach::AtBestPartly(
            "read in one process, as the example's code runs: what is decided is whether anything \
             the first run leaves makes the second fail. The example's title speaks of several \
             processes, where another process may take the freed memory between the two runs \
             (multi-process-contention's tell-then-free: the taker is refused while the holder \
             still holds); a second run refused for that is not tested as this comment's",
        ),
        judge: |o| ClaimVerdict::refuted_if(second_call_ok(o)),
    },
    Claim {
        id: "001-incomplete-free-exhausts",
        source: Source::SEED_001,
        // The sentence's second part, after "In this raw CUDA example, the
        // failure to completely free GPU memory in between runs can lead to
        // fragmentation," (fragmentation's 001-incomplete-free-fragments).
        quote: "resource exhaustion, or driver-level conflicts.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        reach: Reach::AtBestPartly(
            "of the sentence's three outcomes (\"can lead to fragmentation, resource exhaustion, \
             or driver-level conflicts\"), this run shows exhaustion, where the call frees \
             nothing of what it allocates; fragmentation is 001-incomplete-free-fragments, and \
             \"driver-level conflicts\" names nothing a run can provoke or read",
        ),
        judge: |o| leak_verdict(o, runtime::MEMORY_ALLOCATION),
    },
    Claim {
        id: "002-silent-accumulation-to-oom",
        source: Source::SEED_002,
        quote: "My own experience reinforces the fact that a subtle memory leak in a seemingly unrelated part of the code, or an unhandled exception, can silently accumulate memory usage, eventually leading to this frustrating error.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        reach: Reach::AtBestPartly(
            "the article's \"frustrating error\" is out of memory with no process running; once the leaking process exits, its memory is back (orphaned-process, exit-and-kill), unless a child it forked after CUDA started still holds its context (forked-child)",
        ),
        judge: |o| leak_verdict(o, runtime::MEMORY_ALLOCATION),
    },
    Claim {
        id: "002-nsight-compute-finds-leaks",
        source: Source::SEED_002,
        // The sentence before, the advice to employ such tools, is
        // 002-employ-profiling-tools (untestable: advice).
        quote: "These tools allow the visualization of memory allocation and deallocation patterns, \
                pinpoint the exact sources of memory leaks, often hidden deep within the program.",
        judged_by: "under-ncu",
        control: Control::Run("under-leak-check"),
        // The tool the sentence names, on a program that leaks: does its
        // report name the leak? (Only Nsight Compute is judged: Nsight
        // Systems, the profiler that traces cudaMalloc and cudaFree, is not
        // on the GPU machines nor on PyPI, so the class of profiling tools
        // is not tested beyond it. compute-sanitizer, a CUDA tool but not a profiler, does
        // name the leak: under-leak-check, the control.) Only a run that went through says, and a
        // report that names no leak refutes only if it shows the tool saw
        // the program (it names the kernel the program ran).
        judge: |o| match (
            o.flag(THE_PROGRAM_RAN_TO_ITS_END_UNDER_THE_TOOL),
            o.flag(THE_TOOL_S_REPORT_NAMES_THE_LEAK),
            o.flag(THE_TOOL_S_REPORT_NAMES_THE_KERNEL),
        ) {
            (Some(true), Some(true), _) => ClaimVerdict::Confirmed,
            (Some(true), Some(false), Some(true)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        reach: Reach::AtBestPartly(
            "only Nsight Compute, the tool the article names, is run: Nsight Systems, the profiler \
             that traces cudaMalloc and cudaFree, is on neither the GPU machines nor PyPI (Debian's \
             2022.4 package collected a trace on the H100, but its importer was not carried there), \
             so \"these tools\" are not tested beyond Nsight Compute: a report that named the leak \
             would confirm the sentence for that tool alone, and one that names none refutes it for \
             that tool alone",
        ),
    },
];

/// Whether what a call allocated was still there for the calls after it:
/// they ran out of memory after about free/leak calls (confirmed), or free
/// memory was back at its baseline after all of them (refuted).
fn kept_between_calls(o: &Outcome) -> ClaimVerdict {
    match o.flag(FAILED_AFTER_FILL) {
        Some(filled) => ClaimVerdict::confirmed_if(Some(filled)),
        None => ClaimVerdict::refuted_if(o.check(FREE_MEMORY_RETURNS_TO_ITS_BASELINE)),
    }
}

/// Confirmed when the leak ends in `oom` after about free/leak calls.
fn leak_verdict(o: &Outcome, oom: &str) -> ClaimVerdict {
    let failed = o.shows(&Symptom::cuda_error(oom));
    match (failed, o.flag(FAILED_AFTER_FILL)) {
        (true, Some(true)) => ClaimVerdict::Confirmed,
        (true, _) => ClaimVerdict::Partly,
        (false, _) if o.termination == casebook_model::Termination::Completed => {
            ClaimVerdict::Refuted
        }
        (false, _) => ClaimVerdict::Undecided,
    }
}
