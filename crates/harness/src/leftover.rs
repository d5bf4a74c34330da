//! After every trial, device memory must return to what it was before the
//! run. If it does not, the process still holding it is named: NVML lists
//! the processes using the GPU, and each one's environment says which trial
//! started it, and which run. At start, the same lists find the trials a
//! run that ended (killed, say) left behind.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

pub use casebook_report::run::{Leftover, Orphan};
use casebook_runtime::protocol::{RUN_ENV, TARGET_ENV};
use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::gpus::Gpu;

/// Used memory within this of the baseline counts as returned.
pub const TOLERANCE: u64 = 64 << 20;
/// How long the driver may take to tear down an exited process.
const SETTLE: Duration = Duration::from_secs(3);

pub struct Monitor {
    nvml: Nvml,
    gpus: Vec<Watched>,
    /// Processes on the GPUs before the run started: not ours to blame.
    before: BTreeSet<u32>,
}

/// One GPU the monitor watches, and its used memory when the run began.
struct Watched {
    /// `None`: NVML's first GPU (the run does not pin its children).
    uuid: Option<String>,
    label: String,
    baseline: u64,
}

impl Monitor {
    /// Takes the baseline of each of `gpus` (NVML's first GPU if there is
    /// none): its used memory and its processes now.
    pub fn start(gpus: &[Gpu]) -> Result<Self, String> {
        let nvml = Nvml::init().map_err(|e| format!("NVML: {e}"))?;
        let targets: Vec<(Option<String>, String)> = if gpus.is_empty() {
            vec![(None, "the GPU".to_owned())]
        } else {
            gpus.iter()
                .map(|g| (Some(g.uuid.clone()), g.to_string()))
                .collect()
        };
        let mut watched = Vec::new();
        let mut before = BTreeSet::new();
        for (uuid, label) in targets {
            let device = device(&nvml, uuid.as_deref()).map_err(|e| format!("NVML: {e}"))?;
            let baseline = device.memory_info().map_err(|e| format!("NVML: {e}"))?.used;
            before.extend(
                device
                    .running_compute_processes()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| p.pid),
            );
            watched.push(Watched {
                uuid,
                label,
                baseline,
            });
        }
        Ok(Monitor {
            nvml,
            gpus: watched,
            before,
        })
    }

    /// Processes that were on the GPUs before the run (other users, say).
    pub fn foreign_processes(&self) -> usize {
        self.before.len()
    }

    fn used(&self, gpu: usize) -> Option<u64> {
        let device = device(&self.nvml, self.gpus[gpu].uuid.as_deref()).ok()?;
        device.memory_info().ok().map(|m| m.used)
    }

    /// Checks, with nothing of ours running on GPU number `gpu` of the run,
    /// that its used memory is back to the baseline; waits a little for
    /// the driver, then names the holders.
    pub fn check(&self, gpu: usize, after: &str) -> Option<Leftover> {
        let deadline = Instant::now() + SETTLE;
        loop {
            let used = self.used(gpu)?;
            let over = used.saturating_sub(self.gpus[gpu].baseline);
            if over <= TOLERANCE {
                return None;
            }
            if Instant::now() >= deadline {
                let after = if self.gpus.len() > 1 {
                    format!("{after} on {}", self.gpus[gpu].label)
                } else {
                    after.to_owned()
                };
                return Some(Leftover {
                    after,
                    bytes_over_baseline: over,
                    holders: self.holders(gpu),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Processes on the GPU that were not there before the run.
    fn holders(&self, gpu: usize) -> Vec<String> {
        let Ok(device) = device(&self.nvml, self.gpus[gpu].uuid.as_deref()) else {
            return Vec::new();
        };
        device
            .running_compute_processes()
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !self.before.contains(&p.pid))
            .map(|p| {
                let name = command_name(p.pid);
                let mib = mib(&p.used_gpu_memory);
                match started_by(p.pid) {
                    Some(trial) => format!("pid {} ({name}) {mib}, started by {trial}", p.pid),
                    None => format!("pid {} ({name}) {mib}", p.pid),
                }
            })
            .collect()
    }

    /// Processes of casebook trials on the run's GPUs that no live run
    /// started: left by a run that ended before them.
    pub fn orphans(&self) -> Vec<Orphan> {
        let mut found = Vec::new();
        for gpu in &self.gpus {
            let Ok(device) = device(&self.nvml, gpu.uuid.as_deref()) else {
                continue;
            };
            for p in device.running_compute_processes().unwrap_or_default() {
                if let Some(orphan) = orphan_of(p.pid, &p.used_gpu_memory, &gpu.label)
                    && !found.iter().any(|o: &Orphan| o.pid == orphan.pid)
                {
                    found.push(orphan);
                }
            }
        }
        found
    }
}

fn device<'n>(
    nvml: &'n Nvml,
    uuid: Option<&str>,
) -> Result<nvml_wrapper::Device<'n>, nvml_wrapper::error::NvmlError> {
    match uuid {
        Some(uuid) => nvml.device_by_uuid(uuid),
        None => nvml.device_by_index(0),
    }
}

fn mib(used: &UsedGpuMemory) -> String {
    match used {
        UsedGpuMemory::Used(bytes) => format!("{} MiB", bytes >> 20),
        UsedGpuMemory::Unavailable => "memory unknown".to_owned(),
    }
}

fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "?".to_owned())
}

/// `pid`, if it is a trial of a casebook run that is no longer running.
fn orphan_of(pid: u32, used: &UsedGpuMemory, gpu: &str) -> Option<Orphan> {
    let trial = started_by(pid)?;
    let run = environment_value(pid, RUN_ENV).and_then(|v| v.parse().ok());
    if run.is_some_and(alive) {
        return None;
    }
    Some(Orphan {
        pid,
        group: process_group(pid).unwrap_or(pid),
        trial,
        run,
        gpu: gpu.to_owned(),
        memory: mib(used),
    })
}

/// The command that stops `orphan`, and whatever it started where its
/// process group is the trial's own (the harness starts each trial as the
/// leader of a new group; a process that only carries a trial's
/// environment may share the group of a shell, which must live on).
pub fn stop_command(orphan: &Orphan) -> String {
    let own_group =
        orphan.group == orphan.pid || !alive(orphan.group) || started_by(orphan.group).is_some();
    if own_group {
        format!("kill -KILL -- -{}", orphan.group)
    } else {
        format!("kill -KILL {}", orphan.pid)
    }
}

/// `orphan` in one line, with the command that stops it, as the process
/// stands now.
pub fn describe(orphan: &Orphan) -> String {
    let left_by = match orphan.run {
        Some(run) => format!("casebook run pid {run}, which has ended"),
        None => "a casebook run that has ended".to_owned(),
    };
    format!(
        "pid {} ({}) holds {} on {}: trial {}, left by {left_by}; stop it with `{}`",
        orphan.pid,
        command_name(orphan.pid),
        orphan.memory,
        orphan.gpu,
        orphan.trial,
        stop_command(orphan)
    )
}

/// Whether `pid` is a live process (a zombie is not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After "pid (comm) ": state, ppid, pgrp.
    stat.rsplit_once(") ")?.1.split(' ').nth(2)?.parse().ok()
}

/// The trial a process belongs to, from its environment.
fn started_by(pid: u32) -> Option<String> {
    environment_value(pid, TARGET_ENV)
}

/// The value of `name` in the environment `pid` started with.
fn environment_value(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    environ
        .split(|&b| b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn orphan(pid: u32, group: u32) -> Orphan {
        Orphan {
            pid,
            group,
            trial: "missing-free::broken".into(),
            run: Some(1),
            gpu: "GPU 0".into(),
            memory: "4096 MiB".into(),
        }
    }

    #[test]
    fn a_trial_leading_its_group_is_stopped_with_the_group() {
        assert_eq!(stop_command(&orphan(4242, 4242)), "kill -KILL -- -4242");
    }

    #[test]
    fn a_process_in_a_live_group_that_is_not_a_trial_is_stopped_alone() {
        use std::os::unix::process::CommandExt;
        // A live group whose leader is no trial, as a shell would be.
        let mut leader = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let group = leader.id();
        let me = std::process::id();
        let command = stop_command(&orphan(me, group));
        let _ = leader.kill();
        let _ = leader.wait();
        assert_eq!(command, format!("kill -KILL {me}"));
    }

    #[test]
    fn the_group_of_a_dead_leader_is_the_trials() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        assert!(!alive(dead));
        assert_eq!(
            stop_command(&orphan(dead + 1, dead)),
            format!("kill -KILL -- -{dead}")
        );
    }
}
