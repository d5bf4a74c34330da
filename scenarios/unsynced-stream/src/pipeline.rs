//! Two non-blocking streams (cudarc's `new_stream`), each with a kernel;
//! between the launches the host uploads stream B's input with a synchronous
//! cuMemcpyHtoD, on the legacy default stream. Non-blocking streams do not
//! wait for the legacy stream, nor it for them: the kernels overlap. cust's
//! `pipeline-cust` is the same program with cust's streams. One kernel
//! alone and the pipeline are timed in interleaved pairs.

use std::time::Instant;

use casebook_kernels::fatbin;
use casebook_model::{Recorder, device};
use cudarc::driver::{CudaStream, PushKernelArg, result, sys};

use crate::{N, PIPELINE_PAIRS, PIPELINE_SPIN_NS, record_overlap};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let fill = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_fill")?;
    let a = rec.step("cuStreamCreate A (non-blocking)", ctx.new_stream())?;
    let b = rec.step("cuStreamCreate B (non-blocking)", ctx.new_stream())?;
    let out_a = rec.step("cuMemAlloc", unsafe { result::malloc_sync(N * 4) })?;
    let input_b = rec.step("cuMemAlloc", unsafe { result::malloc_sync(N * 4) })?;
    let host_input = vec![1.0f32; N];
    let launch_on = |rec: &mut Recorder, stream: &CudaStream, out: sys::CUdeviceptr, value: f32| {
        let (n, spin) = (N as i32, PIPELINE_SPIN_NS);
        let mut launch = stream.launch_builder(&fill);
        launch.arg(&out).arg(&n).arg(&value).arg(&spin);
        let cfg = casebook_model::device::line(8, 256);
        rec.step("cuLaunchKernel spin_then_fill", unsafe {
            launch.launch(cfg)
        })
        .map(|_| ())
    };
    launch_on(rec, &a, out_a, 0.0)?; // warm-up
    rec.step("cuStreamSynchronize (A)", a.synchronize())?;
    let mut pairs = Vec::new();
    for _ in 0..PIPELINE_PAIRS {
        let pair = rec.iteration("timing pair", |rec| -> anyhow::Result<(f64, f64)> {
            let start = Instant::now();
            launch_on(rec, &a, out_a, 1.0)?;
            rec.step("cuStreamSynchronize (A)", a.synchronize())?;
            let single = start.elapsed().as_secs_f64();

            // ANCHOR: pipeline
            let start = Instant::now();
            launch_on(rec, &a, out_a, 2.0)?; // stage 1 on A
            rec.step("cuMemcpyHtoD", unsafe {
                result::memcpy_htod_sync(input_b, &host_input)
            })?; // B's input, on the legacy default stream
            launch_on(rec, &b, input_b, 3.0)?; // stage 2 on B
            rec.step("cuStreamSynchronize (A)", a.synchronize())?;
            rec.step("cuStreamSynchronize (B)", b.synchronize())?;
            let both = start.elapsed().as_secs_f64();
            // ANCHOR_END: pipeline
            Ok((single, both))
        })?;
        pairs.push(pair);
    }
    record_overlap(rec, &pairs);
    rec.step("cuMemFree", unsafe { result::free_sync(out_a) })?;
    rec.step("cuMemFree", unsafe { result::free_sync(input_b) })?;
    Ok(())
}
