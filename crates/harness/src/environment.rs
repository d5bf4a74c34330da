//! The environment fingerprint: which GPU, driver and toolkit a run sees.
//! The CUDA part is read in a child process (the probe, on the child
//! side), so the runner never initialises CUDA.

use std::time::Duration;

use casebook_model::Outcome;
use casebook_runtime::isolation::{self, ChildCommand};
use casebook_runtime::protocol::{PROBE, probe};

pub use casebook_report::Environment;

/// Why there is no GPU to run on, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// No driver, no device, or the probe failed.
    NoGpu(String),
    /// The driver supports an older CUDA than the build needs.
    TooOld(String),
}

impl Unusable {
    /// The exit code it amounts to.
    pub fn exit(&self) -> casebook_report::Exit {
        match self {
            Unusable::NoGpu(_) => casebook_report::Exit::NoGpu,
            Unusable::TooOld(_) => casebook_report::Exit::DriverTooOld,
        }
    }
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::NoGpu(why) | Unusable::TooOld(why) => f.write_str(why),
        }
    }
}

static TOOLKIT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Names the toolkit that compiled this binary's kernels (`casebook_kernels::TOOLKIT`),
/// for the fingerprint. The harness does not link the kernels itself, so
/// the binary that does says it at start.
pub fn set_toolkit(version: &'static str) {
    let _ = TOOLKIT.set(version);
}

/// Runs the probe in a child process and reads the fingerprint it records.
pub fn detect() -> Result<Environment, Unusable> {
    let failed = |e: std::io::Error| Unusable::NoGpu(format!("cannot start the GPU probe: {e}"));
    let cmd =
        ChildCommand::this_binary(PROBE.to_owned(), Duration::from_secs(60)).map_err(failed)?;
    let run = isolation::run(&cmd).map_err(failed)?;
    let outcome = isolation::outcome(&run);
    from_probe(&outcome)
}

fn from_probe(outcome: &Outcome) -> Result<Environment, Unusable> {
    let text = |key: &str| {
        outcome
            .fact_named(key)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    if let Some(reason) = text(probe::NO_GPU) {
        return Err(Unusable::NoGpu(reason));
    }
    if let Some(reason) = text(probe::DRIVER_TOO_OLD) {
        return Err(Unusable::TooOld(reason));
    }
    let (Some(gpu), Some(cuda), Some(cc)) = (
        text(probe::GPU),
        text(probe::CUDA),
        text(probe::COMPUTE_CAPABILITY),
    ) else {
        return Err(Unusable::NoGpu(format!(
            "the GPU probe {}: {}",
            outcome.termination, outcome.stderr_tail
        )));
    };
    Ok(Environment {
        gpu,
        driver: driver_version().unwrap_or_else(|| "unknown".into()),
        cuda,
        toolkit: TOOLKIT.get().copied().unwrap_or("unknown").to_owned(),
        compute_capability: cc,
        memory_total_bytes: outcome
            .measure_named(probe::MEMORY_TOTAL_BYTES)
            .unwrap_or(0.0) as u64,
        device_count: outcome.measure_named(probe::DEVICE_COUNT).unwrap_or(0.0) as u32,
    })
}

/// The first dotted number in a line such as
/// `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...`.
fn version_in(line: &str) -> Option<String> {
    line.split_whitespace()
        .find(|w| {
            w.contains('.')
                && w.split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_owned)
}

/// The kernel driver's version, from the kernel module or nvidia-smi.
fn driver_version() -> Option<String> {
    if let Ok(text) = std::fs::read_to_string("/proc/driver/nvidia/version")
        && let Some(v) = text.lines().next().and_then(version_in)
    {
        return Some(v);
    }
    let out = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{Unusable, from_probe, version_in};
    use casebook_model::{Event, Outcome};
    use casebook_runtime::protocol::probe;

    fn probe_saying(key: &str, why: &str) -> Outcome {
        let mut o = Outcome::empty();
        o.apply(Event::Fact {
            key: key.into(),
            value: why.into(),
        });
        o
    }

    #[test]
    fn an_old_driver_and_a_missing_one_are_told_apart() {
        let old = probe_saying(probe::DRIVER_TOO_OLD, "the driver supports CUDA 12.4");
        let none = probe_saying(probe::NO_GPU, "no CUDA driver");
        assert!(matches!(from_probe(&old), Err(Unusable::TooOld(w)) if w.contains("12.4")));
        assert!(matches!(from_probe(&none), Err(Unusable::NoGpu(_))));
    }

    #[test]
    fn driver_version_from_either_module_banner() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Oct 23 2025";
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023";
        assert_eq!(version_in(open).as_deref(), Some("580.159.04"));
        assert_eq!(version_in(closed).as_deref(), Some("535.104.05"));
        assert_eq!(version_in("no version here"), None);
    }
}
