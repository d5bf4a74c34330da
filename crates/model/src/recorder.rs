use std::ffi::{CStr, c_char, c_int, c_void};
use std::io::Write;

use cudarc::driver::DriverError;
use serde::Serialize;

use crate::{Axes, Check, CheckName, Event, FactName, MeasureName, SeriesName, Step, Unit};

/// Names the result of an API call the way CUDA does.
pub trait ResultName {
    /// The name of success in this API: `CUDA_SUCCESS`, `cudaSuccess`.
    const SUCCESS: &'static str;
    fn result_name(&self) -> String;
    /// The library's own sentence for the error, as a user reads it.
    fn message(&self) -> Option<String> {
        None
    }
}

impl ResultName for DriverError {
    const SUCCESS: &'static str = "CUDA_SUCCESS";
    fn result_name(&self) -> String {
        // The enum's own name (`CUDA_ERROR_OUT_OF_MEMORY`): asking the driver
        // with cuGetErrorName would be one more call into a possibly
        // poisoned context.
        format!("{:?}", self.0)
    }
    fn message(&self) -> Option<String> {
        // cuGetErrorString is a lookup in the driver's table: it touches no
        // context, so it answers in a poisoned one too. Where no driver
        // library loads (a test of the recorder on a machine without a GPU),
        // there is no sentence to ask for, and asking would panic.
        // SAFETY: only loads the library, as any driver call would.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return None;
        }
        self.error_string()
            .ok()
            .map(|s| s.to_string_lossy().into_owned())
    }
}

impl ResultName for nvml_wrapper::error::NvmlError {
    const SUCCESS: &'static str = "NVML_SUCCESS";
    fn result_name(&self) -> String {
        // The error's kind (`NotFound`, `LibloadingError`), without the
        // message some kinds carry.
        let debug = format!("{self:?}");
        let kind = debug.split(['(', ' ', '{']).next().unwrap_or_default();
        format!("NVML {kind}")
    }
    fn message(&self) -> Option<String> {
        Some(self.to_string())
    }
}

impl ResultName for cudarc::cublas::result::CublasError {
    const SUCCESS: &'static str = "CUBLAS_STATUS_SUCCESS";
    fn result_name(&self) -> String {
        format!("{:?}", self.0)
    }
    fn message(&self) -> Option<String> {
        // cuBLAS's own sentence, from the library the variant already loaded
        // (asked only where it loads: asking where it does not would panic).
        // SAFETY: a lookup in cuBLAS's table of status strings.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return None;
        }
        let text = unsafe { cudarc::cublas::sys::cublasGetStatusString(self.0) };
        (!text.is_null()).then(|| {
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        })
    }
}

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

    /// Records a call and its result, and hands the result back.
    pub fn step<T, E: ResultName>(&mut self, call: &str, result: Result<T, E>) -> Result<T, E> {
        self.record_step(call, &result, false);
        result
    }

    /// Records a call whose error is provoked on purpose, so is no symptom.
    pub fn tolerate<T, E: ResultName>(&mut self, call: &str, result: Result<T, E>) -> Result<T, E> {
        self.record_step(call, &result, true);
        result
    }

    fn record_step<T, E: ResultName>(
        &mut self,
        call: &str,
        result: &Result<T, E>,
        tolerated: bool,
    ) {
        let (result, message) = match result {
            Ok(_) => (E::SUCCESS.to_owned(), None),
            Err(e) => (e.result_name(), e.message()),
        };
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

    /// The same recorder for C++ variants, as a table of C callbacks.
    /// It borrows `self` for as long as the C++ code runs.
    pub fn c_abi(&mut self) -> CRecorder {
        CRecorder {
            ctx: self as *mut Recorder as *mut c_void,
            step: c_step,
            check: c_check,
            fact: c_fact,
            measure: c_measure,
            point: c_point,
            iteration: c_iteration,
            own_memory: c_own_memory,
            compare_pairs: c_compare_pairs,
        }
    }
}

/// The recorder as C++ sees it: `kernels/include/casebook.h` declares the
/// same layout.
#[repr(C)]
pub struct CRecorder {
    ctx: *mut c_void,
    step: extern "C" fn(*mut c_void, *const c_char, *const c_char, *const c_char, c_int),
    check: extern "C" fn(*mut c_void, *const c_char, c_int),
    fact: extern "C" fn(*mut c_void, *const c_char, *const c_char),
    measure: extern "C" fn(*mut c_void, *const c_char, f64, c_int),
    point: extern "C" fn(*mut c_void, *const c_char, *const c_char, c_int, f64, f64),
    iteration: extern "C" fn(*mut c_void, *const c_char),
    /// [`crate::device::own_memory`], its NVML calls recorded as steps: 1 and
    /// the bytes when NVML counts memory for this process, 0 when not.
    own_memory: extern "C" fn(*mut c_void, *mut u64) -> c_int,
    /// [`crate::timing::compare_pairs`] on `n` interleaved pairs `(a[i],
    /// b[i])`: 1 when A is the larger, -1 when B is, 0 when neither; the
    /// median ratio a / b goes to `median_ratio` unless it is null. C++
    /// variants decide time-dependent facts through it, so that the rule
    /// exists once, in Rust.
    compare_pairs:
        extern "C" fn(*mut c_void, *const f64, *const f64, usize, f64, f64, *mut f64) -> c_int,
}

/// # Safety
/// `ctx` is the `Recorder` that made the table, still borrowed by the C++ call.
unsafe fn recorder<'a>(ctx: *mut c_void) -> &'a mut Recorder {
    unsafe { &mut *(ctx as *mut Recorder) }
}

/// # Safety
/// `s` is a NUL-terminated string from the C++ side.
unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        return String::from("(null)");
    }
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

extern "C" fn c_step(
    ctx: *mut c_void,
    call: *const c_char,
    result: *const c_char,
    message: *const c_char,
    tolerated: c_int,
) {
    let (call, result) = unsafe { (text(call), text(result)) };
    let message = (!message.is_null()).then(|| unsafe { text(message) });
    let rec = unsafe { recorder(ctx) };
    rec.emit(&Event::Step(Step {
        call,
        result,
        tolerated: tolerated != 0,
        message,
    }));
}

extern "C" fn c_check(ctx: *mut c_void, name: *const c_char, ok: c_int) {
    let name = unsafe { text(name) };
    unsafe { recorder(ctx) }.emit(&Event::Check(Check { name, ok: ok != 0 }));
}

extern "C" fn c_fact(ctx: *mut c_void, key: *const c_char, json: *const c_char) {
    let (key, json) = unsafe { (text(key), text(json)) };
    // C++ passes JSON literals (`true`, `3`, `"text"`); anything else is kept as text.
    let value = serde_json::from_str(&json).unwrap_or(serde_json::Value::String(json));
    unsafe { recorder(ctx) }.emit(&Event::Fact { key, value });
}

/// A unit the C++ side passed: the generated header only passes the codes
/// of [`Unit`], so anything else is a broken build, recorded as a ratio.
fn unit_of(code: c_int) -> Unit {
    Unit::from_code(code).unwrap_or(Unit::Ratio)
}

extern "C" fn c_measure(ctx: *mut c_void, key: *const c_char, value: f64, unit: c_int) {
    let key = unsafe { text(key) };
    unsafe { recorder(ctx) }.measure_named(&key, value, unit_of(unit));
}

extern "C" fn c_point(
    ctx: *mut c_void,
    series: *const c_char,
    x_label: *const c_char,
    y_unit: c_int,
    x: f64,
    y: f64,
) {
    let (series, x_label) = unsafe { (text(series), text(x_label)) };
    unsafe { recorder(ctx) }.emit(&Event::Point {
        series,
        x,
        y,
        axes: Some(Axes {
            x_label,
            x_unit: Unit::Count,
            y_unit: unit_of(y_unit),
        }),
    });
}

extern "C" fn c_iteration(ctx: *mut c_void, label: *const c_char) {
    let label = (!label.is_null()).then(|| unsafe { text(label) });
    unsafe { recorder(ctx) }.emit(&Event::Iteration { label });
}

extern "C" fn c_own_memory(ctx: *mut c_void, bytes: *mut u64) -> c_int {
    match crate::device::own_memory(unsafe { recorder(ctx) }) {
        Ok(Some(held)) => {
            if !bytes.is_null() {
                // SAFETY: the C++ side passes a pointer to one integer.
                unsafe { *bytes = held };
            }
            1
        }
        // The failed NVML call is recorded as a step; "no figure" is all
        // the C++ side needs to know.
        Ok(None) | Err(_) => 0,
    }
}

extern "C" fn c_compare_pairs(
    _ctx: *mut c_void,
    a: *const f64,
    b: *const f64,
    n: usize,
    least: f64,
    ratio: f64,
    median_ratio: *mut f64,
) -> c_int {
    let pairs: Vec<(f64, f64)> = if n == 0 || a.is_null() || b.is_null() {
        Vec::new()
    } else {
        // SAFETY: the C++ side passes two arrays of `n` doubles.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(a, n),
                std::slice::from_raw_parts(b, n),
            )
        };
        a.iter().copied().zip(b.iter().copied()).collect()
    };
    let compared = crate::timing::compare_pairs(&pairs, least, ratio);
    if !median_ratio.is_null() {
        // SAFETY: the C++ side passes a pointer to one double, or null.
        unsafe { *median_ratio = compared.median_ratio };
    }
    match compared.larger {
        crate::timing::Larger::A => 1,
        crate::timing::Larger::B => -1,
        crate::timing::Larger::Neither => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::Outcome;

    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn replay(bytes: &[u8]) -> Outcome {
        let mut outcome = Outcome::empty();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            outcome.apply(serde_json::from_slice(line).unwrap());
        }
        outcome
    }

    #[test]
    fn steps_are_named_by_the_driver_enum() {
        let shared = Shared::default();
        let mut rec = Recorder::new(shared.clone());
        let oom = DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        let _ = rec.step::<(), _>("cuMemAlloc", Ok(()).map_err(|()| oom));
        let _ = rec.step::<(), _>("cuMemAlloc", Err(oom));
        let outcome = replay(&shared.0.borrow());
        assert_eq!(outcome.steps[0].result, "CUDA_SUCCESS");
        assert_eq!(outcome.steps[1].result, "CUDA_ERROR_OUT_OF_MEMORY");
    }

    #[test]
    fn the_c_table_records_like_the_rust_side() {
        let shared = Shared::default();
        let mut rec = Recorder::new(shared.clone());
        let table = rec.c_abi();
        (table.step)(
            table.ctx,
            c"cudaMalloc".as_ptr(),
            c"cudaErrorMemoryAllocation".as_ptr(),
            c"out of memory".as_ptr(),
            0,
        );
        (table.check)(table.ctx, c"memory back".as_ptr(), 1);
        (table.fact)(table.ctx, c"second_call_ok".as_ptr(), c"true".as_ptr());
        (table.fact)(table.ctx, c"note".as_ptr(), c"plain words".as_ptr());
        (table.measure)(table.ctx, c"free".as_ptr(), 42.0, 0);
        (table.iteration)(table.ctx, c"call".as_ptr());
        (table.step)(
            table.ctx,
            c"cudaFree".as_ptr(),
            c"cudaSuccess".as_ptr(),
            std::ptr::null(),
            0,
        );
        (table.iteration)(table.ctx, std::ptr::null());
        let outcome = replay(&shared.0.borrow());
        assert_eq!(
            outcome.iterations,
            vec![crate::Iteration {
                label: "call".into(),
                start: 1,
                end: 2
            }]
        );
        assert_eq!(outcome.steps[0].result, "cudaErrorMemoryAllocation");
        assert_eq!(outcome.steps[0].message.as_deref(), Some("out of memory"));
        assert_eq!(outcome.steps[1].message, None);
        assert_eq!(outcome.check_named("memory back"), Some(true));
        assert_eq!(
            outcome.fact_named("second_call_ok"),
            Some(&serde_json::json!(true))
        );
        assert_eq!(
            outcome.fact_named("note"),
            Some(&serde_json::json!("plain words"))
        );
        assert_eq!(outcome.measure_named("free"), Some(42.0));
        assert_eq!(outcome.measures["free"].unit, Unit::Bytes);
    }

    #[test]
    fn the_c_table_decides_pairs_with_the_rust_rule() {
        let mut rec = Recorder::new(Shared::default());
        let table = rec.c_abi();
        let compare = |a: &[f64], b: &[f64], median: *mut f64| {
            (table.compare_pairs)(table.ctx, a.as_ptr(), b.as_ptr(), a.len(), 0.1, 1.2, median)
        };
        let (slow, fast) = ([2.0, 1.9, 2.2, 0.9, 2.5], [1.0, 1.0, 1.1, 1.0, 1.2]);
        let mut median = 0.0;
        assert_eq!(compare(&slow, &fast, &mut median), 1);
        assert_eq!(median, 2.0);
        assert_eq!(compare(&fast, &slow, std::ptr::null_mut()), -1);
        assert_eq!(compare(&[1.1; 5], &[1.0; 5], std::ptr::null_mut()), 0);
        assert_eq!(compare(&[], &[], std::ptr::null_mut()), 0);
    }
}
