//! Runs a list of trials on one GPU. Trials that share the GPU run side by
//! side, up to `jobs` at a time; trials of scenarios that need the whole
//! GPU (they exhaust or measure its free memory) run alone, one after the
//! other, once the shared ones are done. After each exclusive trial, and
//! after the shared ones, device memory must be back to its baseline.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use casebook_model::{Scenario, Termination, Variant};

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
    pub fn name(&self) -> String {
        self.scenario.trial_name(self.variant)
    }

    /// Whether it must have the GPU to itself.
    pub fn is_exclusive(&self) -> bool {
        self.scenario.runs_alone(self.variant)
    }
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
            let name = t.name();
            filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
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
    pub running: Vec<String>,
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
    pub fn not_run<'a>(&'a self, trials: &'a [Trial]) -> impl Iterator<Item = String> + 'a {
        trials
            .iter()
            .zip(&self.records)
            .filter(|(_, r)| r.is_none())
            .map(|(t, _)| t.name())
    }
}

/// Runs `work` on each of `items`, up to `jobs` at a time, and hands each
/// result to `done` on the calling thread as it arrives. Once the run is
/// interrupted no new item starts. run-all's shared trials and the
/// sanitizer's shared cells both run through it.
pub fn side_by_side<T: Copy + Send + Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(T) -> R + Sync,
    mut done: impl FnMut(T, R),
) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(items.len()) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            s.spawn(move || {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= items.len() || isolation::interrupted() {
                        break;
                    }
                    let _ = tx.send((items[k], work(items[k])));
                }
            });
        }
        drop(tx);
        for (item, result) in rx {
            done(item, result);
        }
    });
}

/// Runs `trials`; `on_done` sees each finished trial as it ends (on the
/// calling thread), with the progress so far.
pub fn execute(
    trials: &[Trial],
    jobs: usize,
    monitor: Option<&Monitor>,
    mut on_done: impl FnMut(&Trial, &TrialRecord, &Progress),
) -> Executed {
    let started = Instant::now();
    let progress = Mutex::new(Progress {
        total: trials.len(),
        done: 0,
        running: Vec::new(),
        started,
    });
    let mut records: Vec<Option<TrialRecord>> = vec![None; trials.len()];
    let mut leftovers = Vec::new();
    let mut start_errors = Vec::new();
    let (exclusive, shared): (Vec<usize>, Vec<usize>) =
        (0..trials.len()).partition(|&i| trials[i].is_exclusive());

    let mut finish = |i: usize, result: std::io::Result<TrialRecord>| {
        let mut p = progress.lock().unwrap();
        let name = trials[i].name();
        p.running.retain(|r| *r != name);
        match result {
            Ok(record) if record.outcome.termination == Termination::Interrupted => {}
            Ok(record) => {
                p.done += 1;
                on_done(&trials[i], &record, &p);
                records[i] = Some(record);
            }
            Err(e) => start_errors.push(format!("{name}: cannot start its process: {e}")),
        }
    };
    let begin = |i: usize| {
        progress.lock().unwrap().running.push(trials[i].name());
    };

    // The shared trials, side by side.
    side_by_side(
        &shared,
        jobs,
        |i| {
            begin(i);
            let t = trials[i];
            trial::run(t.scenario, t.variant)
        },
        &mut finish,
    );
    if let Some(m) = monitor.filter(|_| !shared.is_empty() && !isolation::interrupted()) {
        leftovers.extend(m.check("the trials that share the GPU"));
    }

    // The exclusive trials, alone.
    for i in exclusive {
        if isolation::interrupted() {
            break;
        }
        begin(i);
        let t = trials[i];
        finish(i, trial::run(t.scenario, t.variant));
        if let Some(m) = monitor.filter(|_| !isolation::interrupted()) {
            leftovers.extend(m.check(&t.name()));
        }
    }
    Executed {
        records,
        leftovers,
        start_errors,
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}
