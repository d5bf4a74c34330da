//! The GPU probe: the child side of the environment fingerprint. Run as
//! the target [`PROBE`](crate::protocol::PROBE), it asks CUDA what GPU and
//! driver there are and records them under the names of
//! [`protocol::probe`](crate::protocol::probe), so the runner reads them
//! back without ever initialising CUDA itself.

use casebook_model::{Recorder, Unit};
use cudarc::driver::{result, sys};

use crate::protocol::probe::*;

/// The oldest CUDA version the driver must support: the API level the
/// build binds (cudarc's `cuda-13000`).
pub const NEEDS_CUDA: i32 = 13000;

/// What CUDA says of the first GPU.
struct Found {
    gpu: String,
    cuda: String,
    compute_capability: String,
    memory_total_bytes: u64,
    device_count: u32,
}

/// Records what CUDA says, or why it cannot run this build.
pub fn probe_here(rec: &mut Recorder) {
    match probe_cuda() {
        Ok(found) => {
            rec.fact_named(GPU, &found.gpu);
            rec.fact_named(CUDA, &found.cuda);
            rec.fact_named(COMPUTE_CAPABILITY, &found.compute_capability);
            rec.measure_named(
                MEMORY_TOTAL_BYTES,
                found.memory_total_bytes as f64,
                Unit::Bytes,
            );
            rec.measure_named(DEVICE_COUNT, found.device_count as f64, Unit::Count);
        }
        Err((why_not, reason)) => rec.fact_named(why_not, reason),
    }
}

/// What CUDA says, or ([`NO_GPU`] or [`DRIVER_TOO_OLD`], why).
fn probe_cuda() -> Result<Found, (&'static str, String)> {
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { sys::is_culib_present() } {
        return Err((
            NO_GPU,
            "no CUDA driver: libcuda.so.1 cannot be loaded".into(),
        ));
    }
    let named = |what: &str, e: result::DriverError| (NO_GPU, format!("{what} failed: {:?}", e.0));
    result::init().map_err(|e| named("cuInit", e))?;
    let count = result::device::get_count().map_err(|e| named("cuDeviceGetCount", e))?;
    if count < 1 {
        return Err((NO_GPU, "the CUDA driver sees no device".into()));
    }
    let dev = result::device::get(0).map_err(|e| named("cuDeviceGet", e))?;
    let gpu = result::device::get_name(dev).map_err(|e| named("cuDeviceGetName", e))?;
    let memory_total_bytes =
        unsafe { result::device::total_mem(dev) }.map_err(|e| named("cuDeviceTotalMem", e))? as u64;
    let attr = |a| unsafe { result::device::get_attribute(dev, a) };
    use sys::CUdevice_attribute::*;
    let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .map_err(|e| named("cuDeviceGetAttribute", e))?;
    let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        .map_err(|e| named("cuDeviceGetAttribute", e))?;
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|e| named("cuDriverGetVersion", e))?;
    let dotted = |v: i32| format!("{}.{}", v / 1000, (v % 1000) / 10);
    if version < NEEDS_CUDA {
        return Err((
            DRIVER_TOO_OLD,
            format!(
                "the driver supports CUDA {}, this build needs CUDA {} or newer",
                dotted(version),
                dotted(NEEDS_CUDA)
            ),
        ));
    }
    Ok(Found {
        gpu,
        cuda: dotted(version),
        compute_capability: format!("{major}.{minor}"),
        memory_total_bytes,
        device_count: count as u32,
    })
}
