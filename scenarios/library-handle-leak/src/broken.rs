//! Each call creates a cuBLAS handle, uses it, and drops the raw handle
//! without cublasDestroy. cudarc's `CudaBlas` would destroy it on drop; the
//! bug needs the raw API, as in C++.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::cublas::result as blas;

use crate::{EVERY_CALL, MAX_CALLS, gemm, record_series, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let g = setup(rec)?;
    let mut frees = Vec::new();
    let mut failed = None;
    for _ in 0..MAX_CALLS {
        let call = rec.iteration("call", |rec| -> anyhow::Result<usize> {
            let handle = rec.step("cublasCreate", blas::create_handle())?;
            gemm(rec, &g, handle)?;
            rec.step("cuCtxSynchronize", g.ctx.synchronize())?;
            // BUG: no cublasDestroy(handle): its workspace stays allocated.
            Ok(device::free_bytes(rec, &g.ctx)?)
        });
        match call {
            Ok(free) => frees.push(free),
            Err(e) => {
                failed = Some(e.to_string());
                break;
            }
        }
    }
    record_series(rec, &frees);
    g.release(rec)?;
    rec.check(EVERY_CALL, failed.is_none());
    Ok(())
}
// ANCHOR_END: run
