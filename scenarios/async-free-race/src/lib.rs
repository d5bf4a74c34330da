//! `async-free-race`: `cuMemFreeAsync` on stream A while a kernel on stream
//! B still reads the buffer. The pool hands the block straight back to A's
//! next `cuMemAllocAsync`, A writes its new data into it, and B copies that
//! instead of what it was given.
//!
//! Deterministic by construction: B's kernel waits 50 ms on the GPU's timer
//! before it reads, and A's free, allocation and write take microseconds.

use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, PushKernelArg, result, sys};

mod broken;
mod fixed;
mod safe_api;

casebook_model::case_modules!();

pub const RUNS: usize = 5;
pub const N: usize = 1 << 20;
pub const SPIN_NS: u64 = 50_000_000;
/// What the reader is given.
pub const GIVEN: f32 = 1.0;
/// What the next owner of the block writes.
pub const NEXT_OWNER: f32 = 7.0;

casebook_model::scenario!(Scenario {
    title: "Wrong values after cudaFreeAsync (a block is reused while another stream still reads it)",
    cause: "cudaFreeAsync orders the free on its own stream only; the pool may hand the block to \
            that stream's next allocation at once, while work on other streams still uses it.",
    fix: "Before cudaFreeAsync on stream A, record an event on the stream still reading the buffer \
          and make A wait on it with cudaStreamWaitEvent, so the pool cannot reuse the block \
          early.",
    symptoms: &["wrong results, no error"],
    requires: Requirement::GPU,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(READER_OK)).with_broken(|v| v.states(
            "cuMemFreeAsync on one stream while another still reads hands \
             the block to the next allocation.",
            |o| o.check(READER_OK).map(|ok| !ok),
            |o| o.measure_text(CORRUPTED_READS, " of 5"),
        )),
        Variant::contrast_clean("safe-api", cudarc!(safe_api)),
        cpp_pair!(Symptom::check_failed(READER_OK)),
        Variant::contrast_clean("trimmed-cpp", cpp::trimmed).one_change(
            "fixed-cpp",
            "whether the pool is emptied before the next request (stream 0 waited for, then \
             cudaMemPoolTrimTo(pool, 0)): no there, yes here",
            "return drive<true, false>(r);",
            "return drive<true, true>(r);",
        ),
        Pair::new(
            Symptom::check_failed(READER_OK),
            Program::cust("broken"),
            Program::cust("fixed")
        )
        .with_broken(|v| v.states(
            "DeviceBuffer::drop_async on the wrong stream races the same \
             way.",
            |o| o.check(READER_OK).map(|ok| !ok),
            |o| o.measure_text(CORRUPTED_READS, " of 5"),
        ))
        .with_fixed(|v| v.states(
            "An event recorded on the reader and waited on before \
             drop_async fixes it.",
            |o| o.check(READER_OK),
            |o| o.measure_text(CORRUPTED_READS, " of 5"),
        )),
        Variant::records("drop-cust", Program::cust("drop")).states(
            "A plain Drop (cuMemFree) of a stream-ordered buffer does not \
             wait for the reading stream either.",
            |o| o.check(READER_OK).map(|ok| !ok),
            |o| o.measure_text(CORRUPTED_READS, " of 5"),
        ),
    ],
});

/// Two non-blocking streams, the reading kernel and its output buffer.
pub(crate) struct Streams {
    pub ctx: Arc<CudaContext>,
    pub a: Arc<CudaStream>,
    pub b: Arc<CudaStream>,
    pub copy: CudaFunction,
    pub out: sys::CUdeviceptr,
}

impl Streams {
    /// On A: allocates a block of N floats and writes `value` into it.
    fn filled_on_a(&self, rec: &mut Recorder, value: f32) -> anyhow::Result<sys::CUdeviceptr> {
        let block = rec.step("cuMemAllocAsync (A)", unsafe {
            result::malloc_async(self.a.cu_stream(), N * 4)
        })?;
        let values = vec![value; N];
        rec.step("cuMemcpyHtoDAsync (A)", unsafe {
            result::memcpy_htod_async(block, &values, self.a.cu_stream())
        })?;
        Ok(block)
    }

    /// On A: allocates the buffer and fills it with GIVEN, and waits.
    pub fn given(&self, rec: &mut Recorder) -> anyhow::Result<sys::CUdeviceptr> {
        let x = self.filled_on_a(rec, GIVEN)?;
        rec.step("cuStreamSynchronize (A)", self.a.synchronize())?;
        Ok(x)
    }

    /// On B: a kernel that waits, then copies `x` to `out`.
    pub fn read_on_b(&self, rec: &mut Recorder, x: sys::CUdeviceptr) -> anyhow::Result<()> {
        let n = N as i32;
        let mut launch = self.b.launch_builder(&self.copy);
        launch.arg(&x).arg(&self.out).arg(&n).arg(&SPIN_NS);
        let cfg = casebook_driver::device::line(8, 256);
        rec.step("cuLaunchKernel spin_then_copy (B)", unsafe {
            launch.launch(cfg)
        })?;
        Ok(())
    }

    /// On A: the next owner allocates, and writes NEXT_OWNER into its block.
    pub fn next_owner(&self, rec: &mut Recorder) -> anyhow::Result<sys::CUdeviceptr> {
        self.filled_on_a(rec, NEXT_OWNER)
    }

    /// Waits for B, and tells whether it copied what it was given.
    pub fn reader_saw_given(&self, rec: &mut Recorder) -> anyhow::Result<bool> {
        rec.step("cuStreamSynchronize (B)", self.b.synchronize())?;
        let mut seen = vec![0.0f32; N];
        rec.step("cuMemcpyDtoH", unsafe {
            result::memcpy_dtoh_sync(&mut seen, self.out)
        })?;
        Ok(seen.iter().all(|&v| v == GIVEN))
    }
}

/// Sets up two streams, runs `one_run` RUNS times, and tallies.
pub(crate) fn drive(
    rec: &mut Recorder,
    one_run: fn(&mut Recorder, &Streams) -> anyhow::Result<(bool, bool)>,
) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let copy = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_copy")?;
    let a = rec.step("cuStreamCreate A (non-blocking)", ctx.new_stream())?;
    let b = rec.step("cuStreamCreate B (non-blocking)", ctx.new_stream())?;
    let out = rec.step("cuMemAlloc", unsafe { result::malloc_sync(N * 4) })?;
    let s = Streams {
        ctx,
        a,
        b,
        copy,
        out,
    };
    let (mut corrupted, mut reused) = (0, 0);
    for _ in 0..RUNS {
        let (ok, same_block) = rec.iteration("run", |rec| one_run(rec, &s))?;
        corrupted += usize::from(!ok);
        reused += usize::from(same_block);
    }
    rec.step("cuCtxSynchronize", s.ctx.synchronize())?;
    rec.step("cuMemFree", unsafe { result::free_sync(s.out) })?;
    tally(rec, corrupted, reused);
    Ok(())
}

pub fn tally(rec: &mut Recorder, corrupted: usize, reused: usize) {
    rec.measure(RUNS_MADE, RUNS as f64);
    rec.measure(CORRUPTED_READS, corrupted as f64);
    rec.measure(REPRODUCTION_RATE, corrupted as f64 / RUNS as f64);
    rec.fact(RATE, casebook_model::runs_in_words(corrupted, RUNS));
    rec.fact(REUSED, reused == RUNS);
    rec.check(READER_OK, corrupted == 0);
}

const CLAIMS: &[Claim] = &[Claim {
    id: "004-allocator-serves-from-cache-first",
    source: Source::SEED_004,
    quote: "When a subsequent allocation request comes, it first attempts to fulfill it from these cached blocks.",
    judged_by: "fixed-cpp",
    control: Control::Run("trimmed-cpp"),
    // The stream-ordered pool: the next request of the size just freed, on
    // the stream that freed it. Served from the block the pool holds, it
    // takes no new memory from the device. (That the address is the same
    // proves less: a block mapped afresh may land at the address freed.)
    judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(SERVED_FROM_THE_POOL)),
    ..Claim::EITHER
}];
