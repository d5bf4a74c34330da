//! After every trial, device memory must return to what it was before the
//! run. If it does not, the process still holding it is named: NVML lists
//! the processes using the GPU, and each one's environment says which trial
//! started it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;
use serde::{Deserialize, Serialize};

use crate::child::TARGET_ENV;

/// Used memory within this of the baseline counts as returned.
pub const TOLERANCE: u64 = 64 << 20;
/// How long the driver may take to tear down an exited process.
const SETTLE: Duration = Duration::from_secs(3);

/// Memory still held after a trial, and by whom.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Leftover {
    /// The trial (or group of trials) after which it was seen.
    pub after: String,
    /// Device memory in use over the baseline, in bytes.
    pub bytes_over_baseline: u64,
    /// The processes holding it: `pid 123 (casebook) 4096 MiB, started by fragmentation::broken`.
    pub holders: Vec<String>,
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "after {}, {} MiB of device memory are still in use",
            self.after,
            self.bytes_over_baseline >> 20
        )?;
        if self.holders.is_empty() {
            f.write_str(" by no process NVML can see")
        } else {
            write!(f, ", held by {}", self.holders.join("; "))
        }
    }
}

pub struct Monitor {
    nvml: Nvml,
    baseline: u64,
    /// Processes on the GPU before the run started: not ours to blame.
    before: BTreeSet<u32>,
}

impl Monitor {
    /// Takes the baseline: device 0's used memory and its processes now.
    pub fn start() -> Result<Self, String> {
        let nvml = Nvml::init().map_err(|e| format!("NVML: {e}"))?;
        let (baseline, before) = {
            let device = nvml.device_by_index(0).map_err(|e| format!("NVML: {e}"))?;
            let used = device.memory_info().map_err(|e| format!("NVML: {e}"))?.used;
            let pids = device
                .running_compute_processes()
                .map(|ps| ps.into_iter().map(|p| p.pid).collect())
                .unwrap_or_default();
            (used, pids)
        };
        Ok(Monitor {
            nvml,
            baseline,
            before,
        })
    }

    /// Processes that were on the GPU before the run (other users, say).
    pub fn foreign_processes(&self) -> usize {
        self.before.len()
    }

    fn used(&self) -> Option<u64> {
        let device = self.nvml.device_by_index(0).ok()?;
        device.memory_info().ok().map(|m| m.used)
    }

    /// Checks, with nothing of ours running, that used memory is back to the
    /// baseline; waits a little for the driver, then names the holders.
    pub fn check(&self, after: &str) -> Option<Leftover> {
        let deadline = Instant::now() + SETTLE;
        loop {
            let used = self.used()?;
            let over = used.saturating_sub(self.baseline);
            if over <= TOLERANCE {
                return None;
            }
            if Instant::now() >= deadline {
                return Some(Leftover {
                    after: after.to_owned(),
                    bytes_over_baseline: over,
                    holders: self.holders(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Processes on the GPU that were not there before the run.
    fn holders(&self) -> Vec<String> {
        let Ok(device) = self.nvml.device_by_index(0) else {
            return Vec::new();
        };
        device
            .running_compute_processes()
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !self.before.contains(&p.pid))
            .map(|p| {
                let mib = match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => format!("{} MiB", bytes >> 20),
                    UsedGpuMemory::Unavailable => "memory unknown".to_owned(),
                };
                let name = std::fs::read_to_string(format!("/proc/{}/comm", p.pid))
                    .map(|s| s.trim().to_owned())
                    .unwrap_or_else(|_| "?".to_owned());
                match started_by(p.pid) {
                    Some(trial) => format!("pid {} ({name}) {mib}, started by {trial}", p.pid),
                    None => format!("pid {} ({name}) {mib}", p.pid),
                }
            })
            .collect()
    }
}

/// The trial a process belongs to, from its environment.
fn started_by(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{TARGET_ENV}=");
    environ
        .split(|&b| b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_owned))
}
