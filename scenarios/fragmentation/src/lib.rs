//! `fragmentation`: "out of memory though there is free memory", blamed on
//! fragmentation. First the article's own sequence and the hard form of its
//! claim against cudaMalloc: fill the GPU with 2 MiB blocks, free every other
//! one, ask for one block of most of the scattered free memory. Then where
//! fragmentation does bite: a sub-allocator that carves one reserved region,
//! as caching allocators do, refuses a large request with three quarters of
//! its region free. A pool built on the driver's virtual memory API
//! (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`: the idea behind
//! PyTorch's expandable segments) serves the same workload.
//!
//! The PyTorch variants hold PyTorch to a budget of 26 GiB (its per-process
//! memory fraction), which stands for the device, and read only their own
//! process's figures: they run beside light trials where the GPU has room.

use casebook_driver::device::measure_bytes;
use casebook_driver::prelude::*;
use casebook_model::pytorch;
use cudarc::driver::sys::CUdeviceptr;

mod broken;
mod fixed;
mod new_process;

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/fragmentation.cu" {
        as_written,
        hard_form,
        nearly_full,
        churn,
        churn_pages,
        churn_sub_page,
        churn_one_size,
        churn_over_half_page,
        churn_small,
        churn_pool,
        random_order_free,
        sub_page_holes,
        page_holes,
        sub_page_all_freed,
        sub_page_immediate_free,
        size_class_pool,
        shared_chunk_pool,
    }
}

const MIB: usize = 1 << 20;

/// The region both pools manage: 1 GiB.
pub const REGION: usize = 1 << 30;
/// The workload keeps blocks of this size…
pub const KEPT: usize = 2 * MIB;
/// …between temporaries of this size, which it then frees.
pub const TEMPORARY: usize = 6 * MIB;
/// Then it asks for this much: a quarter of the region, a third of what is free.
pub const LARGE: usize = 256 * MIB;

const PYTHON: &str = "python/caching_allocator.py";
/// What a PyTorch variant holds at most: `BUDGET` in the Python file, and
/// its process's context.
const PYTORCH_HOLDS: u64 = 27 << 30;

/// How long a churn variant may run, beyond a trial's default two minutes.
const CHURN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

pub fn scenario() -> Scenario {
    Scenario {
        slug: "fragmentation",
        title: "CUDA out of memory though free memory is ample (fragmentation)",
        cause: "cudaMalloc maps physical pages into fresh virtual ranges, so scattered free pages still \
                serve one large block; fragmentation bites below its 2 MiB page, where small blocks \
                kept and freed share pages, and in sub-allocators that carve one reserved region, as \
                caching allocators do. Back the pool with virtual memory, or bin by size.",
        fix: "In PyTorch, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before the first CUDA \
              call: the caching allocator then grows a segment in place instead of needing a new \
              contiguous one, so its unallocated reserve serves larger requests. In a pool of your \
              own, back it with cuMemCreate pages mapped into a fresh range per block \
              (cuMemAddressReserve, cuMemMap).",
        symptoms: &["out of memory", "out of memory though memory is free"],
        requires: Requirement::GPU_FILLED,
        reports: &[],
        claims: CLAIMS,
        variants: variants![
            Variant::as_written("as-written-cpp", cpp::as_written),
            Variant::as_written("hard-form-cpp", cpp::hard_form),
            Variant::as_written("nearly-full-cpp", cpp::nearly_full).also_differs(
                "the article's program beside a ballast that leaves 64 MiB free, twice its 32 MiB \
                 request: where its \"might fail\" could.",
            ),
            Variant::as_written("churn-cpp", cpp::churn).timeout(CHURN_TIMEOUT),
            Variant::records("churn-pages-cpp", cpp::churn_pages)
                .one_change(
                    "churn-cpp",
                    "the smallest size the churn allocates: 4 KiB there, below the driver's 2 MiB \
                     page; 2 MiB here, every size a whole number of pages",
                    "return churn<size_t(4) << 10>(r);",
                    "return churn<size_t(2) << 20>(r);",
                )
                .timeout(CHURN_TIMEOUT),
            Variant::records("churn-sub-page-cpp", cpp::churn_sub_page)
                .one_change(
                    "churn-cpp",
                    "the largest size the churn allocates: 64 MiB there; 1 MiB here, every size \
                     below the driver's 2 MiB page",
                    "return churn<size_t(4) << 10>(r);",
                    "return churn<size_t(4) << 10, size_t(1) << 20>(r);",
                )
                .timeout(CHURN_TIMEOUT),
            Variant::records("churn-over-half-page-cpp", cpp::churn_over_half_page)
                .one_change(
                    "churn-cpp",
                    "the sizes the churn allocates: 4 KiB to 64 MiB there; here 1,088 KiB to 1,984 \
                     KiB, each more than half the driver's 2 MiB page and less than the page",
                    "return churn<size_t(4) << 10>(r);",
                    "return churn<size_t(1088) << 10, size_t(1984) << 10>(r);",
                )
                .timeout(CHURN_TIMEOUT),
            Variant::records("churn-small-cpp", cpp::churn_small)
                .one_change(
                    "churn-cpp",
                    "the largest size the churn allocates: 64 MiB there; 64 KiB here, so that \
                     many of its blocks share each of the driver's 2 MiB pages",
                    "return churn<size_t(4) << 10>(r);",
                    "return churn<size_t(4) << 10, size_t(64) << 10>(r);",
                )
                .timeout(CHURN_TIMEOUT),
            Variant::records("churn-pool-cpp", cpp::churn_pool)
                .one_change(
                    "churn-cpp",
                    "the allocator of the churns: cudaMalloc and cudaFree there; here \
                     cudaMallocAsync and cudaFreeAsync on the default stream, from the device's \
                     default pool, read after a synchronisation (when the pool gives back what no \
                     block uses)",
                    "return churn<size_t(4) << 10>(r);",
                    "return churn_from_pool<size_t(4) << 10>(r);",
                )
                .timeout(CHURN_TIMEOUT),
            Variant::records("churn-one-size-cpp", cpp::churn_one_size)
                .one_change(
                    "churn-cpp",
                    "the sizes: from 4 KiB to 64 MiB there; 256 KiB, every block the same, here",
                    "return churn<size_t(4) << 10>(r);",
                    "return churn<size_t(256) << 10, size_t(256) << 10, false>(r);",
                )
                .timeout(CHURN_TIMEOUT),
            Variant::as_written("random-order-free-cpp", cpp::random_order_free),
            Variant::records("sub-page-holes-cpp", cpp::sub_page_holes),
            Variant::records("page-holes-cpp", cpp::page_holes).one_change(
                "sub-page-holes-cpp",
                "the size of the blocks that fill the stretch: 64 KiB there, below the driver's \
                 2 MiB page; 2 MiB here",
                "return holes<size_t(64) << 10>(r);",
                "return holes<size_t(2) << 20>(r);",
            ),
            Variant::records("sub-page-all-freed-cpp", cpp::sub_page_all_freed).one_change(
                "sub-page-holes-cpp",
                "which of the 64 KiB blocks are freed before the large request: every other \
                 one there; every one here",
                "return holes<size_t(64) << 10>(r);",
                "return holes<size_t(64) << 10, 1>(r);",
            ),
            Variant::records("sub-page-immediate-free-cpp", cpp::sub_page_immediate_free).one_change(
                "sub-page-holes-cpp",
                "when the blocks to be freed are freed: once the stretch is full there; here each \
                 right after it is made and set with cudaMemset, before the next block is asked \
                 for, as Example 1 frees its own",
                "return holes<size_t(64) << 10>(r);",
                "return holes<size_t(64) << 10, 2, true>(r);",
            ),
            Variant::records("size-class-pool-cpp", cpp::size_class_pool),
            Variant::records("shared-chunk-pool-cpp", cpp::shared_chunk_pool).one_change(
                "size-class-pool-cpp",
                "which chunks the pool cuts a block from: a chunk for each size there; the same \
                 chunks for every size, in the order the blocks are asked for, here",
                "return chunk_pool<true>(r);",
                "return chunk_pool<false>(r);",
            ),
            Variant::as_written("new-process", cudarc!(new_process)),
            Variant::records("new-process-margin", cudarc!(new_process::margin)).one_change(
                "new-process",
                "what is left out of nvidia-smi's free memory in the new process's request: two \
                 pages there, a gibibyte here",
                "ask(rec, PAGES)",
                "ask(rec, GIBIBYTE)",
            ),
            // It leaves the device 1 GiB for the same workload without a pool.
            Pair::new(
                Symptom::check_failed(SERVED),
                cudarc!(broken),
                cudarc!(fixed)
            )
            .with_broken(|v| v.alone())
            .with_fixed(|v| v.also_differs(
                "the fix is another allocator, not a line: physical pages (cuMemCreate) \
                 mapped into a fresh virtual range per block (cuMemAddressReserve, \
                 cuMemMap), where `broken` carves one cuMemAlloc region by offset. The \
                 workload (blocks kept, temporaries freed, the large request) is the same.",
            )),
            Variant::broken(
                "caching-allocator-py",
                Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
                Program::pytorch(PYTHON, "fragmented"),
            )
            .then_shows(Symptom::check_failed(REQUEST_SERVED))
            .shares_gpu()
            .holds_memory(PYTORCH_HOLDS)
            .small_when_reduced(),
            Variant::broken(
                "per-step-buffer-py",
                Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
                Program::pytorch(PYTHON, "per_step_buffer"),
            )
            .then_shows(Symptom::check_failed(EVERY_STEP_RAN))
            .shares_gpu()
            .holds_memory(PYTORCH_HOLDS)
            .small_when_reduced(),
            Variant::fixed("preallocated-py", Program::pytorch(PYTHON, "preallocated"))
                .one_change(
                    "per-step-buffer-py",
                    "when the need's 1536 MiB buffer is allocated: at each step there, once before \
                     the steps here (and reused)",
                    "buffer = None  # the need's buffer, allocated at each step",
                    "buffer = _bytes(REQUEST)  # the need's buffer, taken once and reused",
                )
                .shares_gpu()
                .holds_memory(PYTORCH_HOLDS)
                .small_when_reduced(),
            Variant::fixed(
                "expandable-segments-py",
                Program::pytorch(PYTHON, "expandable"),
            )
            .shares_gpu()
            .holds_memory(PYTORCH_HOLDS)
            .small_when_reduced()
            .sanitizer_sees(
                &[
                    "API error CUDA_ERROR_OUT_OF_MEMORY",
                    "API error CUDA_ERROR_NOT_PERMITTED",
                ],
                "with expandable segments PyTorch's allocator creates and maps physical \
                 memory itself: CUDA_ERROR_NOT_PERMITTED comes from one of its driver calls \
                 that it goes on without; where the device is full (the full-size form) the \
                 driver refuses it pages (CUDA_ERROR_OUT_OF_MEMORY), and it unmaps its free \
                 pieces and retries, as the served request shows",
            ),
        ],
    }
}

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
    rec.fact(KEPT_BLOCKS, kept.len());
    rec.fact(TEMPORARIES, temporaries.len());
    for (i, t) in temporaries.into_iter().enumerate() {
        rec.iteration("free a temporary", |rec| pool.free(rec, t));
        rec.point(FREE_BYTES_CURVE, (i + 1) as f64, pool.free_bytes() as f64);
        rec.point(
            LARGEST_REQUEST_BYTES,
            (i + 1) as f64,
            pool.largest_request() as f64,
        );
    }
    let (free, largest) = (pool.free_bytes(), pool.largest_request());
    measure_bytes(rec, FREE_BYTES_FIGURE, free);
    measure_bytes(rec, LARGEST_REQUEST, largest);
    rec.measure(LARGEST_OVER_FREE, largest as f64 / free as f64);
    rec.fact(
        FREE_BYTES_IN_THE_REGION,
        format!("{} MiB of {}", free / MIB, REGION / MIB),
    );
    rec.fact(
        LARGEST_REQUEST_THE_POOL_SERVES,
        format!("{} MiB", largest / MIB),
    );
    rec.fact(
        FREE_BYTES_EXCEED_THE_LARGEST_REQUEST_THE_POOL_SERVES,
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
            THE_LARGE_BLOCK_HOLDS_WHAT_WAS_WRITTEN,
            usable && tail.iter().all(|&b| b == 0xab),
        );
        pool.free(rec, ptr);
    }
    for k in kept {
        rec.iteration("free a kept block", |rec| pool.free(rec, k));
    }
    Ok(())
}

/// PyTorch's caching allocator: free pieces that together exceed the
/// request four times, none of them fits, and the request is refused:
/// confirmed; served on the same pieces: refuted.
fn caching_allocator_verdict(o: &Outcome) -> ClaimVerdict {
    match (
        o.flag(THE_PIECES_TOGETHER_EXCEED_THE_REQUEST),
        o.flag(NO_FREE_PIECE_FITS_THE_REQUEST),
        o.check(REQUEST_SERVED),
    ) {
        (Some(true), Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (Some(true), _, Some(true)) => ClaimVerdict::Refuted,
        (Some(true), Some(false), Some(false)) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    }
}

/// Freed blocks amid blocks still allocated, then one block of 90% of the
/// bytes freed: refused, with the freed bytes not all shown as free memory
/// (pages still partly in use), is fragmentation: confirmed; served:
/// refuted.
fn holes_verdict(o: &Outcome) -> ClaimVerdict {
    match (
        o.flag(ONE_BLOCK_OF_90_OF_THE_BYTES_FREED_IS_SERVED),
        o.flag(THE_BYTES_FREED_ALL_SHOW_AS_FREE_MEMORY),
    ) {
        (Some(true), _) => ClaimVerdict::Refuted,
        (Some(false), Some(false)) => ClaimVerdict::Confirmed,
        (Some(false), Some(true)) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    }
}

/// Why the claims that cudaMalloc's own calls fragment device memory have
/// no control run.
const PAGES_SERVE_ANY_REQUEST: &str = "cudaMalloc serves the free memory cudaMemGetInfo (and \
                                       nvidia-smi) reports wherever it lies: in `hard-form-cpp`, 90% of 42 GB free only in 2 MiB holes \
                                       between blocks still allocated is served as one block at once. No order or size of cudaMalloc \
                                       and cudaFree calls leaves reported free memory that a request up to it cannot have, beyond a \
                                       remnant of a few MiB (the fill's last 2 MiB request is refused with a few MiB still reported \
                                       free: the run records it as `free_bytes_when_a_2_mib_block_is_refused`), so a run \
                                       in which cudaMalloc refuses a request of real size would need another allocator, which is \
                                       another claim. \
                                       (What blocks below the 2 MiB page free inside pages still in use is not reported free at all: \
                                       `sub-page-holes-cpp`, where 001-incomplete-free-fragments is confirmed.) Where an allocator \
                                       carves one region, the same kind of request is refused: PyTorch's caching allocator in \
                                       `caching-allocator-py` refuses 1536 MiB with more than four times as much reserved and \
                                       unused, in pieces none of which fits (003-fragmentation-reduces-contiguous).";

/// Why the claims that free pieces turn a large request away reach at best
/// "partly": they speak of the GPU's memory, and hold only in a cache.
const CACHE_ONLY: &str = "a caching allocator's free pieces turn a large request away \
                          (caching-allocator-py); memory that cudaMalloc reports free serves a request up to it wherever it \
                          lies (hard-form-cpp)";

const CLAIMS: &[Claim] = &[
    Claim {
        id: "004-example-1-no-contiguous-block",
        source: Source::SEED_004,
        quote: "Although there is memory available, no contiguous block of the correct size is available.",
        // Read where the memory available is in pieces only: free memory
        // scattered in 2 MiB holes between blocks still allocated, and one
        // request for 90% of it. The article's own 32 MiB request, beside
        // tens of GB free (as-written-cpp), could not have been refused.
        judged_by: "hard-form-cpp",
        control: Control::Impossible(PAGES_SERVE_ANY_REQUEST),
        judge: |o: &Outcome| {
            ClaimVerdict::refuted_if(o.flag(ONE_BLOCK_OF_90_OF_THE_SCATTERED_FREE_MEMORY_IS_SERVED))
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-fragmentation-reduces-contiguous",
        source: Source::SEED_003,
        quote: "This fragmentation effectively reduces the contiguous memory available for a single allocation, even if the \
                total free space appears sufficient.",
        judged_by: "caching-allocator-py",
        control: Control::Run("expandable-segments-py"),
        reach: Reach::AtBestPartly(CACHE_ONLY),
        // "This fragmentation" is the gaps the CUDA runtime's blocks leave
        // (the article's paragraph before), met by a PyTorch user after the
        // cache was cleared. PyTorch's own caching allocator holds free
        // pieces that together exceed the request four times, none of them
        // fits, and the request is refused: confirmed, capped at partly,
        // since cudaMalloc serves scattered free pages as one block. The
        // control changes one setting,
        // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, on the same
        // pieces: the request is served, and the judge reads "refuted".
        judge: caching_allocator_verdict,
    },
    Claim {
        id: "003-fragmentation-gaps",
        source: Source::SEED_003,
        quote: "Repeated allocation and deallocation of memory blocks – including those potentially associated with previous \
                runs or related tasks – can lead to the creation of many small, unutilized gaps between larger occupied regions.",
        judged_by: "sub-page-holes-cpp",
        control: Control::Run("page-holes-cpp"),
        // Blocks allocated and every other one freed: below the driver's
        // page, the freed blocks are small gaps between blocks still
        // allocated, and none of them shows as free memory (confirmed); with
        // whole pages, every freed byte does and the large request is served
        // (the control). `broken`, a pool that carves one region, shows the
        // same gaps in a sub-allocator.
        judge: holes_verdict,
        ..Claim::EITHER
    },
    Claim {
        id: "004-fragmentation-root-cause",
        source: Source::SEED_004,
        quote: "The root cause often lies not in a total lack of GPU resources, but in memory fragmentation and the specific \
                allocation strategies used by CUDA.",
        judged_by: "caching-allocator-py",
        control: Control::Run("expandable-segments-py"),
        reach: Reach::AtBestPartly(
            "\"often\" speaks of what is typical, which one program cannot show; and the \
             allocator that leaves memory in pieces here is PyTorch's caching allocator, built on \
             CUDA: cudaMalloc itself serves one block from scattered free pages (hard-form-cpp), \
             and on the carving pool's workload cuMemAlloc serves what the pool refuses (broken)",
        ),
        // Decided where users meet it, on PyTorch's caching allocator: free
        // pieces of its cache that together exceed the request four times,
        // none of them large enough, and the request refused (confirmed,
        // capped at partly); served: refuted. The control sets one thing,
        // expandable_segments:True, and the same request is served.
        judge: caching_allocator_verdict,
    },
    Claim {
        id: "001-incomplete-free-fragments",
        source: Source::SEED_001,
        // The sentence's first part; "resource exhaustion" is
        // missing-free's 001-incomplete-free-exhausts.
        quote: "In this raw CUDA example, the failure to completely free GPU memory in between runs can lead to fragmentation",
        judged_by: "sub-page-holes-cpp",
        control: Control::Run("sub-page-all-freed-cpp"),
        // "Can": blocks left allocated between runs, every other one, then
        // one block of 90% of the bytes freed from cudaMalloc. Blocks below
        // the driver's page share pages, and the pages their survivors stay
        // in are not given back: that is where it could. The control frees
        // every block: the free is complete.
        judge: holes_verdict,
        ..Claim::EITHER
    },
    Claim {
        id: "004-nvidia-smi-free-not-allocatable",
        source: Source::SEED_004,
        quote: "A common misconception when working with CUDA is assuming that unused GPU memory, as reported by tools like `nvidia-smi`, directly translates to availability for new allocations.",
        judged_by: "new-process",
        control: Control::Run("new-process-margin"),
        reach: Reach::AtBestPartly(
            "the free memory nvidia-smi reports does not all reach a new process, but what it \
             misses is the process's own context, made before it can ask (the run's raw figures: \
             nvidia-smi's free memory, and what the new process has free once its context is \
             made, half a gibibyte less on the H100); all the rest does translate: the same \
             request a gibibyte smaller is served in one block (new-process-margin). What the \
             article gives next as the reason, fragmentation, is judged in its own claim",
        ),
        // nvidia-smi's free memory, read with nothing on the GPU, asked for
        // by a new process in one block, less two pages: refused, it does
        // not translate (confirmed, capped); served, it does (refuted).
        // new-process-margin, the same request a gibibyte less, is the
        // control.
        judge: |o: &Outcome| {
            ClaimVerdict::refuted_if(
                o.flag(A_NEW_PROCESS_GETS_NVIDIA_SMI_S_FREE_MEMORY_LESS_THE_MARGIN),
            )
        },
    },
    Claim {
        id: "004-mismatched-fragmented-request-fails",
        source: Source::SEED_004,
        quote: "However, if the requested memory size or alignment doesn't match any cached blocks, and existing large blocks are fragmented by smaller allocations in between, the allocation might fail despite having enough total free memory to satisfy the requested size.",
        judged_by: "caching-allocator-py",
        control: Control::Run("expandable-segments-py"),
        reach: Reach::AtBestPartly(
            "the paragraph's subject is \"CUDA's allocator\", and the allocator whose cached blocks \
             turn the request away here is PyTorch's caching allocator, built on CUDA (as for \
             004-fragmentation-root-cause); CUDA's own caching allocator, the stream-ordered pool \
             (pool-retention, 004-allocator-caches-blocks), is not asked a request that matches no \
             cached block beside blocks kept in pieces",
        ),
        // A caching allocator's claim, decided on PyTorch's (as
        // 003-fragmentation-reduces-contiguous is); `broken`, the pool that
        // carves one region, shows the same refusal, and cuMemAlloc serving
        // the request beside it. (Capped at partly.)
        judge: caching_allocator_verdict,
    },
    Claim {
        id: "004-fragmentation-hinders-large-chunks",
        source: Source::SEED_004,
        quote: "This fragmentation, much like in hard disk management, makes it difficult to allocate large, contiguous chunks even if the total free memory exceeds the requested amount.",
        judged_by: "caching-allocator-py",
        control: Control::Run("expandable-segments-py"),
        reach: Reach::AtBestPartly(CACHE_ONLY),
        // A caching allocator refuses the request with free pieces four
        // times as large: confirmed, capped at partly, since the sentence
        // speaks of GPU memory, where cudaMalloc serves scattered free pages
        // as one block.
        judge: caching_allocator_verdict,
    },
    Claim {
        id: "004-example1-creates-fragmented-space",
        source: Source::SEED_004,
        quote: "Although the total amount of memory allocated and released might be less than the total GPU memory, the allocator creates a fragmented memory space.",
        judged_by: "as-written-cpp",
        control: Control::Impossible(PAGES_SERVE_ANY_REQUEST),
        // Fragmented space: every block freed, the free memory back where it
        // was, and still the large request refused (confirmed). The request
        // served: refuted. Refused with memory still taken would be a leak,
        // not fragmentation: undecided.
        judge: |o: &Outcome| match (
            o.flag(FREE_MEMORY_AFTER_EQUALS_FREE_MEMORY_BEFORE),
            o.flag(THE_LARGE_ALLOCATION_SUCCEEDS),
        ) {
            (_, Some(true)) => ClaimVerdict::Refuted,
            (Some(true), Some(false)) => ClaimVerdict::Confirmed,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "004-custom-pool-minimizes-fragmentation",
        source: Source::SEED_004,
        quote: "Firstly, implement a custom memory pool manager that allocates larger chunks of memory initially and then subdivides these chunks into smaller blocks as needed. This minimizes fragmentation by reusing blocks from the pool.",
        // The pool the sentence describes, on the workload where cudaMalloc
        // itself fragments (below its 2 MiB page): chunks of 2 MiB cut into
        // blocks as they are asked for, a freed block reused by the next
        // request of its size, the empty chunks given back before a request
        // the pool does not serve. Four rounds of 64 KiB kept blocks and
        // 256 KiB temporaries to 90% of a 4 GiB stretch, the temporaries
        // freed at each round's end; then 90% of what the kept blocks leave
        // of the stretch, from cudaMalloc; the same rounds without a pool
        // first, in the same run. "Minimizes" is read against no pool: the
        // request served beside the pool and refused without one:
        // confirmed; the pool refusing a block of the rounds that cudaMalloc
        // gives, or the request refused beside the pool and served without:
        // refuted; both served or both refused, the pool changes nothing:
        // partly. The control cuts blocks of every size from the same chunks
        // (one change), which hold the first round (six pairs a chunk,
        // 93.75%), so what it refuses after, it refuses for the pieces its
        // freed blocks leave. The pool that carves one region by offset
        // (broken) refuses on whole pages what cuMemAlloc serves: the page
        // shows both.
        judged_by: "size-class-pool-cpp",
        control: Control::Run("shared-chunk-pool-cpp"),
        reach: Reach::AtBestPartly(
            "the sentence's pool, larger chunks cut into blocks as needed and freed blocks reused, \
             describes the control's pool as well, which cuts every size from the same chunks and \
             refuses a block of the rounds that cudaMalloc serves: what minimizes fragmentation is \
             a chunk for each size, a design the sentence does not name",
        ),
        judge: |o: &Outcome| {
            let pool_refused_a_block = o
                .flag(EVERY_BLOCK_IS_SERVED_THROUGH_THE_POOL)
                .zip(o.flag(EVERY_BLOCK_IS_SERVED_WITHOUT_A_POOL))
                .map(|(pool, none)| !pool && none);
            match (
                pool_refused_a_block,
                o.flag(THE_REQUEST_IS_SERVED_BESIDE_THE_POOL),
                o.flag(THE_REQUEST_IS_SERVED_WITHOUT_A_POOL),
            ) {
                (None, _, _) | (_, None, _) | (_, _, None) => ClaimVerdict::Undecided,
                (Some(true), _, _) | (_, Some(false), Some(true)) => ClaimVerdict::Refuted,
                (_, Some(true), Some(false)) => ClaimVerdict::Confirmed,
                _ => ClaimVerdict::Partly,
            }
        },
    },
    Claim {
        id: "004-preallocate-or-pool",
        source: Source::SEED_004,
        quote: "Mitigation strategies include pre-allocating and reusing buffers, or using a memory pool allocator.",
        judged_by: "preallocated-py",
        control: Control::Run("per-step-buffer-py"),
        reach: Reach::AtBestPartly(
            "the second strategy depends on the pool: one that maps pre-allocated pages into fresh \
             virtual ranges (fixed) serves the request, one that carves a pre-allocated region by \
             offset refuses it (broken), and PyTorch's caching allocator, a pool, is what leaves \
             the memory in pieces here (caching-allocator-py, per-step-buffer-py)",
        ),
        // The first strategy on a need that recurs, in PyTorch's caching
        // allocator within a budget of 26 GiB: 22 steps, each writing a
        // buffer of 1536 MiB and keeping a result of 1024 MiB. The buffer
        // taken once and reused: the steps need the buffer and 22 results
        // (23.5 GiB); every step runs: confirmed (capped at partly by the
        // pools); a step refused: refuted. The control allocates the buffer
        // at each step (one change), the same bytes live at every step:
        // each freed buffer is split by the step's result, so that each
        // buffer needs a segment of its own, and the budget runs out of
        // segments with a third of each free.
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(EVERY_STEP_RAN)),
    },
    Claim {
        id: "004-example1-large-allocation-might-fail",
        source: Source::SEED_004,
        quote: "The subsequent attempt to allocate a significantly larger block at the end might fail due to this fragmentation.",
        judged_by: "nearly-full-cpp",
        control: Control::Impossible(
            "on a GPU with 64 MiB free the request could fail only for want of a contiguous 32 MiB, \
             and cudaMalloc serves free memory wherever it lies (hard-form-cpp); on a GPU with less \
             than 32 MiB free it would fail for want of memory, which is not this sentence's cause. What \
             shows that the request could fail: it asks for half of all the memory left.",
        ),
        // "Might": where it could, on a GPU with little more free than the
        // request.
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.flag(THE_LARGE_ALLOCATION_SUCCEEDS)),
        ..Claim::EITHER
    },
    Claim {
        id: "004-varying-size-churn-fragments",
        source: Source::SEED_004,
        quote: "If these allocations are frequently created and destroyed with varying sizes and without specific \
                strategies for allocation reuse, the potential for fragmentation significantly increases.",
        judged_by: "churn-cpp",
        control: Control::Run("churn-pool-cpp"),
        // The sentence compares: allocations of varying sizes, made and
        // freed often with nothing reusing them, against the same churn
        // without the variety. "The same churn without the variety" is a
        // churn of one size, and which size decides what it traps: two are
        // declared beforehand, 256 KiB (which tiles the driver's 2 MiB
        // page) and 320 KiB (which does not). 100,000 cudaMalloc and
        // cudaFree of sizes from 4 KiB to 64 MiB, then the same churn of
        // each size, each with ten seeds. A churn is read by what its
        // history adds: the memory its live blocks take from the free
        // memory, less what the same sizes take allocated once with no
        // frees between (the driver's page padding is in both and cancels).
        // "Significantly": the median at least four times the one-size
        // churn's, and above every one of its seeds. Beyond both:
        // confirmed; neither: refuted; one: partly. Whether one large
        // request is then served is recorded beside it: the sentence speaks
        // of a potential. The control changes the allocator alone: the same
        // churns from the stream-ordered pool (cudaMallocAsync), which
        // carves blocks out of larger chunks and gives a chunk back only
        // when no block is left in it, so the reading can come out the
        // other way through the churn itself.
        judge: |o: &Outcome| {
            ClaimVerdict::of_two_parts(
                o.flag(THE_CHURN_TRAPS_FOUR_TIMES_THE_256_KIB_CHURN),
                o.flag(THE_CHURN_TRAPS_FOUR_TIMES_THE_320_KIB_CHURN),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "004-free-does-not-defragment",
        source: Source::SEED_004,
        quote: "The immediate free operations don't always lead to defragmentation.",
        judged_by: "sub-page-immediate-free-cpp",
        control: Control::Run("sub-page-holes-cpp"),
        // "Immediate free operations": Example 1's, each block freed right
        // after it is made and used. "Don't always": a case where they do
        // not give back what was freed as one block, if there is one; the
        // likeliest is beside blocks that stay live in the same pages of
        // the driver (below its 2 MiB page, blocks share pages). So blocks
        // of 64 KiB fill a stretch, every other one freed as Example 1
        // frees (set with cudaMemset, freed before the next block is asked
        // for) and every other one kept live; then one block of 90% of the
        // bytes freed is asked for. Served, with the stretch taking no more
        // than its live blocks' pages: refuted (the article's own sequence,
        // as-written-cpp, and every block of the stretch freed,
        // sub-page-all-freed-cpp, read the same). The control frees the
        // same blocks once the stretch is full instead (one change): freed
        // memory then stays in pages its live neighbours share and the
        // request is refused, the condition of
        // 001-incomplete-free-fragments ("the failure to completely free"),
        // which that run decides.
        judge: holes_verdict,
        ..Claim::EITHER
    },
];
