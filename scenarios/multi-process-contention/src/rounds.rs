//! Seed 001: "the seemingly random nature of the failures often indicates
//! that the issue is related to shared resources, where contention or
//! improper cleanup causes intermittent problems."
//!
//! Two processes share the GPU for twenty rounds, with no barrier between
//! them but the start of each round: in each, a process reads the free
//! memory, waits a delay drawn from 0 to 400 ms, takes 55% of what it read,
//! holds it 20 ms and frees it. Where their holds overlap, the second allocation fails;
//! where they do not, both succeed. In the control one process does the same
//! rounds alone.

use std::path::PathBuf;
use std::time::Duration;

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, PAGE};
use casebook_model::Recorder;
use casebook_runtime::worker;
use cudarc::driver::result;

use crate::names::*;

const DIR_ENV: &str = "CASEBOOK_ROUNDS";
const ROUNDS: usize = 20;
const SHARE: f64 = 0.55;
const HOLD: Duration = Duration::from_millis(20);
const LONGEST_DELAY_MS: u64 = 400;

pub fn two_processes(rec: &mut Recorder) -> anyhow::Result<()> {
    rounds(rec, 2)
}

// ANCHOR: one_process
/// The control: one process, alone on the GPU, the same rounds.
pub fn one_process(rec: &mut Recorder) -> anyhow::Result<()> {
    rounds(rec, 1)
}
// ANCHOR_END: one_process

fn rounds(rec: &mut Recorder, processes: usize) -> anyhow::Result<()> {
    match worker::role() {
        Some(role) => process(rec, &role, processes),
        None => parent(rec, processes),
    }
}

fn parent(rec: &mut Recorder, processes: usize) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("casebook-rounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let env = dir.to_string_lossy().into_owned();
    let roles: Vec<String> = (0..processes)
        .map(|i| format!("process {}", i + 1))
        .collect();
    let outcomes = worker::run_together(&roles, Duration::from_secs(120), &[(DIR_ENV, &env)])?;
    let _ = std::fs::remove_dir_all(&dir);
    // A round failed where any process's allocation in it failed. Which
    // rounds, and which process was refused, the scheduler decides from run
    // to run (two processes' holds that miss each other by a millisecond in
    // one run meet in the next): they go to the report as a series, and the
    // snapshot keeps what holds on every run, whether failures come and go.
    let mut refused = [0usize; ROUNDS];
    for (i, o) in outcomes.iter().enumerate() {
        let role = format!("process {}", i + 1);
        rec.fact_named(&format!("{role}: ended"), o.termination.to_string());
        let Some(list) = o
            .fact(ROUNDS_THIS_PROCESS_FAILED)
            .and_then(|v| v.as_array())
        else {
            anyhow::bail!("{role} recorded no rounds");
        };
        for r in list.iter().filter_map(|v| v.as_u64()) {
            refused[r as usize] += 1;
        }
    }
    for (round, n) in refused.iter().enumerate() {
        rec.point(PROCESSES_REFUSED, round as f64, *n as f64);
    }
    let n = refused.iter().filter(|n| **n > 0).count();
    rec.measure(ROUNDS_RUN, ROUNDS as f64);
    rec.measure(ROUNDS_WITH_A_FAILED_ALLOCATION, n as f64);
    rec.fact(
        FAILURES_ACROSS_THE_ROUNDS,
        match n {
            0 => "none",
            n if n == ROUNDS => "every round",
            _ => "some rounds, not others",
        },
    );
    Ok(())
}

// ANCHOR: rounds
fn process(rec: &mut Recorder, role: &str, processes: usize) -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::var(DIR_ENV)?);
    let ctx = device::context(rec)?;
    // The delays are drawn from a seed of the process's own, the same on
    // every run; what the operating system adds is not.
    let mut state =
        0x9E37_79B9_7F4A_7C15u64 ^ role.len() as u64 ^ role.as_bytes()[role.len() - 1] as u64;
    let mut failed = Vec::new();
    for round in 0..ROUNDS {
        crate::arrive(&dir, role, &round.to_string(), processes)?;
        // Sized from the free memory seen as the round starts, as if the
        // GPU were this process's.
        let free = device::free_bytes(rec, &ctx)?;
        let bytes = (free as f64 * SHARE) as usize / PAGE * PAGE;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::thread::sleep(Duration::from_millis(state % LONGEST_DELAY_MS));
        // SAFETY: freed below, used by nothing; a refusal is the finding.
        let held = rec.tolerate("cuMemAlloc (55% of the free memory)", unsafe {
            result::malloc_sync(bytes)
        });
        match held {
            Ok(p) => {
                std::thread::sleep(HOLD);
                // SAFETY: allocated above, used by nothing.
                rec.step("cuMemFree", unsafe { result::free_sync(p) })?;
            }
            Err(_) => failed.push(round),
        }
    }
    rec.fact(ROUNDS_THIS_PROCESS_FAILED, failed);
    Ok(())
}
// ANCHOR_END: rounds
