//! Nothing outlives a killed harness, on the CPU: a run whose trials have
//! each started a process of their own is killed with SIGKILL mid-run, and
//! neither the trials nor what they started may survive it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use casebook_harness::child;
use casebook_harness::leftover::alive;
use casebook_harness::runner::scheduler::Placement;
use casebook_harness::runner::{self, Trial as Planned};
use casebook_model::{Program, Recorder, Role, Scenario, Symptom, Variant};
use libtest_mimic::{Arguments, Failed, Trial};

/// Set in the run the test kills: where its trials write their pids.
const DIR_ENV: &str = "CASEBOOK_ORPHANS_DIR";

/// Starts a process of its own (in its process group, as a worker or a
/// data loader would), writes both pids to a file, and waits to be killed.
fn starts_a_process(_: &mut Recorder) -> anyhow::Result<()> {
    let started = Command::new("sleep").arg("600").spawn()?;
    let dir = PathBuf::from(std::env::var(DIR_ENV)?);
    let me = std::process::id();
    let tmp = dir.join(format!("{me}.tmp"));
    std::fs::write(&tmp, format!("{me} {}", started.id()))?;
    std::fs::rename(tmp, dir.join(format!("{me}.pids")))?;
    std::mem::forget(started);
    std::thread::sleep(Duration::from_secs(600));
    Ok(())
}

fn catalog() -> Vec<Scenario> {
    let v = |name| {
        Variant::new(
            name,
            Role::Broken,
            casebook_model::Expect::Fails(Symptom::TimedOut),
            Program::host(starts_a_process),
        )
        .timeout(Duration::from_secs(600))
    };
    vec![Scenario {
        slug: "orphans",
        title: "a killed harness leaves nothing behind",
        cause: "test-only variants that outlive their welcome",
        fix: "",
        symptoms: &[],
        requires: &[],
        reports: &[],
        claims: &[],
        variants: vec![v("first"), v("second")],
    }]
}

/// The run the test kills: both trials side by side.
fn doomed_run() -> ExitCode {
    let catalog = catalog();
    let s = &catalog[0];
    let trials: Vec<Planned> = s
        .variants
        .iter()
        .map(|variant| Planned {
            scenario: s,
            variant,
        })
        .collect();
    runner::run(
        &trials,
        2,
        &Placement::default(),
        &Default::default(),
        |_, _, _| {},
    );
    ExitCode::SUCCESS
}

/// The pids every trial wrote, once all have: (trial, what it started).
fn wait_for_pids(dir: &Path, trials: usize) -> Result<Vec<(u32, u32)>, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pids: Vec<(u32, u32)> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "pids"))
            .filter_map(|e| {
                let text = std::fs::read_to_string(e.path()).ok()?;
                let (a, b) = text.split_once(' ')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .collect();
        if pids.len() == trials {
            return Ok(pids);
        }
        if Instant::now() >= deadline {
            return Err(format!("only {} of {trials} trials started", pids.len()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sigkill_leaves_nothing() -> Result<(), Failed> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut harness = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .env(DIR_ENV, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pids = match wait_for_pids(dir.path(), 2) {
        Ok(pids) => pids,
        Err(e) => {
            let _ = harness.kill();
            let _ = harness.wait();
            return Err(e.into());
        }
    };
    // SAFETY: plain syscall on the process this test started.
    unsafe { libc::kill(harness.id() as libc::pid_t, libc::SIGKILL) };
    harness.wait().map_err(|e| e.to_string())?;
    let all: Vec<(u32, &str)> = pids
        .iter()
        .flat_map(|&(trial, started)| [(trial, "a trial"), (started, "what a trial started")])
        .collect();
    // The kernel delivers the parent-death signal at once; the reaper
    // needs a moment to read the closed pipe.
    let deadline = Instant::now() + Duration::from_secs(5);
    while all.iter().any(|&(pid, _)| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<String> = all
        .iter()
        .filter(|&&(pid, _)| alive(pid))
        .map(|&(pid, what)| format!("{what} (pid {pid})"))
        .collect();
    for &(pid, _) in &all {
        // SAFETY: plain syscall; cleans up after a failure.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    if survivors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "outlived the harness killed with SIGKILL: {}",
            survivors.join(", ")
        )
        .into())
    }
}

fn main() -> ExitCode {
    child::serve_if_child(&catalog());
    if std::env::var_os(DIR_ENV).is_some() {
        return doomed_run();
    }
    let args = Arguments::from_args();
    let trials = vec![Trial::test(
        "orphans::a-harness-killed-with-sigkill-leaves-no-process-behind",
        sigkill_leaves_nothing,
    )];
    libtest_mimic::run(&args, trials).exit_code()
}
