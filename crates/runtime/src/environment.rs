//! The environment fingerprint: which GPU, driver and toolkit a run saw.
//! The CUDA part is read in a child process (the probe), so the parent never
//! initialises CUDA.

use std::time::Duration;

use casebook_model::{Outcome, Recorder};
use cudarc::driver::{result, sys};
use serde::{Deserialize, Serialize};

use crate::child::PROBE;
use crate::isolation::{self, ChildCommand};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// `NVIDIA H100 80GB HBM3`.
    pub gpu: String,
    /// The kernel driver's version, `580.159.04`.
    pub driver: String,
    /// The CUDA version the driver supports, `13.0`.
    pub cuda: String,
    /// The toolkit that compiled the kernels, `13.0.88`.
    pub toolkit: String,
    /// `9.0`.
    pub compute_capability: String,
    pub memory_total_bytes: u64,
    pub device_count: u32,
}

/// Why there is no GPU to run on, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// No driver, no device, or the probe failed.
    NoGpu(String),
    /// The driver supports an older CUDA than the build needs.
    TooOld(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::NoGpu(why) | Unusable::TooOld(why) => f.write_str(why),
        }
    }
}

/// The oldest CUDA version the driver must support: the API level the
/// build binds (cudarc's `cuda-13000`).
pub const NEEDS_CUDA: i32 = 13000;

static TOOLKIT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Names the toolkit that compiled this binary's kernels (`casebook_kernels::TOOLKIT`),
/// for the fingerprint. The runtime does not link the kernels itself, so
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
    if let Some(reason) = text("no_gpu") {
        return Err(Unusable::NoGpu(reason));
    }
    if let Some(reason) = text("driver_too_old") {
        return Err(Unusable::TooOld(reason));
    }
    let (Some(gpu), Some(cuda), Some(cc)) = (text("gpu"), text("cuda"), text("compute_capability"))
    else {
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
        memory_total_bytes: outcome.measure_named("memory_total_bytes").unwrap_or(0.0) as u64,
        device_count: outcome.measure_named("device_count").unwrap_or(0.0) as u32,
    })
}

/// The child side of [`detect`].
pub fn probe_here(rec: &mut Recorder) {
    match probe_cuda() {
        Ok(facts) => {
            rec.fact_named("gpu", &facts.gpu);
            rec.fact_named("cuda", &facts.cuda);
            rec.fact_named("compute_capability", &facts.compute_capability);
            rec.measure_named(
                "memory_total_bytes",
                facts.memory_total_bytes as f64,
                casebook_model::Unit::Bytes,
            );
            rec.measure_named(
                "device_count",
                facts.device_count as f64,
                casebook_model::Unit::Count,
            );
        }
        Err(Unusable::NoGpu(reason)) => rec.fact_named("no_gpu", reason),
        Err(Unusable::TooOld(reason)) => rec.fact_named("driver_too_old", reason),
    }
}

fn probe_cuda() -> Result<Environment, Unusable> {
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Unusable::NoGpu(
            "no CUDA driver: libcuda.so.1 cannot be loaded".into(),
        ));
    }
    let named =
        |what: &str, e: result::DriverError| Unusable::NoGpu(format!("{what} failed: {:?}", e.0));
    result::init().map_err(|e| named("cuInit", e))?;
    let count = result::device::get_count().map_err(|e| named("cuDeviceGetCount", e))?;
    if count < 1 {
        return Err(Unusable::NoGpu("the CUDA driver sees no device".into()));
    }
    let dev = result::device::get(0).map_err(|e| named("cuDeviceGet", e))?;
    let gpu = result::device::get_name(dev).map_err(|e| named("cuDeviceGetName", e))?;
    let memory_total_bytes =
        unsafe { result::device::total_mem(dev) }.map_err(|e| named("cuDeviceTotalMem", e))? as u64;
    let attr = |a| unsafe { result::device::get_attribute(dev, a) };
    use sys::CUdevice_attribute::*;
    let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .map_err(|e| named("cuDeviceGetAttribute", e))?;
    let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        .map_err(|e| named("cuDeviceGetAttribute", e))?;
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|e| named("cuDriverGetVersion", e))?;
    let dotted = |v: i32| format!("{}.{}", v / 1000, (v % 1000) / 10);
    if version < NEEDS_CUDA {
        return Err(Unusable::TooOld(format!(
            "the driver supports CUDA {}, this build needs CUDA {} or newer",
            dotted(version),
            dotted(NEEDS_CUDA)
        )));
    }
    Ok(Environment {
        gpu,
        driver: String::new(),
        cuda: dotted(version),
        toolkit: String::new(),
        compute_capability: format!("{major}.{minor}"),
        memory_total_bytes,
        device_count: count as u32,
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
        let old = probe_saying("driver_too_old", "the driver supports CUDA 12.4");
        let none = probe_saying("no_gpu", "no CUDA driver");
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
