//! Two streams, each with a kernel; between the launches the host uploads
//! stream B's input with a synchronous cuMemcpyHtoD, on the legacy default
//! stream. Non-blocking streams (`run`, cudarc's `new_stream` flag) do not
//! wait for the legacy stream, nor it for them: the kernels overlap.
//! Streams made with the default flag (`blocking`, the one change) wait for
//! it, and it for them: the copy waits for A's kernel and B's kernel for the
//! copy, one after the other. cust's `pipeline-cust` is the same program
//! with cust's streams. One kernel alone and the pipeline are timed in
//! interleaved pairs.

use std::ffi::c_void;
use std::time::Instant;

use casebook_driver::device::stream::{self, StreamKind};
use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use cudarc::driver::sys::CUstream_flags::{self, CU_STREAM_DEFAULT, CU_STREAM_NON_BLOCKING};
use cudarc::driver::{result, sys};

use crate::{N, PIPELINE_PAIRS, PIPELINE_SPIN_NS, record_overlap};

/// The pipeline on non-blocking streams.
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    pipeline(rec, CU_STREAM_NON_BLOCKING)
}

/// The same pipeline on streams made with the default flag, which wait for
/// the legacy default stream.
pub fn blocking(rec: &mut Recorder) -> anyhow::Result<()> {
    pipeline(rec, CU_STREAM_DEFAULT)
}

fn pipeline(rec: &mut Recorder, flags: CUstream_flags) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let fill = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_fill")?;
    let flag = match flags {
        CU_STREAM_NON_BLOCKING => "non-blocking",
        _ => "default flag",
    };
    let kind = || match flags {
        CU_STREAM_NON_BLOCKING => StreamKind::NonBlocking,
        _ => StreamKind::Default,
    };
    let a = stream::create(rec, &format!("cuStreamCreate A ({flag})"), kind())?;
    let b = stream::create(rec, &format!("cuStreamCreate B ({flag})"), kind())?;
    let out_a = rec.step("cuMemAlloc", unsafe { result::malloc_sync(N * 4) })?;
    let input_b = rec.step("cuMemAlloc", unsafe { result::malloc_sync(N * 4) })?;
    let host_input = vec![1.0f32; N];
    let launch_on =
        |rec: &mut Recorder, stream: sys::CUstream, out: sys::CUdeviceptr, value: f32| {
            let (mut out, mut n, mut value, mut spin) = (out, N as i32, value, PIPELINE_SPIN_NS);
            let mut params: [*mut c_void; 4] = [
                (&raw mut out).cast(),
                (&raw mut n).cast(),
                (&raw mut value).cast(),
                (&raw mut spin).cast(),
            ];
            let cfg = casebook_driver::device::line(8, 256);
            // SAFETY: the parameters match spin_then_fill's (float *, int,
            // float, unsigned long long) and outlive the launch call.
            rec.step("cuLaunchKernel spin_then_fill", unsafe {
                result::launch_kernel(
                    fill.cu_function(),
                    cfg.grid_dim,
                    cfg.block_dim,
                    0,
                    stream,
                    &mut params,
                )
            })
        };
    // SAFETY: `a` and `b` are streams this function made and destroys below.
    let sync = |rec: &mut Recorder, name: &str, s: sys::CUstream| unsafe {
        stream::synchronize(rec, &format!("cuStreamSynchronize ({name})"), s)
    };
    launch_on(rec, a, out_a, 0.0)?; // warm-up
    sync(rec, "A", a)?;
    let mut pairs = Vec::new();
    for _ in 0..PIPELINE_PAIRS {
        let pair = rec.iteration("timing pair", |rec| -> anyhow::Result<(f64, f64)> {
            let start = Instant::now();
            launch_on(rec, a, out_a, 1.0)?;
            sync(rec, "A", a)?;
            let single = start.elapsed().as_secs_f64();

            // ANCHOR: pipeline
            let start = Instant::now();
            launch_on(rec, a, out_a, 2.0)?; // stage 1 on A
            rec.step("cuMemcpyHtoD", unsafe {
                result::memcpy_htod_sync(input_b, &host_input)
            })?; // B's input, on the legacy default stream
            launch_on(rec, b, input_b, 3.0)?; // stage 2 on B
            sync(rec, "A", a)?;
            sync(rec, "B", b)?;
            let both = start.elapsed().as_secs_f64();
            // ANCHOR_END: pipeline
            Ok((single, both))
        })?;
        pairs.push(pair);
    }
    record_overlap(rec, &pairs);
    rec.step("cuMemFree", unsafe { result::free_sync(out_a) })?;
    rec.step("cuMemFree", unsafe { result::free_sync(input_b) })?;
    for s in [a, b] {
        // SAFETY: made above, idle after the synchronises.
        unsafe { stream::destroy(rec, s)? };
    }
    Ok(())
}
