//! The one scheduler: puts jobs on the GPUs of the machine and runs each
//! on a thread of its own. Jobs that share a GPU run side by side, up to a
//! number at a time on each; a job that needs the whole GPU runs alone on
//! one; one that needs a pair of GPUs runs alone on two; one that holds
//! much of its memory runs beside shared ones but not beside another like
//! it. Longer jobs (by what they took before) start first. Whenever a GPU
//! falls idle, its device memory must be back to its baseline. What a job
//! is (a trial, a trial under compute-sanitizer) is the caller's: the
//! scheduler only places and starts it.

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
    /// The GPUs to spread the jobs over, each child pinned to one (a pair
    /// job's to two); none: one GPU, whatever the children inherit,
    /// unpinned.
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
    /// The jobs that need more GPUs than the run has (a pair on one GPU, or
    /// on GPUs it cannot pin): never started. The callers set such trials
    /// aside with the reason before they come here; this keeps a job that
    /// slipped through from waiting for ever.
    pub unplaced: Vec<usize>,
}

/// One GPU's state while the run goes on.
#[derive(Default)]
struct Slot {
    /// Shared jobs running on it (those that hold much memory included).
    shared: usize,
    /// A job that holds much of its memory runs on it.
    holds: bool,
    /// An exclusive job (or a pair job) has it.
    exclusive: bool,
    /// No new job starts on it: an exclusive or pair job waits for it.
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

/// The slots a job placed at `place` can start on now, as many as it
/// needs ([`Place::gpus`]), the lowest first; `None` if it cannot start.
fn slots_for(place: Place, slots: &[Slot], per_gpu: usize) -> Option<Vec<usize>> {
    let fits = |s: &Slot| match place {
        Place::Alone | Place::Pair => s.idle() && !s.draining,
        Place::Holds => !s.exclusive && !s.draining && s.shared < per_gpu && !s.holds,
        Place::Shared => !s.exclusive && !s.draining && s.shared < per_gpu,
    };
    let chosen: Vec<usize> = (0..slots.len())
        .filter(|&g| fits(&slots[g]))
        .take(place.gpus())
        .collect();
    (chosen.len() == place.gpus()).then_some(chosen)
}

/// Runs `work` on every job, each on the GPUs of `placement` it is given
/// (the first, if it names none): shared jobs side by side, up to
/// `per_gpu` on each GPU; exclusive ones alone on theirs; pair jobs alone
/// on two, each GPU of the two idle before it starts, and both given to
/// `work`; one that holds much memory beside shared ones, but not beside
/// another such. Pair jobs start first, while every GPU is idle; then the
/// longer jobs. With one GPU the shared jobs run first, as nothing overlaps
/// an exclusive job anyway; with several, a waiting exclusive job drains
/// the GPU that frees up first (a pair job, the two that do) while the
/// others go on. Once the run is interrupted no new job starts. Whenever a
/// GPU falls idle its memory must be back to its baseline. `on_done` sees
/// each job's result as it ends (on the calling thread), with the progress
/// so far. A job that needs more GPUs than there are is never started
/// ([`Dispatched::unplaced`]).
pub fn run<R: Send>(
    jobs: &[Job],
    per_gpu: usize,
    placement: &Placement,
    work: impl Fn(usize, &[&Gpu]) -> R + Sync,
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
    let (mut waiting, unplaced): (Vec<usize>, Vec<usize>) =
        (0..jobs.len()).partition(|&i| places[i].gpus() <= slots.len());
    // Waiting jobs, in the order they should start.
    waiting.sort_by(|&a, &b| {
        let later = |i: usize| {
            (
                places[i] != Place::Pair,
                gpus.len() == 1 && places[i] == Place::Alone,
            )
        };
        later(a)
            .cmp(&later(b))
            .then(expected(b).total_cmp(&expected(a)))
            .then(a.cmp(&b))
    });
    let mut leftovers = Vec::new();
    let finished = Mutex::new(Vec::<(usize, Vec<usize>, R)>::new());
    let wake = Condvar::new();
    let mut running = 0usize;

    std::thread::scope(|scope| {
        loop {
            // Start whatever can start now, in order.
            if !isolation::interrupted() {
                // Which GPUs an exclusive or pair job waits for is decided afresh.
                for slot in &mut slots {
                    slot.draining = false;
                }
                let mut k = 0;
                while k < waiting.len() {
                    let i = waiting[k];
                    let place = places[i];
                    let exclusive = matches!(place, Place::Alone | Place::Pair);
                    let Some(chosen) = slots_for(place, &slots, per_gpu) else {
                        let need = place.gpus();
                        if exclusive && gpus.len() > 1 && !slots.iter().any(|s| s.draining) {
                            // Let the GPUs that free up first take it.
                            let mut order: Vec<usize> = (0..slots.len()).collect();
                            order.sort_by(|&a, &b| {
                                slots[a].remaining().total_cmp(&slots[b].remaining())
                            });
                            for g in order.into_iter().take(need) {
                                slots[g].draining = true;
                            }
                        }
                        k += 1;
                        continue;
                    };
                    waiting.remove(k);
                    let trial = jobs[i].trial.clone();
                    for &g in &chosen {
                        let slot = &mut slots[g];
                        if exclusive {
                            slot.exclusive = true;
                            slot.draining = false;
                        } else {
                            slot.shared += 1;
                            slot.holds |= place == Place::Holds;
                        }
                        slot.since_check.push(trial.clone());
                        slot.running.push((i, Instant::now(), expected(i).min(1e6)));
                    }
                    progress.running.push(trial);
                    running += 1;
                    let held: Vec<&Gpu> = chosen.iter().filter_map(|&g| gpus[g]).collect();
                    let (finished, wake, work) = (&finished, &wake, &work);
                    scope.spawn(move || {
                        let result = work(i, &held);
                        finished.lock().unwrap().push((i, chosen, result));
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
            for (i, held, result) in done {
                running -= 1;
                progress.running.retain(|r| *r != jobs[i].trial);
                for &g in &held {
                    let slot = &mut slots[g];
                    match places[i] {
                        Place::Alone | Place::Pair => slot.exclusive = false,
                        Place::Holds => {
                            slot.shared -= 1;
                            slot.holds = false;
                        }
                        Place::Shared => slot.shared -= 1,
                    }
                    slot.running.retain(|(j, _, _)| *j != i);
                }
                on_done(i, result, &progress);
                for &g in &held {
                    let slot = &mut slots[g];
                    if slot.idle() && !isolation::interrupted() {
                        let ran = std::mem::take(&mut slot.since_check);
                        if let Some(m) = placement.monitor {
                            leftovers.extend(m.check(g, &shared_by(&ran)));
                        }
                    }
                }
            }
        }
    });
    Dispatched {
        leftovers,
        wall_seconds: started.elapsed().as_secs_f64(),
        unplaced,
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

    fn job(name: &str, place: Place, expected: Option<f64>) -> Job {
        Job {
            trial: TrialId::new("s", name),
            place,
            expected,
        }
    }

    /// What each job was given and when it ran: (its GPUs, start, end).
    type Ran = (Vec<u32>, Instant, Instant);

    fn dispatch(jobs: &[Job], gpus: Vec<Gpu>) -> (Vec<Option<Ran>>, Dispatched) {
        let mut ran: Vec<Option<Ran>> = vec![None; jobs.len()];
        let dispatched = run(
            jobs,
            2,
            &Placement {
                gpus,
                monitor: None,
            },
            |_, held| {
                let start = Instant::now();
                std::thread::sleep(std::time::Duration::from_millis(40));
                (
                    held.iter().map(|g| g.index).collect(),
                    start,
                    Instant::now(),
                )
            },
            |i, r, _| ran[i] = Some(r),
        );
        (ran, dispatched)
    }

    /// On two GPUs a pair job gets both, in the run's order, and nothing
    /// else runs on either while it does; the others spread as before.
    #[test]
    fn a_pair_job_holds_both_gpus_and_runs_beside_nothing() {
        let jobs = [
            job("s1", Place::Shared, Some(9.0)),
            job("p1", Place::Pair, Some(1.0)),
            job("s2", Place::Shared, Some(9.0)),
            job("x1", Place::Alone, Some(5.0)),
            job("p2", Place::Pair, None),
            job("h1", Place::Holds, Some(3.0)),
            job("s3", Place::Shared, Some(2.0)),
        ];
        let (ran, dispatched) = dispatch(&jobs, Gpu::test_gpus(2));
        assert!(dispatched.unplaced.is_empty());
        let ran: Vec<Ran> = ran.into_iter().map(|r| r.expect("every job ran")).collect();
        for (j, r) in jobs.iter().zip(&ran) {
            let want = if j.place == Place::Pair {
                vec![4, 5]
            } else {
                r.0.clone()
            };
            assert_eq!(r.0, want, "{}", j.trial);
            assert_eq!(r.0.len(), j.place.gpus(), "{}", j.trial);
        }
        for (a, (job_a, ran_a)) in jobs.iter().zip(&ran).enumerate() {
            if job_a.place != Place::Pair {
                continue;
            }
            for (b, ran_b) in ran.iter().enumerate() {
                let overlap = ran_b.1 < ran_a.2 && ran_a.1 < ran_b.2;
                assert!(
                    a == b || !overlap,
                    "{} ran beside {}",
                    job_a.trial,
                    jobs[b].trial
                );
            }
        }
    }

    /// Where the run has one GPU, or cannot pin any, a pair job is never
    /// started and says so; the other jobs run.
    #[test]
    fn a_pair_job_is_not_started_on_fewer_than_two_gpus() {
        let jobs = [
            job("s1", Place::Shared, Some(1.0)),
            job("p1", Place::Pair, None),
            job("x1", Place::Alone, None),
        ];
        for gpus in [Gpu::test_gpus(1), Vec::new()] {
            let (ran, dispatched) = dispatch(&jobs, gpus);
            assert_eq!(dispatched.unplaced, [1]);
            assert!(ran[1].is_none());
            assert!(ran[0].is_some() && ran[2].is_some());
        }
    }
}
