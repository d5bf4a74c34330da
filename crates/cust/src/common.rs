//! What every cust variant needs: cust's results named the way the driver
//! names them, the primary context, a module, free memory.

use std::fmt;

use casebook_driver::{RecordSteps, ResultName};
use casebook_model::Recorder;
use cust::CudaFlags;
use cust::context::Context;
use cust::device::Device;
use cust::error::{CudaError, CudaResult};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};

/// A cust error, named as the driver names it (`CUDA_ERROR_OUT_OF_MEMORY`).
#[derive(Debug)]
pub struct Cu(String);

impl From<CudaError> for Cu {
    fn from(e: CudaError) -> Self {
        // cust's variants are the driver's names in CamelCase.
        let mut name = String::from("CUDA_ERROR");
        for c in format!("{e:?}").chars() {
            if c.is_ascii_uppercase() {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
        Cu(name)
    }
}

impl ResultName for Cu {
    const SUCCESS: &'static str = "CUDA_SUCCESS";
    fn result_name(&self) -> String {
        self.0.clone()
    }
}

impl fmt::Display for Cu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Cu {}

/// cust's result, with its error named for the recorder.
pub fn cu<T>(result: CudaResult<T>) -> Result<T, Cu> {
    result.map_err(Cu::from)
}

/// A raw driver call's result, for what cust does not wrap.
fn raw(result: cust::sys::CUresult) -> Result<(), Cu> {
    match result {
        cust::sys::CUresult::CUDA_SUCCESS => Ok(()),
        error => Err(Cu(format!("{error:?}"))),
    }
}

/// Every `cuMemFree` this program makes passes through here on its way to
/// the driver, so that a variant can read the result of a free whose caller
/// throws it away (cust's `Drop for DeviceBuffer` does). The executable's own
/// definition of the symbol is the one cust's calls are linked to; it calls
/// libcuda's, found with `dlsym(RTLD_NEXT)`, and keeps the result.
pub mod free_log {
    use std::sync::{Mutex, OnceLock};

    use cust::sys::{CUdeviceptr, CUresult};

    use super::{Cu, raw};

    static LAST: Mutex<Option<CUresult>> = Mutex::new(None);

    type Free = unsafe extern "C" fn(CUdeviceptr) -> CUresult;

    /// # Safety
    /// As libcuda's `cuMemFree_v2`, which it calls with the same argument.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
        static REAL: OnceLock<Option<Free>> = OnceLock::new();
        let real = REAL.get_or_init(|| {
            // SAFETY: a lookup of a symbol by a NUL-terminated name.
            let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"cuMemFree_v2".as_ptr()) };
            // SAFETY: libcuda's cuMemFree_v2 has exactly this signature.
            (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, Free>(p) })
        });
        let result = match real {
            // SAFETY: the caller's contract is cuMemFree_v2's.
            Some(free) => unsafe { free(dptr) },
            None => CUresult::CUDA_ERROR_NOT_INITIALIZED,
        };
        *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        result
    }

    /// What the last `cuMemFree` returned, if one was made since the last
    /// call to this; clears it.
    pub fn take_last() -> Option<Result<(), Cu>> {
        LAST.lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map(raw)
    }
}

/// cuInit and the device's primary context, as `cust::quick_init` makes it.
pub fn primary_context(rec: &mut Recorder) -> anyhow::Result<Context> {
    rec.step("cuInit", cu(cust::init(CudaFlags::empty())))?;
    let device = rec.step("cuDeviceGet", cu(Device::get_device(0)))?;
    Ok(rec.step("cuDevicePrimaryCtxRetain", cu(Context::new(device)))?)
}

pub fn module(rec: &mut Recorder, fatbin: &[u8]) -> anyhow::Result<Module> {
    Ok(rec.step("cuModuleLoadData", cu(Module::from_fatbin(fatbin, &[])))?)
}

/// A stream with `flags` (cuStreamCreate), its step named `call`.
pub fn new_stream(rec: &mut Recorder, call: &str, flags: StreamFlags) -> anyhow::Result<Stream> {
    Ok(rec.step(call, cu(Stream::new(flags, None)))?)
}

/// Sets device 0's default memory pool to keep every page it holds mapped
/// (its release threshold at the maximum), so that a block freed while a
/// kernel still reads it stays readable (cust has no wrapper).
pub fn keep_pool_pages(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local; device 0 exists once a
    // context is retained on it.
    let result = unsafe { cust::sys::cuDeviceGetDefaultMemPool(&mut pool, 0) };
    rec.step("cuDeviceGetDefaultMemPool", raw(result))?;
    let mut threshold = u64::MAX;
    // SAFETY: the attribute takes a u64, read during the call.
    let result = unsafe {
        cust::sys::cuMemPoolSetAttribute(
            pool,
            cust::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    };
    rec.step(
        "cuMemPoolSetAttribute (release threshold: keep all)",
        raw(result),
    )?;
    Ok(())
}

/// Free device memory, as cuMemGetInfo reports it (cust has no wrapper).
pub fn free_bytes(rec: &mut Recorder) -> anyhow::Result<usize> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: two out-pointers to live locals.
    let result = unsafe { cust::sys::cuMemGetInfo_v2(&mut free, &mut total) };
    rec.step("cuMemGetInfo", raw(result))?;
    Ok(free)
}
