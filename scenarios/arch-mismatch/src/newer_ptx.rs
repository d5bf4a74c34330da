//! The module the program ships is PTX that CUDA 13.1's nvcc wrote
//! (`ptx/scale-13.1.ptx`, kept as nvcc wrote it), loaded through a driver
//! of CUDA 13.0: the driver's compiler does not know that PTX version.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::nvrtc::Ptx;

use crate::names::*;
use crate::{driver_version, isa_version, later_call, message};

/// PTX for the `scale` kernel, from `nvcc -ptx -arch=compute_75` of CUDA 13.1.
pub const NEWER_PTX: &str = include_str!("../ptx/scale-13.1.ptx");

/// The toolkit release that wrote it, as its header says.
pub const WRITTEN_BY: (i32, i32) = (13, 1);

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let driver = driver_version(rec)?;
    rec.fact(DRIVER_CUDA, format!("{}.{}", driver.0, driver.1));
    rec.fact(DRIVER_OLDER, driver < WRITTEN_BY);
    rec.fact(PTX_ISA, isa_version(NEWER_PTX));
    // BUG: PTX from a toolkit newer than the driver that has to compile it.
    let loaded = rec.step(
        "cuModuleLoadData",
        ctx.load_module(Ptx::from_src(NEWER_PTX)),
    );
    rec.fact(LOADED, loaded.is_ok());
    if let Err(e) = &loaded {
        rec.fact(MESSAGE, message(e));
    }
    later_call(rec);
    Ok(())
}
// ANCHOR_END: run
