//! Seed 001: "This is exacerbated in situations with limited GPU memory or
//! when running multiple processes concurrently that utilize CUDA." "This"
//! is the sentence before it: failures that come and go, where
//! "contention or improper cleanup causes intermittent problems".
//!
//! Two by two: one process or two, on a GPU of 32 GiB or of 24 GiB (a
//! ballast the trial holds leaves that much free, so the sizes are the same
//! on every GPU). In each of twenty rounds every process waits a random
//! delay, allocates what it needs, holds it 20 ms and frees it, and leaves
//! a sixteenth of it allocated: the improper cleanup. Each arm counts
//! the rounds in which an allocation failed. The same four arms with a need
//! of 4 GiB, which fits all four, are the control.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, PAGE};
use casebook_model::Recorder;
use casebook_runtime::worker;
use cudarc::driver::result;

use crate::names::*;

const DIR_ENV: &str = "CASEBOOK_DEMAND";
const NEED_ENV: &str = "CASEBOOK_DEMAND_NEED";
const SEED_ENV: &str = "CASEBOOK_DEMAND_SEED";
const PROCESSES_ENV: &str = "CASEBOOK_DEMAND_PROCESSES";
const ROUNDS: usize = 20;
const HOLD: Duration = Duration::from_millis(20);
const LONGEST_DELAY_MS: u64 = 200;
/// What each round leaves allocated: this fraction of what it needed.
const LEFT_BEHIND: usize = 16;
/// The two GPUs the arms stand on: what the ballast leaves free.
const LARGER: usize = 32 << 30;
const SMALLER: usize = 24 << 30;
const NEED: usize = 16 << 30;
const NEED_THAT_FITS: usize = 4 << 30;

pub fn crowded(rec: &mut Recorder) -> anyhow::Result<()> {
    two_by_two(rec, NEED)
}

// ANCHOR: fitting
/// The control: the same four arms, each process needing 4 GiB a round.
pub fn fitting(rec: &mut Recorder) -> anyhow::Result<()> {
    two_by_two(rec, NEED_THAT_FITS)
}
// ANCHOR_END: fitting

fn two_by_two(rec: &mut Recorder, need: usize) -> anyhow::Result<()> {
    match worker::role() {
        Some(role) => process(rec, &role),
        None => parent(rec, need),
    }
}

/// One arm: how many processes, and what the GPU leaves them.
struct Arm {
    processes: usize,
    gpu: usize,
    failed: &'static str,
}

const ARMS: [Arm; 4] = [
    Arm {
        processes: 1,
        gpu: LARGER,
        failed: "an allocation is refused in some round: one process, 32 GiB",
    },
    Arm {
        processes: 2,
        gpu: LARGER,
        failed: "an allocation is refused in some round: two processes, 32 GiB",
    },
    Arm {
        processes: 1,
        gpu: SMALLER,
        failed: "an allocation is refused in some round: one process, 24 GiB",
    },
    Arm {
        processes: 2,
        gpu: SMALLER,
        failed: "an allocation is refused in some round: two processes, 24 GiB",
    },
];

fn parent(rec: &mut Recorder, need: usize) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    // The delays differ from run to run; the seed goes to the report, below
    // 2^53 so that the report's number is the seed itself.
    let seed = (SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos() as u64 % (1 << 53)) | 1;
    rec.measure(DEMAND_SEED, seed as f64);
    rec.measure(DEMAND_NEED, need as f64);
    let at_start = device::free_bytes(rec, &ctx)?;
    let mut failed = [0usize; 4];
    for (i, arm) in ARMS.iter().enumerate() {
        // Once the last arm's workers have ended and the driver has taken
        // back what they held, to within a page of the start.
        let free =
            device::wait_for_free(&ctx, at_start.saturating_sub(PAGE), Duration::from_secs(10))?;
        let ballast = (free.saturating_sub(arm.gpu)) / PAGE * PAGE;
        rec.point(ARM_GPU_BYTES, i as f64, (free - ballast) as f64);
        // SAFETY: freed below, used by nothing.
        let held = rec.step(
            &format!("cuMemAlloc (ballast: all but {} GiB)", arm.gpu >> 30),
            unsafe { result::malloc_sync(ballast) },
        )?;
        let refused = arm_rounds(arm.processes, need, seed.wrapping_add(i as u64));
        // SAFETY: allocated above, used by nothing.
        rec.step("cuMemFree (ballast)", unsafe { result::free_sync(held) })?;
        failed[i] = refused?;
        rec.fact_named(arm.failed, failed[i] > 0);
        rec.point(FAILED_ROUNDS_BY_ARM, i as f64, failed[i] as f64);
    }
    let [one_larger, two_larger, one_smaller, _] = failed;
    rec.fact(LESS_MEMORY_ADDS_FAILED_ROUNDS, one_smaller > one_larger);
    rec.fact(A_SECOND_PROCESS_ADDS_FAILED_ROUNDS, two_larger > one_larger);
    Ok(())
}

/// Runs `processes` workers through the rounds; how many rounds had an
/// allocation refused.
fn arm_rounds(processes: usize, need: usize, seed: u64) -> anyhow::Result<usize> {
    let dir = std::env::temp_dir().join(format!("casebook-demand-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let roles: Vec<String> = (0..processes)
        .map(|i| format!("process {}", i + 1))
        .collect();
    let env = [
        (DIR_ENV, dir.to_string_lossy().into_owned()),
        (NEED_ENV, need.to_string()),
        (SEED_ENV, seed.to_string()),
        (PROCESSES_ENV, processes.to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let outcomes = worker::run_together(&roles, Duration::from_secs(60), &env);
    let _ = std::fs::remove_dir_all(&dir);
    let mut refused = [false; ROUNDS];
    for (role, o) in roles.iter().zip(outcomes?) {
        let Some(list) = o
            .fact(ROUNDS_THIS_PROCESS_FAILED)
            .and_then(|v| v.as_array())
        else {
            anyhow::bail!("{role} recorded no rounds ({})", o.termination);
        };
        for r in list.iter().filter_map(|v| v.as_u64()) {
            refused[r as usize] = true;
        }
    }
    Ok(refused.iter().filter(|r| **r).count())
}

// ANCHOR: rounds
fn process(rec: &mut Recorder, role: &str) -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::var(DIR_ENV)?);
    let need: usize = std::env::var(NEED_ENV)?.parse()?;
    let processes: usize = std::env::var(PROCESSES_ENV)?.parse()?;
    // This run's seed, told apart by the role's last character.
    let mut state = std::env::var(SEED_ENV)?.parse::<u64>()?
        ^ (u64::from(role.as_bytes()[role.len() - 1]) << 32);
    let _ctx = device::context(rec)?;
    let mut left_behind = Vec::new();
    let mut failed = Vec::new();
    for round in 0..ROUNDS {
        crate::arrive(&dir, role, &round.to_string(), processes)?;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::thread::sleep(Duration::from_millis(state % LONGEST_DELAY_MS));
        // SAFETY: freed below, used by nothing; a refusal is the finding.
        match rec.tolerate("cuMemAlloc (the round's need)", unsafe {
            result::malloc_sync(need)
        }) {
            Ok(p) => {
                std::thread::sleep(HOLD);
                // SAFETY: allocated above, used by nothing.
                rec.step("cuMemFree", unsafe { result::free_sync(p) })?;
            }
            Err(_) => failed.push(round),
        }
        // The improper cleanup: a sixteenth of the need stays allocated.
        // SAFETY: never used; the process's end frees it.
        if let Ok(p) = rec.tolerate("cuMemAlloc (left behind)", unsafe {
            result::malloc_sync(need / LEFT_BEHIND / PAGE * PAGE)
        }) {
            left_behind.push(p);
        }
    }
    rec.fact(ROUNDS_THIS_PROCESS_FAILED, failed);
    Ok(())
}
// ANCHOR_END: rounds
