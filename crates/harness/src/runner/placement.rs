//! Where a trial runs on its GPU, how many run side by side, and how long
//! each is expected to take: what the scheduler is given.

use std::collections::HashMap;

use casebook_report::{Place, TrialId};

use crate::gpus::Gpu;
use crate::runner::dispatch::Trial;

impl Trial<'_> {
    /// Whether it must have the GPU to itself.
    pub fn is_exclusive(&self) -> bool {
        self.scenario.runs_alone(self.variant)
    }

    /// Where it runs on GPUs of `memory` bytes (the smallest of the run's;
    /// `None`: unknown).
    pub fn place(&self, memory: Option<u64>) -> Place {
        if self.scenario.needs_pair() {
            Place::Pair
        } else if !self.is_exclusive() {
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

/// The device memory of the smallest of `gpus`; `None` if any is unknown
/// or there is none (the run uses what it inherits, unpinned).
pub fn smallest_memory(gpus: &[Gpu]) -> Option<u64> {
    let smallest = gpus.iter().map(|g| g.memory_bytes).min()?;
    (smallest > 0).then_some(smallest)
}

/// The default number of trials side by side: one per CPU, at most 8.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// Where the expected length of each trial comes from: the committed
/// report of the last full run, completed by the runs since (a stopped full
/// run's remaining trials among them).
pub const EXPECTED_FROM: &str = casebook_report::run::EVIDENCE_JSON;

/// Each trial's seconds in the committed evidence under `root` (the report
/// at [`EXPECTED_FROM`] and the runs since); empty when there is none.
pub fn expected_seconds(root: &std::path::Path) -> HashMap<TrialId, f64> {
    let Ok(Some(report)) = casebook_report::run::evidence(root) else {
        return HashMap::new();
    };
    report
        .results
        .iter()
        .map(|r| (r.trial(), r.seconds))
        .collect()
}
