//! unsynced-stream through cust. cust's asynchronous copy is `unsafe`, and
//! with it the host can read before the stream has finished, as in any
//! binding. cust adds a failure of its own: `Stream::new` strips the
//! non-blocking flag, so every cust stream waits for, and is waited on by,
//! the legacy default stream, where cust's synchronous copies run. A
//! pipeline meant to overlap two streams serialises behind one such copy.

use std::time::Instant;

use casebook_driver::RecordSteps;
use casebook_kernels::fatbin;
use casebook_model::{Recorder, VariantFn};
use cust::launch;
use cust::memory::{
    AsyncCopyDestination, CopyDestination, DeviceBuffer, DevicePointer, LockedBuffer,
};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
#[allow(unused_imports)]
use scenario_unsynced_stream::names::*;
use scenario_unsynced_stream::{
    FRESH, N, PIPELINE_PAIRS, PIPELINE_SPIN_NS, RATE, RUNS, SENTINEL, SPIN_NS, record_overlap,
    stale_runs,
};

use crate::common::{cu, module, new_stream, primary_context};

struct Pipeline {
    module: Module,
    stream: Stream,
    out: DeviceBuffer<f32>,
    host: LockedBuffer<f32>,
}

impl Pipeline {
    /// The kernel, then the copy into pinned memory; both return at once.
    fn enqueue(&mut self, rec: &mut Recorder, value: f32) -> anyhow::Result<()> {
        let (module, stream) = (&self.module, &self.stream);
        let (out, n, spin) = (self.out.as_device_ptr(), N as i32, SPIN_NS);
        rec.step(
            "cuLaunchKernel spin_then_fill",
            cu(unsafe {
                launch!(module.spin_then_fill<<<8, 256, 0, stream>>>(out, n, value, spin))
            }),
        )?;
        // SAFETY: `host` is not touched by the host until the stream is done
        // with it, which is exactly what the broken variant gets wrong.
        rec.step(
            "cuMemcpyDtoHAsync",
            cu(unsafe {
                self.out
                    .async_copy_to(self.host.as_mut_slice(), &self.stream)
            }),
        )?;
        Ok(())
    }

    fn reset_host(&mut self) {
        self.host.as_mut_slice().fill(SENTINEL);
    }

    fn host_holds(&self, value: f32) -> bool {
        let p = self.host.as_slice().as_ptr();
        // SAFETY: in bounds; volatile, because the copy engine may write it.
        (0..N).all(|i| unsafe { p.add(i).read_volatile() } == value)
    }
}

fn drive(
    rec: &mut Recorder,
    one_run: fn(&mut Recorder, &mut Pipeline, f32) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    let _ctx = primary_context(rec)?;
    let module = module(rec, fatbin::SPIN)?;
    let stream = new_stream(
        rec,
        "cuStreamCreate (non-blocking asked)",
        StreamFlags::NON_BLOCKING,
    )?;
    let flags = rec.step("cuStreamGetFlags", cu(stream.get_flags()))?;
    rec.fact(
        THE_STREAM_CUST_MADE_IS_NON_BLOCKING_AS_ASKED,
        flags.contains(StreamFlags::NON_BLOCKING),
    );
    // SAFETY: written by the kernel before it is read.
    let out = rec.step("cuMemAlloc", cu(unsafe { DeviceBuffer::uninitialized(N) }))?;
    let host = rec.step("cuMemHostAlloc", cu(LockedBuffer::new(&SENTINEL, N)))?;
    let mut p = Pipeline {
        module,
        stream,
        out,
        host,
    };
    let stale = stale_runs(rec, |rec, value| {
        p.reset_host();
        one_run(rec, &mut p, value)
    })?;
    rec.step("cuStreamSynchronize", cu(p.stream.synchronize()))?;
    rec.measure(RUNS_MADE, RUNS as f64);
    rec.measure(STALE_READS, stale as f64);
    rec.fact(RATE, casebook_model::runs_in_words(stale, RUNS));
    rec.check(FRESH, stale == 0);
    Ok(())
}

// ANCHOR: broken
pub fn broken(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, |rec, p, value| {
        p.enqueue(rec, value)?;
        // BUG: the host reads before the stream has finished.
        let fresh = p.host_holds(value);
        rec.step("cuStreamSynchronize", cu(p.stream.synchronize()))?;
        Ok(fresh)
    })
}
// ANCHOR_END: broken

// ANCHOR: fixed
pub fn fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, |rec, p, value| {
        p.enqueue(rec, value)?;
        rec.step("cuStreamSynchronize", cu(p.stream.synchronize()))?;
        Ok(p.host_holds(value))
    })
}
// ANCHOR_END: fixed

/// How stream B's input gets to the device between the two kernels.
type Upload = fn(&mut Recorder, &mut DeviceBuffer<f32>, &[f32], &Stream) -> anyhow::Result<()>;

/// Two streams, each with a kernel of PIPELINE_SPIN_NS; between the two
/// launches, B's input is uploaded. Times one kernel alone, then the pair.
fn pipeline(rec: &mut Recorder, upload: Upload) -> anyhow::Result<()> {
    let _ctx = primary_context(rec)?;
    let module = module(rec, fatbin::SPIN)?;
    let a = new_stream(
        rec,
        "cuStreamCreate A (non-blocking asked)",
        StreamFlags::NON_BLOCKING,
    )?;
    let b = new_stream(
        rec,
        "cuStreamCreate B (non-blocking asked)",
        StreamFlags::NON_BLOCKING,
    )?;
    let out_a = rec.step("cuMemAlloc", cu(DeviceBuffer::<f32>::zeroed(N)))?;
    let mut input_b = rec.step("cuMemAlloc", cu(DeviceBuffer::<f32>::zeroed(N)))?;
    let host_input = vec![1.0f32; N];
    let (n, spin) = (N as i32, PIPELINE_SPIN_NS);
    let (pa, pb) = (out_a.as_device_ptr(), input_b.as_device_ptr());
    let launch_on = |rec: &mut Recorder, stream: &Stream, out: DevicePointer<f32>, value: f32| {
        rec.step(
            "cuLaunchKernel spin_then_fill",
            cu(unsafe {
                launch!(module.spin_then_fill<<<8, 256, 0, stream>>>(out, n, value, spin))
            }),
        )
    };
    // Warm-up, then one kernel alone and the pair, timed in turn.
    launch_on(rec, &a, pa, 0.0)?;
    rec.step("cuStreamSynchronize (A)", cu(a.synchronize()))?;
    let mut pairs = Vec::new();
    for _ in 0..PIPELINE_PAIRS {
        let pair = rec.iteration("timing pair", |rec| -> anyhow::Result<(f64, f64)> {
            let start = Instant::now();
            launch_on(rec, &a, pa, 1.0)?;
            rec.step("cuStreamSynchronize (A)", cu(a.synchronize()))?;
            let single = start.elapsed().as_secs_f64();

            // ANCHOR: stages
            let start = Instant::now();
            launch_on(rec, &a, pa, 2.0)?; // stage 1 on A
            upload(rec, &mut input_b, &host_input, &b)?; // B's input
            launch_on(rec, &b, pb, 3.0)?; // stage 2 on B, meant to overlap stage 1
            rec.step("cuStreamSynchronize (A)", cu(a.synchronize()))?;
            rec.step("cuStreamSynchronize (B)", cu(b.synchronize()))?;
            let both = start.elapsed().as_secs_f64();
            // ANCHOR_END: stages
            Ok((single, both))
        })?;
        pairs.push(pair);
    }
    record_overlap(rec, &pairs);
    Ok(())
}

// ANCHOR: pipeline
/// B's input with `copy_from`: cuMemcpyHtoD, on the legacy default stream.
pub fn pipeline_blocking(rec: &mut Recorder) -> anyhow::Result<()> {
    pipeline(rec, |rec, dst, src, _| {
        Ok(rec.step("cuMemcpyHtoD (copy_from)", cu(dst.copy_from(src)))?)
    })
}

// ANCHOR_END: pipeline

// ANCHOR: pipeline_async
/// B's input with `async_copy_from` on B itself.
pub fn pipeline_async(rec: &mut Recorder) -> anyhow::Result<()> {
    pipeline(rec, |rec, dst, src, b| {
        // SAFETY: `src` outlives the copy: the pipeline synchronises B
        // before it returns.
        Ok(rec.step(
            "cuMemcpyHtoDAsync (async_copy_from, B)",
            cu(unsafe { dst.async_copy_from(src, b) }),
        )?)
    })
}
// ANCHOR_END: pipeline_async

/// The variants of this file, by their names in the catalogue.
pub const VARIANTS: &[(&str, VariantFn)] = &[
    ("broken-cust", broken),
    ("fixed-cust", fixed),
    ("pipeline-cust", pipeline_blocking),
    ("pipeline-async-cust", pipeline_async),
];
