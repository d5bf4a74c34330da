//! The claims of the seed articles that no scenario decides, each with the
//! reason. With the claims the scenarios declare, this is the whole ledger
//! (`docs/claims.json`, generated); a suite trial checks every quote against
//! the seed files.

use casebook_model::ledger::{Change, Standing, Undecided, Why::*};

const S000: &str = "000_1633914ffce0e075.txt";
const S001: &str = "001_eb72388bf55c7443.txt";
const S002: &str = "002_245404227877bbf6.txt";
const S003: &str = "003_a513a38b5daed103.txt";

pub const UNDECIDED: &[Undecided] = &[
    Undecided {
        id: "000-check-every-call",
        seed: S000,
        quote: "Pay close attention to error checking after every CUDA API call.",
        why: Untestable(
            "advice, not a statement of what CUDA does (late-error shows what checking after a launch buys)",
        ),
    },
    Undecided {
        id: "002-driver-reset-last-resort",
        seed: S002,
        quote: "As a last resort, a complete CUDA driver reset might be necessary to purge lingering resources.",
        why: Untestable("resetting the driver of a shared GPU machine is not allowed here"),
    },
    Undecided {
        id: "002-employ-profiling-tools",
        seed: S002,
        quote: "Employ CUDA profiling tools (such as NVIDIA Nsight Compute) to identify memory leaks or \
                inefficient memory usage.",
        why: Untestable(
            "advice, not a statement of what CUDA does: what such tools show of a leak is the next \
             sentence's claim (002-nsight-compute-finds-leaks), judged on Nsight Compute's report of a \
             program that leaks",
        ),
    },
    Undecided {
        id: "002-update-drivers",
        seed: S002,
        quote: "Updating to the latest drivers from the NVIDIA website is a frequently overlooked but crucial step in resolution.",
        why: Untestable(
            "the GPU machines have one driver (580); no other can be installed to compare",
        ),
    },
    Undecided {
        id: "003-old-drivers",
        seed: S003,
        quote: "Older or improperly configured drivers might not effectively manage memory resources, particularly when \
                dealing with advanced features or intricate kernel launches.",
        why: Untestable("one driver version is available here"),
    },
    Undecided {
        id: "002-outdated-driver-memory-problems",
        seed: S002,
        quote: "An outdated or corrupted GPU driver can lead to memory management problems.",
        why: Untestable(
            "the GPU machines have one driver (580); no other can be installed to compare",
        ),
    },
    Undecided {
        id: "000-root-cause-almost-always-resource-management",
        seed: S000,
        quote: "However, the root cause almost always traces back to neglecting CUDA's deterministic \
                resource management requirements.",
        why: Untestable(
            "how often, among the second-call errors users meet, the cause is a resource neglected: a count over users' programs, which no run here makes. The casebook has both kinds: missing-free, open-streams and context-leak neglect a resource; sticky-error's second call fails after a device-side fault with nothing neglected",
        ),
    },
    Undecided {
        id: "001-second-run-failure-suggests-allocation-problem",
        seed: S001,
        quote: "Failure on the second run, after a successful first run, strongly suggests a resource \
                allocation problem that is not readily apparent during the initial execution.",
        why: Untestable(
            "how strongly one observation points to one cause across the failures users meet, a rule of diagnosis no run can weigh. The casebook's second runs fail for both: an allocation the first run kept (second-training-run, library-handle-no-memory) and a context a device-side assert left unusable (sticky-error)",
        ),
    },
    Undecided {
        id: "002-driver-reset-interrupts-all-applications",
        seed: S002,
        quote: "However, this is not an ideal solution since it interrupts all CUDA applications.",
        why: Untestable("resetting the driver of a shared GPU machine is not allowed here"),
    },
    Undecided {
        id: "003-error-frequently-encountered",
        seed: S003,
        quote: "This code demonstrates an error frequently encountered.",
        why: Untestable(
            "how often users meet the error is a count of users, not of what CUDA does; what the code itself does (device-heap allocations in a kernel, their exhaustion and fragmentation) is decided by device-heap-exhaustion's claims of the same example",
        ),
    },
];

/// (untestable, not yet tested) among [`UNDECIDED`].
pub fn counts() -> (usize, usize) {
    use casebook_model::ledger::Why;
    let untestable = UNDECIDED
        .iter()
        .filter(|u| matches!(u.why, Why::Untestable(_)))
        .count();
    (untestable, UNDECIDED.len() - untestable)
}

/// Every change of a claim's standing since the ledger had verdicts, oldest
/// first, with the reason: the page "How the verdicts changed" is made from
/// it, and a suite trial holds each claim's last change to where the ledger
/// stands now (or, where the change waits for a GPU run, to where it stood).
/// A change of the experiment that moved no verdict is not listed.
pub const HISTORY: &[Change] = &[
    Change {
        id: "000-reset-gives-a-clean-context",
        commit: "feec67b",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "it was judged on sticky-error's as-written-cpp, where a kernel fault leaves the context \
              unusable; the article's calls fault nowhere, so it was re-pointed (47c2606) to device-reset, \
              where the reset puts back what the first call changed: its allocation and a raised limit",
    },
    Change {
        id: "000-unsynced-streams-random-errors",
        commit: "feec67b",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "broken-cpp reads a stale result every time, which is not \"seemingly random\"; re-pointed \
              (47c2606) to repeated-cpp, the race repeated at six sizes, where wrong results come and go",
    },
    Change {
        id: "000-errors-on-subsequent-calls",
        commit: "feec67b",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "of the sentence's three causes only a kernel launch gives a later error; memory left \
              allocated gives none until memory runs out, and a stream left open only a delay: at best \
              partly",
    },
    Change {
        id: "000-premature-host-access-errors",
        commit: "feec67b",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "\"errors\" after \"unexpected behavior\" are read to include wrong results, which the host \
              reads every time it does not wait, whether or not a CUDA call reports one",
    },
    Change {
        id: "002-exception-skips-free",
        commit: "feec67b",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "in the article's own code the only throw follows a failed cudaMalloc, so nothing was \
              allocated to leak; the leak measured is a throw after a successful allocation: at best partly",
    },
    Change {
        id: "002-lingering-context-holds-memory",
        commit: "feec67b",
        from: Standing::Partly,
        to: Standing::Refuted,
        why: "it was judged on context-leak, where a live process's contexts hold memory; the \
              sentence's condition is no process alive, so it was re-pointed (47c2606) to orphaned-process's \
              exit-and-kill, where the memory is back once the process has exited or been killed",
    },
    Change {
        id: "003-as-written-kernel-fails",
        commit: "feec67b",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "as written, size * size wraps and new asks for nothing (003-size-knob-sets-memory-need); \
              the \"potential source of error\" is judged (47c2606) on the pattern at a size that does not \
              wrap, with the default heap, where new returns null",
    },
    Change {
        id: "003-in-kernel-new-fragments-into-oom",
        commit: "feec67b",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "it was judged on device-heap-exhaustion's fixed, which makes no holes; re-pointed (47c2606) \
              to heap-fragmentation-cpp, where freed blocks of the device heap do not serve a larger \
              request; at best partly, since the article's own kernel makes no small blocks",
    },
    Change {
        id: "004-free-async-not-instantly-available",
        commit: "feec67b",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "it was judged on async-free-race, where the stream that freed a block gets it back at once; \
              re-pointed (47c2606) to pool-retention, where the device and other processes get it only at \
              a synchronise, or never while the release threshold is raised: at best partly",
    },
    Change {
        id: "004-preallocate-or-pool",
        commit: "feec67b",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "it was judged on malloc-in-loop, which measures speed, not fragmentation; re-pointed \
              (47c2606) to fragmentation, where a pool that maps pre-allocated pages serves the request and \
              one that carves a region by offset does not",
    },
    Change {
        id: "003-fragmentation-reduces-contiguous",
        commit: "feec67b",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "it was judged on hard-form-cpp, cudaMalloc's own calls, which serve scattered free \
              memory as one block; the article speaks of the cache after the cache was cleared, so it was \
              re-pointed (47c2606) to fragmentation's broken, a pool that carves one region and refuses \
              the request that cudaMalloc serves",
    },
    Change {
        id: "001-catching-does-not-release",
        commit: "47c2606",
        from: Standing::Confirmed,
        to: Standing::NotYetTested,
        why: "it was judged on unhandled-oom-path's hand-written error path, which keeps its \
              allocations on purpose: another claim. The article's code catches a framework's error",
    },
    Change {
        id: "001-empty-cache-mitigates",
        commit: "47c2606",
        from: Standing::Partly,
        to: Standing::NotYetTested,
        why: "it was judged on an imitation of a caching allocator across processes; the article's \
              issue is the second run in one PyTorch process",
    },
    Change {
        id: "001-multi-process-needs-sync",
        commit: "47c2606",
        from: Standing::Refuted,
        to: Standing::NotYetTested,
        why: "it was judged on multi-process-contention's per-process budget, another problem than \
              memory released before another process allocates it",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "47c2606",
        from: Standing::Refuted,
        to: Standing::NotYetTested,
        why: "the article's own 4 x 4 MiB on a GPU with 80 GB free cannot show fragmentation whatever \
              the allocator does",
    },
    Change {
        id: "001-catching-does-not-release",
        commit: "46989e0",
        from: Standing::NotYetTested,
        to: Standing::Partly,
        why: "judged on PyTorch (second-training-run, broken-py): after the caught out-of-memory error \
              as much memory is allocated as before; at best partly, since the article says it of \
              TensorFlow",
    },
    Change {
        id: "001-empty-cache-mitigates",
        commit: "46989e0",
        from: Standing::NotYetTested,
        to: Standing::Refuted,
        why: "judged on PyTorch: with empty_cache() after the first run the second still fails, because \
              the first run's memory is referenced, not cached",
    },
    Change {
        id: "001-second-run-cudnn-errors",
        commit: "46989e0",
        from: Standing::Untestable,
        to: Standing::Partly,
        why: "PyTorch reached the GPU machines: the second run fails for memory, and its error does not \
              mention cuDNN",
    },
    Change {
        id: "003-fragmentation-reduces-contiguous",
        commit: "ba1c2e3",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "decided by the stronger evidence (e6729c6): PyTorch's own caching allocator \
              (caching-allocator-py) refuses 1536 MiB with 32.9 GB reserved and unused, and serves it with \
              expandable segments, one setting changed; the host-side pool it was judged on refused without \
              a CUDA call",
    },
    Change {
        id: "003-insufficient-memory-line-errors",
        commit: "ba1c2e3",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "it was read as the cudaFree under the comment, which does not err; the author means the \
              cudaMalloc above it, which does (e6729c6): both lines are read, at best partly",
    },
    Change {
        id: "000-reuse-context-after-reset",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on device-reset's broken-cpp, which already writes to the first call's buffer \
              after cudaDeviceReset: reusing context1 is using what was made in it",
    },
    Change {
        id: "003-release-no-contiguous-guarantee",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on device-reset's broken-cpp, which now asks, after the reset, for one block of \
              all the free memory but 512 MiB",
    },
    Change {
        id: "002-library-leak-not-apparent",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on library-handle-leak's broken, whose calls allocate nothing in the program's \
              own code while device memory falls by a cuBLAS handle's 64 MiB with each; fixed, one \
              handle kept, is its control",
    },
    Change {
        id: "000-unmanaged-streams-resource-conflicts",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on open-streams' unmanaged-cpp: calls that each leave a stream working on the \
              input buffer they share, the model reading it 20 ms after its call returned; \
              managed-cpp, each call waiting for and destroying its stream, is its control",
    },
    Change {
        id: "004-example1-large-allocation-might-fail",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on fragmentation's nearly-full-cpp: the article's sequence on a GPU with 64 MiB \
              free, where its 32 MiB request could fail; on a whole GPU it cannot",
    },
    Change {
        id: "004-varying-size-churn-fragments",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on fragmentation's churn-cpp: 100,000 cudaMalloc and cudaFree of sizes from 4 KiB \
              to 64 MiB, then one block of 90% of the free memory",
    },
    Change {
        id: "004-free-does-not-defragment",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on fragmentation's random-order-free-cpp: blocks of 16 to 256 MiB freed in a \
              random order, then one block of 90% of what they held, from cudaMalloc and from the \
              stream-ordered pool",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on pool-retention's concurrent-streams-cpp: eight streams fill 90% of the GPU \
              from the pool with blocks of 1 to 64 MiB, free each on another stream, then ask for one \
              block of 90% of what they held, once the frees are done",
    },
    Change {
        id: "004-streams-large-block-hard-to-acquire",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on the same run, right after the frees, against the free memory cudaMemGetInfo \
              reports then",
    },
    Change {
        id: "002-pinned-memory-faster-transfers",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on host-memory-leak's pinned-transfers: 1 GiB copies to the device from pageable \
              and from pinned memory in five interleaved pairs, beside pageable-transfers, both \
              pageable; it now quotes the sentence's first part only",
    },
    Change {
        id: "002-pinned-leak-exhausts-memory",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on host-memory-leak's pinned-leak: 8 GiB pinned and kept, the host's available \
              memory read before and after, beside pinned-given-back; it now quotes the sentence's \
              second part only",
    },
    Change {
        id: "001-context-inconsistency-cudnn-errors",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on sticky-error's cnn-after-fault-py: a convolution runs, a lookup's kernel asserts, \
              the convolution runs again in the same process; cnn-no-fault-py, the lookup in range, is its \
              control",
    },
    Change {
        id: "001-first-run-creates-context",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on second-training-run's first-run-py: nvidia-smi asked, from outside the process, \
              before and after one training step of the first run; first-run-on-cpu-py, the same on the \
              CPU, is its control",
    },
    Change {
        id: "001-multi-process-needs-sync",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on multi-process-contention's free-then-tell: the holder frees with cuMemFree and then \
              tells the taker by a file, no CUDA event or stream; tell-then-free, the two swapped, is its \
              control",
    },
    Change {
        id: "001-shared-resource-contention-intermittent",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on multi-process-contention's rounds: two processes, twenty rounds, each sized from \
              the free memory it saw and starting after a random delay; rounds-alone, one process, is \
              its control",
    },
    Change {
        id: "000-debugger-pinpoints-errors",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on late-error's under-tools: the broken program, whose fault a later copy reports, \
              run under compute-sanitizer's memcheck and under cuda-gdb; no-tool, the program's own \
              errors alone, is its control. At best partly: the sentence's second half is advice",
    },
    Change {
        id: "002-nsight-compute-finds-leaks",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on missing-free's under-ncu: the broken model call, once, at the article's size, \
              run under Nsight Compute; under-leak-check, the same under compute-sanitizer's leak \
              check, is its control",
    },
    Change {
        id: "003-example2-later-code-may-fail-host-memory",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "judged on host-memory-leak's limited-host-cpp: the article's example 2 called again and \
              again with the process's data limited (RLIMIT_DATA) to what it uses and 256 MiB more, a \
              host with little to spare, where a memory-limited cgroup was planned; \
              limited-host-fixed-cpp, each call deleting its h_data, is its control",
    },
    Change {
        id: "003-bs1-footprint-exceeds-memory",
        commit: "e0cfe7a",
        from: Standing::NotYetTested,
        to: Standing::Untestable,
        why: "the sentence leaves the model's size open, and its size alone decides whether the \
              components exceed the GPU: a run would confirm or refute by the model it chose",
    },
    Change {
        id: "001-context-cleanup-beyond-empty-cache",
        commit: "e0cfe7a",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "it was confirmed on a device-side assert, which is not the article's case: there the \
              first run's memory is still held, and dropping the references gives it back in the same \
              context (second-training-run, fixed-py), no context cleanup needed. At best partly: \
              cleanup is needed only where a fault left the context unusable",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "fd13bb9",
        from: Standing::Confirmed,
        to: Standing::Refuted,
        why: "the run of e0cfe7a confirmed it only because the pool's own block, freed on stream 0 \
              with no synchronise after it, was still held when cudaMalloc asked for as much; with \
              the synchronise, the pool and cudaMalloc both serve the block once the frees are done \
              (the trial run alone on an H100 after the full run, its report committed as \
              docs/evidence/since-latest/01-fd13bb9.json until the next full run, 5166684, \
              replaced it: refuted)",
    },
    Change {
        id: "001-empty-cache-mitigates",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "judged where the remedy can act (the independent audit's finding 4): the first run's memory only cached, not referenced, and the second run in a new thread, whose cuDNN and cuBLAS handles need memory outside PyTorch's cache. Without empty_cache() it fails with `cuDNN error: CUDNN_STATUS_INTERNAL_ERROR` (unused-cache-kept-py); with it, it runs (unused-cache-emptied-py). empty-cache-py, where the first run's memory is still referenced, shows where it cannot",
    },
    Change {
        id: "001-incomplete-free-fragments",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "judged on blocks below the driver's 2 MiB page (the audit's finding 5): 64 KiB blocks fill 4 GiB, every other one is freed, and none of the 2.08 GB freed shows as free memory, so one block of 90% of it is refused (sub-page-holes-cpp); with 2 MiB blocks every freed byte shows as free and the block is served (page-holes-cpp). hard-form-cpp had freed whole pages only",
    },
    Change {
        id: "004-free-does-not-defragment",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "random-order-free-cpp freed every block, where nothing can stay fragmented; judged now on sub-page-holes-cpp, where freeing every other 64 KiB block gives back none of the 2.08 GB as free memory, against page-holes-cpp (2 MiB blocks: all of it)",
    },
    Change {
        id: "001-multi-process-needs-sync",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "\"might be required\" judged where a synchronise can matter (the audit's finding 8): the holder frees with cuMemFreeAsync and tells the taker with no synchronise, and the taker's allocation fails (free-async-then-tell); with cuStreamSynchronize before the word it succeeds (free-async-synced-then-tell). With cuMemFree, as the article's example frees, no synchronise is needed (free-then-tell)",
    },
    Change {
        id: "001-occupied-memory-causes-cudnn-errors",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "decided where the effect shows (the audit's finding 1): with 65 to 128 MiB left beside the occupied memory, cuDNN's first convolution fails with `CUDNN_STATUS_INTERNAL_ERROR` (cudnn-just-above-the-output-py); with 16 MiB to 1 GiB left only out-of-memory errors come (cudnn-pressure-py, now its control). The window is narrow",
    },
    Change {
        id: "002-context-survives-termination",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the audit's finding 7: a holder that forks a child (no CUDA call) before it ends leaves its 4 GiB taken after it exits or is killed, until the child ends (forked-child; nvidia-smi --query-compute-apps does not list the child); without the child the memory is back at once (exit-and-kill). The memory stays only while a process holds the context: partly",
    },
    Change {
        id: "002-lingering-context-holds-memory",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "as 002-context-survives-termination: in forked-child the dead holder's context keeps its 4 GiB while a child that makes no CUDA call lives (nvidia-smi --query-compute-apps does not list the child); once the child ends it is back",
    },
    Change {
        id: "002-device-allocations-persist-until-freed",
        commit: "c896bd6",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the audit's finding 7: the sentence holds within the process (the holder's 4 GiB stay taken while it lives, unfreed, recorded by exit-and-kill now) and not beyond it (back at its exit or kill): partly",
    },
    Change {
        id: "004-fragmentation-hinders-large-chunks",
        commit: "c896bd6",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "a caching allocator's sentence decided on PyTorch's allocator (the issue's rule, the audit's finding 10), as 003-fragmentation-reduces-contiguous is: caching-allocator-py refuses 1536 MiB with free pieces four times as large; expandable-segments-py, one setting changed, serves it. The pool that carves one region (broken) stays as the illustration",
    },
    Change {
        id: "004-mismatched-fragmented-request-fails",
        commit: "c896bd6",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "as 004-fragmentation-hinders-large-chunks: the sentence is about cached blocks, decided on PyTorch's caching allocator (caching-allocator-py), with expandable-segments-py as its control",
    },
    Change {
        id: "001-occupied-memory-causes-cudnn-errors",
        commit: "8a57fe4",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the third audit (finding 3): cuDNN's error comes only in a window of a few MiB left (68 and 72 of 12 headrooms) and only where cuDNN must create its handle (a new process or thread); in the article's same-thread second run the error is PyTorch's out of memory (broken-py). The judge gives partly where the headrooms show both cuDNN's error and out of memory",
    },
    Change {
        id: "002-oom-without-processes-from-driver-context",
        commit: "8a57fe4",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the third audit: decided on forked-child, like the two sentences beside it: a dead holder's 4 GiB stay taken while a child it forked (no CUDA call) lives; nvidia-smi --query-compute-apps does not list the child, but does list a process besides the watch, so the process that holds the memory is not the one it shows; without the child the memory is back at once (exit-and-kill): partly",
    },
    Change {
        id: "002-residual-allocations-from-previous-sessions",
        commit: "8a57fe4",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "as 002-oom-without-processes-from-driver-context: a previous session's allocation stays only while a child it forked holds its context (forked-child), and is back once every holder has ended (exit-and-kill): partly",
    },
    Change {
        id: "002-implicit-cleanup-unreliable",
        commit: "8a57fe4",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "the third audit (finding 2): decided beside the forked child, where implicit cleanup fails: the holder that frees its 4 GiB and destroys its context before it exits gives them back while its forked child lives (forked-child-torn-down); the same holder leaving it to the driver does not (forked-child, the control). Without a forked child implicit cleanup works (exit-and-kill), which the sentence's \"solely\" allows",
    },
    Change {
        id: "003-fragmentation-gaps",
        commit: "8a57fe4",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the third audit (finding 4): its cap said cudaMalloc's gaps turn nothing away, which is false below the driver's 2 MiB page: 64 KiB blocks, every other one freed, 2.08 GB freed and none of it shown free, the 90% request refused (sub-page-holes-cpp); 2 MiB blocks, all of it free and served (page-holes-cpp, the control)",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "8a57fe4",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "the third audit (finding 4): decided with survivors: eight streams take 64 KiB blocks in turn, and every block but stream 0's is freed, each on the next stream; once the frees are done, all 3.5 GiB freed stay reserved by the pool and not free, stream 0's survivors sharing its chunks (survivors-cpp). With every block freed the memory comes back and the 90% request is served (concurrent-streams-cpp, the control, which also differs in its block sizes and fill). 2 MiB blocks with the same survivors keep as much (page-survivors-cpp): the pool releases in units larger than 16 MiB, and whether the streams matter is not varied yet",
    },
    Change {
        id: "004-custom-pool-minimizes-fragmentation",
        commit: "8a57fe4",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the third audit (finding 6, raised by the second too): a pre-allocating pool that maps its pages into a fresh range per request serves the request (fixed); the pool that subdivides its chunks by offset, the sentence's own design, refuses it where cuMemAlloc serves it (broken, the control): partly",
    },
    Change {
        id: "004-fragmentation-hinders-large-chunks",
        commit: "8a57fe4",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the third audit (finding 5): \"this fragmentation\" is of the GPU's memory space, where cudaMalloc serves 38.0 GB out of scattered 2 MiB holes (hard-form-cpp); the sentence holds for PyTorch's cache (caching-allocator-py) and below the page, not for cudaMalloc at page size: capped at partly",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "7e98936",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fourth audit: whether the streams matter was not varied. The same 64 KiB blocks made and freed on one stream, every eighth surviving, keep the same 3.5 GiB out of use (survivors-cpp's one-stream arm, 3758096384 bytes both ways); with every block freed nothing stays (survivors-all-freed-cpp, the control, 0 bytes on eight streams and on one). What traps the memory is blocks that survive in the pool's chunks, not the streams: partly",
    },
    Change {
        id: "000-reset-gives-a-clean-context",
        commit: "6e7b2a8",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fifth audit: the article offers the reset between calls that fail on the second call, and after a first call that faulted (sticky-error's as-written-cpp, the article's second example) the reset returns cudaSuccess and the next cudaMalloc is refused with cudaErrorDevicesUnavailable; after an ordinary first call the reset leaves a clean context (this case's broken-cpp): capped at partly",
    },
    Change {
        id: "001-empty-cache-mitigates",
        commit: "6e7b2a8",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fifth audit: in the article's own setting, a second run in the first run's thread, the remedy decides nothing: with the first run's tensors referenced it releases nothing (empty-cache-py), and with them only cached the second run reuses the cache and completes without it (unused-cache-kept-same-thread-py); it helps only a second run that needs memory outside PyTorch's cache, cuDNN's handle in a new thread (unused-cache-emptied-py against unused-cache-kept-py): capped at partly",
    },
    Change {
        id: "002-implicit-cleanup-unreliable",
        commit: "6e7b2a8",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fifth audit: implicit cleanup fails only while a child the process forked holds its context, the condition its four sibling claims are capped on; without one the driver gives back every byte on exit and on kill (exit-and-kill), and no explicit cleanup helps a process that is killed (the kill arm): capped at partly",
    },
    Change {
        id: "003-fragmentation-reduces-contiguous",
        commit: "6e7b2a8",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fifth audit: \"this fragmentation\" is the gaps the CUDA runtime's blocks leave, and the run that decides it is PyTorch's cache (caching-allocator-py refuses 1536 MiB with four times as much cached and free); cudaMalloc serves memory it reports free wherever it lies (hard-form-cpp). The same cap as 004-fragmentation-hinders-large-chunks: partly",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "6e7b2a8",
        from: Standing::Partly,
        to: Standing::Refuted,
        why: "the fifth audit: partly credited the sentence with fragmentation it does not name. Its own form, every block freed, leaves nothing out of use on eight streams or on one (survivors-all-freed-cpp); with survivors, one stream keeps the same 3.5 GiB out of use as eight (survivors-cpp): the streams cause nothing",
    },
    Change {
        id: "004-example2-kernel-uses-shared-buffer",
        commit: "6e7b2a8",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the fifth audit: the sentence describes the kernel, which does stage its input in shared memory (fits-cpp runs it and its output is right); what fails is the example as printed, whose 4 MiB launch is refused, so it demonstrates nothing. Judged on the launch's result: partly",
    },
    Change {
        id: "nvidia-assert-process-must-be-relaunched",
        commit: "9665315",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the fifth audit: partly rested on the reset alone (broken-cpp's call after cudaDeviceReset is refused) and never started the process again. Now decided on the Rust variant, which does both: after the assert a call in a new context, once the old one is destroyed, is refused, and the same program started again as a process of its own makes its context and computes (broken); fixed, which ends the same way without the assert, goes on in the new context (the control, refuted)",
    },
    Change {
        id: "000-reuse-context-after-reset",
        commit: "9d57009",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the fifth audit: \"context1\" names a context, and one the program made itself (cuCtxCreate) survives cudaDeviceReset: after the reset the library's buffer, written in its own context, is usable (broken-cpp), while the first call's buffer in the primary context is not (cudaErrorInvalidValue). A context of one's own can be reused, the primary context's work cannot: partly; library-in-primary-cpp, whose library allocates in the primary context, is the control of that part (refuted)",
    },
    Change {
        id: "004-nvidia-smi-free-not-allocatable",
        commit: "5f26396",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the fifth and sixth audits: refuted read the sentence as fragmentation inside one process. Read as a user reads nvidia-smi, its free memory for the GPU with nothing on it, asked for in one block by a new process, less two pages, is refused, and served a gibibyte less (new-process-margin, the control): the new process's context takes part of it. The article's reason, fragmentation, still does not stand in cudaMalloc's way (hard-form-cpp): capped at partly",
    },
    Change {
        id: "000-no-reset-remnants-cause-errors",
        commit: "d540fec",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the second and seventh audits: the sentence says that without a reset between calls remnants can lead to errors, which the run shows (after a kernel's fault the second call fails); it was marked down because a reset afterwards does not cure that remnant, which the sentence never claims. Since 4649c8d it is decided on the article's own remnant, a first call's leak, in missing-free: without a reset the second call is refused, and with the article's cudaDeviceReset between the calls it is served (the control), as the eighth audit proposed",
    },
    Change {
        id: "003-size-knob-sets-memory-need",
        commit: "d540fec",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the seventh audit: the knob sizes the two buffers as well as the kernel's new, and only the new's int product wraps (to 0 floats at the article's value). The driver holds the buffers at size floats each (cuMemGetAddressRange, 268,435,456 bytes): the knob sets that part of the memory needs, not the kernel's",
    },
    Change {
        id: "000-stream-destroy-releases",
        commit: "0c4253b",
        from: Standing::NotYetTested,
        to: Standing::Confirmed,
        why: "a first reading found what a stream left open holds: 100,000 calls that each make a blocking stream and run a kernel on it take 573,424 bytes of device memory a call when they leave it open (leak-streams-cpp, the control); the same calls destroying their stream leave free memory where it was (destroy-streams-cpp)",
    },
    Change {
        id: "000-allocation-exceeding-available-errors",
        commit: "cd11d30",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the seventh audit: it was decided by oversized-allocation, a ballast and one request larger than what was left, not the article's condition, and on one of the sentence's two halves. It is now decided on the article's Example 1 called again and again with its leak (missing-free broken-cpp): the call that asks for more than the leak left free is refused with cudaErrorMemoryAllocation (the control, fixed-cpp, frees each buffer and is never refused), and the next call, allocating its buffer again beside the leaked one, is served (the control, second-call-large-cpp, with buffers of 3/5 of the free memory, is refused)",
    },
    Change {
        id: "001-tf-failure-persists-on-next-run",
        commit: "6e36cb3",
        from: Standing::Untestable,
        to: Standing::Partly,
        why: "the seventh audit: its neighbour, the caught error's, was judged in PyTorch, and this one can be too. The article's example 2 in PyTorch (caught-py): the program keeps the first run's model, the run after it is refused, the error is caught and printed, and the next run is refused too. The control leaves the first run's model to the scope of the call the error leaves (what TensorFlow's session or a context manager does): the next run trains. At best partly, as the article says it of TensorFlow",
    },
    Change {
        id: "004-freed-not-immediately-available",
        commit: "6e36cb3",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the seventh audit: the sentence is about the example, whose run was not read for it. The article's example 3 now reads free memory once its four cudaFreeAsync are issued (as-written-cpp): 35.6 MB below free memory before it, where the four buffers are 16 MiB; the control synchronises the device before the same reading and finds them back. The threshold runs that decided it before read whether the pool keeps memory past a synchronise, which the sentence does not say",
    },
    Change {
        id: "pytorch-load-moves-tensors-to-the-device-they-were-saved-from",
        commit: "6e36cb3",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the seventh audit: the cap came from the half the run did not look at, not from a half that failed. The run now reads where torch.load's restore function is handed each storage (wrapped, its result unchanged): on the CPU, in every rank and variant; rank 1's tensors then land on cuda:0, where rank 0 saved them. The control, map_location onto the rank's own GPU, lands them on cuda:1",
    },
    Change {
        id: "003-host-leak-influences-cuda-allocation",
        commit: "16988ca",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the seventh audit: the half about CUDA's allocations was judged by a reading that could not move (the device's free memory beside a host leak). It is now asked of CUDA where the leak presses: the article's call repeated with the process's address space limited (RLIMIT_AS) to 256 MiB above what it maps once CUDA has started, until a call fails (new float[size], after 63 calls); then, under the same limit, cudaMallocHost of 64 MiB (host memory CUDA allocates) is refused; the judge reads that request (a 64 MiB cudaMalloc, refused too, is recorded beside it: under this limit its refusal is the address space the driver maps for it). The control deletes h_data in each call: 128 calls, and both are served. Under a limit on the process's data alone (RLIMIT_DATA, limited-host-cpp) both are served: pinned memory passes that limit. The limit stands for a host with little memory to spare; audit 10 would rather see physical memory pressure (a cgroup's memory.max)",
    },
    Change {
        id: "004-custom-pool-minimizes-fragmentation",
        commit: "5ced4e5",
        from: Standing::Partly,
        to: Standing::Refuted,
        why: "audits 7 and 10: the verdict was decided on a pool the sentence does not describe (one that maps pre-allocated pages into a fresh virtual range per block). It is now decided on the pool it describes, one region taken at the start and subdivided into blocks (broken): on the workload of kept blocks and freed temporaries it refuses 256 MiB, where the same workload without a pool, on a device left with the same 1 GiB free, is served by cuMemAlloc. The page-mapping pool (fixed), which serves it, is the control",
    },
    Change {
        id: "000-context-holds-memory-and-streams",
        commit: "a8f0a48",
        from: Standing::NotYetTested,
        to: Standing::Confirmed,
        why: "audit 11 held it testable without touching a stale handle: a 4 GiB buffer and a stream made in a created context, the driver asked whose they are, the context destroyed with nothing freed (owns-created). cuPointerGetAttribute and cuStreamGetCtx name the created context, and its destroy gives back 4,838,129,664 bytes of the process's memory, the buffer with it. The control makes both in the primary context (owns-primary): neither belongs to the created context, and its destroy gives back 543,162,368 bytes, the context's own",
    },
    Change {
        id: "003-context-setup-needs-memory",
        commit: "a6497d0",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "audits 2 and 11: \"This\" is the article's Example 3, whose failure is its own 4 GiB cudaMalloc, not the context (oversized-allocation's as-written-cpp: served on the whole GPU, refused beside a ballast that leaves 2 GiB, the context made in both). What a context takes is measured (518 MiB each, 101 contexts), so the sentence's fact holds and the example does not show it: capped at partly",
    },
    Change {
        id: "003-bs1-footprint-exceeds-memory",
        commit: "b8bbd5e",
        from: Standing::Untestable,
        to: Standing::Run,
        why: "the sentence's setting is the article's own, large-scale image processing: one image at \
              batch size 1 through a segmentation network (oversized-allocation's large-image-py, an \
              8192-pixel tile under 1 GiB), with the same image a tile a step as the control \
              (tiled-image-py); the model's size is the domain's, not chosen against the GPU",
    },
    Change {
        id: "004-library-temporaries-fragment",
        commit: "5727694",
        from: Standing::NotYetTested,
        to: Standing::Run,
        why: "the pattern that leaves a library's hole was found in PyTorch's cache: cuBLAS's workspace, \
              taken at the first product from the pool the user's tensors use, is carved from a block the \
              user just freed (library-handle-no-memory's workspace-splits-py); the control runs the first \
              product before the data fills the GPU (workspace-first-py)",
    },
    Change {
        id: "004-varying-size-churn-fragments",
        commit: "de02712",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "the sentence compares varying sizes with none, and the judge asked instead for 128 MiB \
              trapped, a threshold the article never sets (audit 11: unfair). Each churn is now followed \
              by the same churn of one size (256 KiB), read the same way: sizes from 4 KiB to 64 MiB trap \
              18,406,912 bytes besides their page padding, one size 1,572,864, about twelve times as \
              much; the control, one size in both churns (churn-one-size-cpp), 3,670,016 against \
              2,097,152. 90% of what the live blocks leave is still served in every arm",
    },
    Change {
        id: "000-open-streams-interfere",
        commit: "c5d1630",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "it was judged on timing alone (audit 11), and the time a stream left with work adds is the \
              work's: the same stream destroyed with its work unfinished delays the next call as long. \
              What the article's calls leave open also holds memory: 100,000 calls that each leave \
              their stream open (leak-streams-cpp) take 573,424 bytes of device memory each, and an \
              allocation of half the memory free before them, served then, is refused after them; \
              the control destroys each call's stream (destroy-streams-cpp) and the same allocation \
              is served",
    },
    Change {
        id: "nvidia-lazy-loading-preload-remedy",
        commit: "f0c26ad",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "only the preload branch was read (audit 11). Both remedies are now read in one run: the \
              fix preloads the releasing kernel, then the broken program runs under \
              CUDA_MODULE_LOADING=EAGER in a worker; both release the waiter, but under EAGER the \
              releasing kernel's first launch, made while the waiter runs, returns at once: its code \
              was loaded with the module, against the clause \"without forcing each function to load \
              eagerly\" (which reads as the legacy CUDA_MODULE_DATA_LOADING's)",
    },
    Change {
        id: "nvidia-block-index-is-unsigned",
        commit: "6e36cb3",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the eighth audit: the sentence also says both types are trivial structures, which was not read. As nvcc 13.0 compiles them, uint3 is a trivial type and dim3 is not (it has constructors, with x, y and z defaulting to 1), though it is trivially copyable; the twelve components are unsigned",
    },
    Change {
        id: "nvidia-block-index-is-unsigned",
        commit: "e0b562b",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "\"partly\" rested on reading the Guide's \"trivial structures\" as C++'s std::is_trivial, \
              which the same Guide rules out for dim3 when it says an unspecified component is set to 1 \
              (audits 11 and 12). Read as a plain struct of three values copied as their bytes \
              (std::is_trivially_copyable), dim3 and uint3 both are, and every built-in component reads \
              unsigned",
    },
    Change {
        id: "004-custom-pool-minimizes-fragmentation",
        commit: "ea54bfa",
        from: Standing::Refuted,
        to: Standing::Confirmed,
        why: "the thirteenth audit (after the twelfth): on the pages' workload no pool could win, since cuMemAlloc serves any request there, and blocks were never reused. Now the pool the sentence describes runs where cudaMalloc itself fragments: 2 MiB chunks cut into blocks of one size, freed blocks reused (5,749 times), empty chunks given back before a request it does not serve. Four rounds of 64 KiB kept blocks and 256 KiB temporaries in a 4 GiB stretch, then 90% of what the kept blocks leave: refused without a pool, served beside it. The control cuts every size from the same chunks (one change): it runs out of chunks in the first round, refuted",
    },
    Change {
        id: "004-varying-size-churn-fragments",
        commit: "ea54bfa",
        from: Standing::Confirmed,
        to: Standing::Refuted,
        why: "the thirteenth audit: the one size it was compared with, 256 KiB, tiles the 2 MiB page, so what the varying sizes trapped mixed the variety with page fit. Read against the larger of two churns of one size, 256 KiB and 320 KiB (which does not tile the page): the article's sizes trap 18,406,912 bytes beside their page padding, the 320 KiB churn 12,451,840, 1.5 times, under the four times the sentence's \"significantly\" is read as",
    },
    Change {
        id: "000-errors-on-subsequent-calls",
        commit: "ea54bfa",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the thirteenth audit (unfair): the cap said a stream left open gives a delay, not an error, but open-streams' leak-streams-cpp shows an allocation of half the memory, served before 100,000 streams were left open, refused after; each of the three causes gives an error on a later call",
    },
    Change {
        id: "001-pytorch-second-run-likely-fails",
        commit: "220b99b",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the thirteenth audit: the size decided it. The article's program at a small CNN's size keeps 90% and more of its first run's memory allocated when the second starts, the reason the article expects a failure, and the second run completes: partly. Each part has its control: the second run fails where the two runs do not fit together (broken-py, a budget of 1 GiB), and the memory is not held once the references are dropped (fixed-py)",
    },
    Change {
        id: "001-tensorflow-session-cleanup",
        commit: "220b99b",
        from: Standing::Untestable,
        to: Standing::Partly,
        why: "the thirteenth audit: the next sentence, that without the cleanup the issue persists, was tested on the same pattern in PyTorch while this one was called untestable. Now decided on caught-py: after the caught error, with the first run's model still kept, the next run fails too; one line of cleanup in the except clause (caught-cleaned-up-py) and the next run trains. Capped at partly: TensorFlow's sessions are not on the machines",
    },
    Change {
        id: "001-incomplete-free-exhausts",
        commit: "220b99b",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the thirteenth audit: of the outcomes the sentence lists, the run shows exhaustion only; \"driver-level conflicts\" names nothing a run can provoke or read, and the neighbouring lists of causes are capped the same way",
    },
    Change {
        id: "003-host-leak-influences-cuda-allocation",
        commit: "220b99b",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the thirteenth audit: the two limits on the process give opposite answers (under RLIMIT_AS the pinned allocation is refused, under RLIMIT_DATA it is served) and neither is a host short of physical memory, so the leak's reach into CUDA holds only under the limit chosen",
    },
    Change {
        id: "001-raw-second-run-may-fail",
        commit: "24df76b",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the fourteenth audit (unfair): it was refuted on fixed-cpp, where every run frees what it allocated, the cause the comment names removed. Now judged where allocations remain (broken-cpp: the 41st run is refused), with fixed-cpp the control; capped at partly, since \"driver issues\" names nothing a run can provoke or read",
    },
    Change {
        id: "003-host-leak-influences-cuda-allocation",
        commit: "0369df5",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the fourteenth audit's experiment: on a host short of physical memory (a memory cgroup's limit, 512 MiB above what the process uses once CUDA has started, no swap), the article's 100 calls leak 400 MiB, and CUDA's request for 256 MiB of pinned memory after them gets the process killed by the kernel's OOM killer; where each call deletes its buffer (physical-limit-fixed, one change) it is served. The two limits on the process that disagreed stay recorded beside it",
    },
    Change {
        id: "000-errors-on-subsequent-calls",
        commit: "29c1291",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fourteenth audit: only the kernel launch gives the seemingly inexplicable error (its fault returned by a later, unrelated call). Memory and streams left behind fail a later call only once they have used up the memory (missing-free: the 41st call; open-streams: 100,000 streams), with an out of memory that says what it is; the sibling sentence on leftover state is capped the same way",
    },
    Change {
        id: "001-check-every-call",
        commit: "935a939",
        from: Standing::Untestable,
        to: Standing::Partly,
        why: "the fourteenth audit: \"essential to avoid this\" says what avoids the exhaustion, and missing-free's runs decide it. broken-cpp checks every call's result and is still refused at the 41st call: checking reports the failure, it does not avoid it; fixed-cpp, with the cudaFree, runs every call and ends where it started",
    },
    Change {
        id: "001-pytorch-second-run-likely-fails",
        commit: "081825f",
        from: Standing::Partly,
        to: Standing::Refuted,
        why: "the fourteenth and fifteenth audits: \"partly\" credited a reason the comment does not state (the first run's memory still allocated is the next paragraph's sentence, 001-model-and-data-memory-remains-occupied), and its controls were not one change. Now the failure alone: at the size the article leaves open, a small CNN, the second run completes; the control, the same program with its model sized against a 1 GiB budget (one line), is refused at the second run",
    },
    Change {
        id: "004-custom-pool-minimizes-fragmentation",
        commit: "ebbf89c",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the fourteenth and fifteenth audits: the control pool (every size cut from the same chunks) ran out of room in its first round, since it packs 93.75% of a chunk and the rounds filled 97%; they now fill 90%, and it refuses in its second round after reusing 2,595 blocks, for the pieces its freed blocks leave. Capped at partly: the sentence's pool describes both pools, and only a chunk for each size minimizes fragmentation",
    },
    Change {
        id: "004-free-does-not-defragment",
        commit: "7dc0748",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the sixteenth audit: the sentence follows Example 1, whose blocks are each freed right after use, and in that sequence the frees give everything back (as-written-cpp, sub-page-all-freed-cpp); what stays unserved in sub-page-holes-cpp is beside blocks below the page kept live, which the example does not have. Capped at partly",
    },
    Change {
        id: "004-free-does-not-defragment",
        commit: "350fd77",
        from: Standing::Partly,
        to: Standing::Refuted,
        why: "the seventeenth audit: \"partly\" credited this sentence with its sibling's finding. The sentence's frees are Example 1's, each block freed right after use; decided now on that condition, every block below the page freed (sub-page-all-freed-cpp): all 4,166,057,984 B freed show as free memory and 90% of them is served as one block. The control keeps every other block live (sub-page-holes-cpp, one change): the freed memory stays in shared pages and the request is refused, the condition of 001-incomplete-free-fragments, which that run confirms",
    },
    Change {
        id: "001-multiple-processes-exacerbate",
        commit: "774c1ce",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the eighteenth audit: the sentence names two situations, limited GPU memory and several processes, and the run varies only the number of processes (each process takes a share of what the GPU leaves, so the GPU's size does not enter the rounds). Capped at partly: the failures with two processes at once (3 of 20 rounds) against none alone confirm the second situation only",
    },
    Change {
        id: "001-multiple-processes-exacerbate",
        commit: "809c97c",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "both situations the sentence names, now varied two by two (crowded): one process or two, on a GPU left with 32 or 24 GiB by a ballast, each round asking 16 GiB and leaving a sixteenth behind. In the H100 run of 462f0cb one process alone had an allocation refused in 4 of 20 rounds on 32 GiB and in 12 on 24 GiB, two processes in 16 and 17; the cap at partly removed. The control, the same arms at 4 GiB a round (fitting), was refused in none",
    },
    Change {
        id: "001-undestroyed-contexts-fail-new-ones",
        commit: "f2c68f3",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the twenty-first audit: the article's case is the first run's context left behind, and in the same run the attempt after it is served; only contexts left call after call are refused (the 102nd). Two parts now, that one without a control on these GPUs (one context is 518 MiB of 80 GB), and its control fixed-destroy, which differed in four ways, replaced by destroyed, broken's own loop with cuCtxDestroy added",
    },
    Change {
        id: "001-raw-second-run-may-fail",
        commit: "d4c131d",
        from: Standing::Partly,
        to: Standing::Run,
        why: "the twenty-first audit: the comment is on Example 3's second run, and it was judged on call 41 of seed 000's leak loop. Decided now on the second of two calls, the first's allocation remaining (second-call-large-cpp), with Example 3's own cudaFree as the control (second-call-large-freed-cpp)",
    },
    Change {
        id: "003-insufficient-memory-line-errors",
        commit: "8f3e486",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the twenty-first audit: the cap at partly held the comment to the line under it, the cudaFree, which frees whatever the failed cudaMalloc left in d_data and returned cudaSuccess beside the ballast; the author means the cudaMalloc the comment follows, the only line of Example 3 that asks for memory, refused beside a ballast that leaves 2 GiB and served beside 8 GiB (room-for-it-cpp, the control)",
    },
    Change {
        id: "003-reset-only-reclaims-runtime-memory",
        commit: "88e77ef",
        from: Standing::Partly,
        to: Standing::Run,
        why: "the twenty-first audit: \"true of cudaDeviceReset\" was read on the one layout where the runtime's memory and the primary context's coincide. The line \"only\" draws is crossed where a library keeps driver-API memory in the primary context (library-in-primary-cpp): decided there, with the library in a context of its own (broken-cpp) as the control",
    },
    Change {
        id: "000-context-holds-memory-and-streams",
        commit: "3ad849a",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the twenty-first audit: confirmed on a cuMemAlloc buffer alone, while the stream-ordered pool's memory outlives a reset of its context. Both kinds are now made in the created context: in the H100 run of 2edb1f8 its destroy gives back the 4 GiB buffer (4,838,129,664 B with the context's own) and not the pool's 2 GiB block, for which the driver names no context. The context holds the stream and the buffer, not all device memory made in it",
    },
    Change {
        id: "nvidia-lazy-loading-preload-remedy",
        commit: "634b7ca",
        from: Standing::Partly,
        to: Standing::Run,
        why: "the twenty-first audit: \"partly\" rested on a launch returning in under a second, which cannot tell a function loaded before its launch from one loaded at it. Read from the driver instead (cuFuncIsLoaded, in fresh workers that launch nothing), the H100 run of 2edb1f8 reads \"loaded\" under LAZY too: asking for the function (cuKernelGetFunction) loads it, so the reading cannot tell, and the clause is not decided",
    },
    Change {
        id: "nvidia-lazy-loading-preload-remedy",
        commit: "59a5364",
        from: Standing::Run,
        to: Standing::Partly,
        why: "the clause cannot be read on this driver, a finding rather than a verdict: in the H100 run of 272fef2 every reading of the loading state before any launch reads \"loaded\" under LAZY as under EAGER (the function asked for by cuKernelGetFunction or, with the image as a module, by cuModuleGetFunction) or is refused (the kernel handle: CUDA_ERROR_INVALID_HANDLE). Judged on the remedies, which both release the waiter (control broken, neither remedy: refuted), and capped at partly for the clause, with the reason on the page",
    },
    Change {
        id: "002-reset-not-always-enough",
        commit: "a72724a",
        from: Standing::NotYetTested,
        to: Standing::Confirmed,
        why: "a testable sentence no claim quoted (the twenty-first audit's recall list): Example 2's comment on its cudaDeviceReset, decided on device-reset's broken-cpp, where a library's 4 GiB in a context of its own is still held after the reset; the control keeps it in the primary context, and the reset gives all of it back",
    },
    Change {
        id: "001-pytorch-second-training-loop-likely-crashes",
        commit: "a72724a",
        from: Standing::NotYetTested,
        to: Standing::Refuted,
        why: "a testable sentence no claim quoted (the twenty-first audit's recall list): Example 1's comment on its second training loop, read over the same ResNet-50 series as its second run's comment; the article's program completes at every batch, the control (the first run's model and optimizer kept) is refused at the largest",
    },
    Change {
        id: "001-undestroyed-contexts-fail-new-ones",
        commit: "bf124bf",
        from: Standing::Partly,
        to: Standing::Run,
        why: "the twenty-second audit: part 1's \"no control can exist\" was false, since a smaller GPU is what a ballast makes. Decided now on the article's own case on a GPU with room for a context and a half (one-context-left): is the attempt after the first run's context refused? Its control destroys each context beside the same ballast (one-context-destroyed). The sentence's other cause, resources not released, is missing-free's second-call-large-cpp",
    },
    Change {
        id: "004-concurrent-streams-fragment",
        commit: "f2cebac",
        from: Standing::Refuted,
        to: Standing::Partly,
        why: "the twenty-first audit: both arms were read after a device-wide synchronise, which completes every free and leaves nothing in which streams could differ, and the \"no control can exist\" was untested. Read now while the frees are concurrent (busy-streams-cpp): eight streams, each busy with a spinning kernel, make and free a 512 MiB block each; in the H100 run of f2cebac one block of 90% of the 4 GiB freed is refused while the frees are queued and served once they are done. The control makes and frees the same eight blocks on one busy stream (busy-one-stream-cpp): served while they are queued",
    },
    Change {
        id: "nvidia-grid-y-up-to-65535",
        commit: "4f058c3",
        from: Standing::NotYetTested,
        to: Standing::Confirmed,
        why: "a new claim with the new case invalid-launch-config: the same kernel launches with 65535 blocks in y and is refused with 65536, in one process; the z dimension read beside it since c0444bc (the run of 00efb08)",
    },
    Change {
        id: "001-previous-batch-not-released",
        commit: "41e4626",
        from: Standing::Partly,
        to: Standing::Run,
        why: "the twenty-fifth audit: the cuDNN half's \"no control can exist\" was untried, not impossible (cuDNN's handle is refused with about 2 MiB free). With batches under 1 MiB, which PyTorch serves from 2 MiB blocks, the leaking pipeline ends with 2.19 MiB free and the next run's first convolution fails in cuDNN (CUDNN_STATUS_INTERNAL_ERROR; leaky-loader-tiny-next-on-the-gpu-py, H100 run of 41e4626). Each part has a one-change control: the batches let go (both runs complete), 6 MiB batches (the next run fails on cuBLAS's handle, not cuDNN's)",
    },
    Change {
        id: "000-reuse-context-after-reset",
        commit: "45a34cd",
        from: Standing::Partly,
        to: Standing::Confirmed,
        why: "the twenty-first audit: part 1 used the first call's buffer again after the reset, a reading the line above it rules out (\"This resets the context, releasing resources\"). Reusing context1 is now read as the next call made in it: after the reset, a new buffer is allocated, written and freed in each context the first call used, the primary one (made anew by the runtime) and the library's own; both take it (broken-cpp, H100 run of 45a34cd). No control can exist after a first call that completed, and the page says why; the same run's write to the old pointer is refused",
    },
    Change {
        id: "nvidia-enabled-peer-memory-is-accessible",
        commit: "eca8640",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the twenty-first and twenty-ninth audits: \"all allocations\" was tried on one cudaMalloc buffer made before the enable, which could not fail, while NVIDIA's notes on stream-ordered allocation give pools an access of their own. After the enable, device 0's op now also runs on a cudaMalloc buffer of device 1 made after it (reached) and on a block of device 1's default pool (cudaMemPoolGetAccess: none; the kernel faults with cudaErrorIllegalAddress), two H100s, run of eca8640. Two parts: the cudaMalloc buffers (control broken-cpp, never enabled) and the pool's block (control peer-pool-access-cpp, the pool giving device 0 access first: reached)",
    },
    Change {
        id: "004-mismatched-fragmented-request-fails",
        commit: "e43b06a",
        from: Standing::Confirmed,
        to: Standing::Partly,
        why: "the twenty-ninth audit: the paragraph's \"CUDA's allocator\" is read as CUDA's stream-ordered pool by its sibling sentences (004-allocator-caches-blocks), and the run that refuses the request here is PyTorch's caching allocator, for which 004-fragmentation-root-cause is capped on the same run. Capped at partly with that reason: CUDA's own pool is not asked a request that matches no cached block beside blocks in pieces (H100 run of e43b06a: the 1536 MiB request refused again with more than four times as much reserved and unused)",
    },
];
