//! `index-overflow`: an elementwise kernel computes its element's index as
//! `int i = blockIdx.x * blockDim.x + threadIdx.x`, one thread per element,
//! over an array of 2^31 + 2^20 floats (8.6 GB, which an 80 GB GPU holds).
//! The product is unsigned 32-bit arithmetic; stored in an `int`, every
//! index past 2^31 - 1 wraps negative, passes the `i < n` bound check, and
//! the thread writes 8 GB before the array: an illegal address (or, where
//! that memory is mapped, silently wrong data). The fix forms the index in
//! 64 bits before the product.

use std::sync::Arc;

use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{CudaContext, CudaFunction, DriverError, LaunchConfig};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Elements, as `kElements` in `device/fill.cuh`: 2^31 + 2^20.
pub const ELEMENTS_N: i64 = (1 << 31) + (1 << 20);
/// Threads per block, as `kThreads`.
pub const THREADS: u32 = 256;
/// Each variant holds the array (8.6 GB) and a little more.
pub const HOLDS: u64 = 9 << 30;

// A broken variant may reach its limit under the tool (its cell then says
// so); a fixed one must finish, and racecheck on the 2^31-thread kernel took
// from 3 s to 107 s on an H100, one run to the next.
const BROKEN_LIMIT: std::time::Duration = std::time::Duration::from_secs(90);
const FIXED_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

casebook_model::scenario!(Scenario {
    title: "An illegal memory access only on arrays of more than 2^31 elements",
    cause: "blockIdx.x * blockDim.x + threadIdx.x is unsigned 32-bit arithmetic; stored in an \
            int, it wraps negative past 2^31 - 1 elements, the bound check `i < n` still \
            passes, and the thread writes before the array. Small inputs never reach the \
            wrap, so the kernel passes every test until an array of 2^31 elements (8.6 GB of \
            floats) comes. Form the index in 64 bits: (long long)blockIdx.x * blockDim.x.",
    fix: "Form the element index in 64 bits before the multiply, long long i = (long \
          long)blockIdx.x * blockDim.x + threadIdx.x, so arrays past 2^31 elements are indexed \
          correctly.",
    symptoms: &[
        "an illegal memory access was encountered",
        "wrong results, no error",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::ILLEGAL_ADDRESS))
            .both(|v| v.holds_memory(HOLDS))
            .with_broken(|v| v.sanitizer_time_limit(BROKEN_LIMIT).faults_device())
            .with_fixed(|v| v.sanitizer_time_limit(FIXED_LIMIT)),
        cpp_pair!(Symptom::cuda_error(runtime::ILLEGAL_ADDRESS))
            .both(|v| v.holds_memory(HOLDS))
            .with_broken(|v| v.sanitizer_time_limit(BROKEN_LIMIT).faults_device())
            .with_fixed(|v| v.sanitizer_time_limit(FIXED_LIMIT)),
        Variant::contrast_clean("signed-product-cpp", cpp::signed_product)
            .holds_memory(HOLDS)
            .sanitizer_time_limit(FIXED_LIMIT)
            .one_change(
                "fixed-cpp",
                "how the kernel records the last block's blockIdx.x * blockDim.x: as computed \
                 there; converted to a signed int here, as the product would read were the \
                 built-ins int",
                "return fill_and_count(r, false);",
                "return fill_and_count(r, true);",
            ),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "microsoft/onnxruntime#28107",
        shows: "the CUDA Gather kernel failed with `cudaErrorIllegalAddress` (700) on tensors of \
                more than 2^31 elements: its index was `CUDA_LONG`, an `int32_t`, and overflowed \
                to a negative or wrapped value.",
    },
    Report {
        id: "microsoft/onnxruntime#28385",
        shows: "the Cast kernel's `int32_t` element index \"wraps to negative once the element \
                count crosses INT32_MAX. The bound check `if (id < N)` then passes for invalid \
                offsets and the kernel reads / writes out of bounds.\"",
    },
    Report {
        id: "tensorflow/tensorflow#124949",
        shows: "on an H100, \"2^31 - 65536 elements works, 2^31 + 65536 elements crashes.\"",
    },
    Report {
        id: "fla-org/flash-linear-attention#1080",
        shows: "both outcomes of a wrapped index: silently corrupted output where the address lands \
                in mapped memory, `an illegal memory access was encountered` where it does not.",
    },
    Report {
        id: "huggingface/candle#3604",
        shows: "the Rust form: `LaunchConfig::for_num_elems(el as u32)` wraps the element count \
                past 2^32, giving `CUDA_ERROR_INVALID_VALUE` or a silently wrong count.",
    },
];

static BUILT_IN_VARIABLES: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "C++ Language Extensions: Built-in Variables",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/cpp-language-extensions.html#built-in-variables",
    text: "The values used to specify and retrieve the kernel configuration for the grid and \
           blocks along the x, y, and z dimensions are of type dim3. The variables used to obtain \
           the block and thread indices are of type uint3. Both dim3 and uint3 are trivial \
           structures consisting of three unsigned values named x, y, and z.",
};

pub(crate) struct Kernels {
    pub ctx: Arc<CudaContext>,
    pub fill_int_index: CudaFunction,
    pub fill_64bit_index: CudaFunction,
    pub count_unset: CudaFunction,
}

pub(crate) fn kernels(rec: &mut Recorder) -> Result<Kernels, DriverError> {
    let ctx = device::context(rec)?;
    rec.measure(ELEMENTS, ELEMENTS_N as f64);
    Ok(Kernels {
        fill_int_index: device::kernel(rec, &ctx, fatbin::FILL, "fill_int_index")?,
        fill_64bit_index: device::kernel(rec, &ctx, fatbin::FILL, "fill_64bit_index")?,
        count_unset: device::kernel(rec, &ctx, fatbin::FILL, "count_unset")?,
        ctx,
    })
}

/// One thread per element.
pub(crate) fn per_element() -> LaunchConfig {
    let blocks = (ELEMENTS_N as u64).div_ceil(u64::from(THREADS));
    casebook_driver::device::line(u32::try_from(blocks).expect("under 2^31 blocks"), THREADS)
}

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-block-index-is-unsigned",
    source: Source::Nvidia(&BUILT_IN_VARIABLES),
    quote: "Both dim3 and uint3 are trivial structures consisting of three unsigned values named \
            x, y, and z.",
    judged_by: "fixed-cpp",
    control: Control::Impossible(
        "the built-ins' types and dim3 and uint3 are the CUDA headers', the same in every program \
         this toolkit builds: a run in which a component reads signed, or dim3 reads other than a \
         plain struct, would need another compiler or other headers. What shows the readings can \
         see the other answer: in this run the same v - (v + 1) on an int copy of blockIdx.x gives \
         -1, and std::is_trivial reads false for dim3 (its constructor sets a component left \
         unspecified to 1), where uint3 reads true.",
    ),
    // In a kernel, v - (v + 1) for x, y and z of threadIdx, blockIdx,
    // blockDim and gridDim: 2^32 - 1 for each (unsigned), or -1 for one
    // (signed: refuted). "Trivial structures" is read as the Guide means it,
    // plain structs of three values copied as their bytes
    // (std::is_trivially_copyable): not as C++'s std::is_trivial, which the
    // same Guide rules out for dim3 when it says an unspecified component is
    // set to 1 (audits 11 and 12). Unsigned and both plain: confirmed;
    // unsigned with one not plain: partly.
    judge: |o: &Outcome| match (
        o.flag(EVERY_BUILT_IN_COMPONENT_IS_UNSIGNED),
        o.flag(UINT3_IS_A_TRIVIAL_TYPE),
        o.flag(DIM3_IS_TRIVIALLY_COPYABLE),
    ) {
        (Some(false), _, _) => ClaimVerdict::Refuted,
        (Some(true), Some(true), Some(true)) => ClaimVerdict::Confirmed,
        (Some(true), Some(_), Some(_)) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    },
    ..Claim::EITHER
}];
