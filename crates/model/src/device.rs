//! The set-up every Rust variant does, each call recorded as a step.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, DriverError};
use cudarc::nvrtc::Ptx;

use crate::{MeasureName, Recorder, Unit};

/// Retains device 0's primary context, the one the runtime API uses too.
pub fn context(rec: &mut Recorder) -> Result<Arc<CudaContext>, DriverError> {
    rec.step("cuDevicePrimaryCtxRetain", CudaContext::new(0))
}

/// Loads `kernel` from a fatbin that nvcc compiled from kernels/device/.
pub fn kernel(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    fatbin: &[u8],
    kernel: &str,
) -> Result<CudaFunction, DriverError> {
    // A Vec keeps the image aligned as cuModuleLoadData wants it.
    let module = rec.step(
        "cuModuleLoadData",
        ctx.load_module(Ptx::from_binary(fatbin.to_vec())),
    )?;
    rec.step("cuModuleGetFunction", module.load_function(kernel))
}

/// The driver's own words for an error (cuGetErrorString), as a user sees
/// them printed; the error's name where the driver gives none.
pub fn message(e: &DriverError) -> String {
    e.error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| crate::ResultName::result_name(e))
}

/// A call that has nothing to do with what went before: allocate and free
/// 1 MiB, each recorded as `<label>: cuMemAlloc` and `<label>: cuMemFree`.
/// Whether it succeeds tells whether the process can still use the GPU.
pub fn unrelated_call(rec: &mut Recorder, label: &str) -> Result<(), DriverError> {
    // SAFETY: the buffer is freed at once and never touched.
    let buf = rec.step(&format!("{label}: cuMemAlloc"), unsafe {
        cudarc::driver::result::malloc_sync(1 << 20)
    })?;
    rec.step(&format!("{label}: cuMemFree"), unsafe {
        cudarc::driver::result::free_sync(buf)
    })
}

/// Free device memory now, as cuMemGetInfo reports it.
pub fn free_bytes(rec: &mut Recorder, ctx: &Arc<CudaContext>) -> Result<usize, DriverError> {
    rec.step("cuMemGetInfo", ctx.mem_get_info())
        .map(|(free, _total)| free)
}

/// Records a byte count as a raw figure.
pub fn measure_bytes(rec: &mut Recorder, name: MeasureName, bytes: usize) {
    debug_assert_eq!(
        name.unit,
        Unit::Bytes,
        "{} is not declared in bytes",
        name.key
    );
    rec.measure(name, bytes as f64);
}

/// Device memory is handed out in pages of this size; sizes that must come
/// out exact are multiples of it.
pub const PAGE: usize = 2 << 20;
