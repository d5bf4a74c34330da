//! A sub-allocator in the style of a caching allocator: one region taken
//! from the driver with `cuMemAlloc`, handed out by offset, first fit, with
//! freed neighbours merged. The kept blocks pin the holes between them: 768
//! MiB are free, yet no 256 MiB range is.

use std::collections::HashMap;

use casebook_model::Recorder;
use casebook_model::device;
use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;

use crate::names::*;
use crate::{LARGE, Pool, REGION, workload};

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
    // The driver, asked directly for the request the pool refused.
    let direct = rec.step("cuMemAlloc (256 MiB, outside the region)", unsafe {
        result::malloc_sync(LARGE)
    });
    rec.fact(CUMEMALLOC_SERVES_THE_SAME_REQUEST, direct.is_ok());
    if let Ok(ptr) = direct {
        rec.step("cuMemFree (256 MiB)", unsafe { result::free_sync(ptr) })?;
    }
    rec.step("cuMemFree (the region)", unsafe { result::free_sync(base) })?;
    Ok(())
}
