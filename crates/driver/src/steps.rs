//! A call's result named as its library names it, and the call recorded
//! as a step.

use std::ffi::CStr;

use casebook_model::Recorder;
use cudarc::driver::DriverError;

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

/// A call and its typed result, recorded as a step of the [`Recorder`].
pub trait RecordSteps {
    /// Records a call and its result, and hands the result back.
    fn step<T, E: ResultName>(&mut self, call: &str, result: Result<T, E>) -> Result<T, E>;

    /// Records a call whose error is provoked on purpose, so is no symptom.
    fn tolerate<T, E: ResultName>(&mut self, call: &str, result: Result<T, E>) -> Result<T, E>;
}

impl RecordSteps for Recorder {
    fn step<T, E: ResultName>(&mut self, call: &str, result: Result<T, E>) -> Result<T, E> {
        record(self, call, &result, false);
        result
    }

    fn tolerate<T, E: ResultName>(&mut self, call: &str, result: Result<T, E>) -> Result<T, E> {
        record(self, call, &result, true);
        result
    }
}

fn record<T, E: ResultName>(
    rec: &mut Recorder,
    call: &str,
    result: &Result<T, E>,
    tolerated: bool,
) {
    let (result, message) = match result {
        Ok(_) => (E::SUCCESS.to_owned(), None),
        Err(e) => (e.result_name(), e.message()),
    };
    rec.step_named(call, result, message, tolerated);
}

#[cfg(test)]
mod tests {
    use super::*;
    use casebook_model::{Event, Step};
    use cudarc::driver::sys::CUresult;

    #[test]
    fn every_api_s_success_is_known_as_success() {
        for success in [
            DriverError::SUCCESS,
            cudarc::cublas::result::CublasError::SUCCESS,
            nvml_wrapper::error::NvmlError::SUCCESS,
        ] {
            let step = Step {
                call: "a call".into(),
                result: success.into(),
                tolerated: false,
                message: None,
            };
            assert!(!step.is_error(), "{success} is not a success");
        }
    }

    #[test]
    fn steps_are_named_by_the_driver_enum() {
        let path = std::env::temp_dir().join(format!(
            "casebook-driver-steps-{}.jsonl",
            std::process::id()
        ));
        let mut rec = Recorder::new(std::fs::File::create(&path).unwrap());
        let oom = DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        let _ = rec.step::<(), _>("cuMemAlloc", Ok(()).map_err(|()| oom));
        let _ = rec.step::<(), _>("cuMemAlloc", Err(oom));
        let _ = rec.tolerate::<(), _>("cuMemAlloc", Err(oom));
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let steps: Vec<Step> = text
            .lines()
            .filter_map(|l| match serde_json::from_str(l).unwrap() {
                Event::Step(step) => Some(step),
                _ => None,
            })
            .collect();
        let named: Vec<(&str, bool)> = steps
            .iter()
            .map(|s| (s.result.as_str(), s.tolerated))
            .collect();
        assert_eq!(
            named,
            [
                ("CUDA_SUCCESS", false),
                ("CUDA_ERROR_OUT_OF_MEMORY", false),
                ("CUDA_ERROR_OUT_OF_MEMORY", true),
            ]
        );
    }
}
