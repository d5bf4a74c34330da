//! `missing-free`: a "model call" that allocates its working buffer and never
//! frees it. Each call works; the calls after about free/leak fail with
//! CUDA_ERROR_OUT_OF_MEMORY.

use std::sync::Arc;

use casebook_kernels::{cpp, fatbin, run_cpp};
use casebook_model::device::{self, PAGE};
use casebook_model::{
    Binding, Claim, ClaimVerdict, Expect, Outcome, Recorder, Requirement, Role, Scenario, Symptom,
    Unit, Variant,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};

mod broken;
mod fixed;

/// Each call's buffer is this fraction of the free memory, so the leak fills
/// any GPU in about this many calls.
pub const CALLS_TO_FILL: usize = 40;
/// Both variants make this many calls: more than the leak survives.
pub const CALLS: usize = 48;
/// Elements that make the host round trip of each call.
pub const SAMPLE: usize = 1 << 20;
/// How far free memory may end from its baseline and still count as back.
pub const TOLERANCE: usize = 64 << 20;

/// The binary that serves the cust variants.
const CUST: &str = "casebook-cust";
pub const OOM: &str = "CUDA_ERROR_OUT_OF_MEMORY";
const OOM_CPP: &str = "cudaErrorMemoryAllocation";
pub const FAILED_AFTER_FILL: &str = "failed after about free/leak calls";
const SECOND_CALL_OK: &str = "second call at the article's size succeeds";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "missing-free",
        title: "CUDA out of memory after many calls (each call leaks its buffer)",
        cause: "Device memory stays allocated until it is freed or the process ends; a call that \
                forgets cuMemFree leaks its whole buffer, and the leaks add up to the free memory.",
        symptoms: &["out of memory", "memory that keeps shrinking"],
        requires: &[
            Requirement::Gpu,
            Requirement::ExclusiveGpu,
            Requirement::FillsGpu,
        ],
        claims: CLAIMS,
        variants: vec![
            Variant::broken(
                "broken",
                Binding::Cudarc,
                Symptom::cuda_error(OOM),
                broken::run,
            ),
            Variant::fixed("fixed", Binding::Cudarc, fixed::run),
            Variant::broken(
                "broken-cpp",
                Binding::CudaRuntimeCpp,
                Symptom::cuda_error(OOM_CPP),
                |rec| Ok(run_cpp(rec, cpp::casebook_missing_free_broken_cpp)?),
            ),
            Variant::fixed("fixed-cpp", Binding::CudaRuntimeCpp, |rec| {
                Ok(run_cpp(rec, cpp::casebook_missing_free_fixed_cpp)?)
            }),
            Variant::external(
                "broken-cust",
                Role::Broken,
                Binding::Cust,
                Expect::Fails(Symptom::cuda_error(OOM)),
                CUST,
            ),
            Variant::external(
                "fixed-cust",
                Role::Fixed,
                Binding::Cust,
                Expect::Clean,
                CUST,
            ),
            Variant::external(
                "drop-after-fault-cust",
                Role::Contrast,
                Binding::Cust,
                Expect::Records,
                CUST,
            ),
        ],
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-unfreed-memory-exhausts",
        seed: "000_1633914ffce0e075.txt",
        quote: "For instance, failing to free allocated device memory after a kernel launch can exhaust \
                GPU memory on subsequent calls, leading to allocation failures.",
        judged_by: "broken",
        judge: |o| leak_verdict(o, OOM),
    },
    Claim {
        id: "000-second-call-fails",
        seed: "000_1633914ffce0e075.txt",
        quote: "Attempting to reuse the same memory for a second kernel call will likely fail.",
        judged_by: "broken-cpp",
        judge: |o| match o.flag(SECOND_CALL_OK) {
            Some(true) => ClaimVerdict::Refuted,
            Some(false) => ClaimVerdict::Confirmed,
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "001-previous-batch-not-released",
        seed: "001_eb72388bf55c7443.txt",
        quote: "The pipeline failed to properly release GPU memory occupied by the previous batch of \
                images before loading the next, leading to memory exhaustion and subsequent cuDNN failures.",
        judged_by: "broken-cpp",
        // The exhaustion is measured here; the cuDNN part is not, so at best
        // the claim holds in part.
        judge: |o| match leak_verdict(o, OOM_CPP) {
            ClaimVerdict::Confirmed => ClaimVerdict::Partly,
            other => other,
        },
    },
    Claim {
        id: "000-runtime-does-not-clean-up",
        seed: "000_1633914ffce0e075.txt",
        quote: "The CUDA runtime typically doesn't automatically clean up these resources after each call, \
                necessitating explicit management within the application.",
        judged_by: "broken-cpp",
        judge: |o| leak_verdict(o, OOM_CPP),
    },
];

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
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, "scale")?;
    let baseline = device::free_bytes(rec, &ctx)?;
    let bytes = baseline / CALLS_TO_FILL / PAGE * PAGE;
    device::measure_bytes(rec, "free_before", baseline);
    device::measure_bytes(rec, "bytes_per_call", bytes);
    rec.fact(
        "buffer per call",
        format!("1/{CALLS_TO_FILL} of free memory"),
    );
    let input: Vec<f32> = (0..SAMPLE).map(|i| i as f32).collect();
    let expected = input.iter().map(|x| 2.0 * x).collect();
    let model = Model {
        stream: ctx.default_stream(),
        ctx,
        scale,
        bytes,
        input,
        expected,
    };

    let mut completed: usize = 0;
    let mut failure = None;
    for _ in 0..CALLS {
        let call = rec.iteration("model call", |rec| {
            model_call(rec, &model)?;
            let free = device::free_bytes(rec, &model.ctx)?;
            rec.point("free_bytes", (completed + 1) as f64, free as f64);
            anyhow::Ok(())
        });
        if let Err(e) = call {
            failure = Some(e);
            break;
        }
        completed += 1;
    }
    rec.measure("calls_completed", completed as f64, Unit::Count);
    if let Some(e) = failure {
        rec.fact(FAILED_AFTER_FILL, completed.abs_diff(baseline / bytes) <= 2);
        return Err(e);
    }
    rec.step("cuCtxSynchronize", model.ctx.synchronize())?;
    let after = device::free_bytes(rec, &model.ctx)?;
    device::measure_bytes(rec, "free_after", after);
    rec.check(
        "free memory returns to its baseline",
        after + TOLERANCE >= baseline,
    );
    Ok(())
}
