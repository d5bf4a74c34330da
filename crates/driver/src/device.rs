//! The set-up every Rust variant does, each call recorded as a step.

use std::sync::Arc;

use casebook_model::{FactName, MeasureName, Recorder, Unit};
use cudarc::driver::{CudaContext, CudaFunction, DriverError, LaunchConfig, result, sys};
use cudarc::nvrtc::Ptx;

use crate::{RecordSteps, ResultName};

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

/// A launch of `blocks` blocks of `threads` threads each, in one
/// dimension, with no dynamic shared memory: how every case's kernels are
/// launched unless a case is about the launch's shape.
pub fn line(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A job's smallest work on `device`: its primary context retained and
/// made current, a 4 KiB buffer written and freed, the context released.
/// What a case runs where the question is only whether the device it got
/// can be worked on at all.
pub fn small_job(rec: &mut Recorder, device: sys::CUdevice) -> Result<(), DriverError> {
    let ctx = rec.step("cuDevicePrimaryCtxRetain", unsafe {
        result::primary_ctx::retain(device)
    })?;
    rec.step("cuCtxSetCurrent", unsafe { result::ctx::set_current(ctx) })?;
    // SAFETY: 4 KiB, freed below.
    let buffer = rec.step("cuMemAlloc", unsafe { result::malloc_sync(4096) })?;
    rec.step("cuMemsetD8", unsafe {
        result::memset_d8_sync(buffer, 1, 4096)
    })?;
    // SAFETY: nothing uses the buffer any more.
    rec.step("cuMemFree", unsafe { result::free_sync(buffer) })?;
    rec.step("cuDevicePrimaryCtxRelease", unsafe {
        result::primary_ctx::release(device)
    })?;
    Ok(())
}

/// The driver's own words for an error (cuGetErrorString), as a user sees
/// them printed; the error's name where the driver gives none.
pub fn message(e: &DriverError) -> String {
    e.error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| e.result_name())
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

/// After a kernel that may have faulted: one call that has nothing to do
/// with it (allocate and free 1 MiB), recorded as provoked, and its result's
/// name recorded as `fact`. Returns whether the context still works; where
/// it does not, the caller's buffers cannot be freed and are best forgotten.
pub fn later_call(rec: &mut Recorder, fact: FactName) -> bool {
    // SAFETY: 1 MiB, freed below if it was allocated, never touched.
    let later = rec.tolerate("cuMemAlloc (unrelated, after the kernel)", unsafe {
        cudarc::driver::result::malloc_sync(1 << 20)
    });
    match later {
        Ok(buf) => {
            rec.fact(fact, "CUDA_SUCCESS");
            // SAFETY: nothing uses the buffer.
            let _ = unsafe { cudarc::driver::result::free_sync(buf) };
            true
        }
        Err(e) => {
            rec.fact(fact, e.result_name());
            false
        }
    }
}

/// Free device memory now, as cuMemGetInfo reports it.
pub fn free_bytes(rec: &mut Recorder, ctx: &Arc<CudaContext>) -> Result<usize, DriverError> {
    rec.step("cuMemGetInfo", ctx.mem_get_info())
        .map(|(free, _total)| free)
}

/// Waits, up to `within`, until the device's free memory is at least
/// `back_to` (what the driver takes back from ended processes and freed
/// blocks comes back in its own time); returns the free memory it read
/// last. The polls are not recorded as steps: how many it takes varies from
/// run to run.
pub fn wait_for_free(
    ctx: &CudaContext,
    back_to: usize,
    within: std::time::Duration,
) -> Result<usize, DriverError> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let (free, _total) = ctx.mem_get_info()?;
        if free >= back_to || std::time::Instant::now() >= deadline {
            return Ok(free);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The device memory this process holds, as NVML counts it: the figure
/// nvidia-smi lists for the process, summed over the GPUs. Unlike free
/// memory it is this process's own, whatever else runs on the GPU, so a
/// variant that reads it can share the GPU. `None` when NVML lists the
/// process on no GPU (in a container that hides the host's process ids, or
/// before the process has a context).
pub fn own_memory(rec: &mut Recorder) -> Result<Option<u64>, nvml_wrapper::error::NvmlError> {
    static NVML: std::sync::OnceLock<nvml_wrapper::Nvml> = std::sync::OnceLock::new();
    let nvml = match NVML.get() {
        Some(nvml) => nvml,
        None => {
            let nvml = rec.step("nvmlInit", nvml_wrapper::Nvml::init())?;
            NVML.get_or_init(|| nvml)
        }
    };
    rec.step(
        "nvmlDeviceGetComputeRunningProcesses",
        held_by(nvml, std::process::id()),
    )
}

fn held_by(
    nvml: &nvml_wrapper::Nvml,
    pid: u32,
) -> Result<Option<u64>, nvml_wrapper::error::NvmlError> {
    use nvml_wrapper::enums::device::UsedGpuMemory;
    let mut held = None;
    for index in 0..nvml.device_count()? {
        for p in nvml.device_by_index(index)?.running_compute_processes()? {
            if p.pid == pid {
                let bytes = match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => bytes,
                    UsedGpuMemory::Unavailable => continue,
                };
                *held.get_or_insert(0) += bytes;
            }
        }
    }
    Ok(held)
}

/// [`own_memory`], or an error that says why there is no figure.
pub fn own_memory_bytes(rec: &mut Recorder) -> anyhow::Result<u64> {
    own_memory(rec)?.ok_or_else(|| {
        anyhow::anyhow!(
            "NVML lists no device memory for this process (pid {}): its process ids are not this \
             process's (a container without the host's pid namespace)",
            std::process::id()
        )
    })
}

/// The process's resident memory in bytes, from /proc/self/statm.
pub fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
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

/// Events, recorded as steps, as cudarc's `result::event` groups them: what
/// a case writes to order one stream's work after another's, or the host
/// after a stream. Timing is off: no case reads an event's time.
pub mod event {
    use casebook_model::Recorder;
    use cudarc::driver::{DriverError, result, sys};

    use crate::RecordSteps;

    /// `cuEventCreate`, timing off.
    pub fn create(rec: &mut Recorder) -> Result<sys::CUevent, DriverError> {
        rec.step(
            "cuEventCreate",
            result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
        )
    }

    /// `cuEventRecord` on `stream`, recorded as `label`.
    ///
    /// # Safety
    /// `event` and `stream` are live.
    pub unsafe fn record(
        rec: &mut Recorder,
        label: &str,
        event: sys::CUevent,
        stream: sys::CUstream,
    ) -> Result<(), DriverError> {
        // SAFETY: the caller's promise.
        rec.step(label, unsafe { result::event::record(event, stream) })
    }

    /// `cuEventSynchronize`: the host waits for what the event marks.
    ///
    /// # Safety
    /// `event` is live.
    pub unsafe fn synchronize(rec: &mut Recorder, event: sys::CUevent) -> Result<(), DriverError> {
        // SAFETY: the caller's promise.
        rec.step("cuEventSynchronize", unsafe {
            result::event::synchronize(event)
        })
    }

    /// `cuEventDestroy`.
    ///
    /// # Safety
    /// `event` is live, nothing waits on it any more, and it is not used
    /// after.
    pub unsafe fn destroy(rec: &mut Recorder, event: sys::CUevent) -> Result<(), DriverError> {
        // SAFETY: the caller's promise.
        rec.step("cuEventDestroy", unsafe { result::event::destroy(event) })
    }
}

/// Streams, recorded as steps, as cudarc's `result::stream` groups them:
/// what a case writes to make a stream of its own, to wait for one, or to
/// order one after an event. Each call is recorded as `label`, where the
/// case names which stream or which moment it is.
pub mod stream {
    use casebook_model::Recorder;
    use cudarc::driver::{DriverError, result, sys};

    use crate::RecordSteps;

    pub use cudarc::driver::result::stream::StreamKind;

    /// `cuStreamCreate` of `kind`, recorded as `label`.
    pub fn create(
        rec: &mut Recorder,
        label: &str,
        kind: StreamKind,
    ) -> Result<sys::CUstream, DriverError> {
        rec.step(label, result::stream::create(kind))
    }

    /// `cuStreamSynchronize`: the host waits for what `stream` was given,
    /// recorded as `label`.
    ///
    /// # Safety
    /// `stream` is live.
    pub unsafe fn synchronize(
        rec: &mut Recorder,
        label: &str,
        stream: sys::CUstream,
    ) -> Result<(), DriverError> {
        // SAFETY: the caller's promise.
        rec.step(label, unsafe { result::stream::synchronize(stream) })
    }

    /// `cuStreamWaitEvent`: `stream`'s later work waits for what `event`
    /// marks, recorded as `label`.
    ///
    /// # Safety
    /// `stream` and `event` are live.
    pub unsafe fn wait_event(
        rec: &mut Recorder,
        label: &str,
        stream: sys::CUstream,
        event: sys::CUevent,
        flags: sys::CUevent_wait_flags,
    ) -> Result<(), DriverError> {
        // SAFETY: the caller's promise.
        rec.step(label, unsafe {
            result::stream::wait_event(stream, event, flags)
        })
    }

    /// `cuStreamDestroy`.
    ///
    /// # Safety
    /// `stream` is live, was made by [`create`] or the driver's own
    /// `cuStreamCreate`, and is not used after.
    pub unsafe fn destroy(rec: &mut Recorder, stream: sys::CUstream) -> Result<(), DriverError> {
        // SAFETY: the caller's promise.
        rec.step("cuStreamDestroy", unsafe {
            result::stream::destroy(stream)
        })
    }
}

/// The primary context, as cudarc's `result::primary_ctx` groups it: what a
/// case does after a fault to try again in a new context.
pub mod primary_ctx {
    use casebook_model::Recorder;
    use cudarc::driver::{DriverError, result, sys};

    use crate::RecordSteps;

    /// `cuDevicePrimaryCtxReset`: destroys `device`'s primary context, what
    /// the runtime's `cudaDeviceReset` does.
    ///
    /// # Safety
    /// Every object of the old context (a `CudaContext`, its functions,
    /// streams and buffers) is forgotten, never dropped or used after.
    pub unsafe fn reset(rec: &mut Recorder, device: sys::CUdevice) -> Result<(), DriverError> {
        rec.step(
            "cuDevicePrimaryCtxReset",
            // SAFETY: the caller's promise.
            unsafe { sys::cuDevicePrimaryCtxReset_v2(device) }.result(),
        )
    }

    /// A new primary context retained and made current, then one unrelated
    /// call in it; each step's name starts with `label`.
    pub fn retain_and_call(
        rec: &mut Recorder,
        device: sys::CUdevice,
        label: &str,
    ) -> Result<(), DriverError> {
        let fresh = rec.step(&format!("{label}: cuDevicePrimaryCtxRetain"), unsafe {
            // SAFETY: a device ordinal the caller got from the driver.
            result::primary_ctx::retain(device)
        })?;
        rec.step(&format!("{label}: cuCtxSetCurrent"), unsafe {
            // SAFETY: the context was retained just above.
            result::ctx::set_current(fresh)
        })?;
        super::unrelated_call(rec, label)
    }
}

/// The PCI domain, bus and device of the GPU this process sees first (the
/// one its trial is pinned to), read without making a context: how a row of
/// nvidia-smi, which numbers every GPU of the machine, is matched to it.
pub fn gpu_bus() -> Option<(u32, u32, u32)> {
    use sys::CUdevice_attribute as A;
    result::init().ok()?;
    let dev = result::device::get(0).ok()?;
    // SAFETY: a device the driver just returned; attributes are read only.
    let attr = |a| unsafe { result::device::get_attribute(dev, a) }.ok();
    Some((
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)? as u32,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)? as u32,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)? as u32,
    ))
}

/// nvidia-smi's `00000000:18:00.0` as (domain, bus, device).
pub fn parse_bus(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split([':', '.']);
    let hex = |p: Option<&str>| u32::from_str_radix(p?, 16).ok();
    Some((hex(parts.next())?, hex(parts.next())?, hex(parts.next())?))
}

/// The free memory nvidia-smi reports for this process's GPU, in bytes
/// (its figure is in MiB), read the way a user reads it: by running
/// `nvidia-smi --query-gpu`, from a process that has made no context.
pub fn nvidia_smi_free_bytes() -> anyhow::Result<u64> {
    let gpu = gpu_bus().ok_or_else(|| anyhow::anyhow!("cannot read this GPU's PCI bus"))?;
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=pci.bus_id,memory.free",
            "--format=csv,noheader,nounits",
        ])
        .output()?;
    anyhow::ensure!(out.status.success(), "nvidia-smi --query-gpu failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let (bus, free) = l.split_once(',')?;
            (parse_bus(bus.trim())? == gpu).then(|| free.trim().parse::<u64>().ok())?
        })
        .map(|mib| mib << 20)
        .ok_or_else(|| {
            anyhow::anyhow!("nvidia-smi lists no free memory for the GPU on bus {gpu:?}")
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bus_id_is_read_as_nvidia_smi_prints_it() {
        assert_eq!(super::parse_bus("00000000:18:00.0"), Some((0, 0x18, 0)));
        assert_eq!(super::parse_bus("00000001:AB:1F.0"), Some((1, 0xab, 0x1f)));
        assert_eq!(super::parse_bus("[N/A]"), None);
    }
}
