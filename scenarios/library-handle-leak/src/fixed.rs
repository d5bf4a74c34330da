//! One handle, created once and destroyed at the end; every call uses it.
//! Free memory drops once, by the first call's workspace, and stays.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::cublas::result as blas;

use crate::{EVERY_CALL, STABLE, TOLERANCE, gemm, record_series, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let g = setup(rec)?;
    let handle = rec.step("cublasCreate", blas::create_handle())?; // FIX: one handle, kept
    let calls = crate::fixed_calls(rec);
    let mut frees = Vec::new();
    for _ in 0..calls {
        let free = rec.iteration("call", |rec| -> anyhow::Result<usize> {
            gemm(rec, &g, handle)?;
            rec.step("cuCtxSynchronize", g.ctx.synchronize())?;
            Ok(device::free_bytes(rec, &g.ctx)?)
        })?;
        frees.push(free);
    }
    rec.step("cublasDestroy", unsafe { blas::destroy_handle(handle) })?;
    record_series(rec, &frees);
    g.release(rec)?;
    let spread = frees.iter().max().unwrap_or(&0) - frees.iter().min().unwrap_or(&0);
    rec.check(STABLE, spread < TOLERANCE);
    rec.check(EVERY_CALL, frees.len() == calls);
    Ok(())
}
// ANCHOR_END: run
