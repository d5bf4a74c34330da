//! `misaligned-address`: a kernel reads its input four floats at a time,
//! one 16-byte `float4` load per thread, for speed. The input is a slice
//! that starts one float into its buffer (a record with a header, `x[1:]`,
//! an odd offset), so no `float4` of it starts at a multiple of 16, and the
//! first load stops the kernel: "misaligned address". Like any kernel fault
//! it poisons the context; a later, unrelated call fails the same way. The
//! fix checks the address and uses 4-byte loads where it is not aligned,
//! with the same result as the CPU.

use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, CudaView, DriverError, PushKernelArg};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Floats of data, a multiple of 4.
pub const N: usize = 1 << 20;
/// Floats before the data in the same buffer.
pub const HEADER: usize = 1;

casebook_model::scenario!(Scenario {
    title: "CUDA error: misaligned address (a float4 load from a slice that starts one float in)",
    cause: "A vector load (float4, int4, half2, cp.async) reads 8 or 16 bytes in one \
            instruction and needs an address that is a multiple of its width. A slice, an \
            offset or an odd length breaks it; the kernel faults, and the context with it.",
    fix: "Check the address (and the length) before choosing vector loads, and use scalar \
          loads, or copy to an aligned buffer, where the data does not start on a multiple \
          of the width.",
    symptoms: &["misaligned address", "an error on the second call"],
    requires: Requirement::GPU,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::MISALIGNED_ADDRESS))
            .then_shows(Symptom::check_failed(MATCHES))
            .with_broken(|v| v.faults_device()),
        cpp_pair!(Symptom::cuda_error(runtime::MISALIGNED_ADDRESS))
            .then_shows(Symptom::check_failed(MATCHES))
            .with_broken(|v| v.faults_device()),
    ],
});

static MISALIGNED_DOC: Passage = Passage {
    document: "CUDA Runtime API, Data types used by CUDA Runtime",
    section: "enum cudaError: cudaErrorMisalignedAddress = 716",
    url: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    text: "The device encountered a load or store instruction on a memory address which is not \
           aligned. This leaves the process in an inconsistent state and any further CUDA work \
           will return the same error. To continue using CUDA, the process must be terminated \
           and relaunched.",
};

/// The program's buffers: a record (a header float, then the data) and
/// the output.
pub(crate) struct Program {
    pub stream: Arc<CudaStream>,
    pub scale4: CudaFunction,
    pub scale1: CudaFunction,
    pub record: CudaSlice<f32>,
    pub out: CudaSlice<f32>,
}

fn value(i: usize) -> f32 {
    (i % 1000) as f32
}

pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<Program> {
    let ctx = device::context(rec)?;
    let stream = ctx.default_stream();
    let scale4 = device::kernel(rec, &ctx, fatbin::SCALE, "scale4")?;
    let scale1 = device::kernel(rec, &ctx, fatbin::SCALE, "scale1")?;
    let host: Vec<f32> = (0..HEADER + N).map(value).collect();
    let record = rec.step("cuMemAlloc + copy (record)", stream.clone_htod(&host))?;
    let out = rec.step("cuMemAlloc (out)", stream.alloc_zeros::<f32>(N))?;
    rec.fact(OFFSET, HEADER * size_of::<f32>());
    Ok(Program {
        stream,
        scale4,
        scale1,
        record,
        out,
    })
}

/// Launches `kernel` over `data` into `out`, one thread per `per_thread`
/// floats.
pub(crate) fn launch(
    stream: &Arc<CudaStream>,
    kernel: &CudaFunction,
    data: &CudaView<'_, f32>,
    out: &mut CudaSlice<f32>,
    per_thread: usize,
) -> Result<(), DriverError> {
    let threads = (N / per_thread) as u32;
    let cfg = casebook_driver::device::line(threads.div_ceil(256), 256);
    let n = N as i32;
    let mut b = stream.launch_builder(kernel);
    b.arg(data).arg(out).arg(&n);
    // SAFETY: the kernel reads N floats of `data` and writes N of `out`.
    unsafe { b.launch(cfg) }.map(|_| ())
}

/// Whether the slice starts at a multiple of 16 bytes.
pub(crate) fn aligned(stream: &CudaStream, data: &CudaView<'_, f32>) -> bool {
    use cudarc::driver::DevicePtr;
    let (ptr, _sync) = data.device_ptr(stream);
    ptr % 16 == 0
}

/// Copies the result back and compares it with the CPU's, then makes one
/// call that has nothing to do with the kernel: whether it succeeds tells
/// whether the process can still use the GPU.
pub(crate) fn finish(rec: &mut Recorder, p: Program, synced: Result<(), DriverError>) {
    let mut got = vec![0.0f32; N];
    let copied = synced.and_then(|()| {
        rec.step(
            "cuMemcpyDtoH (result)",
            p.stream.memcpy_dtoh(&p.out, &mut got),
        )
    });
    let same = copied.is_ok() && (0..N).all(|i| got[i] == 2.0 * value(HEADER + i));
    rec.check(MATCHES, same);
    if !device::later_call(rec, LATER_CALL) {
        // The context is poisoned: its buffers cannot be freed.
        std::mem::forget(p);
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-misaligned-address-is-an-unaligned-load",
        source: Source::Nvidia(&MISALIGNED_DOC),
        quote: "The device encountered a load or store instruction on a memory address which is \
                not aligned.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        // float4 loads from an address 4 bytes past a multiple of 16: the
        // kernel's first error is cudaErrorMisalignedAddress (confirmed), or
        // it runs and its result matches (refuted). fixed-cpp, the same data
        // read with 4-byte loads, is the control.
        judge: |o: &Outcome| match (
            o.first_error_is(runtime::MISALIGNED_ADDRESS),
            o.check(MATCHES),
        ) {
            (Some(true), _) => ClaimVerdict::Confirmed,
            (None, Some(true)) => ClaimVerdict::Refuted,
            (Some(false), _) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-misaligned-address-poisons-the-process",
        source: Source::Nvidia(&MISALIGNED_DOC),
        quote: "This leaves the process in an inconsistent state and any further CUDA work will \
                return the same error.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        reach: Reach::AtBestPartly(
            "one further call is tried (a cudaMalloc that has nothing to do with the kernel), \
             not any further CUDA work",
        ),
        // The unrelated cudaMalloc after the fault returns the same error
        // (confirmed, capped at partly), or succeeds (refuted).
        judge: |o: &Outcome| match o.fact_text(LATER_CALL) {
            Some(runtime::MISALIGNED_ADDRESS) => ClaimVerdict::Confirmed,
            Some("cudaSuccess") => ClaimVerdict::Refuted,
            Some(_) => ClaimVerdict::Partly,
            None => ClaimVerdict::Undecided,
        },
    },
];
