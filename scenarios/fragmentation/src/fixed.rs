//! The same region, as physical pages (`cuMemCreate`) instead of one range.
//! Each block gets a fresh virtual range (`cuMemAddressReserve`) and any
//! free pages mapped into it (`cuMemMap`): where the pages lie no longer
//! matters, so every free byte can serve one large request. This is the
//! idea behind PyTorch's expandable segments.

use std::collections::HashMap;

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, measure_bytes};
use casebook_model::Recorder;
use cudarc::driver::DriverError;
use cudarc::driver::sys::{self, CUdeviceptr, CUmemGenericAllocationHandle};

use crate::names::*;
use crate::{Pool, REGION, workload};

/// Runs each call of a loop and returns the first error, so that a loop of
/// driver calls is one recorded step.
fn each<T>(
    items: impl IntoIterator<Item = T>,
    f: impl FnMut(T) -> sys::CUresult,
) -> Result<(), DriverError> {
    items.into_iter().map(f).try_for_each(|r| r.result())
}

// ANCHOR: pool
struct Mapped {
    page: usize,
    /// Physical pages mapped nowhere now.
    spare: Vec<CUmemGenericAllocationHandle>,
    /// Live blocks: their virtual range's start, to its pages.
    live: HashMap<CUdeviceptr, Vec<CUmemGenericAllocationHandle>>,
    access: sys::CUmemAccessDesc,
}

impl Pool for Mapped {
    fn alloc(&mut self, rec: &mut Recorder, bytes: usize) -> Option<CUdeviceptr> {
        let n = bytes.div_ceil(self.page);
        if self.spare.len() < n {
            return None;
        }
        let size = n * self.page;
        let mut ptr = 0;
        rec.step("cuMemAddressReserve", unsafe {
            sys::cuMemAddressReserve(&mut ptr, size, 0, 0, 0).result()
        })
        .ok()?;
        let pages = self.spare.split_off(self.spare.len() - n); // FIX: any free pages
        rec.step(
            "cuMemMap (each page, side by side)",
            each(pages.iter().enumerate(), |(i, &h)| unsafe {
                sys::cuMemMap(ptr + (i * self.page) as u64, self.page, 0, h, 0)
            }),
        )
        .ok()?;
        rec.step("cuMemSetAccess", unsafe {
            sys::cuMemSetAccess(ptr, size, &self.access, 1).result()
        })
        .ok()?;
        self.live.insert(ptr, pages);
        Some(ptr)
    }

    fn free(&mut self, rec: &mut Recorder, ptr: CUdeviceptr) {
        let pages = self
            .live
            .remove(&ptr)
            .expect("a block this pool handed out");
        let size = pages.len() * self.page;
        let _ = rec.step("cuMemUnmap", unsafe { sys::cuMemUnmap(ptr, size).result() });
        let _ = rec.step("cuMemAddressFree", unsafe {
            sys::cuMemAddressFree(ptr, size).result()
        });
        self.spare.extend(pages); // the pages go back, wherever they were
    }

    fn free_bytes(&self) -> usize {
        self.spare.len() * self.page
    }

    fn largest_request(&self) -> usize {
        self.free_bytes()
    }
}
// ANCHOR_END: pool

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let _ctx = device::context(rec)?;
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: 0,
    };
    let mut page = 0;
    rec.step("cuMemGetAllocationGranularity", unsafe {
        sys::cuMemGetAllocationGranularity(
            &mut page,
            &prop,
            sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
        )
        .result()
    })?;
    measure_bytes(rec, PAGE_BYTES, page);
    let mut spare = vec![0; REGION / page];
    rec.step(
        "cuMemCreate (each page of the region)",
        each(spare.iter_mut(), |h| unsafe {
            sys::cuMemCreate(h, page, &prop, 0)
        }),
    )?;
    let mut pool = Mapped {
        page,
        spare,
        live: HashMap::new(),
        access: sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        },
    };
    workload(rec, &mut pool)?;
    rec.step(
        "cuMemRelease (each page)",
        each(pool.spare.drain(..), |h| unsafe { sys::cuMemRelease(h) }),
    )?;
    // The same workload without a pool, as in broken.
    crate::broken::without_a_pool(rec)
}
