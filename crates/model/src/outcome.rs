use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{CheckName, FactName, MeasureName, SeriesName, Unit};

/// One API call a variant made, and the name of what it returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// `cuMemAlloc`, `cudaMalloc`, `kernel scale<<<..>>>`.
    pub call: String,
    /// `CUDA_SUCCESS`, `CUDA_ERROR_OUT_OF_MEMORY`, `cudaErrorMemoryAllocation`.
    pub result: String,
    /// The variant provokes this error on purpose (a fixed variant probing a
    /// limit, say), so it is no symptom.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tolerated: bool,
    /// What the library says of a failed call, whole, as a user reads it:
    /// `cuGetErrorString`'s or `cudaGetErrorString`'s text, a Python
    /// exception's message with its figures. It goes to the report and to
    /// `explain`'s index, never to a snapshot: its figures differ by GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Success in each API: the driver's, the runtime's, cuBLAS's, NVML's, and a
/// Python call that returned (`ok`, as the Python recorder writes it).
const SUCCESS_NAMES: &[&str] = &[
    "CUDA_SUCCESS",
    "cudaSuccess",
    "CUBLAS_STATUS_SUCCESS",
    "NVML_SUCCESS",
    "ok",
];

impl Step {
    pub fn is_error(&self) -> bool {
        !SUCCESS_NAMES.contains(&self.result.as_str())
    }
}

/// A yes/no question the variant answers from what it measured: "the host
/// read the finished result". A failed check is a symptom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
}

/// What a series' axes mean: recorded with its points, read by the plots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axes {
    pub x_label: String,
    pub x_unit: Unit,
    pub y_unit: Unit,
}

impl From<SeriesName> for Axes {
    fn from(s: SeriesName) -> Self {
        Axes {
            x_label: s.x_label.to_owned(),
            x_unit: s.x_unit,
            y_unit: s.y_unit,
        }
    }
}

/// A raw figure. It goes to the JSON report, never into a snapshot, since
/// it differs between GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    pub value: f64,
    pub unit: Unit,
}

/// How the child process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Termination {
    /// The variant returned `Ok`.
    Completed,
    /// The variant returned an error (usually from a failed CUDA call).
    ReturnedError,
    /// The variant panicked.
    Panicked,
    /// The process exited by itself without reporting an end.
    Exited { code: i32 },
    /// The process was killed by a signal (SIGSEGV, SIGABRT, …).
    Signaled { signal: String },
    /// The process outlived its timeout and was killed with its process group.
    TimedOut,
    /// The process wrote something that is not an event.
    Garbled,
    /// The run was interrupted (Ctrl-C, SIGTERM) and the process killed
    /// with its group before it ended: the trial did not run.
    Interrupted,
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::Completed => f.write_str("completed"),
            Termination::ReturnedError => f.write_str("returned an error"),
            Termination::Panicked => f.write_str("panicked"),
            Termination::Exited { code } => write!(f, "exited with code {code} without reporting"),
            Termination::Signaled { signal } => write!(f, "killed by {signal}"),
            Termination::TimedOut => f.write_str("timed out"),
            Termination::Interrupted => f.write_str("interrupted, not run to its end"),
            Termination::Garbled => f.write_str("wrote garbage instead of events"),
        }
    }
}

/// Something observably wrong in an outcome.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "what")]
pub enum Symptom {
    /// A call returned this error name.
    CudaError(String),
    /// This check came out false.
    CheckFailed(String),
    /// The process died by a signal.
    Crashed(String),
    /// The process exited without reporting its end.
    Exited(i32),
    TimedOut,
    Panicked,
    /// The process wrote garbage instead of events.
    Garbled,
    /// The variant returned an error that no failed call explains.
    Errored,
}

impl Symptom {
    pub fn cuda_error(name: &str) -> Self {
        Symptom::CudaError(name.to_owned())
    }

    pub fn check_failed(name: CheckName) -> Self {
        Symptom::CheckFailed(name.0.to_owned())
    }
}

impl fmt::Display for Symptom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Symptom::CudaError(name) => f.write_str(name),
            Symptom::CheckFailed(name) => write!(f, "check failed: {name}"),
            Symptom::Crashed(signal) => write!(f, "crashed: {signal}"),
            Symptom::Exited(code) => write!(f, "exited with code {code}"),
            Symptom::TimedOut => f.write_str("timed out"),
            Symptom::Panicked => f.write_str("panicked"),
            Symptom::Garbled => f.write_str("garbled output"),
            Symptom::Errored => f.write_str("returned an error"),
        }
    }
}

/// One line of the event file a child writes as it runs. Written and
/// flushed one at a time, so a child that dies mid-way still leaves
/// everything it recorded before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    Step(Step),
    Check(Check),
    Fact {
        key: String,
        value: serde_json::Value,
    },
    Measure {
        key: String,
        value: f64,
        unit: Unit,
    },
    Point {
        series: String,
        x: f64,
        y: f64,
        /// What the axes mean. Absent in reports made before series carried
        /// their units.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        axes: Option<Axes>,
    },
    /// The variant returned. `error` holds its error, if it returned one.
    End {
        error: Option<String>,
    },
    Panic {
        message: String,
    },
    /// Starts (`Some(label)`) or ends (`None`) one iteration of a loop, so
    /// a snapshot can fold identical iterations whatever their count.
    Iteration {
        label: Option<String>,
    },
}

/// One iteration of a loop: the steps `start..end` of the outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iteration {
    pub label: String,
    pub start: usize,
    pub end: usize,
}

/// Everything observed of one variant run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub termination: Termination,
    pub steps: Vec<Step>,
    /// The loop iterations the steps fall into, in order.
    pub iterations: Vec<Iteration>,
    pub checks: Vec<Check>,
    /// Hardware-independent observations, chosen by the variant: these go
    /// into the snapshot.
    pub facts: BTreeMap<String, serde_json::Value>,
    /// Raw figures: these go only into the JSON report.
    pub measures: BTreeMap<String, Measure>,
    /// Points for plots, by series name.
    pub series: BTreeMap<String, Vec<[f64; 2]>>,
    /// What each series' axes mean, by series name.
    #[serde(default)]
    pub axes: BTreeMap<String, Axes>,
    /// The error the variant returned, or its panic message.
    pub error: Option<String>,
    /// The end of what the child wrote to stderr.
    pub stderr_tail: String,
    pub seconds: f64,
}

impl Outcome {
    pub fn empty() -> Self {
        Outcome {
            termination: Termination::Completed,
            steps: Vec::new(),
            iterations: Vec::new(),
            checks: Vec::new(),
            facts: BTreeMap::new(),
            measures: BTreeMap::new(),
            series: BTreeMap::new(),
            axes: BTreeMap::new(),
            error: None,
            stderr_tail: String::new(),
            seconds: 0.0,
        }
    }

    /// With a step recorded, as a recorder records one: `call` returned
    /// `result`, not tolerated, with no message. For outcomes built by hand
    /// (a judge's tests).
    pub fn with_step(mut self, call: impl Into<String>, result: impl Into<String>) -> Self {
        self.apply(Event::Step(Step {
            call: call.into(),
            result: result.into(),
            tolerated: false,
            message: None,
        }));
        self
    }

    /// With a check recorded (see [`Outcome::with_step`]).
    pub fn with_check(mut self, name: CheckName, ok: bool) -> Self {
        self.apply(Event::Check(Check {
            name: name.0.into(),
            ok,
        }));
        self
    }

    /// With a fact recorded (see [`Outcome::with_step`]).
    pub fn with_fact(mut self, name: FactName, value: impl Into<serde_json::Value>) -> Self {
        self.apply(Event::Fact {
            key: name.0.into(),
            value: value.into(),
        });
        self
    }

    /// With facts recorded, in the order given (see [`Outcome::with_step`]):
    /// a judge's test builds its outcome from a table of them.
    pub fn with_facts<V: Into<serde_json::Value>>(
        self,
        facts: impl IntoIterator<Item = (FactName, V)>,
    ) -> Self {
        facts
            .into_iter()
            .fold(self, |o, (name, value)| o.with_fact(name, value))
    }

    /// With a measure recorded, in its declared unit (see
    /// [`Outcome::with_step`]).
    pub fn with_measure(mut self, name: MeasureName, value: f64) -> Self {
        self.apply(Event::Measure {
            key: name.key.into(),
            value,
            unit: name.unit,
        });
        self
    }

    /// Folds one event into the outcome.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Step(step) => self.steps.push(step),
            Event::Check(check) => self.checks.push(check),
            Event::Fact { key, value } => {
                self.facts.insert(key, value);
            }
            Event::Measure { key, value, unit } => {
                self.measures.insert(key, Measure { value, unit });
            }
            Event::Point { series, x, y, axes } => {
                if let Some(axes) = axes {
                    self.axes.insert(series.clone(), axes);
                }
                self.series.entry(series).or_default().push([x, y]);
            }
            Event::End { error } => {
                self.termination = match error {
                    Some(_) => Termination::ReturnedError,
                    None => Termination::Completed,
                };
                self.error = error;
            }
            Event::Panic { message } => {
                self.termination = Termination::Panicked;
                self.error = Some(message);
            }
            Event::Iteration { label: Some(label) } => {
                let at = self.steps.len();
                self.iterations.push(Iteration {
                    label,
                    start: at,
                    end: at,
                });
            }
            Event::Iteration { label: None } => {
                if let Some(last) = self.iterations.last_mut() {
                    last.end = self.steps.len();
                }
            }
        }
    }

    /// Every symptom this outcome shows, sorted and without repeats.
    pub fn symptoms(&self) -> Vec<Symptom> {
        let mut symptoms: Vec<Symptom> = self
            .steps
            .iter()
            .filter(|s| s.is_error() && !s.tolerated)
            .map(|s| Symptom::CudaError(s.result.clone()))
            .chain(
                self.checks
                    .iter()
                    .filter(|c| !c.ok)
                    .map(|c| Symptom::CheckFailed(c.name.clone())),
            )
            .collect();
        match &self.termination {
            Termination::Completed => {}
            Termination::ReturnedError if symptoms.is_empty() => symptoms.push(Symptom::Errored),
            Termination::ReturnedError => {}
            Termination::Panicked => symptoms.push(Symptom::Panicked),
            Termination::Exited { code } => symptoms.push(Symptom::Exited(*code)),
            Termination::Signaled { signal } => symptoms.push(Symptom::Crashed(signal.clone())),
            Termination::TimedOut | Termination::Interrupted => symptoms.push(Symptom::TimedOut),
            Termination::Garbled => symptoms.push(Symptom::Garbled),
        }
        symptoms.sort();
        symptoms.dedup();
        symptoms
    }

    pub fn shows(&self, symptom: &Symptom) -> bool {
        self.symptoms().contains(symptom)
    }

    /// Whether every check of this name held; `None` if the variant never
    /// got as far as making it.
    pub fn check(&self, name: CheckName) -> Option<bool> {
        audit::read(name.0);
        self.check_named(name.0)
    }

    /// [`Outcome::check`] by the name as recorded (for the harness, which
    /// reads every check whatever its scenario).
    pub fn check_named(&self, name: &str) -> Option<bool> {
        let mut made = self.checks.iter().filter(|c| c.name == name).peekable();
        made.peek()?;
        Some(made.all(|c| c.ok))
    }

    pub fn fact(&self, name: FactName) -> Option<&serde_json::Value> {
        audit::read(name.0);
        self.fact_named(name.0)
    }

    /// [`Outcome::fact`] by the key as recorded (facts a worker's replay
    /// prefixes with its label, the probe's facts).
    pub fn fact_named(&self, key: &str) -> Option<&serde_json::Value> {
        self.facts.get(key)
    }

    /// A yes/no fact; `None` if it was not recorded or is not a yes/no.
    pub fn flag(&self, name: FactName) -> Option<bool> {
        self.fact(name).and_then(|v| v.as_bool())
    }

    /// A fact recorded as text (a call's result, a word of the run's), as
    /// the C++ variants record it with `fact_text`.
    pub fn fact_text(&self, name: FactName) -> Option<&str> {
        self.fact(name).and_then(|v| v.as_str())
    }

    pub fn measure(&self, name: MeasureName) -> Option<f64> {
        audit::read(name.key);
        self.measure_named(name.key)
    }

    pub fn measure_named(&self, key: &str) -> Option<f64> {
        self.measures.get(key).map(|m| m.value)
    }

    /// The points of a series, if any were recorded.
    pub fn points(&self, name: SeriesName) -> Option<&[[f64; 2]]> {
        audit::read(name.key);
        self.series.get(name.key).map(Vec::as_slice)
    }

    /// Whether a check, fact, measure or series of this name was recorded.
    pub fn records(&self, name: &str) -> bool {
        self.checks.iter().any(|c| c.name == name)
            || self.facts.contains_key(name)
            || self.measures.contains_key(name)
            || self.series.contains_key(name)
    }

    /// `key = value unit`, or that it was not recorded: evidence shown beside
    /// a statement.
    pub fn measure_text(&self, name: MeasureName, unit: &str) -> String {
        match self.measure(name) {
            Some(v) if v.fract() == 0.0 => format!("{} = {v}{unit}", name.key),
            Some(v) => format!("{} = {v:.2}{unit}", name.key),
            None => format!("{}: not recorded", name.key),
        }
    }

    /// `what: yes`, `what: no` or `what: not recorded`: a yes/no shown as
    /// evidence beside a statement.
    pub fn yes_no(what: &str, value: Option<bool>) -> String {
        let word = match value {
            Some(true) => "yes",
            Some(false) => "no",
            None => "not recorded",
        };
        format!("{what}: {word}")
    }

    /// `call → result` of the first failed call, or that none failed.
    pub fn first_error_text(&self) -> String {
        self.first_error()
            .map(|s| format!("{} → {}", s.call, s.result))
            .unwrap_or_else(|| "no call failed".to_owned())
    }

    /// Whether the first failed call returned `result`.
    pub fn first_error_is(&self, result: &str) -> Option<bool> {
        Some(self.first_error()?.result == result)
    }

    /// The first call that returned an error, if any.
    pub fn first_error(&self) -> Option<&Step> {
        self.steps.iter().find(|s| s.is_error() && !s.tolerated)
    }
}

/// Which names a judge reads: a CPU test runs every judge on the outcome
/// of its deciding variant and checks that each name it read was recorded
/// there, so a judge cannot wait on a name no variant writes.
pub mod audit {
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    thread_local! {
        static READ: RefCell<Option<BTreeSet<&'static str>>> = const { RefCell::new(None) };
    }

    pub(crate) fn read(name: &'static str) {
        READ.with(|r| {
            if let Some(set) = r.borrow_mut().as_mut() {
                set.insert(name);
            }
        });
    }

    /// Runs `f` and returns what it returned with the names it read.
    pub fn names_read<T>(f: impl FnOnce() -> T) -> (T, BTreeSet<&'static str>) {
        READ.with(|r| *r.borrow_mut() = Some(BTreeSet::new()));
        let value = f();
        let read = READ.with(|r| r.borrow_mut().take()).unwrap_or_default();
        (value, read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(call: &str, result: &str) -> Event {
        Event::Step(Step {
            call: call.into(),
            result: result.into(),
            tolerated: false,
            message: None,
        })
    }

    #[test]
    fn errors_checks_and_crashes_are_symptoms() {
        let mut outcome = Outcome::empty();
        outcome.apply(step("cuMemAlloc", "CUDA_SUCCESS"));
        outcome.apply(step("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY"));
        outcome.apply(Event::Check(Check {
            name: "memory back".into(),
            ok: false,
        }));
        outcome.apply(Event::Check(Check {
            name: "result right".into(),
            ok: true,
        }));
        outcome.termination = Termination::Signaled {
            signal: "SIGSEGV".into(),
        };
        assert_eq!(
            outcome.symptoms(),
            vec![
                Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY"),
                Symptom::check_failed(CheckName("memory back")),
                Symptom::Crashed("SIGSEGV".into()),
            ]
        );
    }

    #[test]
    fn tolerated_errors_and_success_are_not_symptoms() {
        let mut outcome = Outcome::empty();
        outcome.apply(step("cudaMalloc", "cudaSuccess"));
        outcome.apply(Event::Step(Step {
            call: "cuMemAlloc".into(),
            result: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            tolerated: true,
            message: None,
        }));
        outcome.apply(Event::End { error: None });
        assert!(outcome.symptoms().is_empty());
        assert_eq!(outcome.termination, Termination::Completed);
    }

    #[test]
    fn end_with_error_and_panic_set_termination() {
        let mut outcome = Outcome::empty();
        outcome.apply(Event::End {
            error: Some("boom".into()),
        });
        assert_eq!(outcome.termination, Termination::ReturnedError);
        outcome.apply(Event::Panic {
            message: "bang".into(),
        });
        assert_eq!(outcome.termination, Termination::Panicked);
        assert_eq!(outcome.symptoms(), vec![Symptom::Panicked]);
    }

    #[test]
    fn events_round_trip_as_json_lines() {
        let event = Event::Measure {
            key: "free".into(),
            value: 1.5,
            unit: Unit::Bytes,
        };
        let line = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event);
    }
}
