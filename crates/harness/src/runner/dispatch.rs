//! Which trials run here: the catalogue's, as a filter selects them, as a
//! partition deals them out, set apart from those this machine cannot run.

use casebook_model::{Scenario, Variant};
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

/// Sets aside the trials that cannot run here (PyTorch variants where the
/// interpreter cannot import torch with CUDA), each with the reason.
pub fn split_skipped(trials: Vec<Trial<'_>>) -> (Vec<Trial<'_>>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let runnable = trials
        .into_iter()
        .filter(|t| match crate::pytorch::skip_reason(t.variant) {
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
