//! Seed 002: "This is especially insidious because the leak might not be
//! apparent within the main application's code."
//!
//! Three calls that each leak, run under compute-sanitizer's leak check:
//! where does its report say each leaked allocation was made? The calls
//! leak a cuBLAS handle each (its workspace, allocated inside cuBLAS), or,
//! in the control, destroy their handle and leak an allocation of their own
//! of the same size (cuMemAlloc in the program's code).

use std::path::Path;
use std::time::Duration;

use casebook_driver::RecordSteps;
use casebook_model::{Recorder, Termination};
use casebook_runtime::worker::{self, LEAK_CHECK};
use cudarc::cublas::result as blas;
use cudarc::driver::result;

use crate::names::*;
use crate::{gemm, operands};

/// How many calls leak.
const CALLS: usize = 3;
/// The leaks the reading counts: 1 MiB or more (a handle's workspace, the
/// control's own allocation), not the few bytes a library may keep.
const LARGE: u64 = 1 << 20;
/// What the control's call leaks of its own: what a handle's workspace
/// takes (broken's bytes per handle on the H100).
const OWN_BYTES: usize = 64 << 20;

/// What each call leaks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leak {
    /// Its cuBLAS handle: no cublasDestroy.
    CublasHandle,
    /// An allocation of its own, its handle destroyed.
    OwnAllocation,
}

impl Leak {
    fn role(self) -> &'static str {
        match self {
            Leak::CublasHandle => "three calls that each leak their cuBLAS handle",
            Leak::OwnAllocation => "three calls that each leak an allocation of their own",
        }
    }
}

// ANCHOR: handles_under_leak_check
pub fn handles_under_leak_check(rec: &mut Recorder) -> anyhow::Result<()> {
    leak_check(rec, Leak::CublasHandle)
}
// ANCHOR_END: handles_under_leak_check

// ANCHOR: own_leak_under_leak_check
pub fn own_leak_under_leak_check(rec: &mut Recorder) -> anyhow::Result<()> {
    leak_check(rec, Leak::OwnAllocation)
}
// ANCHOR_END: own_leak_under_leak_check

fn leak_check(rec: &mut Recorder, leak: Leak) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(leak.role()) {
        return calls(rec, leak);
    }
    if casebook_model::reduced_for_sanitizer(rec) {
        // A tool inside the tool: the sanitizer's own pass runs the program.
        return Ok(());
    }
    let Ok((run, report)) = worker::report_under(LEAK_CHECK, leak.role(), Duration::from_secs(300))
    else {
        rec.fact(THE_TOOL_COULD_NOT_BE_STARTED, true);
        return Ok(());
    };
    rec.fact(
        THE_PROGRAM_RAN_TO_ITS_END_UNDER_THE_TOOL,
        run.termination == Termination::Completed,
    );
    let program = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let leaks = leaks(&report);
    let large: Vec<&Leaked> = leaks.iter().filter(|l| l.bytes >= LARGE).collect();
    rec.measure(LEAKS_OF_A_MIB_OR_MORE_REPORTED, large.len() as f64);
    let libraries = |l: &&Leaked| l.allocated_in.as_deref().is_some_and(is_cublas);
    rec.fact(
        EVERY_LARGE_LEAK_WAS_ALLOCATED_INSIDE_CUBLAS,
        !large.is_empty() && large.iter().all(libraries),
    );
    rec.fact(
        EVERY_LARGE_LEAK_S_BACKTRACE_REACHES_THE_PROGRAM,
        !large.is_empty()
            && large
                .iter()
                .all(|l| l.frames.iter().any(|m| file_name(m) == program)),
    );
    if let Some(first) = large.first() {
        rec.fact(
            WHERE_THE_FIRST_LARGE_LEAK_WAS_ALLOCATED,
            first
                .allocated_in
                .as_deref()
                .map(file_name)
                .unwrap_or("(no frame)"),
        );
    }
    Ok(())
}

/// The calls, in the worker under the tool: each creates a cuBLAS handle
/// and runs a GEMM on it; then either leaves the handle, or destroys it and
/// leaves an allocation of its own.
fn calls(rec: &mut Recorder, leak: Leak) -> anyhow::Result<()> {
    let g = operands(rec)?;
    for _ in 0..CALLS {
        let handle = rec.step("cublasCreate", blas::create_handle())?;
        gemm(rec, &g, handle)?;
        rec.step("cuCtxSynchronize", g.ctx.synchronize())?;
        if leak == Leak::OwnAllocation {
            rec.step("cublasDestroy", unsafe { blas::destroy_handle(handle) })?;
            // BUG: an allocation of the call's own, never freed.
            rec.step("cuMemAlloc", unsafe { result::malloc_sync(OWN_BYTES) })?;
        }
        // BUG (the other leak): no cublasDestroy(handle).
    }
    for ptr in [g.a, g.b, g.c] {
        rec.step("cuMemFree", unsafe { result::free_sync(ptr) })?;
    }
    Ok(())
}

/// One leaked allocation of the leak check's report: its size, the module
/// of each frame of its saved backtrace, and the first module below the
/// driver's entry point (the code that asked for the memory).
struct Leaked {
    bytes: u64,
    frames: Vec<String>,
    allocated_in: Option<String>,
}

/// The leaked allocations of a leak check's report: each "Leaked N bytes
/// at …" and the "Host Frame: … in MODULE" lines after it.
fn leaks(report: &str) -> Vec<Leaked> {
    let mut out: Vec<Leaked> = Vec::new();
    for line in report.lines() {
        let line = line.trim_start_matches('=').trim();
        if let Some(rest) = line.strip_prefix("Leaked ") {
            let bytes = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.replace(',', "").parse().ok())
                .unwrap_or(0);
            out.push(Leaked {
                bytes,
                frames: Vec::new(),
                allocated_in: None,
            });
        } else if line.starts_with("Host Frame")
            && let (Some(leak), Some((_, module))) = (out.last_mut(), line.rsplit_once(" in "))
        {
            let module = module.trim().to_owned();
            if leak.allocated_in.is_none() && !file_name(&module).starts_with("libcuda.so") {
                leak.allocated_in = Some(module.clone());
            }
            leak.frames.push(module);
        }
    }
    out
}

fn file_name(module: &str) -> &str {
    Path::new(module)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(module)
}

fn is_cublas(module: &str) -> bool {
    file_name(module).starts_with("libcublas")
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
========= Leaked 67,108,864 bytes at 0x7f0000000000
=========     Saved host backtrace up to driver entry point at allocation time
=========         Host Frame: [0x2a1b3] in /usr/lib/x86_64-linux-gnu/libcuda.so.1
=========         Host Frame: [0x5c1d2] in /usr/local/cuda/lib64/libcublasLt.so.13
=========         Host Frame: main [0x1234] in /tmp/bundle/casebook
=========
========= Leaked 1,024 bytes at 0x7f0004000000
=========         Host Frame: [0x2a1b3] in /usr/lib/x86_64-linux-gnu/libcuda.so.1
=========         Host Frame: [0x9999] in /tmp/bundle/casebook
";

    #[test]
    fn a_leak_is_placed_in_the_first_module_below_the_driver() {
        let l = leaks(REPORT);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].bytes, 67_108_864);
        assert!(l[0].allocated_in.as_deref().is_some_and(is_cublas));
        assert_eq!(l[0].frames.len(), 3);
        assert_eq!(
            l[1].allocated_in.as_deref().map(file_name),
            Some("casebook")
        );
        assert!(!l[1].allocated_in.as_deref().is_some_and(is_cublas));
    }
}
