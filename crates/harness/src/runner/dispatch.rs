//! Which trials run here: the catalogue's, as a filter selects them, as a
//! partition deals them out, set apart from those this machine cannot run.

use casebook_model::{PAIR, Scenario, Variant};
use casebook_report::run::Skipped;
use casebook_report::{Partition, TrialId};

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

/// Whether a trial, by name, is in `shard`: the catalogue's trials, in
/// order and unfiltered, dealt out one per shard in turn, so a trial's shard
/// does not depend on the filters.
pub fn in_shard(catalog: &[Scenario], shard: Partition) -> impl Fn(&TrialId) -> bool {
    let names: Vec<TrialId> = select(catalog, &[]).iter().map(|t| t.name()).collect();
    move |name| {
        names
            .iter()
            .position(|n| n == name)
            .is_some_and(|i| shard.holds(i))
    }
}

/// Why a trial that needs a pair of GPUs cannot run where `seen` GPUs are
/// visible (to the run, or to a suite's process), if it cannot.
pub fn pair_skip_reason(seen: usize) -> Option<String> {
    (seen < PAIR).then(|| {
        format!(
            "needs {PAIR} GPUs of one host, both visible to it (a pair trial); this run sees {seen}: \
             run it where {PAIR} are visible (a run-all on a machine with two GPUs, or a nextest \
             run that sees both)"
        )
    })
}

/// Why `trial` cannot run here, if it cannot: it needs a pair of GPUs and
/// the run has fewer than [`PAIR`] it can pin (`gpus`), it runs PyTorch
/// and the interpreter cannot import torch with CUDA, or it needs a memory
/// cgroup the run cannot make.
pub fn skip_reason(trial: &Trial, gpus: usize) -> Option<String> {
    trial
        .scenario
        .needs_pair()
        .then(|| pair_skip_reason(gpus))
        .flatten()
        .or_else(|| crate::pytorch::skip_reason(trial.variant))
        .or_else(|| crate::cgroup::skip_reason(trial.variant))
}

/// Sets aside the trials that cannot run on a run of `gpus` GPUs it can pin
/// ([`skip_reason`]), each with the reason.
pub fn split_skipped(trials: Vec<Trial<'_>>, gpus: usize) -> (Vec<Trial<'_>>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let runnable = trials
        .into_iter()
        .filter(|t| match skip_reason(t, gpus) {
            Some(reason) => {
                skipped.push(Skipped {
                    trial: t.name(),
                    reason,
                });
                false
            }
            None => true,
        })
        .collect();
    (runnable, skipped)
}

#[cfg(test)]
mod tests {
    use casebook_model::{Program, Recorder, Requirement, Scenario, Variant};

    use super::*;

    fn noop(_: &mut Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    fn scenario(slug: &'static str, requires: &'static [Requirement]) -> Scenario {
        Scenario::test_only(
            slug,
            requires,
            vec![
                Variant::broken(
                    "broken",
                    casebook_model::Symptom::Panicked,
                    Program::host(noop),
                ),
                Variant::fixed("fixed", Program::host(noop)),
            ],
        )
    }

    /// A pair trial is set aside, with the reason, on a run of fewer than two
    /// GPUs it can pin (none: NVML could not list them); the others run.
    #[test]
    fn pair_trials_are_skipped_with_the_reason_on_fewer_than_two_gpus() {
        let catalog = [
            scenario("one", Requirement::GPU),
            scenario("two", Requirement::GPU_PAIR),
        ];
        for gpus in [0, 1] {
            let (runnable, skipped) = split_skipped(select(&catalog, &[]), gpus);
            let names: Vec<String> = runnable.iter().map(|t| t.name().to_string()).collect();
            assert_eq!(names, ["one::broken", "one::fixed"]);
            let skipped_names: Vec<String> = skipped.iter().map(|s| s.trial.to_string()).collect();
            assert_eq!(skipped_names, ["two::broken", "two::fixed"]);
            for s in &skipped {
                assert!(s.reason.contains("needs 2 GPUs"), "{}", s.reason);
                assert!(
                    s.reason.contains(&format!("this run sees {gpus}")),
                    "{}",
                    s.reason
                );
            }
        }
        let (runnable, skipped) = split_skipped(select(&catalog, &[]), 2);
        assert_eq!(runnable.len(), 4);
        assert!(skipped.is_empty());
    }
}
