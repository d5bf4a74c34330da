//! The calls a Rust variant makes to the CUDA driver (through cudarc), NVML
//! and cuBLAS, each recorded as a step: what a variant links beside
//! `casebook-model`, which names no driver, so that what reads cases
//! without running them (the cookbook, the report) builds without one.
//!
//! - [`ResultName`]: a call's result named the way its library names it
//!   (`CUDA_ERROR_OUT_OF_MEMORY`, `NVML NotFound`), with its sentence;
//! - [`RecordSteps`]: [`Recorder::step`](RecordSteps::step) and
//!   [`Recorder::tolerate`](RecordSteps::tolerate), a call and its result
//!   recorded;
//! - [`device`]: the recorded driver calls several cases make;
//! - [`run_cpp`]: a C++ variant run over the recorder's table of C
//!   callbacks, NVML's figure for its process answered here.

mod cpp;
pub mod device;
mod steps;

pub use cpp::run_cpp;
pub use steps::{RecordSteps, ResultName};

/// What a variant's code names, in one line: `use
/// casebook_driver::prelude::*;`. The model's prelude, the recorded calls
/// (`device`) and [`RecordSteps`].
pub mod prelude {
    pub use crate::{RecordSteps, device};
    pub use casebook_model::prelude::*;
}

// Each driver error name the model declares is a variant of cudarc's
// `CUresult`: a name the enum does not have does not compile.
macro_rules! in_cudarc {
    ($($name:ident = $variant:ident,)*) => {
        const _: () = {
            $(let _ = cudarc::driver::sys::CUresult::$variant;)*
        };
    };
}
casebook_model::driver_error_names!(in_cudarc);
