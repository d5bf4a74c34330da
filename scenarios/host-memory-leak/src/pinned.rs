//! Seed 002 on pinned memory: "Crucial for efficient data transfer to the
//! device, but improper management can indirectly contribute to memory
//! exhaustion." Two measurements of pinned memory itself.
//!
//! transfers: a 1 GiB copy to the device from pageable memory (a Vec)
//! against the same copy from a second buffer, in five interleaved pairs
//! (`casebook_model::timing`), each copy timed to its end (the context
//! synchronised). The second buffer is pinned (cuMemHostAlloc), or, in the
//! control, pageable too.
//!
//! leak: 8 GiB of pinned memory taken in 1 GiB pieces and never given back,
//! with the host's available memory (MemAvailable) read before and after;
//! in the control each piece is given back (cuMemFreeHost).

use std::time::Instant;

use casebook_driver::{RecordSteps, device};
use casebook_model::{Recorder, timing};
use cudarc::driver::result;

use crate::names::*;

/// One copy's size.
const COPY: usize = 1 << 30;
/// Interleaved pairs of copies.
const PAIRS: usize = 5;
/// The pinned memory the leak takes, in pieces of COPY.
const PIECES: usize = 8;

/// The second buffer of each pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Second {
    Pinned,
    Pageable,
}

pub fn pinned(rec: &mut Recorder) -> anyhow::Result<()> {
    transfers(rec, Second::Pinned)
}

// ANCHOR: pageable_both
/// The control of "crucial for efficient data transfer": both buffers of
/// each pair pageable.
pub fn pageable_both(rec: &mut Recorder) -> anyhow::Result<()> {
    transfers(rec, Second::Pageable)
}
// ANCHOR_END: pageable_both

// ANCHOR: transfers
fn transfers(rec: &mut Recorder, second: Second) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    // SAFETY: COPY bytes, freed below.
    let dst = rec.step("cuMemAlloc (1 GiB)", unsafe { result::malloc_sync(COPY) })?;
    let pageable = vec![1u8; COPY];
    let other_pageable;
    let mut pinned_ptr = std::ptr::null_mut();
    let other: &[u8] = match second {
        Second::Pinned => {
            // SAFETY: COPY bytes of pinned memory, written before they are
            // read and freed below.
            pinned_ptr = rec.step("cuMemHostAlloc (1 GiB)", unsafe {
                result::malloc_host(COPY, 0)
            })?;
            unsafe {
                std::ptr::write_bytes(pinned_ptr as *mut u8, 1, COPY);
                std::slice::from_raw_parts(pinned_ptr as *const u8, COPY)
            }
        }
        Second::Pageable => {
            other_pageable = vec![1u8; COPY];
            &other_pageable
        }
    };
    rec.fact(
        SECOND_BUFFER,
        match second {
            Second::Pinned => "pinned (cuMemHostAlloc)",
            Second::Pageable => "pageable (a Vec)",
        },
    );
    let copy = |rec: &mut Recorder, src: &[u8], call: &str| -> anyhow::Result<f64> {
        let start = Instant::now();
        // SAFETY: dst holds COPY bytes, src is COPY bytes long.
        rec.step(call, unsafe { result::memcpy_htod_sync(dst, src) })?;
        rec.step("cuCtxSynchronize", ctx.synchronize())?;
        Ok(start.elapsed().as_secs_f64())
    };
    let mut pairs = Vec::new();
    for _ in 0..PAIRS {
        rec.iteration("a pair of copies", |rec| -> anyhow::Result<()> {
            let from_pageable = copy(rec, &pageable, "cuMemcpyHtoD (1 GiB, pageable)")?;
            let from_other = copy(rec, other, "cuMemcpyHtoD (1 GiB, the second buffer)")?;
            pairs.push((from_pageable, from_other));
            Ok(())
        })?;
    }
    let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    rec.measure(PAGEABLE_COPY_SECONDS, timing::median(&a));
    rec.measure(SECOND_BUFFER_COPY_SECONDS, timing::median(&b));
    // Longer by at least 5 ms and a fifth, in four pairs of five.
    let words = match timing::compare_pairs(&pairs, 5e-3, 1.2).larger {
        timing::Larger::A => "longer from pageable memory",
        timing::Larger::B => "shorter from pageable memory",
        timing::Larger::Neither => "about the same",
    };
    rec.fact(
        THE_COPY_FROM_PAGEABLE_MEMORY_AGAINST_THE_SECOND_BUFFER,
        words,
    );
    if !pinned_ptr.is_null() {
        // SAFETY: allocated above, no copy in flight (synchronised).
        rec.step("cuMemFreeHost", unsafe { result::free_host(pinned_ptr) })?;
    }
    // SAFETY: allocated above, no copy in flight.
    rec.step("cuMemFree", unsafe { result::free_sync(dst) })?;
    Ok(())
}
// ANCHOR_END: transfers

pub fn leak(rec: &mut Recorder) -> anyhow::Result<()> {
    pieces(rec, false)
}

// ANCHOR: given_back
/// The control of "improper management can indirectly contribute to memory
/// exhaustion": each piece given back.
pub fn given_back(rec: &mut Recorder) -> anyhow::Result<()> {
    pieces(rec, true)
}
// ANCHOR_END: given_back

// ANCHOR: pieces
fn pieces(rec: &mut Recorder, give_back: bool) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let available_before = available_bytes();
    let device_before = device::free_bytes(rec, &ctx)?;
    let mut kept = Vec::new();
    for _ in 0..PIECES {
        // SAFETY: COPY bytes of pinned memory, touched, then kept or freed.
        let p = rec.step("cuMemHostAlloc (1 GiB)", unsafe {
            result::malloc_host(COPY, 0)
        })?;
        unsafe { std::ptr::write_bytes(p as *mut u8, 1, COPY) };
        if give_back {
            // SAFETY: allocated above, nothing uses it.
            rec.step("cuMemFreeHost", unsafe { result::free_host(p) })?;
        } else {
            kept.push(p); // never given back
        }
    }
    let available_after = available_bytes();
    let device_after = device::free_bytes(rec, &ctx)?;
    let taken = available_before.saturating_sub(available_after);
    device::measure_bytes(rec, HOST_AVAILABLE_BEFORE, available_before);
    device::measure_bytes(rec, HOST_AVAILABLE_AFTER, available_after);
    device::measure_bytes(rec, HOST_AVAILABLE_TAKEN, taken);
    rec.fact(
        THE_HOST_S_AVAILABLE_MEMORY_FALLS_BY_WHAT_IS_KEPT_PINNED,
        taken as f64 >= 0.9 * (PIECES * COPY) as f64,
    );
    rec.fact(
        DEVICE_MOVED,
        device_before.abs_diff(device_after) > crate::TOLERANCE,
    );
    // The process ends here; its pinned memory goes with it.
    drop(kept);
    Ok(())
}
// ANCHOR_END: pieces

/// The host's available memory (MemAvailable in /proc/meminfo), in bytes.
fn available_bytes() -> usize {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}
