//! How a run was scheduled: where each trial ran on its GPU, and the
//! schedule against its floor, from the run's own trial times.

use serde::{Deserialize, Serialize};

/// Where a trial runs on its GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Place {
    /// Beside other trials.
    Shared,
    /// Beside light trials, but never beside another that holds much of the
    /// GPU's memory or creates contexts in a loop (see
    /// `Variant::holds_memory`, `Variant::creates_contexts`).
    Holds,
    /// With the GPU to itself.
    Alone,
    /// With two GPUs to itself, both visible to its child: a trial that
    /// needs a pair (`Requirement::GpuPair`).
    Pair,
}

impl Place {
    /// How many GPUs a trial so placed holds while it runs.
    pub fn gpus(self) -> usize {
        match self {
            Place::Pair => 2,
            Place::Shared | Place::Holds | Place::Alone => 1,
        }
    }
}

/// A schedule against its floor, from a run's own trial times: the trials
/// that ran alone, one after another, plus the longest of those that shared
/// a GPU (or, where they take longer, the trials that hold much memory or
/// create contexts, which run one at a time beside the shared ones), over
/// the GPUs, and never under the longest trial. No schedule of the same
/// trials at the same times finishes sooner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// The trials that ran alone, one after another, in GPU-seconds: a
    /// trial that held a pair of GPUs counts once for each.
    pub exclusive_seconds: f64,
    /// The longest trial that shared a GPU (beside others or beside light
    /// trials only).
    pub longest_shared_seconds: f64,
    /// The trials that ran beside light trials only, one after another.
    pub holds_seconds: f64,
    pub gpus: usize,
    /// The floor: `(exclusive + max(longest shared, holds)) / gpus`, at
    /// least the longest trial.
    pub seconds: f64,
    pub wall_seconds: f64,
    /// `wall_seconds / seconds`.
    pub ratio: f64,
}

impl CriticalPath {
    /// From each trial's place and seconds, on `gpus` GPUs (none counts as
    /// one), for a run that took `wall_seconds`.
    pub fn of(
        trials: impl IntoIterator<Item = (Place, f64)>,
        gpus: usize,
        wall_seconds: f64,
    ) -> CriticalPath {
        let (mut exclusive, mut longest_shared, mut holds, mut longest) = (0.0, 0.0, 0.0, 0.0f64);
        for (place, seconds) in trials {
            longest = longest.max(seconds);
            match place {
                Place::Alone | Place::Pair => exclusive += seconds * place.gpus() as f64,
                Place::Holds => {
                    holds += seconds;
                    longest_shared = f64::max(longest_shared, seconds);
                }
                Place::Shared => longest_shared = f64::max(longest_shared, seconds),
            }
        }
        let gpus = gpus.max(1);
        let seconds = ((exclusive + f64::max(longest_shared, holds)) / gpus as f64).max(longest);
        CriticalPath {
            exclusive_seconds: exclusive,
            longest_shared_seconds: longest_shared,
            holds_seconds: holds,
            gpus,
            seconds,
            wall_seconds,
            ratio: wall_seconds / seconds,
        }
    }
}

impl std::fmt::Display for CriticalPath {
    /// `201.3 s, 1.07 times its critical path of 188.3 s (the trials that
    /// ran alone, 83.2 s, and the longest shared trial, 105.1 s)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = if self.holds_seconds > self.longest_shared_seconds {
            format!(
                "the trials beside light ones only, one after another, {:.1} s",
                self.holds_seconds
            )
        } else {
            format!(
                "the longest shared trial, {:.1} s",
                self.longest_shared_seconds
            )
        };
        let over = if self.gpus > 1 {
            format!(", over {} GPUs", self.gpus)
        } else {
            String::new()
        };
        write!(
            f,
            "{:.1} s, {:.2} times its critical path of {:.1} s (the trials that ran alone, {:.1} s, \
             and {shared}{over})",
            self.wall_seconds, self.ratio, self.seconds, self.exclusive_seconds
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_critical_path_is_the_alone_chain_and_the_longest_shared_trial() {
        let trials = [
            (Place::Alone, 10.0),
            (Place::Alone, 20.0),
            (Place::Shared, 50.0),
            (Place::Shared, 5.0),
            (Place::Holds, 15.0),
            (Place::Holds, 15.0),
        ];
        let path = CriticalPath::of(trials, 1, 88.0);
        assert_eq!(path.seconds, 80.0);
        assert_eq!(path.ratio, 1.1);
        assert_eq!(path.holds_seconds, 30.0);
        assert!(
            path.to_string()
                .contains("the longest shared trial, 50.0 s")
        );
        // Trials beside light ones only run one after another: where they
        // take longer than the longest shared trial, they set the floor.
        let holds = [
            (Place::Alone, 10.0),
            (Place::Holds, 40.0),
            (Place::Holds, 30.0),
        ];
        assert_eq!(CriticalPath::of(holds, 1, 80.0).seconds, 80.0);
        // Over two GPUs, but never under the longest trial.
        let two = [(Place::Alone, 10.0), (Place::Shared, 30.0)];
        assert_eq!(CriticalPath::of(two, 2, 30.0).seconds, 30.0);
        // A trial that holds both GPUs holds each for its whole time.
        let pair = [
            (Place::Pair, 20.0),
            (Place::Alone, 10.0),
            (Place::Shared, 10.0),
        ];
        let path = CriticalPath::of(pair, 2, 40.0);
        assert_eq!(path.exclusive_seconds, 50.0);
        assert_eq!(path.seconds, 30.0);
    }
}
