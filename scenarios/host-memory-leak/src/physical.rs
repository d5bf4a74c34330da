//! Seed 003's example 2 on a host short of physical memory: the process
//! runs in a memory cgroup of its own (cgroup v2, `memory.max`, no swap),
//! limited to what it uses once CUDA has started and 512 MiB more. The
//! article's call, whose `new float[size]` is never deleted, is made 100
//! times (400 MiB kept); then CUDA is asked for 256 MiB of pinned host
//! memory, which the cgroup counts. In the control each call frees its
//! buffer. The calls and the request run in a worker, so that what the
//! kernel does to it is seen from outside. Seed 002's pinned memory the same
//! way: each call takes its 4 MiB buffer as pinned host memory
//! (cuMemHostAlloc) and keeps it, or, in the control, gives it back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use casebook_driver::{RecordSteps, device};
use casebook_model::{CGROUP_ROOT, Outcome, Recorder, Termination};
use casebook_runtime::worker;
use cudarc::driver::result;

use crate::names::*;

/// The worker's cgroup, from its parent.
const CGROUP_ENV: &str = "CASEBOOK_MEMORY_CGROUP";
/// Above what the worker uses once CUDA has started.
const ROOM: u64 = 512 << 20;
const CALLS: usize = 100;
/// The article's buffer: 1M floats.
const FLOATS: usize = 1 << 20;
/// The pinned host memory asked for after the calls.
const PINNED: usize = 256 << 20;

/// What each call's host buffer is, and whether the call frees it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Calls {
    Leak,
    Delete,
    PinnedLeak,
    PinnedFree,
}

impl Calls {
    fn role(self) -> &'static str {
        match self {
            Calls::Leak => "the article's calls under a memory cgroup's limit",
            Calls::Delete => "the article's calls, each freeing its buffer, under the limit",
            Calls::PinnedLeak => "calls keeping a pinned buffer each, under the limit",
            Calls::PinnedFree => "calls giving back a pinned buffer each, under the limit",
        }
    }
}

// ANCHOR: physical_limit
pub fn physical_limit(rec: &mut Recorder) -> anyhow::Result<()> {
    under_a_memory_limit(rec, Calls::Leak)
}
// ANCHOR_END: physical_limit

// ANCHOR: physical_limit_fixed
pub fn physical_limit_fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    under_a_memory_limit(rec, Calls::Delete)
}
// ANCHOR_END: physical_limit_fixed

// ANCHOR: pinned_physical_limit
pub fn pinned_physical_limit(rec: &mut Recorder) -> anyhow::Result<()> {
    under_a_memory_limit(rec, Calls::PinnedLeak)
}
// ANCHOR_END: pinned_physical_limit

// ANCHOR: pinned_physical_limit_fixed
pub fn pinned_physical_limit_fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    under_a_memory_limit(rec, Calls::PinnedFree)
}
// ANCHOR_END: pinned_physical_limit_fixed

fn under_a_memory_limit(rec: &mut Recorder, calls: Calls) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(calls.role()) {
        return limited(rec, calls);
    }
    let group = Group::new()?;
    let path = group.0.to_string_lossy().into_owned();
    let outcome = worker::run_replayed(
        rec,
        calls.role(),
        Duration::from_secs(120),
        &[(CGROUP_ENV, path.as_str())],
    )?;
    let oom_kills = group.oom_kills();
    drop(group);
    let killed = matches!(&outcome.termination,
        Termination::Signaled { signal } if signal.contains("SIGKILL"));
    rec.fact(
        THE_KERNEL_KILLED_THE_WORKER_FOR_THE_CGROUP_S_MEMORY,
        killed && oom_kills > 0,
    );
    rec.fact(
        UNDER_THE_CGROUP_S_LIMIT_THE_PINNED_REQUEST_IS_SERVED,
        served(&outcome),
    );
    Ok(())
}

/// Whether the worker's request for pinned memory returned with its memory.
fn served(worker: &Outcome) -> bool {
    worker.flag(THE_PINNED_REQUEST_RETURNED_SERVED) == Some(true)
}

/// In the worker: joins the cgroup, starts CUDA, sets the limit, makes the
/// calls, then asks for the pinned memory.
fn limited(rec: &mut Recorder, calls: Calls) -> anyhow::Result<()> {
    let group = PathBuf::from(std::env::var(CGROUP_ENV)?);
    std::fs::write(group.join("cgroup.procs"), std::process::id().to_string())?;
    let _ctx = device::context(rec)?;
    let used = read_u64(&group.join("memory.current"))?;
    std::fs::write(group.join("memory.max"), (used + ROOM).to_string())?;
    rec.measure(LIMIT_ABOVE_WHAT_THE_PROCESS_USES, ROOM as f64);
    for _ in 0..CALLS {
        match calls {
            Calls::Leak | Calls::Delete => pageable_call(calls),
            Calls::PinnedLeak | Calls::PinnedFree => pinned_call(calls)?,
        }
    }
    rec.measure(
        CGROUP_MEMORY_AFTER_THE_CALLS,
        read_u64(&group.join("memory.current"))? as f64,
    );
    let got = rec.step("cuMemHostAlloc (256 MiB, under the limit)", unsafe {
        result::malloc_host(PINNED, 0)
    })?;
    // Touched, as a staging buffer would be.
    unsafe { std::ptr::write_bytes(got as *mut u8, 1, PINNED) };
    rec.fact(THE_PINNED_REQUEST_RETURNED_SERVED, true);
    rec.step("cuMemFreeHost", unsafe { result::free_host(got) })?;
    Ok(())
}

/// Seed 003's call: its host buffer from new, deleted or not.
fn pageable_call(calls: Calls) {
    // ANCHOR: call
    // new float[size], filled (black_box: the compiler may not drop a
    // buffer that nothing reads)
    let h_data: Vec<f32> = std::hint::black_box((0..FLOATS).map(|i| i as f32).collect());
    if calls == Calls::Delete {
        drop(h_data); // the control's one change: delete[] h_data
    } else {
        std::mem::forget(h_data); // Missing: delete[] h_data; // Host memory leak!
    }
    // ANCHOR_END: call
}

/// The same buffer as pinned host memory, given back or not.
fn pinned_call(calls: Calls) -> anyhow::Result<()> {
    // ANCHOR: pinned_call
    let bytes = FLOATS * std::mem::size_of::<f32>();
    let h_pinned = unsafe { result::malloc_host(bytes, 0) }?; // cudaMallocHost
    unsafe { std::ptr::write_bytes(h_pinned as *mut u8, 1, bytes) }; // filled
    if calls == Calls::PinnedFree {
        unsafe { result::free_host(h_pinned) }?; // the control's one change: cudaFreeHost
    } // else: never given back
    // ANCHOR_END: pinned_call
    Ok(())
}

fn read_u64(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::read_to_string(path)?.trim().parse()?)
}

/// A memory cgroup of this process's own, without swap, removed when
/// dropped (once empty).
struct Group(PathBuf);

impl Group {
    fn new() -> anyhow::Result<Group> {
        let root = Path::new(CGROUP_ROOT);
        std::fs::write(root.join("cgroup.subtree_control"), "+memory").map_err(|e| {
            anyhow::anyhow!(
                "a memory cgroup cannot be made here ({e}): this variant needs root and a \
                 writable cgroup v2 tree at {CGROUP_ROOT}"
            )
        })?;
        let path = root.join(format!("casebook-{}", std::process::id()));
        std::fs::create_dir(&path)?;
        let group = Group(path);
        std::fs::write(group.0.join("memory.swap.max"), "0")?;
        Ok(group)
    }

    /// How many processes the kernel's OOM killer killed in the group.
    fn oom_kills(&self) -> u64 {
        std::fs::read_to_string(self.0.join("memory.events"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}
