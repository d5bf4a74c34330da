//! The one scheduler: puts jobs on the GPUs of the machine and runs each
//! on a thread of its own. Jobs that share a GPU run side by side, up to a
//! number at a time on each; a job that needs the whole GPU runs alone on
//! one; one that holds much of its memory runs beside shared ones but not
//! beside another like it. Longer jobs (by what they took before) start
//! first. Whenever a GPU falls idle, its device memory must be back to its
//! baseline. What a job is (a trial, a trial under compute-sanitizer) is
//! the caller's: the scheduler only places and starts it.

use std::sync::{Condvar, Mutex};
use std::time::Instant;

use casebook_report::TrialId;
use casebook_runtime::isolation;

use crate::gpus::Gpu;
use crate::leftover::{Leftover, Monitor};
use casebook_report::Place;

/// One job: what it runs, where, and how long it should take.
#[derive(Debug, Clone)]
pub struct Job {
    /// The trial it runs: named in the progress and the leftover check.
    pub trial: TrialId,
    pub place: Place,
    /// Its seconds in an earlier run; unknown jobs count as long.
    pub expected: Option<f64>,
}

/// Where a run's jobs go: its GPUs, and the leftover-memory check on each.
#[derive(Default)]
pub struct Placement<'a> {
    /// The GPUs to spread the jobs over, each child pinned to one; none:
    /// one GPU, whatever the children inherit, unpinned.
    pub gpus: Vec<Gpu>,
    /// Checks each GPU's memory whenever nothing runs on it.
    pub monitor: Option<&'a Monitor>,
}

/// Where a run is, as each job ends.
pub struct Progress {
    /// Jobs in this run.
    pub total: usize,
    /// The trials running now.
    pub running: Vec<TrialId>,
    pub started: Instant,
}

/// What came of a run, besides each job's result.
pub struct Dispatched {
    pub leftovers: Vec<Leftover>,
    pub wall_seconds: f64,
}

/// One GPU's state while the run goes on.
#[derive(Default)]
struct Slot {
    /// Shared jobs running on it (those that hold much memory included).
    shared: usize,
    /// A job that holds much of its memory runs on it.
    holds: bool,
    /// An exclusive job has it.
    exclusive: bool,
    /// No new shared job starts on it: an exclusive one waits for it.
    draining: bool,
    /// The trials that ran on it since its last leftover check.
    since_check: Vec<TrialId>,
    /// Each running job, when it started, and how long it should take.
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

/// Runs `work` on every job, each on one GPU of `placement` (its first if
/// it names none): shared jobs side by side, up to `per_gpu` on each GPU;
/// exclusive ones alone on theirs; one that holds much memory beside shared
/// ones, but not beside another such. Longer jobs start first. With one GPU
/// the shared jobs run first, as nothing overlaps an exclusive job anyway;
/// with several, a waiting exclusive job drains the GPU that frees up first
/// while the others go on. Once the run is interrupted no new job starts.
/// Whenever a GPU falls idle its memory must be back to its baseline.
/// `on_done` sees each job's result as it ends (on the calling thread),
/// with the progress so far.
pub fn run<R: Send>(
    jobs: &[Job],
    per_gpu: usize,
    placement: &Placement,
    work: impl Fn(usize, Option<&Gpu>) -> R + Sync,
    mut on_done: impl FnMut(usize, R, &Progress),
) -> Dispatched {
    let started = Instant::now();
    let mut progress = Progress {
        total: jobs.len(),
        running: Vec::new(),
        started,
    };
    let gpus: Vec<Option<&Gpu>> = if placement.gpus.is_empty() {
        vec![None]
    } else {
        placement.gpus.iter().map(Some).collect()
    };
    let per_gpu = per_gpu.max(1);
    let places: Vec<Place> = jobs.iter().map(|j| j.place).collect();
    let mut slots: Vec<Slot> = gpus.iter().map(|_| Slot::default()).collect();
    let expected = |i: usize| jobs[i].expected.unwrap_or(f64::INFINITY);
    // Waiting jobs, in the order they should start.
    let mut waiting: Vec<usize> = (0..jobs.len()).collect();
    waiting.sort_by(|&a, &b| {
        let one_gpu_order = |i: usize| gpus.len() == 1 && places[i] == Place::Alone;
        one_gpu_order(a)
            .cmp(&one_gpu_order(b))
            .then(expected(b).total_cmp(&expected(a)))
            .then(a.cmp(&b))
    });
    let mut leftovers = Vec::new();
    let finished = Mutex::new(Vec::<(usize, usize, R)>::new());
    let wake = Condvar::new();
    let mut running = 0usize;

    std::thread::scope(|scope| {
        loop {
            // Start whatever can start now, in order.
            if !isolation::interrupted() {
                // Which GPU an exclusive job waits for is decided afresh.
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
                        Place::Holds => {
                            !s.exclusive && !s.draining && s.shared < per_gpu && !s.holds
                        }
                        Place::Shared => !s.exclusive && !s.draining && s.shared < per_gpu,
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
                    let trial = jobs[i].trial.clone();
                    slot.since_check.push(trial.clone());
                    slot.running.push((i, Instant::now(), expected(i).min(1e6)));
                    progress.running.push(trial);
                    running += 1;
                    let (finished, wake, gpu, work) = (&finished, &wake, gpus[g], &work);
                    scope.spawn(move || {
                        let result = work(i, gpu);
                        finished.lock().unwrap().push((i, g, result));
                        wake.notify_one();
                    });
                }
            }
            if running == 0 && (waiting.is_empty() || isolation::interrupted()) {
                break;
            }
            let done: Vec<_> = {
                let mut guard = wake
                    .wait_while(finished.lock().unwrap(), |f| f.is_empty())
                    .unwrap();
                std::mem::take(&mut *guard)
            };
            for (i, g, result) in done {
                running -= 1;
                progress.running.retain(|r| *r != jobs[i].trial);
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
                on_done(i, result, &progress);
                if slot.idle() && !isolation::interrupted() {
                    let ran = std::mem::take(&mut slot.since_check);
                    if let Some(m) = placement.monitor {
                        leftovers.extend(m.check(g, &shared_by(&ran)));
                    }
                }
            }
        }
    });
    Dispatched {
        leftovers,
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}

/// After whom a GPU's memory is checked: one trial, a few, or how many.
fn shared_by(ran: &[TrialId]) -> String {
    match ran {
        [one] => one.to_string(),
        few if few.len() <= 3 => {
            let few: Vec<String> = few.iter().map(|t| t.to_string()).collect();
            format!("the trials that shared the GPU ({})", few.join(", "))
        }
        many => format!("the {} trials that shared the GPU", many.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On one GPU, one at a time: the shared jobs first, the longest first
    /// and in their order where they tie; then the exclusive ones, in their
    /// order, as `sanitize`'s passes need them.
    #[test]
    fn jobs_start_longest_first_and_the_exclusive_last_in_order() {
        let job = |name: &str, place, expected| Job {
            trial: TrialId::new("s", name),
            place,
            expected,
        };
        let jobs = [
            job("a", Place::Shared, Some(1.0)),
            job("x", Place::Alone, None),
            job("b", Place::Shared, Some(5.0)),
            job("c", Place::Shared, Some(5.0)),
            job("y", Place::Alone, None),
        ];
        let started = Mutex::new(Vec::new());
        let mut ended = Vec::new();
        run(
            &jobs,
            1,
            &Placement::default(),
            |i, _| started.lock().unwrap().push(jobs[i].trial.variant.clone()),
            |i, (), _| ended.push(i),
        );
        assert_eq!(started.into_inner().unwrap(), ["b", "c", "a", "x", "y"]);
        assert_eq!(ended.len(), jobs.len());
    }
}
