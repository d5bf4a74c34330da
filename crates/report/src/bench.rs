//! What `casebook bench` measured: the schedule against its critical path,
//! and against running the trials one at a time.

use casebook_model::TrialId;
use serde::{Deserialize, Serialize};

use crate::machine::Gpu;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bench {
    pub jobs: usize,
    /// The GPUs the default schedule spread the trials over.
    #[serde(default)]
    pub gpus: Vec<Gpu>,
    /// What the baseline run was: "one trial at a time" or "one GPU".
    #[serde(default)]
    pub baseline: String,
    /// The trials the baseline could not run (a pair trial on its one GPU):
    /// its wall time is without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_left_out: Vec<TrialId>,
    #[serde(alias = "serial_wall_seconds")]
    pub baseline_wall_seconds: f64,
    pub wall_seconds: f64,
    /// Sum of the exclusive trials plus the longest shared one, over the
    /// number of GPUs (never under the longest trial).
    pub critical_path_seconds: f64,
    /// `wall_seconds / critical_path_seconds`.
    pub critical_path_ratio: f64,
    /// `wall_seconds / baseline_wall_seconds`.
    #[serde(default)]
    pub baseline_ratio: f64,
    pub goal_ratio: f64,
    pub goal_wall_seconds: f64,
    #[serde(default)]
    pub goal_gpus_ratio: f64,
    /// Each trial's time in both runs, context creation included.
    pub trials: Vec<BenchTrial>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchTrial {
    pub trial: TrialId,
    pub exclusive: bool,
    /// It ran beside light trials but not beside another like it (it holds
    /// much of the GPU's memory).
    #[serde(default)]
    pub holds: bool,
    /// It held two GPUs, both its own (a pair trial).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pair: bool,
    #[serde(alias = "serial_seconds")]
    pub baseline_seconds: Option<f64>,
    pub seconds: Option<f64>,
}
