//! Seed 001: "For multi-process scenarios, proper synchronization mechanisms
//! using CUDA events or streams might be required to ensure that memory is
//! released before another process attempts to allocate it."
//!
//! Two processes. The holder takes 60% of the free memory both saw at start;
//! the taker, once told, asks for as much. The holder tells the taker with a
//! file on the host, no CUDA event or stream between them: after its
//! cuMemFree has returned, or, in the control, before it (it then frees only
//! once the taker has tried). Memory is freed with cuMemFree, as the
//! article's example frees it; or, in free-async-then-tell, taken from the
//! stream-ordered pool and given back with cuMemFreeAsync, whose memory the
//! pool returns to the driver only at a synchronise (its control,
//! free-async-synced-then-tell, waits for the stream before it tells).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_model::Recorder;
use casebook_runtime::worker;
use cudarc::driver::{CudaContext, result};

use crate::names::*;

const HOLDER: &str = "the holder";
const TAKER: &str = "the taker";
const DIR_ENV: &str = "CASEBOOK_HANDOVER";
/// The share of the free memory each asks for: together more than there is.
const SHARE: f64 = 0.6;

/// When the holder tells the taker: after its cuMemFree, or before it; or
/// after a cuMemFreeAsync, with or without waiting for its stream first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    FreeThenTell,
    TellThenFree,
    FreeAsyncThenTell,
    FreeAsyncSyncedThenTell,
}

pub fn free_then_tell(rec: &mut Recorder) -> anyhow::Result<()> {
    handover(rec, Order::FreeThenTell)
}

// ANCHOR: tell_then_free
/// The control: the holder tells the taker before it frees.
pub fn tell_then_free(rec: &mut Recorder) -> anyhow::Result<()> {
    handover(rec, Order::TellThenFree)
}
// ANCHOR_END: tell_then_free

// ANCHOR: free_async_then_tell
/// The stream-ordered free: the holder tells the taker once cuMemFreeAsync
/// has returned, with no synchronise between.
pub fn free_async_then_tell(rec: &mut Recorder) -> anyhow::Result<()> {
    handover(rec, Order::FreeAsyncThenTell)
}
// ANCHOR_END: free_async_then_tell

// ANCHOR: free_async_synced_then_tell
/// Its control: the holder waits for the stream before it tells.
pub fn free_async_synced_then_tell(rec: &mut Recorder) -> anyhow::Result<()> {
    handover(rec, Order::FreeAsyncSyncedThenTell)
}
// ANCHOR_END: free_async_synced_then_tell

fn handover(rec: &mut Recorder, order: Order) -> anyhow::Result<()> {
    match worker::role().as_deref() {
        Some(HOLDER) => holder(rec, order),
        Some(TAKER) => taker(rec),
        _ => parent(rec),
    }
}

/// Starts both processes (before it touches CUDA, which it never does) and
/// records what each did, and whether the taker's allocation succeeded.
fn parent(rec: &mut Recorder) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("casebook-handover-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let env = dir.to_string_lossy().into_owned();
    let roles = [HOLDER, TAKER].map(str::to_owned);
    let outcomes = worker::run_together(&roles, Duration::from_secs(120), &[(DIR_ENV, &env)])?;
    let _ = std::fs::remove_dir_all(&dir);
    for (role, o) in [HOLDER, TAKER].into_iter().zip(&outcomes) {
        worker::replay(rec, role, o);
    }
    if let Some(taken) = outcomes[1].flag(ALLOCATED) {
        rec.fact(THE_TAKER_S_ALLOCATION_SUCCEEDS, taken);
    }
    Ok(())
}

// ANCHOR: holder
fn holder(rec: &mut Recorder, order: Order) -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::var(DIR_ENV)?);
    let ctx = device::context(rec)?;
    let seen = device::free_bytes(rec, &ctx)?;
    mark(&dir, HOLDER, "ready")?;
    wait_for(&dir, TAKER, "ready")?; // both read the free memory before either allocates
    let bytes = (seen as f64 * SHARE) as usize / PAGE * PAGE;
    measure_bytes(rec, PLANNED_BYTES, bytes);
    if let Order::FreeAsyncThenTell | Order::FreeAsyncSyncedThenTell = order {
        return hand_over_async(
            rec,
            &dir,
            &ctx,
            bytes,
            order == Order::FreeAsyncSyncedThenTell,
        );
    }
    // SAFETY: freed below, used by nothing.
    let held = rec.step("cuMemAlloc (60% of the free memory)", unsafe {
        result::malloc_sync(bytes)
    })?;
    if order == Order::FreeThenTell {
        // SAFETY: allocated above; no work uses it.
        rec.step("cuMemFree", unsafe { result::free_sync(held) })?;
        mark(&dir, HOLDER, "told")?;
        wait_for(&dir, TAKER, "tried")?;
    } else {
        mark(&dir, HOLDER, "told")?;
        wait_for(&dir, TAKER, "tried")?;
        // SAFETY: allocated above; no work uses it.
        rec.step("cuMemFree", unsafe { result::free_sync(held) })?;
    }
    Ok(())
}

/// The stream-ordered handover: taken from the pool and given back with
/// cuMemFreeAsync, then the word to the taker, with the stream waited for
/// before it (`synced`) or only after the taker has tried.
fn hand_over_async(
    rec: &mut Recorder,
    dir: &Path,
    ctx: &Arc<CudaContext>,
    bytes: usize,
    synced: bool,
) -> anyhow::Result<()> {
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?;
    // SAFETY: freed on the same stream below, used by nothing.
    let held = rec.step("cuMemAllocAsync (60% of the free memory)", unsafe {
        result::malloc_async(stream.cu_stream(), bytes)
    })?;
    // SAFETY: allocated above on this stream; no work uses it.
    rec.step("cuMemFreeAsync", unsafe {
        result::free_async(held, stream.cu_stream())
    })?;
    if synced {
        rec.step("cuStreamSynchronize", stream.synchronize())?;
    }
    mark(dir, HOLDER, "told")?;
    wait_for(dir, TAKER, "tried")?;
    rec.step(
        "cuStreamSynchronize (after the taker tried)",
        stream.synchronize(),
    )?;
    Ok(())
}
// ANCHOR_END: holder

fn taker(rec: &mut Recorder) -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::var(DIR_ENV)?);
    let ctx = device::context(rec)?;
    let seen = device::free_bytes(rec, &ctx)?;
    mark(&dir, TAKER, "ready")?;
    wait_for(&dir, HOLDER, "told")?;
    let bytes = (seen as f64 * SHARE) as usize / PAGE * PAGE;
    // Provoked where the holder has not freed yet: the control's point.
    let taken = rec.tolerate("cuMemAlloc (60% of the free memory, once told)", unsafe {
        result::malloc_sync(bytes)
    });
    rec.fact(ALLOCATED, taken.is_ok());
    mark(&dir, TAKER, "tried")?;
    if let Ok(p) = taken {
        // SAFETY: allocated above; no work uses it.
        rec.step("cuMemFree", unsafe { result::free_sync(p) })?;
    }
    Ok(())
}

/// Marks that `role` reached `stage`.
fn mark(dir: &Path, role: &str, stage: &str) -> anyhow::Result<()> {
    std::fs::write(dir.join(format!("{role}.{stage}")), b"")?;
    Ok(())
}

/// Waits until `role` has reached `stage`.
fn wait_for(dir: &Path, role: &str, stage: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join(format!("{role}.{stage}")).exists() {
        anyhow::ensure!(Instant::now() < deadline, "{role} never reached `{stage}`");
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}
