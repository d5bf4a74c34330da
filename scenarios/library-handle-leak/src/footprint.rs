//! What one call's computation takes from the GPU, in a Rust program that
//! leaks nothing: free memory read before the computation and after it, the
//! computation done by cuBLAS (a handle and one GEMM, `library`) or by the
//! program's own kernel over the same operand (`own-kernel`). Seed 003's
//! libraries claim is decided in PyTorch at batch size 1, the article's case
//! (`python/footprint.py`); this pair shows the same in a cudarc program.

use casebook_kernels::fatbin;
use casebook_model::device;
use casebook_model::prelude::*;
use cudarc::cublas::result as blas;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::names::*;
use crate::{Gemm, N, gemm, setup};

/// Who computes the call.
#[derive(Clone, Copy)]
enum Computation {
    Cublas,
    OwnKernel,
}

pub fn library(rec: &mut Recorder) -> anyhow::Result<()> {
    footprint(rec, Computation::Cublas)
}

// ANCHOR: own_kernel
/// The control: the same program, the call's work done by its own kernel.
pub fn own_kernel(rec: &mut Recorder) -> anyhow::Result<()> {
    footprint(rec, Computation::OwnKernel)
}
// ANCHOR_END: own_kernel

fn footprint(rec: &mut Recorder, computation: Computation) -> anyhow::Result<()> {
    let g = setup(rec)?;
    rec.step("cuCtxSynchronize", g.ctx.synchronize())?;
    let before = device::free_bytes(rec, &g.ctx)?;
    match computation {
        Computation::Cublas => {
            let handle = rec.step("cublasCreate", blas::create_handle())?;
            gemm(rec, &g, handle)?;
            rec.step("cuCtxSynchronize", g.ctx.synchronize())?;
            measure_taken(rec, &g, before)?;
            rec.step("cublasDestroy", unsafe { blas::destroy_handle(handle) })?;
        }
        Computation::OwnKernel => {
            let scale = device::kernel(rec, &g.ctx, fatbin::SCALE, "scale")?;
            let n = N * N;
            let stream = g.ctx.default_stream();
            let mut launch = stream.launch_builder(&scale);
            launch.arg(&g.a).arg(&n).arg(&2.0f32);
            rec.step("cuLaunchKernel scale", unsafe {
                launch.launch(LaunchConfig::for_num_elems(n as u32))
            })?;
            rec.step("cuCtxSynchronize", g.ctx.synchronize())?;
            measure_taken(rec, &g, before)?;
        }
    }
    g.release(rec)?;
    Ok(())
}

/// Free memory before the computation less free memory after it; negative
/// where free memory rose meanwhile (something else let go of memory), which
/// the judge reads as no answer.
fn measure_taken(rec: &mut Recorder, g: &Gemm, before: usize) -> anyhow::Result<()> {
    let after = device::free_bytes(rec, &g.ctx)?;
    rec.measure(
        BYTES_THE_CALL_S_COMPUTATION_TAKES,
        before as f64 - after as f64,
    );
    Ok(())
}
