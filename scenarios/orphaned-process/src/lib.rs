//! `orphaned-process`: "out of memory though no process is running". First
//! the article's claim: a process that exits without freeing, and one killed
//! with SIGKILL: does the driver take their memory back? Then what does hold
//! memory with nothing in sight: a data-loader worker that has started a
//! process of its own is killed, and that grandchild lives on, holding
//! device memory its grandparent cannot see. Killing the worker's whole
//! process group takes the grandchild with it. The scenario also records
//! how a user finds the holder: `nvidia-smi --query-compute-apps`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use casebook_driver::device::{self, measure_bytes};
use casebook_driver::prelude::*;
use casebook_model::MeasureName;
use casebook_runtime::worker;
use cudarc::driver::CudaContext;
use std::sync::Arc;

mod broken;
mod exit_and_kill;
mod fixed;

casebook_model::case_modules!();

/// What a holder allocates.
pub const HELD: usize = 4 << 30;
/// Within this of the baseline counts as "back".
const TOLERANCE: usize = 64 << 20;
/// How long the parent waits for memory to come back.
const SETTLE: Duration = Duration::from_secs(3);
const DIR_ENV: &str = "CASEBOOK_ORPHAN_DIR";
const MODE_ENV: &str = "CASEBOOK_HOLDER_MODE";
/// Set: the holder forks a child that sleeps before it ends.
const FORK_ENV: &str = "CASEBOOK_HOLDER_FORKS";

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory though no process is running (a grandchild holds it)",
    cause: "The driver frees a process's memory when the last process holding its context ends, \
            however it ends. Memory held \"by nothing\" is held by a process still alive: a worker's \
            child that outlived its parent, or a child forked after CUDA started, which makes no CUDA \
            call but inherited the driver's descriptors and with them the dead parent's context \
            (nvidia-smi --query-compute-apps does not list that child). Kill the worker's process \
            group, and look for holders with fuser or lsof on /dev/nvidia*.",
    fix: "Start data-loader workers in their own process group and kill the whole group (killpg, \
          SIGKILL), not the worker's pid alone; start processes that outlive a CUDA program with \
          spawn, not fork, or close /dev/nvidia* in them, or free the memory and destroy the \
          context before exiting (the driver then takes it back while a forked child \
          lives); find any surviving holder with \
          nvidia-smi --query-compute-apps, and where it lists none, with fuser -v /dev/nvidia*.",
    symptoms: &["out of memory", "out of memory though memory is free"],
    requires: Requirement::GPU_ALONE,
    reports: REPORTS,
    variants: variants![
        Variant::records("exit-and-kill", cudarc!(exit_and_kill)),
        Variant::records(
            "forked-child",
            cudarc!(exit_and_kill::forked_child, anchored)
        )
        .one_change(
            "exit-and-kill",
            "whether each holder forks a child that sleeps (no CUDA call) before it exits or \
             is killed: no there, yes here",
            "arms(rec, false, Exit::Implicit)",
            "arms(rec, true, Exit::Implicit)",
        ),
        Variant::records(
            "forked-child-torn-down",
            cudarc!(exit_and_kill::torn_down, anchored)
        )
        .one_change(
            "forked-child",
            "whether the holder that exits frees its memory and destroys its context first \
             (cuMemFree, then the primary context's last release): no there, yes here",
            "arms(rec, true, Exit::Implicit)",
            "arms(rec, true, Exit::TornDown)",
        ),
        Variant::records(
            "forked-child-freed-only",
            cudarc!(exit_and_kill::freed_only, anchored)
        )
        .one_change(
            "forked-child-torn-down",
            "whether the holder that exits destroys its context after freeing its memory: yes \
             there; no here, the context left to the driver while the forked child lives",
            "arms(rec, true, Exit::TornDown)",
            "arms(rec, true, Exit::FreedOnly)",
        ),
        Variant::records(
            "forked-child-destroyed",
            cudarc!(exit_and_kill::destroyed, anchored)
        )
        .one_change(
            "forked-child-torn-down",
            "whether the holder that exits frees its memory before it destroys its context: \
             yes there; no here, the context destroyed as the article says, its memory in it",
            "arms(rec, true, Exit::TornDown)",
            "arms(rec, true, Exit::Destroyed)",
        ),
        Variant::records(
            "destroyed-no-fork",
            cudarc!(exit_and_kill::destroyed_no_fork, anchored)
        )
        .one_change(
            "forked-child-destroyed",
            "whether each holder forks a child that sleeps (no CUDA call) before it exits or \
             is killed: yes there; no here",
            "arms(rec, true, Exit::Destroyed)",
            "arms(rec, false, Exit::Destroyed)",
        ),
        cudarc_pair!(Symptom::check_failed(RETURNS)),
    ],
});

/// Refuted when the memory came back both after an exit and after a kill.
fn back_after_exit_and_kill(o: &Outcome) -> ClaimVerdict {
    ClaimVerdict::refuted_if_all([o.flag(AFTER_EXIT), o.flag(AFTER_KILL)])
}

const REPORTS: &[Report] = &[
    Report {
        id: "NVIDIA/Megatron-LM#3684",
        shows: "A merged fix: data-loader workers forked by a training rank kept its /dev/nvidia* \
                descriptors, so after the rank was killed its GPU memory stayed in use while a worker \
                lived; the fix closes the device files in the workers.",
    },
    Report {
        id: "PaddlePaddle/PaddleOCR#2074",
        shows: "After the main training process was killed, nvidia-smi showed the memory in use and no \
                process on the card; fuser -v /dev/nvidia* found the processes, and killing them gave \
                the memory back.",
    },
    Report {
        id: "pytorch/pytorch#5736",
        shows: "GPU memory not released after killing the PyTorch process; a maintainer: some process \
                is still alive, find it with lsof /dev/nvidia0; others see it with multi-process data \
                loaders.",
    },
];

/// The parent's view: its own context, and the free memory it starts from.
pub(crate) struct Watch {
    ctx: Arc<CudaContext>,
    pub baseline: usize,
    dir: PathBuf,
}

impl Watch {
    pub fn new(rec: &mut Recorder) -> anyhow::Result<Self> {
        let ctx = device::context(rec)?;
        let baseline = device::free_bytes(rec, &ctx)?;
        measure_bytes(rec, FREE_AT_START, baseline);
        let dir = std::env::temp_dir().join(format!("casebook-orphan-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Watch { ctx, baseline, dir })
    }

    /// A worker command with this watch's folder.
    pub fn command(&self, role: &str) -> anyhow::Result<Command> {
        let mut cmd = worker::command(role)?;
        cmd.env(DIR_ENV, &self.dir);
        Ok(cmd)
    }

    /// Waits until a holder has its memory.
    pub fn wait_held(&self) -> anyhow::Result<u32> {
        let file = self.dir.join("holder.pid");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(text) = std::fs::read_to_string(&file)
                && let Ok(pid) = text.trim().parse()
            {
                std::fs::remove_file(&file)?;
                return Ok(pid);
            }
            anyhow::ensure!(Instant::now() < deadline, "no holder got its memory");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The pid of the child the last holder forked, where it forks one.
    pub fn child(&self, forks: bool) -> anyhow::Result<Option<u32>> {
        if !forks {
            return Ok(None);
        }
        let text = std::fs::read_to_string(self.dir.join("child.pid"))?;
        std::fs::remove_file(self.dir.join("child.pid"))?;
        Ok(Some(text.trim().parse()?))
    }

    /// Whether a holder's memory is taken now: free memory at least
    /// [`HELD`] below the baseline, within [`TOLERANCE`].
    pub fn taken(&self) -> anyhow::Result<bool> {
        Ok(self.ctx.mem_get_info()?.0 + HELD <= self.baseline + TOLERANCE)
    }

    /// Whether free memory comes back to the baseline within [`SETTLE`];
    /// records the free memory it saw last under `key`.
    pub fn back(&self, rec: &mut Recorder, key: MeasureName) -> anyhow::Result<bool> {
        device::wait_for_free(&self.ctx, self.baseline.saturating_sub(TOLERANCE), SETTLE)?;
        let free = device::free_bytes(rec, &self.ctx)?;
        measure_bytes(rec, key, free);
        Ok(free + TOLERANCE >= self.baseline)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The worker roles: `holder` allocates [`HELD`] bytes, says so, and then
/// exits without freeing or sleeps (its `MODE`); `loader` starts a holder
/// and sleeps, as a data-loader worker with a helper process would.
pub(crate) fn serve(rec: &mut Recorder, role: &str) -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::var(DIR_ENV)?);
    match role {
        "holder" => {
            let ctx = device::context(rec)?;
            let held = rec.step("cuMemAlloc", unsafe {
                cudarc::driver::result::malloc_sync(HELD)
            })?;
            if std::env::var_os(FORK_ENV).is_some() {
                // SAFETY: the child only closes its standard error and waits
                // for a signal, calls that are safe after fork.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe {
                        libc::close(2);
                        loop {
                            libc::pause();
                        }
                    }
                }
                anyhow::ensure!(pid > 0, "fork failed");
                std::fs::write(dir.join("child.pid"), pid.to_string())?;
            }
            announce(&dir)?;
            match std::env::var(MODE_ENV).as_deref() {
                Ok("exit") => std::process::exit(0), // no cuMemFree, no context teardown
                Ok("free") => {
                    // SAFETY: nothing uses the allocation any more.
                    rec.step("cuMemFree", unsafe {
                        cudarc::driver::result::free_sync(held)
                    })?;
                    std::process::exit(0); // the context left to the driver
                }
                Ok("destroy") => {
                    // The last reference to the primary context: its release
                    // (cuDevicePrimaryCtxRelease) destroys it, the
                    // allocation with it.
                    drop(ctx);
                    std::process::exit(0);
                }
                Ok("teardown") => {
                    // SAFETY: nothing uses the allocation any more.
                    rec.step("cuMemFree", unsafe {
                        cudarc::driver::result::free_sync(held)
                    })?;
                    // The last reference to the primary context: its release
                    // (cuDevicePrimaryCtxRelease) destroys it.
                    drop(ctx);
                    std::process::exit(0);
                }
                _ => {}
            }
            std::thread::sleep(Duration::from_secs(90));
            Ok(())
        }
        "loader" => {
            let mut holder = worker::command("holder")?;
            holder.env(DIR_ENV, &dir).spawn()?;
            std::thread::sleep(Duration::from_secs(90));
            Ok(())
        }
        other => anyhow::bail!("no worker role {other}"),
    }
}

/// Writes this process's pid where the parent waits for it.
fn announce(dir: &Path) -> anyhow::Result<()> {
    let tmp = dir.join("holder.pid.tmp");
    std::fs::write(&tmp, std::process::id().to_string())?;
    std::fs::rename(tmp, dir.join("holder.pid"))?;
    Ok(())
}

/// The pids `nvidia-smi --query-compute-apps` lists on this trial's GPU
/// (on a machine of several GPUs, trials on the others run beside it);
/// `None` where nvidia-smi cannot be run or the GPU not read.
fn compute_apps() -> Option<Vec<u32>> {
    let gpu = casebook_driver::device::gpu_bus()?;
    let out = Command::new("nvidia-smi")
        .args([
            "--query-compute-apps=pid,gpu_bus_id",
            "--format=csv,noheader",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (pid, bus) = l.split_once(',')?;
                (casebook_driver::device::parse_bus(bus.trim())? == gpu)
                    .then(|| pid.trim().parse().ok())?
            })
            .collect(),
    )
}

/// Whether `nvidia-smi --query-compute-apps` lists `pid` as using memory;
/// `None` where nvidia-smi cannot be run.
pub(crate) fn nvidia_smi_lists(rec: &mut Recorder, pid: u32) -> Option<bool> {
    let listed = compute_apps()?.contains(&pid);
    rec.fact(NVIDIA_SMI_QUERY_COMPUTE_APPS_LISTS_THE_HOLDER, listed);
    Some(listed)
}

/// Whether `nvidia-smi --query-compute-apps` lists any process besides this
/// one (the watch, which holds a context of its own); `None` where
/// nvidia-smi cannot be run.
pub(crate) fn nvidia_smi_lists_another(rec: &mut Recorder) -> Option<bool> {
    let others: Vec<u32> = compute_apps()?
        .into_iter()
        .filter(|p| *p != std::process::id())
        .collect();
    rec.fact(
        NVIDIA_SMI_LISTS_A_PROCESS_BESIDES_THE_WATCH,
        !others.is_empty(),
    );
    // A pid that no live process has: the dead holder's, whose context a
    // child keeps.
    if !others.is_empty() {
        rec.fact(
            EVERY_OTHER_PID_NVIDIA_SMI_LISTS_IS_A_LIVE_PROCESS,
            others.iter().all(|p| alive(*p)),
        );
    }
    Some(!others.is_empty())
}

/// Whether `pid` is still alive (a zombie is not: its memory is gone).
pub(crate) fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 && !zombie(pid) }
}

/// Kills `pid` and waits until it is gone.
pub(crate) fn kill_and_wait_gone(pid: u32) {
    // SAFETY: plain syscall on a pid this scenario started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Why the claims that an ended application's context keeps its memory are
/// at best partly: where it does, a process still holds the context.
const FORKED_CHILD_ONLY: &str = "the memory stays after the process that allocated it has ended \
     only while a child it forked lives: a process that makes no CUDA call but inherited the \
     driver's descriptors, and with them the context; once every process that held them has ended, \
     the memory is back (exit-and-kill)";

/// Why the claim that the memory nobody holds is the driver's own leak has
/// no control run.
const NO_DRIVER_KEEPS_IT: &str = "a run in which memory stays taken with no live process holding \
     its context would need a driver that leaks it, and the machines have one driver (580), which \
     frees a context's memory when the last process holding it ends, however it ends \
     (exit-and-kill; in forked-child the memory stays only while a forked child holds the context). \
     What shows that the watch could read memory still held: in this run it reads the 4 GiB and the \
     context still taken after the holder has exited, while nvidia-smi lists no live process that \
     holds them, and back once the forked child ends.";

const CLAIMS: &[Claim] = &[
    Claim {
        id: "002-context-survives-termination",
        source: Source::SEED_002,
        quote: "Its lifespan is critical; an improperly managed context can retain memory even after application termination.",
        judged_by: "forked-child",
        control: Control::Run("exit-and-kill"),
        reach: Reach::AtBestPartly(FORKED_CHILD_ONLY),
        judge: back_after_exit_and_kill,
    },
    Claim {
        id: "002-driver-leak-root-cause",
        source: Source::SEED_002,
        quote: "The error message misleadingly points to a lack of free memory, but the root cause is often a memory leak or \
                unreleased resources within the CUDA driver itself, rather than a problem with active user processes.",
        judged_by: "forked-child",
        control: Control::Impossible(NO_DRIVER_KEEPS_IT),
        // Decided where the article's condition holds: the process that
        // allocated has exited, and nvidia-smi lists no live process that
        // holds the memory (only a pid that is no longer alive), yet the
        // memory stays taken. It comes back once the child the holder
        // forked ends: a user process held it (refuted); never back: the
        // driver's own (confirmed). (In broken, a grandchild holds it, and
        // nvidia-smi lists that one.)
        judge: |o: &Outcome| {
            ClaimVerdict::provided(
                o.flag(AFTER_EXIT) == Some(false),
                ClaimVerdict::refuted_if(o.flag(BACK_ONCE_THE_CHILD_ENDS)),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "002-lingering-context-holds-memory",
        source: Source::SEED_002,
        quote: "A lingering CUDA context might hold onto memory from previous allocations, resulting in the error even if no active processes are using CUDA.",
        judged_by: "forked-child",
        control: Control::Run("exit-and-kill"),
        reach: Reach::AtBestPartly(FORKED_CHILD_ONLY),
        // The condition is the point: no process alive. Contexts a live process
        // leaves open do hold memory (context-leak); once it exits or is killed,
        // is the memory back?
        judge: back_after_exit_and_kill,
    },
    Claim {
        id: "002-oom-without-processes-from-driver-context",
        source: Source::SEED_002,
        quote: "The CUDA out-of-memory error, even in the absence of overtly visible processes, stems from persistent allocations within the CUDA driver's context.",
        judged_by: "forked-child",
        control: Control::Run("exit-and-kill"),
        reach: Reach::AtBestPartly(FORKED_CHILD_ONLY),
        judge: back_after_exit_and_kill,
    },
    Claim {
        id: "002-device-allocations-persist-until-freed",
        source: Source::SEED_002,
        quote: "Allocations here persist until explicitly freed.",
        judged_by: "exit-and-kill",
        control: Control::Parts(&[
            Part {
                part: "never freed, the allocation stays taken while its process lives",
                control: Control::Impossible(
                    "within a living process only an explicit call gives a cudaMalloc allocation \
                     back (cudaFree, or cudaDeviceReset, which device-reset's broken-cpp shows \
                     releasing 4 GiB): a run in which it comes back unasked cannot be written. \
                     What shows that the reading sees memory come back: the same reading after the \
                     process has ended, in this run.",
                ),
            },
            Part {
                part: "never freed, it stays taken once its process has ended",
                control: Control::Impossible(
                    "the driver gives a process's memory back once nothing holds its context any \
                     more; it stays past the process's end only while a child the process forked \
                     keeps the context open (forked-child: the 4 GiB still taken after the holder \
                     ended), and comes back when that child ends, still without a free, so no run \
                     can keep it until an explicit free once every holder has ended. What shows \
                     that the reading sees memory kept: forked-child, read the same way, finds \
                     the 4 GiB still taken after the holder ended (they come back, unfreed, once \
                     the child ends).",
                ),
            },
        ]),
        // While the holder lives, unfreed, its 4 GiB stay taken (the kill
        // arm reads them before the kill); once the process has ended they
        // are back: partly. Still taken after it ends: confirmed.
        judge: |o: &Outcome| match (
            o.flag(TAKEN_WHILE_THE_HOLDER_LIVES),
            back_after_exit_and_kill(o),
        ) {
            (Some(false), _) => ClaimVerdict::Refuted,
            (Some(true), ClaimVerdict::Refuted) => ClaimVerdict::Partly,
            (Some(true), ClaimVerdict::Confirmed) => ClaimVerdict::Confirmed,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "002-residual-allocations-from-previous-sessions",
        source: Source::SEED_002,
        quote: "If this system detects insufficient free memory – a condition influenced not only by currently running processes but also by residual allocations from previous sessions or improperly closed contexts – the out-of-memory error is raised.",
        judged_by: "forked-child",
        control: Control::Run("exit-and-kill"),
        reach: Reach::AtBestPartly(FORKED_CHILD_ONLY),
        judge: back_after_exit_and_kill,
    },
    Claim {
        id: "002-implicit-cleanup-unreliable",
        source: Source::SEED_002,
        quote: "After all CUDA operations are complete, ensure that the context is destroyed using appropriate functions.  Avoid relying solely on implicit cleanup.",
        judged_by: "forked-child-destroyed",
        control: Control::Run("destroyed-no-fork"),
        reach: Reach::AtBestPartly(
            "implicit cleanup fails only while a child the process forked holds its context: without \
             one, the driver gives every byte back when the process exits or is killed (exit-and-kill)",
        ),
        // One run, two holders that exit beside a forked child: the first
        // leaves its cleanup to the driver, the second destroys its context
        // first, as the sentence says (its memory not freed). Implicit
        // cleanup leaves the memory taken and the destroyed context gives it
        // back: confirmed. Implicit cleanup gives it back already (the
        // advice is not needed): refuted; so too if destroying the context
        // does not give it back. The control is the same run without the
        // forked child (destroyed-no-fork), where the driver's own cleanup
        // is complete. forked-child-torn-down, which frees the memory before
        // destroying the context, is recorded beside it.
        judge: |o: &Outcome| {
            ClaimVerdict::confirmed_if_all([
                o.flag(AFTER_AN_IMPLICIT_EXIT).map(|back| !back),
                o.flag(AFTER_EXIT),
            ])
        },
    },
];
