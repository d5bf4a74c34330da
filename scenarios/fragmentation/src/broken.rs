//! A sub-allocator in the style of a caching allocator: one region taken
//! from the driver with `cuMemAlloc`, handed out by offset, first fit, with
//! freed neighbours merged. The kept blocks pin the holes between them: 768
//! MiB are free, yet no 256 MiB range is. Then the same workload without a
//! pool, on a device left with the same 1 GiB free: what cuMemAlloc does
//! with the same request.

use std::collections::HashMap;

use casebook_driver::RecordSteps;
use casebook_driver::device;
use casebook_model::Recorder;
use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;

use crate::names::*;
use crate::{KEPT, LARGE, MIB, Pool, REGION, TEMPORARY, workload};

// ANCHOR: pool
struct Carved {
    base: CUdeviceptr,
    /// Free ranges (offset, length), sorted by offset.
    holes: Vec<(usize, usize)>,
    /// Live blocks: offset to length.
    live: HashMap<usize, usize>,
}

impl Pool for Carved {
    fn alloc(&mut self, _rec: &mut Recorder, bytes: usize) -> Option<CUdeviceptr> {
        // BUG: a block must be one range of the region, so only a hole that
        // large will do, however much is free in all.
        let i = self.holes.iter().position(|&(_, len)| len >= bytes)?; // first fit
        let (offset, len) = self.holes[i];
        if len == bytes {
            self.holes.remove(i);
        } else {
            self.holes[i] = (offset + bytes, len - bytes);
        }
        self.live.insert(offset, bytes);
        Some(self.base + offset as u64)
    }

    fn free(&mut self, _rec: &mut Recorder, ptr: CUdeviceptr) {
        let offset = (ptr - self.base) as usize;
        let len = self
            .live
            .remove(&offset)
            .expect("a block this pool handed out");
        // Put the range back and merge it with free neighbours.
        let i = self.holes.partition_point(|&(o, _)| o < offset);
        self.holes.insert(i, (offset, len));
        if i + 1 < self.holes.len() && offset + len == self.holes[i + 1].0 {
            self.holes[i].1 += self.holes.remove(i + 1).1;
        }
        if i > 0 && self.holes[i - 1].0 + self.holes[i - 1].1 == offset {
            self.holes[i - 1].1 += self.holes.remove(i).1;
        }
    }

    fn free_bytes(&self) -> usize {
        self.holes.iter().map(|&(_, len)| len).sum()
    }

    fn largest_request(&self) -> usize {
        self.holes.iter().map(|&(_, len)| len).max().unwrap_or(0)
    }
}
// ANCHOR_END: pool

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let _ctx = device::context(rec)?;
    let base = rec.step("cuMemAlloc (the region)", unsafe {
        result::malloc_sync(REGION)
    })?;
    let mut pool = Carved {
        base,
        holes: vec![(0, REGION)],
        live: HashMap::new(),
    };
    workload(rec, &mut pool)?;
    rec.step("cuMemFree (the region)", unsafe { result::free_sync(base) })?;
    without_a_pool(rec)
}

// ANCHOR: without_a_pool
/// The same workload without a pool, like for like: a ballast leaves the
/// region's 1 GiB free on the device, kept blocks and temporaries come from
/// cuMemAlloc until it refuses one, the temporaries go back with cuMemFree,
/// and the same 256 MiB is asked of cuMemAlloc among the kept blocks:
/// whether it is served is recorded.
pub(crate) fn without_a_pool(rec: &mut Recorder) -> anyhow::Result<()> {
    let (free, _) = rec.step("cuMemGetInfo", result::mem_get_info())?;
    let page = 2 * MIB;
    let ballast_bytes = free.saturating_sub(REGION) / page * page;
    // SAFETY: freed below.
    let ballast = rec.step(
        "cuMemAlloc (a ballast: the region's 1 GiB left free)",
        unsafe { result::malloc_sync(ballast_bytes) },
    )?;
    let (mut kept, mut temporaries) = (Vec::new(), Vec::new());
    // Until cuMemAlloc refuses: the refusals that end the loop are the
    // filling's end, not errors of the program.
    // SAFETY: each block is freed below.
    while let Ok(k) = unsafe { result::malloc_sync(KEPT) } {
        kept.push(k);
        // SAFETY: as above.
        let Ok(t) = (unsafe { result::malloc_sync(TEMPORARY) }) else {
            break;
        };
        temporaries.push(t);
    }
    rec.fact(KEPT_BLOCKS_WITHOUT_A_POOL, kept.len());
    for t in temporaries {
        // SAFETY: a block cuMemAlloc gave above, freed once.
        unsafe { result::free_sync(t) }?;
    }
    let (free_among_the_kept, _) = rec.step("cuMemGetInfo", result::mem_get_info())?;
    rec.measure(
        FREE_AMONG_THE_KEPT_BLOCKS_WITHOUT_A_POOL,
        free_among_the_kept as f64,
    );
    // SAFETY: freed at once if served.
    let large = rec.tolerate(
        "cuMemAlloc (256 MiB, among the kept blocks, no pool)",
        unsafe { result::malloc_sync(LARGE) },
    );
    let served = large.is_ok();
    if let Ok(ptr) = large {
        rec.step("cuMemFree (256 MiB)", unsafe { result::free_sync(ptr) })?;
    }
    for k in kept {
        // SAFETY: a block cuMemAlloc gave above, freed once.
        unsafe { result::free_sync(k) }?;
    }
    rec.step("cuMemFree (the ballast)", unsafe {
        result::free_sync(ballast)
    })?;
    rec.fact(CUMEMALLOC_SERVES_THE_SAME_REQUEST, served);
    Ok(())
}
// ANCHOR_END: without_a_pool
