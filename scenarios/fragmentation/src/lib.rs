//! `fragmentation`: "out of memory though there is free memory", blamed on
//! fragmentation. First the article's own sequence and the hard form of its
//! claim against cudaMalloc: fill the GPU with 2 MiB blocks, free every other
//! one, ask for one block of most of the scattered free memory. Then where
//! fragmentation does bite: a sub-allocator that carves one reserved region,
//! as caching allocators do, refuses a large request with three quarters of
//! its region free. A pool built on the driver's virtual memory API
//! (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`: the idea behind
//! PyTorch's expandable segments) serves the same workload.

use casebook_kernels::{cpp, run_cpp};
use casebook_model::device::measure_bytes;
use casebook_model::{
    Binding, Claim, ClaimVerdict, Outcome, Recorder, Requirement, Scenario, Symptom, Unit, Variant,
};
use cudarc::driver::sys::CUdeviceptr;

mod broken;
mod fixed;

const MIB: usize = 1 << 20;
/// The region both pools manage: 1 GiB.
pub const REGION: usize = 1 << 30;
/// The workload keeps blocks of this size…
pub const KEPT: usize = 2 * MIB;
/// …between temporaries of this size, which it then frees.
pub const TEMPORARY: usize = 6 * MIB;
/// Then it asks for this much: a quarter of the region, a third of what is free.
pub const LARGE: usize = 256 * MIB;

pub(crate) const SERVED: &str = "the 256 MiB request is served";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "fragmentation",
        title: "CUDA out of memory though free memory is ample (fragmentation)",
        cause: "cudaMalloc maps physical pages into fresh virtual ranges, so scattered free pages still \
                serve one large block; fragmentation bites in sub-allocators that carve one reserved \
                region, as caching allocators do. Back the pool with virtual memory, or bin by size.",
        symptoms: &["out of memory", "out of memory though memory is free"],
        requires: &[
            Requirement::Gpu,
            Requirement::ExclusiveGpu,
            Requirement::FillsGpu,
        ],
        claims: CLAIMS,
        variants: vec![
            Variant::as_written("as-written-cpp", Binding::CudaRuntimeCpp, |rec| {
                Ok(run_cpp(rec, cpp::casebook_fragmentation_as_written_cpp)?)
            }),
            Variant::as_written("hard-form-cpp", Binding::CudaRuntimeCpp, |rec| {
                Ok(run_cpp(rec, cpp::casebook_fragmentation_hard_form_cpp)?)
            }),
            Variant::broken(
                "broken",
                Binding::Cudarc,
                Symptom::check_failed(SERVED),
                broken::run,
            ),
            Variant::fixed("fixed", Binding::Cudarc, fixed::run),
        ],
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "004-example-1-no-contiguous-block",
        seed: "004_dd8d91b458147886.txt",
        quote: "Although there is memory available, no contiguous block of the correct size is available.",
        judged_by: "as-written-cpp",
        judge: |o: &Outcome| match o.flag("the large allocation succeeds") {
            Some(true) => ClaimVerdict::Refuted,
            Some(false) => ClaimVerdict::Confirmed,
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "003-fragmentation-reduces-contiguous",
        seed: "003_a513a38b5daed103.txt",
        quote: "This fragmentation effectively reduces the contiguous memory available for a single allocation, even if the \
                total free space appears sufficient.",
        judged_by: "hard-form-cpp",
        judge: |o: &Outcome| match o.flag("one block of 90% of the scattered free memory is served")
        {
            Some(true) => ClaimVerdict::Refuted,
            Some(false) => ClaimVerdict::Confirmed,
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "003-fragmentation-gaps",
        seed: "003_a513a38b5daed103.txt",
        quote: "Repeated allocation and deallocation of memory blocks – including those potentially associated with previous \
                runs or related tasks – can lead to the creation of many small, unutilized gaps between larger occupied regions.",
        judged_by: "broken",
        // Gaps form inside a region carved by offsets; the hard form shows
        // cudaMalloc's own are no obstacle, hence "partly".
        judge: |o: &Outcome| match o.flag("free bytes exceed the largest request the pool serves") {
            Some(true) => ClaimVerdict::Partly,
            Some(false) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "004-fragmentation-root-cause",
        seed: "004_dd8d91b458147886.txt",
        quote: "The root cause often lies not in a total lack of GPU resources, but in memory fragmentation and the specific \
                allocation strategies used by CUDA.",
        judged_by: "broken",
        // Fragmentation: yes, in a sub-allocator. CUDA's own allocator: no,
        // it serves the same request outside the region.
        judge: |o: &Outcome| match (
            o.check(SERVED),
            o.flag("cuMemAlloc serves the same request"),
        ) {
            (Some(false), Some(true)) => ClaimVerdict::Partly,
            (Some(false), Some(false)) => ClaimVerdict::Confirmed,
            (Some(true), _) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
    },
];

/// A pool that hands out blocks from a region of [`REGION`] bytes.
pub(crate) trait Pool {
    fn alloc(&mut self, rec: &mut Recorder, bytes: usize) -> Option<CUdeviceptr>;
    fn free(&mut self, rec: &mut Recorder, ptr: CUdeviceptr);
    /// Bytes of the region not handed out.
    fn free_bytes(&self) -> usize;
    /// The largest single request it would serve now.
    fn largest_request(&self) -> usize;
}

/// The workload: fill the region with kept blocks between temporaries, free
/// the temporaries, then ask for [`LARGE`] bytes and write to them.
pub(crate) fn workload(rec: &mut Recorder, pool: &mut dyn Pool) -> anyhow::Result<()> {
    let mut kept = Vec::new();
    let mut temporaries = Vec::new();
    loop {
        let pair = rec.iteration("a kept block and a temporary", |rec| {
            let k = pool.alloc(rec, KEPT)?;
            Some((k, pool.alloc(rec, TEMPORARY)))
        });
        let Some((k, t)) = pair else { break };
        kept.push(k);
        let Some(t) = t else { break };
        temporaries.push(t);
    }
    rec.fact("kept blocks", kept.len());
    rec.fact("temporaries", temporaries.len());
    for (i, t) in temporaries.into_iter().enumerate() {
        rec.iteration("free a temporary", |rec| pool.free(rec, t));
        rec.point("free_bytes", (i + 1) as f64, pool.free_bytes() as f64);
        rec.point(
            "largest_request_bytes",
            (i + 1) as f64,
            pool.largest_request() as f64,
        );
    }
    let (free, largest) = (pool.free_bytes(), pool.largest_request());
    measure_bytes(rec, "free_bytes", free);
    measure_bytes(rec, "largest_request", largest);
    rec.measure(
        "largest_over_free",
        largest as f64 / free as f64,
        Unit::Ratio,
    );
    rec.fact(
        "free bytes in the region",
        format!("{} MiB of {}", free / MIB, REGION / MIB),
    );
    rec.fact(
        "largest request the pool serves",
        format!("{} MiB", largest / MIB),
    );
    rec.fact(
        "free bytes exceed the largest request the pool serves",
        free > largest,
    );
    let large = pool.alloc(rec, LARGE);
    rec.check(SERVED, large.is_some());
    if let Some(ptr) = large {
        let usable = rec
            .step("cuMemsetD8 (the large block)", unsafe {
                cudarc::driver::result::memset_d8_sync(ptr, 0xab, LARGE)
            })
            .is_ok();
        let mut tail = [0u8; 16];
        rec.step("cuMemcpyDtoH (its last bytes)", unsafe {
            cudarc::driver::result::memcpy_dtoh_sync(&mut tail, ptr + (LARGE - 16) as u64)
        })?;
        rec.check(
            "the large block holds what was written",
            usable && tail.iter().all(|&b| b == 0xab),
        );
        pool.free(rec, ptr);
    }
    for k in kept {
        rec.iteration("free a kept block", |rec| pool.free(rec, k));
    }
    Ok(())
}
