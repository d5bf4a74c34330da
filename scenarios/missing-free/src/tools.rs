//! Seed 002: "Employ CUDA profiling tools (such as NVIDIA Nsight Compute) to
//! identify memory leaks or inefficient memory usage. These tools allow the
//! visualization of memory allocation and deallocation patterns, pinpoint the
//! exact sources of memory leaks, often hidden deep within the program."
//!
//! The broken model call, once, at the article's size (a 4 MiB buffer never
//! freed), run under Nsight Compute (ncu): does its report name the leak? In
//! the control the same program runs under compute-sanitizer's leak check.

use std::time::Duration;

use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::{Recorder, Termination};
use casebook_runtime::worker::{self, LEAK_CHECK};

use crate::names::*;
use crate::{KERNEL, Model, SAMPLE};

const PROGRAM: &str = "the broken model call, once";
const NSIGHT_COMPUTE: &[&str] = &["ncu", "--target-processes", "all"];

pub fn under_ncu(rec: &mut Recorder) -> anyhow::Result<()> {
    report(rec, NSIGHT_COMPUTE)
}

// ANCHOR: under_leak_check
/// The control: the same program under compute-sanitizer's leak check.
pub fn under_leak_check(rec: &mut Recorder) -> anyhow::Result<()> {
    report(rec, LEAK_CHECK)
}
// ANCHOR_END: under_leak_check

// ANCHOR: report
fn report(rec: &mut Recorder, tool: &[&str]) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(PROGRAM) {
        return leak_once(rec);
    }
    if casebook_model::reduced_for_sanitizer(rec) {
        // A tool inside the tool: the sanitizer's own pass runs the program.
        return Ok(());
    }
    rec.fact(THE_TOOL, tool.join(" "));
    let Ok((run, report)) = worker::report_under(tool, PROGRAM, Duration::from_secs(300)) else {
        rec.fact(THE_TOOL_COULD_NOT_BE_STARTED, true);
        return Ok(());
    };
    rec.fact(
        THE_PROGRAM_RAN_TO_ITS_END_UNDER_THE_TOOL,
        run.termination == Termination::Completed,
    );
    rec.fact(THE_TOOL_S_REPORT_NAMES_THE_KERNEL, report.contains(KERNEL));
    rec.fact(
        THE_TOOL_S_REPORT_NAMES_THE_LEAK,
        report.to_lowercase().contains("leak"),
    );
    Ok(())
}
// ANCHOR_END: report

/// The article's call at its size: its 1M floats' buffer is never freed.
fn leak_once(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, KERNEL)?;
    let (input, expected) = crate::sample();
    let model = Model {
        stream: ctx.default_stream(),
        ctx,
        scale,
        bytes: SAMPLE * 4,
        input,
        expected,
    };
    crate::broken::model_call(rec, &model)?;
    rec.step("cuCtxSynchronize", model.ctx.synchronize())?;
    Ok(())
}
