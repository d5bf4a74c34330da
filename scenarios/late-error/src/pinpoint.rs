//! Seed 000: "Using a debugger to pinpoint the exact location of errors is
//! crucial". The broken program, whose fault an unrelated copy reports, run
//! under compute-sanitizer (memcheck): does it name the kernel that faulted,
//! which the program's own errors do not? In the control it runs under
//! compute-sanitizer's racecheck, a tool that runs the same program but
//! checks shared-memory races, not the addresses a kernel writes. (cuda-gdb
//! is not run: on these machines its result varies from run to run;
//! docs/evidence/cuda-gdb.md.)

use std::time::Duration;

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::KERNEL;
use crate::names::*;

const PROGRAM: &str = "the broken program";
const MEMCHECK: &[&str] = &["compute-sanitizer", "--tool", "memcheck"];
const RACECHECK: &[&str] = &["compute-sanitizer", "--tool", "racecheck"];

pub fn under_tools(rec: &mut Recorder) -> anyhow::Result<()> {
    pinpoint(rec, &[MEMCHECK])
}

// ANCHOR: under_racecheck
/// The control: the program under a tool that does not check addresses.
pub fn under_racecheck(rec: &mut Recorder) -> anyhow::Result<()> {
    pinpoint(rec, &[RACECHECK])
}
// ANCHOR_END: under_racecheck

// ANCHOR: pinpoint
fn pinpoint(rec: &mut Recorder, tools: &[&[&str]]) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(PROGRAM) {
        return crate::broken::run(rec);
    }
    if casebook_model::reduced_for_sanitizer(rec) {
        // A tool inside the tool: the sanitizer's own pass runs the program.
        return Ok(());
    }
    // The program's own report: what its calls' errors say.
    let plain = worker::run(PROGRAM, Duration::from_secs(60), &[])?;
    let own: Vec<String> = plain
        .steps
        .iter()
        .filter_map(|s| s.message.clone())
        .collect();
    let own_names_it = own.iter().any(|m| m.contains(KERNEL));
    rec.fact(
        THE_PROGRAM_S_OWN_ERRORS_NAME_THE_FAULTING_KERNEL,
        own_names_it,
    );
    let (mut named_by, mut not_started) = (Vec::new(), Vec::new());
    for tool in tools {
        match worker::run_under(tool, PROGRAM, Duration::from_secs(120), &[]) {
            Ok(run) => {
                // What the program did under the tool, and how it ended.
                worker::replay(rec, &format!("under {}", tool[0]), &run);
                // The tool's own report, its lines marked "=========", not
                // what the program printed beside it.
                let report_names_it = run
                    .stderr_tail
                    .lines()
                    .any(|l| l.starts_with("=========") && l.contains(KERNEL));
                if report_names_it {
                    named_by.push(tool[0]);
                }
            }
            Err(_) => not_started.push(tool[0]),
        }
    }
    rec.fact(TOOLS_THAT_NAME_THE_FAULTING_KERNEL, &named_by);
    if !not_started.is_empty() {
        rec.fact(TOOLS_THAT_COULD_NOT_BE_STARTED, &not_started);
    }
    rec.fact(
        A_REPORT_NAMES_THE_FAULTING_KERNEL,
        own_names_it || !named_by.is_empty(),
    );
    Ok(())
}
// ANCHOR_END: pinpoint
