//! `multi-process-contention`: two processes share a GPU, and each sizes its
//! allocation from the free memory it saw when it started, as if it had the
//! GPU to itself. Both read the same free memory; the second to allocate
//! fails. A shared plan (each takes its share) lets both complete.
//!
//! Deterministic by construction: a barrier makes both processes read the
//! free memory before either allocates, and try before either frees.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_driver::prelude::*;
use casebook_model::{Termination, pytorch};
use casebook_runtime::worker;
use cudarc::driver::result;

mod broken;
mod demand;
mod fixed;
mod handover;
mod rounds;

casebook_model::case_modules!();

pub const WORKERS: usize = 2;
const BARRIER_ENV: &str = "CASEBOOK_BARRIER";

const PYTHON: &str = "python/two_trainers.py";
const JAX_THEN_TORCH: &str = "python/jax_then_torch.py";

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory in the second process (each sized itself from the free memory it saw)",
    cause: "Free memory is shared: two processes that each plan on what cudaMemGetInfo said at start \
            plan on the same bytes, and the second to allocate fails. Plan a share per process.",
    fix: "Size each process's allocations from its share of a shared plan (90% of free memory \
          divided by the process count, or torch.cuda.set_per_process_memory_fraction), not from \
          all the free memory. Where the other process is not yours, nvidia-smi names it, with \
          the memory it holds.",
    symptoms: &["out of memory", "out of memory though memory is free"],
    requires: Requirement::GPU_FILLED,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(BOTH)),
        Variant::broken(
            "broken-py",
            Symptom::check_failed(BOTH),
            Program::pytorch(PYTHON, "broken"),
        )
        .then_shows(Symptom::cuda_error(pytorch::OUT_OF_MEMORY)),
        cpp_pair!(Symptom::check_failed(BOTH)),
        Variant::broken(
            "jax-preallocates-py",
            Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
            Program::pytorch(JAX_THEN_TORCH, "broken"),
        )
        .then_shows(Symptom::check_failed(TORCH_ALLOCATES))
        .also_differs(
            "the other process is JAX, which takes 75% of the GPU when it starts \
             (XLA_PYTHON_CLIENT_PREALLOCATE), whatever it uses; the PyTorch process needs 40%.",
        ),
        Variant::fixed(
            "jax-on-demand-py",
            Program::pytorch(JAX_THEN_TORCH, "fixed"),
        )
        .also_differs(
            "the same JAX process started with XLA_PYTHON_CLIENT_PREALLOCATE=false: it \
                 takes what it uses.",
        ),
        Variant::fixed("fixed-py", Program::pytorch(PYTHON, "fixed")).also_differs(
            "each process sizes its work from its share of the free memory, as the Rust \
             `fixed` does, and torch.cuda.set_per_process_memory_fraction caps PyTorch's \
             allocator at that share.",
        ),
        Variant::as_written("free-then-tell", cudarc!(handover::free_then_tell)),
        Variant::records(
            "tell-then-free",
            cudarc!(handover::tell_then_free, anchored)
        )
        .one_change(
            "free-then-tell",
            "the order of the holder's cuMemFree and its word to the taker: free, then tell \
             there; tell, then free once the taker has tried, here",
            "handover(rec, Order::FreeThenTell)",
            "handover(rec, Order::TellThenFree)",
        ),
        Variant::records(
            "free-async-then-tell",
            cudarc!(handover::free_async_then_tell, anchored)
        ),
        Variant::records(
            "free-async-synced-then-tell",
            cudarc!(handover::free_async_synced_then_tell, anchored)
        )
        .one_change(
            "free-async-then-tell",
            "whether the holder waits for its stream (cuStreamSynchronize) between its \
             cuMemFreeAsync and its word to the taker: no there, yes here",
            "handover(rec, Order::FreeAsyncThenTell)",
            "handover(rec, Order::FreeAsyncSyncedThenTell)",
        ),
        Variant::records("crowded", cudarc!(demand::crowded at "rounds")),
        Variant::records("fitting", cudarc!(demand::fitting, anchored)).one_change(
            "crowded",
            "what each process allocates a round: 16 GiB there, against GPUs of 32 and 24 GiB; \
             4 GiB here, which every arm holds with room to spare, what it leaves behind \
             included",
            "two_by_two(rec, NEED)",
            "two_by_two(rec, NEED_THAT_FITS)",
        ),
        Variant::as_written("rounds", cudarc!(rounds::two_processes)),
        Variant::records("rounds-alone", cudarc!(rounds::one_process, anchored)).one_change(
            "rounds",
            "how many processes share the GPU for the rounds: two there, one here",
            "rounds(rec, 2)",
            "rounds(rec, 1)",
        ),
    ],
});

/// The parent: starts the workers (before it touches CUDA, which it never
/// does), waits for both, and records them in a fixed order: those whose
/// allocation succeeded first, so which one won the race does not show.
pub(crate) fn parent(rec: &mut Recorder) -> anyhow::Result<()> {
    let barrier = std::env::temp_dir().join(format!("casebook-barrier-{}", std::process::id()));
    std::fs::create_dir_all(&barrier)?;
    let env = barrier.to_string_lossy().into_owned();
    let roles: Vec<String> = (0..WORKERS).map(|i| format!("worker {i}")).collect();
    let mut outcomes =
        worker::run_together(&roles, Duration::from_secs(120), &[(BARRIER_ENV, &env)])?;
    let _ = std::fs::remove_dir_all(&barrier);
    outcomes.sort_by_key(|o: &Outcome| o.flag(ALLOCATED) != Some(true));
    let mut completed = 0;
    for (i, o) in outcomes.iter().enumerate() {
        worker::replay(rec, &format!("process {}", i + 1), o);
        completed +=
            usize::from(o.termination == Termination::Completed && o.symptoms().is_empty());
        for (key, m) in &o.measures {
            rec.measure_named(&format!("process {} {key}", i + 1), m.value, m.unit);
        }
    }
    rec.measure(PROCESSES_COMPLETED, completed as f64);
    rec.check(BOTH, completed == WORKERS);
    Ok(())
}

/// A worker: reads the free memory, waits for the other, allocates what
/// `plan` says, waits for the other to have tried, then frees.
pub(crate) fn work(rec: &mut Recorder, role: &str, plan: fn(usize) -> usize) -> anyhow::Result<()> {
    let barrier = PathBuf::from(std::env::var(BARRIER_ENV)?);
    let ctx = device::context(rec)?;
    let total = ctx.total_mem()?;
    let seen = device::free_bytes(rec, &ctx)?;
    measure_bytes(rec, FREE_SEEN_AT_START, seen);
    measure_bytes(rec, TOTAL, total);
    measure_bytes(rec, USED_WHEN_STARTED, total - seen);
    arrive(&barrier, role, "read", WORKERS)?;
    let bytes = plan(seen) / PAGE * PAGE;
    measure_bytes(rec, PLANNED_BYTES, bytes);
    let buf = rec.step("cuMemAlloc (planned from free memory)", unsafe {
        result::malloc_sync(bytes)
    });
    rec.fact(ALLOCATED, buf.is_ok());
    arrive(&barrier, role, "tried", WORKERS)?;
    if let Ok(buf) = buf {
        rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    }
    buf?;
    Ok(())
}

/// Marks the process `role` as having reached `stage` (a file in the
/// folder `barrier`), and waits until `processes` of them have.
pub(crate) fn arrive(
    barrier: &Path,
    role: &str,
    stage: &str,
    processes: usize,
) -> anyhow::Result<()> {
    std::fs::write(barrier.join(format!("{role}.{stage}")), b"")?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let arrived = std::fs::read_dir(barrier)?
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .ends_with(&format!(".{stage}"))
            })
            .count();
        if arrived >= processes {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "not every process reached `{stage}`"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "001-multiple-processes-exacerbate",
        source: Source::SEED_001,
        quote: "This is exacerbated in situations with limited GPU memory or when running multiple processes \
                concurrently that utilize CUDA.",
        // "This": failures from contention or improper cleanup (the
        // sentence before). Two by two, each situation against its
        // absence: one process or two, on a GPU of 32 GiB or of 24 GiB (a
        // ballast leaves that much), each process allocating 16 GiB a round
        // and leaving a sixteenth of it behind. Part one: one process
        // fails in more rounds on the smaller GPU; part two: two processes
        // fail in more rounds than one on the larger, where what both leave
        // behind adds up, and their holds meet when their delays do (the
        // report's failed rounds by arm tell how many). Both: confirmed; one:
        // partly; neither: refuted. The control asks 4 GiB a round, which
        // every arm holds: no arm fails, and neither situation adds a
        // failure to none.
        judged_by: "crowded",
        control: Control::Run("fitting"),
        judge: |o: &Outcome| {
            ClaimVerdict::of_two_parts(
                o.flag(LESS_MEMORY_ADDS_FAILED_ROUNDS),
                o.flag(A_SECOND_PROCESS_ADDS_FAILED_ROUNDS),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "001-multi-process-needs-sync",
        source: Source::SEED_001,
        quote: "For multi-process scenarios, proper synchronization mechanisms using CUDA events or streams \
                might be required to ensure that memory is released before another process attempts to \
                allocate it.",
        judged_by: "free-async-then-tell",
        control: Control::Run("free-async-synced-then-tell"),
        // "Might be required": decided where a synchronise can matter, the
        // stream-ordered free (cuMemFreeAsync), whose memory the pool gives
        // back at a synchronise. A word on the host after it returns, with no
        // stream or event waited for, is not enough for the other process's
        // allocation (confirmed), or it is (refuted). With cuMemFree, as the
        // article's example frees, the word alone is enough: free-then-tell
        // records it, and its control tell-then-free shows the order matters.
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.flag(THE_TAKER_S_ALLOCATION_SUCCEEDS)),
        ..Claim::EITHER
    },
    Claim {
        id: "001-shared-resource-contention-intermittent",
        source: Source::SEED_001,
        quote: "Furthermore, the seemingly random nature of the failures often indicates that the issue is \
                related to shared resources, where contention or improper cleanup causes intermittent problems.",
        judged_by: "rounds",
        control: Control::Run("rounds-alone"),
        reach: Reach::AtBestPartly(
            "how often random failures come from shared resources, no run measures; the run shows \
             whether contention for one GPU makes failures come and go",
        ),
        // Failures in some rounds and not others: intermittent (confirmed);
        // in every round: contention, but not intermittent (partly); none:
        // refuted.
        judge: |o: &Outcome| match o.fact_text(FAILURES_ACROSS_THE_ROUNDS) {
            Some("some rounds, not others") => ClaimVerdict::Confirmed,
            Some("every round") => ClaimVerdict::Partly,
            Some(_) => ClaimVerdict::Refuted,
            None => ClaimVerdict::Undecided,
        },
    },
];
