use std::io::Write;

use serde::Serialize;

use crate::{Check, CheckName, Event, FactName, MeasureName, SeriesName, Step, Unit};

/// What a variant writes as it runs: steps, checks, facts and figures.
///
/// Each record is one JSON line, written and flushed at once, so that a
/// variant that crashes still leaves everything it did before the crash.
pub struct Recorder {
    sink: Box<dyn Write>,
}

impl Recorder {
    pub fn new(sink: impl Write + 'static) -> Self {
        Recorder {
            sink: Box::new(sink),
        }
    }

    /// Writes one event. A record that cannot be written is fatal: a trial
    /// with missing records would be judged on a lie.
    pub fn emit(&mut self, event: &Event) {
        let mut line = serde_json::to_vec(event).expect("events always serialise");
        line.push(b'\n');
        self.sink
            .write_all(&line)
            .and_then(|()| self.sink.flush())
            .expect("cannot write the event file");
    }

    /// Records a call and the name of its result (`CUDA_SUCCESS`,
    /// `cudaErrorMemoryAllocation`), with the library's own sentence for an
    /// error. A `tolerated` error is provoked on purpose, so is no symptom.
    /// A Rust variant records a call's typed result through
    /// `casebook_driver::RecordSteps`, a C++ variant through its table.
    pub fn step_named(
        &mut self,
        call: &str,
        result: String,
        message: Option<String>,
        tolerated: bool,
    ) {
        self.emit(&Event::Step(Step {
            call: call.to_owned(),
            result,
            tolerated,
            message,
        }));
    }

    /// Records a yes/no observation and returns it. A false check is a symptom.
    pub fn check(&mut self, name: CheckName, ok: bool) -> bool {
        self.emit(&Event::Check(Check {
            name: name.0.to_owned(),
            ok,
        }));
        ok
    }

    /// A hardware-independent observation. It goes into the snapshot, so it
    /// must be the same on every GPU: a name, a yes/no, a count fixed by
    /// design, a ratio bucket. Raw figures go to [`Recorder::measure`].
    pub fn fact(&mut self, name: FactName, value: impl Serialize) {
        self.fact_named(name.0, value);
    }

    /// A fact under a key made at run time (a worker's facts replayed under
    /// its label, the GPU probe's). Judges read declared names only.
    pub fn fact_named(&mut self, key: &str, value: impl Serialize) {
        let value = serde_json::to_value(value).expect("facts always serialise");
        self.emit(&Event::Fact {
            key: key.to_owned(),
            value,
        });
    }

    /// A raw figure for the JSON report, in the unit its name declares.
    pub fn measure(&mut self, name: MeasureName, value: f64) {
        self.measure_named(name.key, value, name.unit);
    }

    /// A raw figure under a key made at run time.
    pub fn measure_named(&mut self, key: &str, value: f64, unit: Unit) {
        self.emit(&Event::Measure {
            key: key.to_owned(),
            value,
            unit,
        });
    }

    /// Runs one iteration of a loop, marked so that the snapshot folds
    /// identical iterations into one entry, whatever their count.
    pub fn iteration<T>(&mut self, label: &str, body: impl FnOnce(&mut Self) -> T) -> T {
        self.emit(&Event::Iteration {
            label: Some(label.to_owned()),
        });
        let result = body(self);
        self.emit(&Event::Iteration { label: None });
        result
    }

    /// One point of a series to plot; the series' axes come with it.
    pub fn point(&mut self, series: SeriesName, x: f64, y: f64) {
        self.emit(&Event::Point {
            series: series.key.to_owned(),
            x,
            y,
            axes: Some(series.into()),
        });
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::Outcome;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub(crate) Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The outcome a recorder's bytes amount to.
    pub(crate) fn replay(bytes: &[u8]) -> Outcome {
        let mut outcome = Outcome::empty();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            outcome.apply(serde_json::from_slice(line).unwrap());
        }
        outcome
    }
}
