//! What a context holds: a context is created, a buffer of 4 GiB
//! (cuMemAlloc), a stream, and a block of 2 GiB from the device's
//! stream-ordered pool on that stream (cuMemAllocAsync) are made, and the
//! driver is asked which context each belongs to (cuPointerGetAttribute,
//! cuStreamGetCtx). Then the created context is destroyed with nothing
//! freed, and the memory the process holds (NVML) is read before and after
//! (both recorded): what it gives back tells which of the two allocations
//! went with it. In
//! `owns-created` the buffer, the stream and the block are made while the
//! created context is current; in `owns-primary` (which shows the readings
//! naming another context), while the
//! device's primary context is.

use casebook_driver::RecordSteps;
use casebook_driver::device::stream::StreamKind;
use casebook_driver::device::{self as driver, own_memory_bytes};
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::device;
use crate::names::*;

/// The buffer: far more than a context's own 518 MiB, so that what the
/// destroy gives back tells the two apart.
pub const BUFFER_BYTES: usize = 4 << 30;
/// The pool's block: half the buffer, so that what the destroy gives back
/// tells which of the two went with the context.
pub const POOL_BYTES: usize = 2 << 30;

/// Which context is current while the buffer and the stream are made.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MadeIn {
    Created,
    Primary,
}

pub fn created(rec: &mut Recorder) -> anyhow::Result<()> {
    owns(rec, MadeIn::Created)
}

pub fn primary(rec: &mut Recorder) -> anyhow::Result<()> {
    owns(rec, MadeIn::Primary)
}

// ANCHOR: owns
fn owns(rec: &mut Recorder, made_in: MadeIn) -> anyhow::Result<()> {
    let dev = device(rec)?;
    // SAFETY: a device from cuDeviceGet; released below.
    let primary = rec.step("cuDevicePrimaryCtxRetain", unsafe {
        result::primary_ctx::retain(dev)
    })?;
    // SAFETY: as above; destroyed below.
    let created = rec.step("cuCtxCreate", unsafe {
        result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
    })?;
    let home = match made_in {
        MadeIn::Created => created,
        MadeIn::Primary => primary,
    };
    // SAFETY: a live context.
    rec.step("cuCtxSetCurrent", unsafe { result::ctx::set_current(home) })?;
    // SAFETY: freed only where its context outlives this function.
    let buf = rec.step("cuMemAlloc (4 GiB)", unsafe {
        result::malloc_sync(BUFFER_BYTES)
    })?;
    let stream = driver::stream::create(rec, "cuStreamCreate", StreamKind::NonBlocking)?;
    // SAFETY: a live stream of the current context; freed only where its
    // context outlives this function.
    let block = rec.step("cuMemAllocAsync (2 GiB)", unsafe {
        result::malloc_async(stream, POOL_BYTES)
    })?;
    // SAFETY: the stream is live.
    unsafe { driver::stream::synchronize(rec, "cuStreamSynchronize", stream)? };
    let mut owner: sys::CUcontext = std::ptr::null_mut();
    rec.step("cuPointerGetAttribute (CONTEXT)", unsafe {
        // SAFETY: the attribute is a CUcontext, written into `owner`.
        sys::cuPointerGetAttribute(
            (&raw mut owner).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
            buf,
        )
        .result()
    })?;
    rec.fact(BUFFER_IN_THE_CONTEXT, owner == created);
    // Which context the driver names for the pool's block, read without
    // stopping the run where it names none.
    let mut block_owner: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the attribute is a CUcontext, written into `block_owner`.
    let asked = unsafe {
        sys::cuPointerGetAttribute(
            (&raw mut block_owner).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
            block,
        )
    };
    let named = |asked: sys::cudaError_enum, owner: sys::CUcontext| match asked {
        sys::cudaError_enum::CUDA_SUCCESS if owner == created => "the created context",
        sys::cudaError_enum::CUDA_SUCCESS if owner == primary => "the primary context",
        sys::cudaError_enum::CUDA_SUCCESS if owner.is_null() => "none",
        sys::cudaError_enum::CUDA_SUCCESS => "another context",
        _ => "the driver refuses the question",
    };
    rec.fact(
        BUFFER_S_CONTEXT,
        named(sys::cudaError_enum::CUDA_SUCCESS, owner),
    );
    rec.fact(POOL_BLOCK_S_CONTEXT, named(asked, block_owner));
    let mut stream_owner: sys::CUcontext = std::ptr::null_mut();
    rec.step("cuStreamGetCtx", unsafe {
        // SAFETY: a live stream and an out-pointer to a local.
        sys::cuStreamGetCtx(stream, &mut stream_owner).result()
    })?;
    rec.fact(STREAM_IN_THE_CONTEXT, stream_owner == created);
    rec.fact(
        STREAM_S_CONTEXT,
        named(sys::cudaError_enum::CUDA_SUCCESS, stream_owner),
    );
    // SAFETY: a live context; the created one is destroyed from outside it.
    rec.step("cuCtxSetCurrent (primary)", unsafe {
        result::ctx::set_current(primary)
    })?;
    let before = own_memory_bytes(rec)?;
    // No cuMemFree, no cuStreamDestroy: only the context is destroyed.
    rec.step("cuCtxDestroy (created)", unsafe {
        // SAFETY: nothing of the created context is used after this.
        sys::cuCtxDestroy_v2(created).result()
    })?;
    let after = own_memory_bytes(rec)?;
    let released = before.saturating_sub(after);
    rec.measure(HELD_BEFORE_THE_DESTROY, before as f64);
    rec.measure(HELD_AFTER_THE_DESTROY, after as f64);
    rec.measure(RELEASED_WITH_THE_CONTEXT, released as f64);
    rec.fact(
        BUFFER_GOES_WITH_THE_CONTEXT,
        released >= BUFFER_BYTES as u64,
    );
    rec.fact(
        POOL_BLOCK_GOES_WITH_THE_CONTEXT,
        released >= (BUFFER_BYTES + POOL_BYTES) as u64,
    );
    if made_in == MadeIn::Primary {
        // The primary context outlives the destroy: free what it holds.
        // SAFETY: all three are live in the current (primary) context.
        rec.step("cuMemFreeAsync", unsafe {
            result::free_async(block, stream)
        })?;
        unsafe { driver::stream::synchronize(rec, "cuStreamSynchronize", stream)? };
        unsafe { driver::stream::destroy(rec, stream)? };
        rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    }
    // SAFETY: retained above.
    rec.step("cuDevicePrimaryCtxRelease", unsafe {
        result::primary_ctx::release(dev)
    })?;
    Ok(())
}
// ANCHOR_END: owns
