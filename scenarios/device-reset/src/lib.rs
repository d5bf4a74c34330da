//! `device-reset`: seed 002's example 2 (`cudaFree(nullptr); cudaDeviceReset();`)
//! and seed 000's reset between model calls, measured. The process holds a
//! buffer of its own, allocated through the runtime, and a library holds one
//! in a context it created through the driver API. `cudaFree(nullptr)` frees
//! nothing; `cudaDeviceReset` destroys the primary context, with every
//! cudaMalloc allocation and setting in it, and does not touch the library's
//! context, nor a block of the stream-ordered pool, which belongs to no
//! context. The fix frees what it allocated and has the library destroy its
//! context.

use casebook_model::prelude::*;

casebook_model::case_modules!();

/// What the library allocates in its context (`kLibrary` in the C++).
const LIBRARY_BYTES: f64 = (4u64 << 30) as f64;
/// Context bookkeeping and rounding (`kTolerance` in the C++).
const RESET_TOLERANCE: f64 = (128u64 << 20) as f64;

casebook_model::scenario!(Scenario {
    title: "Memory still held after cudaFree(nullptr) and cudaDeviceReset",
    cause: "cudaFree(nullptr) frees nothing (it only makes sure the primary context exists). \
            cudaDeviceReset destroys the primary context, and with it every cudaMalloc allocation, \
            stream and setting the runtime made in it; a context created through the driver API, as \
            some libraries do, is not the primary one and keeps its memory, and a block from the \
            stream-ordered pool (cudaMallocAsync) survives the reset, held and usable. Free what \
            you allocate and destroy the contexts you create.",
    fix: "Replace cudaFree(nullptr) and cudaDeviceReset with real cleanup: cudaFree each buffer \
          you allocated, and have a library that created its own driver context free its memory \
          and cuCtxDestroy it.",
    symptoms: &["memory that keeps shrinking", "out of memory"],
    requires: Requirement::GPU_ALONE,
    variants: variants![
        cpp_pair!(Symptom::check_failed(BACK)),
        Variant::records("library-in-primary-cpp", cpp::library_in_primary).one_change(
            "broken-cpp",
            "where the library keeps its 4 GiB: in a context it created \
             through the driver API there; in the context current when it \
             is called, the primary one, here, as cuBLAS does",
            "return reset_cleanup(r, LibraryContext::Own);",
            "return reset_cleanup(r, LibraryContext::Primary);",
        ),
        Variant::records("buffer-from-pool-cpp", cpp::buffer_from_pool).one_change(
            "broken-cpp",
            "where the process's own 4 GiB buffer comes from: cudaMalloc \
             there; the device's stream-ordered pool (cudaMallocAsync) here",
            "return reset_cleanup(r, LibraryContext::Own);",
            "return reset_cleanup(r, LibraryContext::Own, Buffer::Pool);",
        ),
        Variant::records(
            "library-in-primary-buffer-from-pool-cpp",
            cpp::library_in_primary_buffer_from_pool,
        )
        .one_change(
            "library-in-primary-cpp",
            "where the process's own 4 GiB buffer comes from: cudaMalloc \
             there; the device's stream-ordered pool (cudaMallocAsync) here",
            "return reset_cleanup(r, LibraryContext::Primary);",
            "return reset_cleanup(r, LibraryContext::Primary, Buffer::Pool);",
        ),
        // What the reset does to the stream-ordered pool's memory. It
        // reads the device's free memory: alone.
        Variant::records("pool-across-reset-cpp", cpp::pool_across_reset).alone(),
        // It fills the GPU: alone.
        Variant::records("fragmented-reset-cpp", cpp::fragmented_reset).alone(),
        Variant::records(
            "fragmented-reset-library-in-primary-cpp",
            cpp::fragmented_reset_library_in_primary,
        )
        .one_change(
            "fragmented-reset-cpp",
            "where the library's 2 MiB blocks are allocated: in a context \
             it created through the driver API there; in the primary \
             context, the one the reset tears down, here",
            "return fragmented_reset(r, LibraryContext::Own);",
            "return fragmented_reset(r, LibraryContext::Primary);",
        )
        .alone(),
    ],
});

/// Whether the reset cleared the primary context: the old pointer is
/// refused and a raised limit is back at its default.
fn primary_cleared(o: &Outcome) -> Option<bool> {
    let old = o.fact(THE_POINTER_FROM_BEFORE_THE_RESET)?.as_str()?;
    let limit = o.flag(THE_DEVICE_HEAP_LIMIT_IS_BACK_TO_ITS_DEFAULT)?;
    let raised = o.flag(THE_DEVICE_HEAP_LIMIT_HAD_BEEN_RAISED)?;
    Some(old != "cudaSuccess" && limit && raised && o.flag(RESET)?)
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "002-free-null-and-reset-do-not-release",
        source: Source::SEED_002,
        quote: "Simply calling `cudaFree(nullptr)` or `cudaDeviceReset()` does not guarantee the release \
                of all allocated resources.",
        judged_by: "broken-cpp",
        control: Control::Run("library-in-primary-cpp"),
        judge: |o: &Outcome| match (o.flag(FREE_NULL), o.flag(SURVIVED)) {
            (Some(false), Some(true)) => ClaimVerdict::Confirmed,
            (Some(false), Some(false)) | (Some(true), Some(true)) => ClaimVerdict::Partly,
            (Some(true), Some(false)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "002-reset-not-always-enough",
        source: Source::SEED_002,
        quote: "cudaDeviceReset(); // Attempting to reset the context is not always enough.",
        judged_by: "broken-cpp",
        // The same program, the library's 4 GiB kept in the primary context,
        // the one the reset tears down (one change).
        control: Control::Run("library-in-primary-cpp"),
        // Enough is every allocation of the process given back. After the
        // reset, is memory the process allocated still held (the library's
        // 4 GiB in the driver-API context it made)? Held: confirmed; all of
        // it back: refuted.
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(SURVIVED)),
        ..Claim::EITHER
    },
    Claim {
        id: "003-reset-only-reclaims-runtime-memory",
        source: Source::SEED_003,
        quote: "Clearing the cache using functions like `cudaFree(0)` or `cudaDeviceReset()` only reclaims \
                memory that is directly managed by the CUDA runtime.",
        // "Only" draws a line: the runtime's memory reclaimed, the rest (the
        // next sentence names memory held by libraries) not. Decided where a
        // library keeps its 4 GiB through the driver API (cuMemAlloc) in the
        // context current when it is called, the primary one, as cuBLAS
        // keeps its workspace: is that memory reclaimed by the reset too?
        // The process's own cudaMalloc buffer reclaimed and the library's
        // kept: confirmed; the library's reclaimed as well, or the
        // runtime's kept: refuted. (cudaFree(0) reclaims nothing at all:
        // the line, if any, is the reset's.)
        judged_by: "library-in-primary-cpp",
        // The same program, the library's 4 GiB in a context it created
        // (one change): the reset leaves it.
        control: Control::Run("broken-cpp"),
        // "Reclaimed" is read as the memory gone, not only the buffer
        // unusable: the library's buffer lost and less than its 4 GiB held
        // after the reset. A buffer lost whose memory is still held is
        // neither kept nor reclaimed: undecided.
        judge: |o: &Outcome| {
            let library_gone = o
                .measure(HELD_AFTER_RESET)
                .map(|held| held + RESET_TOLERANCE < LIBRARY_BYTES);
            match (o.flag(RESET), o.flag(SURVIVED), library_gone) {
                (Some(true), Some(true), _) => ClaimVerdict::Confirmed,
                (Some(false), Some(_), _) => ClaimVerdict::Refuted,
                (Some(true), Some(false), Some(true)) => ClaimVerdict::Refuted,
                _ => ClaimVerdict::Undecided,
            }
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-reset-completely-resets",
        source: Source::SEED_000,
        quote: "`cudaDeviceReset()` should be used cautiously; it completely resets the entire CUDA context \
                on the device.",
        // The articles' program: a cudaMalloc buffer and a raised limit in the
        // primary context, a library's buffer in a context of its own.
        judged_by: "broken-cpp",
        control: Control::Parts(&[
            Part {
                part: "the reset clears the primary context completely",
                control: Control::Impossible(
                    "cudaDeviceReset destroys the primary context with everything in it: no \
                     program keeps a part of it across the reset. What outlives the reset is \
                     outside the context: a block of the stream-ordered pool, which belongs to no \
                     context (NVIDIA's notes on cudaMallocAsync and cudaDeviceReset), stays held \
                     and usable (buffer-from-pool-cpp, the same program with its buffer from the \
                     pool; library-in-primary-buffer-from-pool-cpp). What shows that the reading \
                     can say \"not cleared\": it asks the runtime whether the old pointer is \
                     refused and the limit back, and the same reading of buffer-from-pool-cpp \
                     finds that pointer usable",
                ),
            },
            Part {
                part: "the reset clears every context on the device",
                // The same program, the library's buffer in the primary
                // context (one change): gone with the reset.
                control: Control::Run("library-in-primary-cpp"),
            },
        ]),
        // The first half: the process's own pointer refused after the reset
        // and the raised limit back at its default. The second: the library's
        // buffer, in the context it made, still usable and its memory held.
        judge: |o: &Outcome| {
            ClaimVerdict::of_two_parts(primary_cleared(o), o.flag(SURVIVED).map(|kept| !kept))
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-reset-releases-resources",
        source: Source::SEED_000,
        quote: "cudaDeviceReset(); // This resets the context, releasing resources.",
        judged_by: "broken-cpp",
        // Released: the process's own 4 GiB buffer, taken with cudaMalloc as
        // the articles do, is back after the reset. The control takes it from
        // the stream-ordered pool, whose memory the reset does not release.
        control: Control::Run("buffer-from-pool-cpp"),
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(RESET)),
        ..Claim::EITHER
    },
    Claim {
        id: "002-free-null-frees-nothing",
        source: Source::SEED_002,
        quote: "cudaFree(nullptr); // This doesn't actually free anything.",
        judged_by: "broken-cpp",
        control: Control::Impossible(
            "cudaFree(nullptr) has no allocation to free; a run in which it frees memory cannot be written. What shows that the reading sees a release: cudaDeviceReset, read the same way in this run, released the 4 GiB buffer.",
        ),
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.flag(FREE_NULL)),
        ..Claim::EITHER
    },
    Claim {
        id: "003-reset-ignores-fragmentation-and-library-memory",
        source: Source::SEED_003,
        quote: "It doesn't address fragmentation or memory held by libraries or dynamically allocated memory not explicitly tracked by the CUDA API.",
        // "It": clearing with cudaFree(0) or cudaDeviceReset(), the sentence
        // before. Decided where both arms can be read at once: the GPU
        // filled with 2 MiB blocks, the runtime's and a library's in turn,
        // the library's in a context of its own; then the reset.
        judged_by: "fragmented-reset-cpp",
        control: Control::Parts(&[
            Part {
                part: "memory held by libraries: the library's blocks, in a context it created, are \
                       still held after the reset",
                // The same filling, the library's blocks in the primary
                // context (one change): gone with the reset.
                control: Control::Run("fragmented-reset-library-in-primary-cpp"),
            },
            Part {
                part: "fragmentation: what the reset released, in 2 MiB pieces between the \
                       library's blocks, is not served as one block",
                control: Control::Impossible(
                    "cudaMalloc serves free memory wherever it lies (fragmentation's \
                     hard-form-cpp: 90% of 42 GB free only in 2 MiB holes is served as one \
                     block), so no run can leave memory the reset released unserved for want of \
                     a contiguous block. What shows that the request could fail: it asks for all \
                     the free memory but 512 MiB, every byte of it released in 2 MiB pieces \
                     between blocks that survive the reset",
                ),
            },
        ]),
        reach: Reach::AtBestPartly(
            "the third arm, memory allocated dynamically and not tracked by the CUDA API, is not \
             measured: memory that kernels allocate (the device heap) lives in the primary context, \
             whose raised heap limit the reset puts back (broken-cpp), and host memory is not the \
             CUDA API's to reset",
        ),
        // Libraries: their blocks still held after the reset (the part
        // holds); fragmentation: one block of nearly all the free memory is
        // refused after it (the part holds) or served (it does not).
        judge: |o: &Outcome| {
            ClaimVerdict::of_two_parts(
                o.flag(THE_LIBRARY_S_BLOCKS_ARE_STILL_HELD_AFTER_THE_RESET),
                o.flag(ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THE_RESET)
                    .map(|served| !served),
            )
        },
    },
    Claim {
        id: "000-reuse-context-after-reset",
        source: Source::SEED_000,
        quote: "runModel(context2); // Or reuse context1 if appropriate after reset",
        // Context1 is the context the first call worked in; the line above
        // says the reset releases its resources, so reusing it is read as
        // the next call made in it, not as its old buffers used again. The
        // first call here works in two: the primary context (the process's
        // own buffer) and a context the library created. After the reset,
        // each takes a new call (a buffer allocated, written and freed):
        // both, confirmed; one, partly; neither, refuted.
        judged_by: "broken-cpp",
        control: Control::Impossible(
            "after a first call that completed, no program that resets can leave either context \
             unable to take the next call: cudaDeviceReset leaves a context the program created as it was, and resets the \
             primary context, which the runtime initialises again at its next call, empty \
             (library-in-primary-cpp, whose library allocates in the primary context, reads the \
             same); a context destroyed with cuCtxDestroy is gone, and the next call needs \
             another. Not run: a handle to the primary context kept from before the reset and \
             called through after it. What shows that the reading can see a \
             call refused: in the same run, after the same reset, a write to the process's \
             buffer from before it is refused (the pointer from before the reset)",
        ),
        judge: |o: &Outcome| {
            ClaimVerdict::of_two_parts(
                o.flag(THE_PRIMARY_CONTEXT_TAKES_A_NEW_CALL_AFTER_THE_RESET),
                o.flag(THE_LIBRARY_S_CONTEXT_TAKES_A_NEW_CALL_AFTER_THE_RESET),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-release-no-contiguous-guarantee",
        source: Source::SEED_003,
        quote: "Furthermore, while such functions release memory, they don't guarantee a contiguous block of \
                sufficient size will become available.",
        judged_by: "fragmented-reset-cpp",
        control: Control::Impossible(
            "cudaMalloc serves free memory wherever it lies (fragmentation's hard-form-cpp: 90% of \
             42 GB free only in 2 MiB holes is served as one block), so after a release no request up \
             to the free memory can be refused for want of a contiguous block; a run that reads \
             otherwise would need another allocator, another claim. What shows that the request \
             could fail: it asks for all the free memory but 512 MiB, every byte of it released by \
             the reset in 2 MiB pieces between blocks of the library's context, which survive it. \
             \"Such functions\" are the two the sentence before names, cudaFree(0) and \
             cudaDeviceReset(); a framework's cache, which the article's title speaks of, is \
             another allocator: there emptying the cache does leave no block that fits \
             (kept-loss-graphs' kept-volumes-py, 003-bs1-oom-after-cache-clear-from-fragmentation).",
        ),
        // "Such functions": cudaFree(0) and cudaDeviceReset. Where they could
        // fail to give a contiguous block: the GPU filled with 2 MiB blocks,
        // the runtime's and a library context's in turn, so that what the
        // reset releases lies between the library's blocks; then one
        // request of all the free memory but a margin.
        judge: |o: &Outcome| {
            ClaimVerdict::refuted_if(
                o.flag(ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THE_RESET),
            )
        },
        ..Claim::EITHER
    },
];
