//! async-free-race through cust. `DeviceBuffer::drop_async` is cuMemFreeAsync
//! on the stream it is given: ordered after that stream's work only, as in
//! any binding, so a block another stream still reads can be handed to the
//! next allocation. cust's plain Drop (cuMemFree) is the contrast.

use casebook_driver::RecordSteps;
use casebook_kernels::fatbin;
use casebook_model::{Recorder, VariantFn};
use cust::event::{Event, EventFlags};
use cust::launch;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags, StreamWaitEventFlags};
#[allow(unused_imports)]
use scenario_async_free_race::names::*;
use scenario_async_free_race::{GIVEN, N, NEXT_OWNER, RUNS, SPIN_NS, tally};

use crate::common::{cu, keep_pool_pages, module, new_stream, primary_context};
use cust::context::Context;

struct Streams {
    module: Module,
    a: Stream,
    b: Stream,
    out: DeviceBuffer<f32>,
    given: Vec<f32>,
    next: Vec<f32>,
}

impl Streams {
    /// On A: a block of N floats with `values` copied in (one of `self`'s
    /// host buffers).
    fn filled_on_a(&self, rec: &mut Recorder, values: &[f32]) -> anyhow::Result<DeviceBuffer<f32>> {
        // SAFETY: filled at once, before anything reads it.
        let mut block = rec.step(
            "cuMemAllocAsync (A)",
            cu(unsafe { DeviceBuffer::uninitialized_async(N, &self.a) }),
        )?;
        // SAFETY: `values` is one of `self`'s buffers, which live as long as
        // `self`; A is synchronised before the run ends.
        rec.step(
            "cuMemcpyHtoDAsync (A)",
            cu(unsafe { block.async_copy_from(values, &self.a) }),
        )?;
        Ok(block)
    }

    /// On A: a buffer filled with GIVEN; A is synchronised.
    fn given(&self, rec: &mut Recorder) -> anyhow::Result<DeviceBuffer<f32>> {
        let x = self.filled_on_a(rec, &self.given)?;
        rec.step("cuStreamSynchronize (A)", cu(self.a.synchronize()))?;
        Ok(x)
    }

    /// On B: a kernel that waits, then copies `x` to `out`.
    fn read_on_b(&self, rec: &mut Recorder, x: &DeviceBuffer<f32>) -> anyhow::Result<()> {
        let (module, b) = (&self.module, &self.b);
        let (src, dst, n, spin) = (
            x.as_device_ptr(),
            self.out.as_device_ptr(),
            N as i32,
            SPIN_NS,
        );
        rec.step(
            "cuLaunchKernel spin_then_copy (B)",
            cu(unsafe { launch!(module.spin_then_copy<<<8, 256, 0, b>>>(src, dst, n, spin)) }),
        )?;
        Ok(())
    }

    /// On A: the next owner allocates and writes NEXT_OWNER.
    fn next_owner(&self, rec: &mut Recorder) -> anyhow::Result<DeviceBuffer<f32>> {
        self.filled_on_a(rec, &self.next)
    }

    fn reader_saw_given(&self, rec: &mut Recorder) -> anyhow::Result<bool> {
        rec.step("cuStreamSynchronize (B)", cu(self.b.synchronize()))?;
        let mut seen = vec![0.0f32; N];
        rec.step("cuMemcpyDtoH", cu(self.out.copy_to(&mut seen[..])))?;
        Ok(seen.iter().all(|&v| v == GIVEN))
    }
}

/// How a variant frees the block B is still reading.
type Free = fn(&mut Recorder, &Streams, DeviceBuffer<f32>) -> anyhow::Result<()>;

/// One run: the block given on A, read on B, freed by `free`, the next
/// owner's block taken on A. Returns whether B read what it was given, and
/// whether the next owner got the same block.
fn one_run(rec: &mut Recorder, s: &Streams, free: Free) -> anyhow::Result<(bool, bool)> {
    let x = s.given(rec)?;
    s.read_on_b(rec, &x)?;
    let x_ptr = x.as_device_ptr().as_raw();
    free(rec, s, x)?;
    let y = s.next_owner(rec)?;
    let ok = s.reader_saw_given(rec)?;
    let same = y.as_device_ptr().as_raw() == x_ptr;
    rec.step("cuMemFreeAsync (A)", cu(y.drop_async(&s.a)))?;
    Ok((ok, same))
}

fn drive(rec: &mut Recorder, free: Free) -> anyhow::Result<()> {
    let ctx = primary_context(rec)?;
    runs(rec, ctx, free)
}

/// [`drive`], with the pool keeping the pages of freed blocks mapped.
fn drive_keeping_pages(rec: &mut Recorder, free: Free) -> anyhow::Result<()> {
    let ctx = primary_context(rec)?;
    keep_pool_pages(rec)?;
    runs(rec, ctx, free)
}

fn runs(rec: &mut Recorder, _ctx: Context, free: Free) -> anyhow::Result<()> {
    let module = module(rec, fatbin::SPIN)?;
    let a = new_stream(rec, "cuStreamCreate A", StreamFlags::NON_BLOCKING)?;
    let b = new_stream(rec, "cuStreamCreate B", StreamFlags::NON_BLOCKING)?;
    let out = rec.step("cuMemAlloc", cu(DeviceBuffer::<f32>::zeroed(N)))?;
    let s = Streams {
        module,
        a,
        b,
        out,
        given: vec![GIVEN; N],
        next: vec![NEXT_OWNER; N],
    };
    let (mut corrupted, mut reused) = (0, 0);
    for _ in 0..RUNS {
        let (ok, same_block) = rec.iteration("run", |rec| one_run(rec, &s, free))?;
        corrupted += usize::from(!ok);
        reused += usize::from(same_block);
    }
    rec.step("cuStreamSynchronize (A)", cu(s.a.synchronize()))?;
    tally(rec, corrupted, reused);
    Ok(())
}

// ANCHOR: broken
pub fn broken(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, |rec, s, x| {
        // BUG: nothing orders this free after B's kernel.
        rec.step("cuMemFreeAsync (A)", cu(x.drop_async(&s.a)))?;
        Ok(())
    })
}
// ANCHOR_END: broken

// ANCHOR: fixed
pub fn fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, |rec, s, x| {
        // FIX: A waits for B's kernel before it frees.
        let read_done = rec.step("cuEventCreate", cu(Event::new(EventFlags::DISABLE_TIMING)))?;
        rec.step("cuEventRecord (B)", cu(read_done.record(&s.b)))?;
        rec.step(
            "cuStreamWaitEvent (A)",
            cu(s.a.wait_event(read_done, StreamWaitEventFlags::DEFAULT)),
        )?;
        rec.step("cuMemFreeAsync (A)", cu(x.drop_async(&s.a)))?;
        Ok(())
    })
}
// ANCHOR_END: fixed

// ANCHOR: drop
pub fn plain_drop(rec: &mut Recorder) -> anyhow::Result<()> {
    // The pool keeps freed pages mapped: cuMemFree returns the block at
    // once, and without this the reader at times faults on the unmapped
    // pages (CUDA_ERROR_ILLEGAL_ADDRESS) instead of reading the next
    // owner's values. Either way it read a block it no longer had.
    drive_keeping_pages(rec, |_, _, x| {
        drop(x); // cust's Drop: cuMemFree, not ordered on any stream
        Ok(())
    })
}
// ANCHOR_END: drop

/// The variants of this file, by their names in the catalogue.
pub const VARIANTS: &[(&str, VariantFn)] = &[
    ("broken-cust", broken),
    ("fixed-cust", fixed),
    ("drop-cust", plain_drop),
];
