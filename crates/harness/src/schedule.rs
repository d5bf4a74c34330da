//! Runs a list of trials on the GPUs of the machine. Trials that share a
//! GPU run side by side, up to `jobs` at a time on each; trials of
//! scenarios that need the whole GPU (they exhaust or measure its free
//! memory) run alone on one. Each child is pinned to its GPU. Whenever a
//! GPU falls idle, its device memory must be back to its baseline.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, mpsc};
use std::time::Instant;

use casebook_model::{Scenario, Termination, TrialId, Variant};

use crate::gpus::Gpu;
use crate::isolation;
use crate::leftover::{Leftover, Monitor};
use crate::trial::{self, TrialRecord};

/// One variant of one scenario.
#[derive(Clone, Copy)]
pub struct Trial<'a> {
    pub scenario: &'a Scenario,
    pub variant: &'a Variant,
}

impl Trial<'_> {
    pub fn name(&self) -> TrialId {
        self.scenario.trial_id(self.variant)
    }

    /// Whether it must have the GPU to itself.
    pub fn is_exclusive(&self) -> bool {
        self.scenario.runs_alone(self.variant)
    }

    /// Where it runs on GPUs of `memory` bytes (the smallest of the run's;
    /// `None`: unknown).
    pub fn place(&self, memory: Option<u64>) -> Place {
        if !self.is_exclusive() {
            if self.variant.creates_contexts {
                Place::Holds
            } else {
                Place::Shared
            }
        } else if memory.is_some_and(|m| self.scenario.holds_within(self.variant, m)) {
            Place::Holds
        } else {
            Place::Alone
        }
    }
}

/// Where a trial runs on its GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Beside other trials.
    Shared,
    /// Beside light trials, but never beside another that holds much of the
    /// GPU's memory or creates contexts in a loop (see
    /// `Variant::holds_memory`, `Variant::creates_contexts`).
    Holds,
    /// With the GPU to itself.
    Alone,
}

/// The device memory of the smallest of `gpus`; `None` if any is unknown
/// or there is none (the run uses what it inherits, unpinned).
pub fn smallest_memory(gpus: &[Gpu]) -> Option<u64> {
    let smallest = gpus.iter().map(|g| g.memory_bytes).min()?;
    (smallest > 0).then_some(smallest)
}

/// Every variant of `catalog` whose name contains one of `filters` (all of
/// them when there is none), in catalogue order.
pub fn select<'a>(catalog: &'a [Scenario], filters: &[String]) -> Vec<Trial<'a>> {
    catalog
        .iter()
        .flat_map(|s| {
            s.variants.iter().map(move |v| Trial {
                scenario: s,
                variant: v,
            })
        })
        .filter(|t| {
            let name = t.name().to_string();
            filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
        })
        .collect()
}

/// Where the expected length of each trial comes from: the committed
/// report of the last full run.
pub const EXPECTED_FROM: &str = casebook_report::run::EVIDENCE_JSON;

/// Each trial's seconds in the report at [`EXPECTED_FROM`] under `root`;
/// empty when there is none.
pub fn expected_seconds(root: &std::path::Path) -> HashMap<TrialId, f64> {
    let Ok(text) = std::fs::read_to_string(root.join(EXPECTED_FROM)) else {
        return HashMap::new();
    };
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&text) else {
        return HashMap::new();
    };
    report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let trial = TrialId::new(r["scenario"].as_str()?, r["variant"].as_str()?);
            Some((trial, r["seconds"].as_f64()?))
        })
        .collect()
}

/// The default number of trials side by side: one per CPU, at most 8.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// Where a run is: for the progress display.
pub struct Progress {
    pub total: usize,
    pub done: usize,
    pub running: Vec<TrialId>,
    pub started: Instant,
}

impl Progress {
    /// `[12/64] 3 running, 34.2 s`.
    pub fn line(&self) -> String {
        format!(
            "[{:>2}/{}] {} running, {:.1} s",
            self.done,
            self.total,
            self.running.len(),
            self.started.elapsed().as_secs_f64()
        )
    }
}

pub struct Executed {
    /// The record of each trial, in the order given; `None` if it did not
    /// run to its end (the run was interrupted, or it could not start).
    pub records: Vec<Option<TrialRecord>>,
    pub leftovers: Vec<Leftover>,
    /// Trials whose child process could not be started, with the reason.
    pub start_errors: Vec<String>,
    pub wall_seconds: f64,
}

impl Executed {
    pub fn not_run<'a>(&'a self, trials: &'a [Trial]) -> impl Iterator<Item = TrialId> + 'a {
        trials
            .iter()
            .zip(&self.records)
            .filter(|(_, r)| r.is_none())
            .map(|(t, _)| t.name())
    }
}

/// Runs `work` on each of `items`, one at a time in each of `lanes` (a
/// lane is a thread, with the GPU its items are pinned to), and hands each
/// result to `done` on the calling thread as it arrives. Once the run is
/// interrupted no new item starts. The sanitizer's cells run through it.
pub fn side_by_side<T: Copy + Send + Sync, R: Send>(
    items: &[T],
    lanes: &[Option<&Gpu>],
    work: impl Fn(T, Option<&Gpu>) -> R + Sync,
    mut done: impl FnMut(T, R),
) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for &gpu in lanes.iter().take(items.len()) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            s.spawn(move || {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= items.len() || isolation::interrupted() {
                        break;
                    }
                    let _ = tx.send((items[k], work(items[k], gpu)));
                }
            });
        }
        drop(tx);
        for (item, result) in rx {
            done(item, result);
        }
    });
}

/// `per_gpu` lanes on each of `gpus` (on one unpinned GPU if there is none).
pub fn lanes(gpus: &[Gpu], per_gpu: usize) -> Vec<Option<&Gpu>> {
    let gpus: Vec<Option<&Gpu>> = if gpus.is_empty() {
        vec![None]
    } else {
        gpus.iter().map(Some).collect()
    };
    (0..per_gpu.max(1))
        .flat_map(|_| gpus.iter().copied())
        .collect()
}

/// Where a run's trials go: its GPUs, and the leftover-memory check on
/// each.
#[derive(Default)]
pub struct Placement<'a> {
    /// The GPUs to spread the trials over, each child pinned to one; none:
    /// one GPU, whatever the children inherit, unpinned.
    pub gpus: Vec<Gpu>,
    /// Checks each GPU's memory whenever nothing runs on it.
    pub monitor: Option<&'a Monitor>,
    /// Each trial's expected seconds (from an earlier run): longer trials
    /// start first. Unknown trials count as long.
    pub expected: HashMap<TrialId, f64>,
}

/// One GPU's state while the run goes on.
#[derive(Default)]
struct Slot {
    /// Shared trials running on it (those that hold much memory included).
    shared: usize,
    /// A trial that holds much of its memory runs on it.
    holds: bool,
    /// An exclusive trial has it.
    exclusive: bool,
    /// No new shared trial starts on it: an exclusive one waits for it.
    draining: bool,
    /// The trials that ran on it since its last leftover check.
    since_check: Vec<TrialId>,
    /// Each running trial, when it started, and how long it should take.
    running: Vec<(usize, Instant, f64)>,
}

impl Slot {
    fn idle(&self) -> bool {
        self.shared == 0 && !self.exclusive
    }

    /// Seconds until what runs on it should be done.
    fn remaining(&self) -> f64 {
        self.running
            .iter()
            .map(|(_, t, e)| (e - t.elapsed().as_secs_f64()).max(0.0))
            .fold(0.0, f64::max)
    }
}

/// Runs `trials`, each on one GPU of `placement` (its first if it names
/// none): shared trials side by side, up to `jobs` on each GPU; exclusive
/// ones alone on theirs; one that holds much memory beside shared ones, but
/// not beside another such. Longer trials (by `placement.expected`) start
/// first. With one GPU the shared trials run first, as nothing overlaps
/// an exclusive trial anyway; with several, a waiting exclusive trial
/// drains the GPU that frees up first while the others go on. Whenever a
/// GPU falls idle its memory must be back to its baseline. `on_done` sees
/// each finished trial as it ends (on the calling thread), with the
/// progress so far.
pub fn execute(
    trials: &[Trial],
    jobs: usize,
    placement: Option<&Placement>,
    mut on_done: impl FnMut(&Trial, &TrialRecord, &Progress),
) -> Executed {
    let default = Placement::default();
    let placement = placement.unwrap_or(&default);
    let started = Instant::now();
    let mut progress = Progress {
        total: trials.len(),
        done: 0,
        running: Vec::new(),
        started,
    };
    let gpus: Vec<Option<&Gpu>> = if placement.gpus.is_empty() {
        vec![None]
    } else {
        placement.gpus.iter().map(Some).collect()
    };
    let jobs = jobs.max(1);
    let memory = smallest_memory(&placement.gpus);
    let places: Vec<Place> = trials.iter().map(|t| t.place(memory)).collect();
    let mut slots: Vec<Slot> = gpus.iter().map(|_| Slot::default()).collect();
    let expected = |i: usize| {
        placement
            .expected
            .get(&trials[i].name())
            .copied()
            .unwrap_or(f64::INFINITY)
    };
    // Waiting trials, in the order they should start.
    let mut waiting: Vec<usize> = (0..trials.len()).collect();
    waiting.sort_by(|&a, &b| {
        let one_gpu_order = |i: usize| gpus.len() == 1 && places[i] == Place::Alone;
        one_gpu_order(a)
            .cmp(&one_gpu_order(b))
            .then(expected(b).total_cmp(&expected(a)))
            .then(a.cmp(&b))
    });
    let mut records: Vec<Option<TrialRecord>> = vec![None; trials.len()];
    let mut leftovers = Vec::new();
    let mut start_errors = Vec::new();
    let finished = Mutex::new(Vec::<(usize, usize, std::io::Result<TrialRecord>)>::new());
    let wake = Condvar::new();
    let mut running = 0usize;

    std::thread::scope(|scope| {
        loop {
            // Start whatever can start now, in order.
            if !isolation::interrupted() {
                // Which GPU an exclusive trial waits for is decided afresh.
                for slot in &mut slots {
                    slot.draining = false;
                }
                let mut k = 0;
                while k < waiting.len() {
                    let i = waiting[k];
                    let place = places[i];
                    let exclusive = place == Place::Alone;
                    let fits = |s: &Slot| match place {
                        Place::Alone => s.idle(),
                        Place::Holds => !s.exclusive && !s.draining && s.shared < jobs && !s.holds,
                        Place::Shared => !s.exclusive && !s.draining && s.shared < jobs,
                    };
                    let Some(g) = (0..slots.len()).find(|&g| fits(&slots[g])) else {
                        if exclusive && gpus.len() > 1 && !slots.iter().any(|s| s.draining) {
                            // Let the GPU that frees up first take it.
                            if let Some(g) = (0..slots.len()).min_by(|&a, &b| {
                                slots[a].remaining().total_cmp(&slots[b].remaining())
                            }) {
                                slots[g].draining = true;
                            }
                        }
                        k += 1;
                        continue;
                    };
                    waiting.remove(k);
                    let slot = &mut slots[g];
                    if exclusive {
                        slot.exclusive = true;
                        slot.draining = false;
                    } else {
                        slot.shared += 1;
                        slot.holds |= place == Place::Holds;
                    }
                    let name = trials[i].name();
                    slot.since_check.push(name.clone());
                    slot.running.push((i, Instant::now(), expected(i).min(1e6)));
                    progress.running.push(name);
                    running += 1;
                    let (finished, wake, gpu) = (&finished, &wake, gpus[g]);
                    let t = trials[i];
                    scope.spawn(move || {
                        let result = trial::run_on(t.scenario, t.variant, gpu);
                        finished.lock().unwrap().push((i, g, result));
                        wake.notify_one();
                    });
                }
            }
            if running == 0 && (waiting.is_empty() || isolation::interrupted()) {
                break;
            }
            let done: Vec<_> = {
                let guard = wake
                    .wait_while(finished.lock().unwrap(), |f| f.is_empty())
                    .unwrap();
                let mut guard = guard;
                std::mem::take(&mut *guard)
            };
            for (i, g, result) in done {
                running -= 1;
                let name = trials[i].name();
                progress.running.retain(|r| *r != name);
                let slot = &mut slots[g];
                match places[i] {
                    Place::Alone => slot.exclusive = false,
                    Place::Holds => {
                        slot.shared -= 1;
                        slot.holds = false;
                    }
                    Place::Shared => slot.shared -= 1,
                }
                slot.running.retain(|(j, _, _)| *j != i);
                match result {
                    Ok(record) if record.outcome.termination == Termination::Interrupted => {}
                    Ok(record) => {
                        progress.done += 1;
                        on_done(&trials[i], &record, &progress);
                        records[i] = Some(record);
                    }
                    Err(e) => start_errors.push(format!("{name}: cannot start its process: {e}")),
                }
                if slot.idle() && !isolation::interrupted() {
                    let ran = std::mem::take(&mut slot.since_check);
                    if let Some(m) = placement.monitor {
                        let after = match ran.as_slice() {
                            [one] => one.to_string(),
                            few if few.len() <= 3 => {
                                let few: Vec<String> = few.iter().map(|t| t.to_string()).collect();
                                format!("the trials that shared the GPU ({})", few.join(", "))
                            }
                            many => format!("the {} trials that shared the GPU", many.len()),
                        };
                        leftovers.extend(m.check(g, &after));
                    }
                }
            }
        }
    });
    Executed {
        records,
        leftovers,
        start_errors,
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}
