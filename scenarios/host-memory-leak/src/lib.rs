//! `host-memory-leak`: each call leaks its host input buffer (`new` without
//! `delete`; a `Vec` leaked) and its pinned staging buffer
//! (`cudaMallocHost` without `cudaFreeHost`). The process's resident memory
//! grows by about one call's buffers per call; the device's free memory does
//! not move.

use casebook_driver::device::{self, measure_bytes};
use casebook_model::prelude::*;
use cudarc::driver::CudaContext;

mod broken;
mod fixed;
mod physical;
mod pinned;

casebook_model::case_modules!();

pub const CALLS: usize = 64;
/// Each call's host input: the article's 1M floats.
pub const FLOATS: usize = 1 << 20;
pub const TOLERANCE: usize = 64 << 20;

casebook_model::scenario!(Scenario {
    title: "Host memory grows with every call (new without delete, cudaMallocHost without cudaFreeHost)",
    cause: "Host buffers and pinned staging buffers that are never freed grow the process's \
            resident memory call after call; they do not touch the device's free memory.",
    fix: "Free each call's host buffers before it returns: delete[] the new'd input and \
          cudaFreeHost the pinned staging buffer, or hold them in RAII owners (Vec, \
          PinnedHostSlice).",
    symptoms: &["memory that keeps shrinking"],
    requires: Requirement::GPU_ALONE,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(BACK)),
        cpp_pair!(Symptom::check_failed(BACK)),
        Variant::as_written("limited-host-cpp", cpp::limited_host).also_differs(
            "the article's example 2 (without the pinned buffer the other C++ variants add), \
             called again and again with the process's data limited (RLIMIT_DATA) to what it \
             uses once CUDA has started and 256 MiB more: a host with little memory to spare.",
        ),
        Variant::records("limited-host-fixed-cpp", cpp::limited_host_fixed).one_change(
            "limited-host-cpp",
            "whether each call deletes its h_data: no there, yes here",
            "return limited_host(r, false);",
            "return limited_host(r, true);",
        ),
        Variant::records("limited-address-space-cpp", cpp::limited_address_space).one_change(
            "limited-host-cpp",
            "what the limit counts: the process's data (RLIMIT_DATA, what new and malloc \
             take) there, its whole address space (RLIMIT_AS, every mapping, pinned host \
             memory's too) here",
            "return limited_host(r, false);",
            "return limited_host(r, false, RLIMIT_AS);",
        ),
        Variant::records(
            "limited-address-space-fixed-cpp",
            cpp::limited_address_space_fixed
        )
        .one_change(
            "limited-address-space-cpp",
            "whether each call deletes its h_data: no there, yes here",
            "return limited_host(r, false, RLIMIT_AS);",
            "return limited_host(r, true, RLIMIT_AS);",
        ),
        // A host short of physical memory: a memory cgroup's limit.
        Variant::records(
            "physical-limit",
            cudarc!(physical::physical_limit, anchored)
        )
        .needs_memory_cgroup(),
        Variant::records(
            "physical-limit-fixed",
            cudarc!(physical::physical_limit_fixed, anchored)
        )
        .needs_memory_cgroup()
        .one_change(
            "physical-limit",
            "whether each call frees its h_data: no there, yes here",
            "under_a_memory_limit(rec, Calls::Leak)",
            "under_a_memory_limit(rec, Calls::Delete)",
        ),
        // Seed 002's pinned memory on the same host: each call's buffer
        // pinned (cuMemHostAlloc) and kept.
        Variant::records(
            "pinned-physical-limit",
            cudarc!(physical::pinned_physical_limit, anchored)
        )
        .needs_memory_cgroup()
        .one_change(
            "physical-limit",
            "what each call's 4 MiB buffer is: pageable memory from new there; \
             pinned host memory (cuMemHostAlloc), kept, here",
            "under_a_memory_limit(rec, Calls::Leak)",
            "under_a_memory_limit(rec, Calls::PinnedLeak)",
        ),
        Variant::records(
            "pinned-physical-limit-fixed",
            cudarc!(physical::pinned_physical_limit_fixed, anchored)
        )
        .needs_memory_cgroup()
        .one_change(
            "pinned-physical-limit",
            "whether each call gives its pinned buffer back (cuMemFreeHost): no there, yes here",
            "under_a_memory_limit(rec, Calls::PinnedLeak)",
            "under_a_memory_limit(rec, Calls::PinnedFree)",
        ),
        Variant::contrast_clean("pinned-transfers", cudarc!(pinned::pinned at "transfers")),
        Variant::contrast_clean(
            "pageable-transfers",
            cudarc!(pinned::pageable_both, anchored)
        )
        .one_change(
            "pinned-transfers",
            "the second buffer of each pair: pinned there; pageable here, as the first",
            "transfers(rec, Second::Pinned)",
            "transfers(rec, Second::Pageable)",
        ),
        Variant::contrast_clean("pinned-leak", cudarc!(pinned::leak at "pieces")),
        Variant::contrast_clean("pinned-given-back", cudarc!(pinned::given_back, anchored))
            .one_change(
                "pinned-leak",
                "whether each 1 GiB piece is given back (cuMemFreeHost): no there, yes here",
                "pieces(rec, false)",
                "pieces(rec, true)",
            ),
    ],
});

/// Runs CALLS calls and measures host and device memory around them.
pub(crate) fn drive(
    rec: &mut Recorder,
    call: fn(&mut Recorder, &std::sync::Arc<CudaContext>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    call(rec, &ctx)?; // one warm-up call, so the baseline includes the runtime's own buffers
    let host_before = device::resident_bytes();
    let device_before = device::free_bytes(rec, &ctx)?;
    for i in 0..CALLS {
        rec.iteration("model call", |rec| call(rec, &ctx))?;
        rec.point(
            RESIDENT_BYTES,
            (i + 1) as f64,
            device::resident_bytes() as f64,
        );
    }
    let host_after = device::resident_bytes();
    let device_after = device::free_bytes(rec, &ctx)?;
    measure_bytes(rec, RESIDENT_BEFORE, host_before);
    measure_bytes(rec, RESIDENT_AFTER, host_after);
    measure_bytes(rec, DEVICE_FREE_BEFORE, device_before);
    measure_bytes(rec, DEVICE_FREE_AFTER, device_after);
    let grown = host_after.saturating_sub(host_before);
    let per_call = grown as f64 / CALLS as f64;
    rec.measure(RESIDENT_GROWTH_PER_CALL, per_call);
    let one_call = (2 * FLOATS * 4) as f64; // the host buffer and the pinned one
    rec.fact(
        PER_CALL,
        if grown < TOLERANCE {
            "nothing"
        } else if (per_call - one_call).abs() < one_call / 4.0 {
            "about one call's host and pinned buffers"
        } else {
            "something other than one call's buffers"
        },
    );
    rec.fact(
        DEVICE_MOVED,
        device_before.abs_diff(device_after) > TOLERANCE,
    );
    rec.check(BACK, grown < TOLERANCE);
    Ok(())
}

/// Under the memory cgroup's limit, after the calls: the kernel killed the
/// worker for its request of pinned memory (confirmed), or served it
/// (refuted).
fn killed_for_memory(o: &Outcome) -> ClaimVerdict {
    match (
        o.flag(THE_KERNEL_KILLED_THE_WORKER_FOR_THE_CGROUP_S_MEMORY),
        o.flag(UNDER_THE_CGROUP_S_LIMIT_THE_PINNED_REQUEST_IS_SERVED),
    ) {
        (Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (Some(false), Some(true)) => ClaimVerdict::Refuted,
        _ => ClaimVerdict::Undecided,
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "003-host-leak-influences-cuda-allocation",
        source: Source::SEED_003,
        quote: "However, the crucial `delete[] h_data;` is omitted, which can lead to increasing host memory \
            consumption, impacting overall system memory pressure and ultimately influencing CUDA's memory \
            allocation capabilities.",
        judged_by: "physical-limit",
        control: Control::Run("physical-limit-fixed"),
        // A host with little physical memory to spare: the process in a
        // memory cgroup of its own, limited to what it uses once CUDA has
        // started and 512 MiB more, without swap. The article's call is
        // made 100 times (400 MiB kept); then CUDA is asked for 256 MiB of
        // pinned host memory. The kernel kills the process for it (its OOM
        // killer, counted in the cgroup's memory.events): the leak took
        // CUDA's allocation down with it (confirmed). Served: it did not
        // (refuted); so in the control, where each call frees its buffer.
        // Under limits on the process instead (limited-host-cpp, RLIMIT_DATA;
        // limited-address-space-cpp, RLIMIT_AS) the answers differ: they are
        // recorded beside it.
        judge: killed_for_memory,
        ..Claim::EITHER
    },
    Claim {
        id: "002-pinned-memory-faster-transfers",
        source: Source::SEED_002,
        quote: "Crucial for efficient data transfer to the device",
        judged_by: "pinned-transfers",
        control: Control::Run("pageable-transfers"),
        // Efficient, and crucially so: a copy from pageable memory takes
        // longer, by a fifth at least, in four pairs of five.
        judge: |o: &Outcome| match o
            .fact_text(THE_COPY_FROM_PAGEABLE_MEMORY_AGAINST_THE_SECOND_BUFFER)
        {
            Some("longer from pageable memory") => ClaimVerdict::Confirmed,
            Some(_) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "002-pinned-leak-exhausts-memory",
        source: Source::SEED_002,
        quote: "but improper management can indirectly contribute to memory exhaustion.",
        judged_by: "pinned-physical-limit",
        control: Control::Run("pinned-physical-limit-fixed"),
        // Pinned memory kept is host memory nothing else can have, not even
        // by swapping. On a host short of physical memory (a memory cgroup's
        // limit, 512 MiB above what the process uses once CUDA has started),
        // 100 calls keep a pinned 4 MiB buffer each; then CUDA is asked for
        // 256 MiB of pinned memory. The kernel kills the process for it: the
        // kept pinned memory exhausted the host's (confirmed); served:
        // refuted, as in the control, where each call gives its buffer back.
        // The failure is the kernel's kill, not an error a CUDA call
        // returns; and a leak of pageable memory reads the same under the
        // same limit (physical-limit): what exhausts the host is memory kept,
        // pinned or not. (pinned-leak reads the same on the whole host:
        // MemAvailable falls by what is kept pinned.)
        judge: killed_for_memory,
        ..Claim::EITHER
    },
    Claim {
        id: "003-example2-later-code-may-fail-host-memory",
        source: Source::SEED_003,
        quote: "// ... further code execution that might fail due to lack of free host memory ...",
        judged_by: "limited-host-cpp",
        control: Control::Run("limited-host-fixed-cpp"),
        // "Might": where it could, on a host with little memory to spare.
        judge: |o: &Outcome| {
            ClaimVerdict::confirmed_if(o.flag(A_CALL_FAILS_FOR_LACK_OF_HOST_MEMORY))
        },
        ..Claim::EITHER
    },
];
