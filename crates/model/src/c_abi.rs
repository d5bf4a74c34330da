//! The recorder as C++ variants call it: a table of C callbacks
//! (`CRecorder`, whose layout `kernels/include/casebook.h` declares) over a
//! [`Recorder`], and the two things a C++ variant asks the Rust side to do
//! rather than do again: the memory NVML counts for its process (which
//! `casebook_driver` answers: the model names no NVML), and the decision
//! over interleaved pairs of timings.

use std::ffi::{CStr, c_char, c_int, c_void};

use crate::{Axes, Check, Event, Recorder, Unit};

/// The memory NVML counts for this process, its NVML calls recorded as
/// steps on the recorder the table was made over (see
/// [`Recorder::from_c_table`]): 1 and the bytes when NVML counts memory for
/// this process, 0 when not.
pub type OwnMemoryFn = extern "C" fn(*mut c_void, *mut u64) -> c_int;

impl Recorder {
    /// The same recorder for C++ variants, as a table of C callbacks, with
    /// `own_memory` for what NVML counts. It borrows `self` for as long as
    /// the C++ code runs.
    pub fn c_abi(&mut self, own_memory: OwnMemoryFn) -> CRecorder {
        CRecorder {
            ctx: self as *mut Recorder as *mut c_void,
            step: c_step,
            check: c_check,
            fact: c_fact,
            measure: c_measure,
            point: c_point,
            iteration: c_iteration,
            own_memory,
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
    /// What NVML counts for the process ([`OwnMemoryFn`]).
    own_memory: OwnMemoryFn,
    /// [`crate::timing::compare_pairs`] on `n` interleaved pairs `(a[i],
    /// b[i])`: 1 when A is the larger, -1 when B is, 0 when neither; the
    /// median ratio a / b goes to `median_ratio` unless it is null. C++
    /// variants decide time-dependent facts through it, so that the rule
    /// exists once, in Rust.
    compare_pairs:
        extern "C" fn(*mut c_void, *const f64, *const f64, usize, f64, f64, *mut f64) -> c_int,
}

impl Recorder {
    /// The recorder behind a table's `ctx`, as a callback receives it.
    ///
    /// # Safety
    /// `ctx` is the `Recorder` that made the table, still borrowed by the
    /// C++ call.
    pub unsafe fn from_c_table<'a>(ctx: *mut c_void) -> &'a mut Recorder {
        unsafe { &mut *(ctx as *mut Recorder) }
    }
}

/// # Safety
/// As [`Recorder::from_c_table`].
unsafe fn recorder<'a>(ctx: *mut c_void) -> &'a mut Recorder {
    unsafe { Recorder::from_c_table(ctx) }
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
    unsafe { recorder(ctx) }.step_named(&call, result, message, tolerated != 0);
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
    use super::*;
    use crate::recorder::tests::{Shared, replay};

    extern "C" fn no_own_memory(_ctx: *mut c_void, _bytes: *mut u64) -> c_int {
        0
    }

    #[test]
    fn the_c_table_records_like_the_rust_side() {
        let shared = Shared::default();
        let mut rec = Recorder::new(shared.clone());
        let table = rec.c_abi(no_own_memory);
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
        let table = rec.c_abi(no_own_memory);
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
