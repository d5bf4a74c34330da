//! `device-reset`: seed 002's example 2 (`cudaFree(nullptr); cudaDeviceReset();`)
//! and seed 000's reset between model calls, measured. The process holds a
//! buffer of its own, allocated through the runtime, and a library holds one
//! in a context it created through the driver API. `cudaFree(nullptr)` frees
//! nothing; `cudaDeviceReset` destroys the primary context, with every
//! runtime allocation and setting in it, and does not touch the library's
//! context. The fix frees what it allocated and has the library destroy its
//! context.

use casebook_kernels::{cpp, run_cpp};
use casebook_model::{
    Binding, Claim, ClaimVerdict, Outcome, Requirement, Scenario, Symptom, Variant,
};

const BACK: &str = "device memory back where it started after the cleanup";
const FREE_NULL: &str = "cudaFree(nullptr) released memory";
const RESET: &str = "cudaDeviceReset released the runtime's allocation";
const SURVIVED: &str = "the library context's allocation survived the reset";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "device-reset",
        title: "Memory still held after cudaFree(nullptr) and cudaDeviceReset",
        cause: "cudaFree(nullptr) frees nothing (it only makes sure the primary context exists). \
                cudaDeviceReset destroys the primary context, and with it every allocation, stream and \
                setting the runtime made in it; a context created through the driver API, as some \
                libraries do, is not the primary one and keeps its memory. Free what you allocate and \
                destroy the contexts you create.",
        symptoms: &["memory that keeps shrinking", "out of memory"],
        requires: &[Requirement::Gpu, Requirement::ExclusiveGpu],
        claims: CLAIMS,
        variants: vec![
            Variant::broken(
                "broken-cpp",
                Binding::CudaRuntimeCpp,
                Symptom::check_failed(BACK),
                |rec| Ok(run_cpp(rec, cpp::casebook_device_reset_broken_cpp)?),
            ),
            Variant::fixed("fixed-cpp", Binding::CudaRuntimeCpp, |rec| {
                Ok(run_cpp(rec, cpp::casebook_device_reset_fixed_cpp)?)
            }),
        ],
    }
}

/// Whether the reset cleared the primary context: the old pointer is
/// refused and a raised limit is back at its default.
fn primary_cleared(o: &Outcome) -> Option<bool> {
    let old = o.fact("the pointer from before the reset")?.as_str()?;
    let limit = o.flag("the device-heap limit is back to its default")?;
    let raised = o.flag("the device-heap limit had been raised")?;
    Some(old != "cudaSuccess" && limit && raised && o.flag(RESET)?)
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "002-free-null-and-reset-do-not-release",
        seed: "002_245404227877bbf6.txt",
        quote: "Simply calling `cudaFree(nullptr)` or `cudaDeviceReset()` does not guarantee the release \
                of all allocated resources.",
        judged_by: "broken-cpp",
        judge: |o: &Outcome| match (o.flag(FREE_NULL), o.flag(SURVIVED)) {
            (Some(false), Some(true)) => ClaimVerdict::Confirmed,
            (Some(false), Some(false)) | (Some(true), Some(true)) => ClaimVerdict::Partly,
            (Some(true), Some(false)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "003-reset-only-reclaims-runtime-memory",
        seed: "003_a513a38b5daed103.txt",
        quote: "Clearing the cache using functions like `cudaFree(0)` or `cudaDeviceReset()` only reclaims \
                memory that is directly managed by the CUDA runtime.",
        judged_by: "broken-cpp",
        // True of cudaDeviceReset; cudaFree(0) reclaims nothing at all.
        judge: |o: &Outcome| match (o.flag(RESET), o.flag(SURVIVED), o.flag(FREE_NULL)) {
            (Some(true), Some(true), Some(true)) => ClaimVerdict::Confirmed,
            (Some(true), Some(true), Some(false)) => ClaimVerdict::Partly,
            (Some(_), Some(_), Some(_)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "000-reset-completely-resets",
        seed: "000_1633914ffce0e075.txt",
        quote: "`cudaDeviceReset()` should be used cautiously; it completely resets the entire CUDA context \
                on the device.",
        judged_by: "broken-cpp",
        // The primary context, completely; another context on the same device
        // is untouched.
        judge: |o: &Outcome| match (primary_cleared(o), o.flag(SURVIVED)) {
            (Some(true), Some(false)) => ClaimVerdict::Confirmed,
            (Some(true), Some(true)) => ClaimVerdict::Partly,
            (Some(false), Some(_)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
    },
];
