//! The kernel is compiled with `__launch_bounds__(1024)`: the compiler
//! keeps it within 65536 / 1024 = 64 registers a thread, spilling the rest
//! to local memory, so the 1024-thread launch is accepted.

use std::sync::Arc;

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::driver::{CudaContext, CudaFunction, PushKernelArg, sys};

use crate::names::*;
use crate::{BIG_BLOCK, N, attribute, input, kernel, launch, registers, right};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let heavy = kernel(rec, &ctx, "heavy")?;
    // FIX: the kernel declares the block size it is launched with.
    let bounded = kernel(rec, &ctx, "heavy_bounded")?;
    let unbounded_regs = registers(rec, &heavy)?;
    let regs = registers(rec, &bounded)?;
    let local = attribute(
        rec,
        &bounded,
        "local memory",
        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
    )?;
    rec.measure(BOUNDED_REGISTERS, regs.into());
    rec.fact(SPILLS, regs < unbounded_regs && local > 0);
    let out = launch(
        rec,
        &ctx,
        &bounded,
        BIG_BLOCK,
        "cuLaunchKernel heavy_bounded (1024 threads)",
    )?;
    rec.check(RESULTS_RIGHT, right(&out));

    // The bound is a promise the launch is held to: a kernel bounded to
    // 256 threads, launched with 512.
    let light = kernel(rec, &ctx, "light_bounded")?;
    let over = accepted_at(
        rec,
        &ctx,
        &light,
        512,
        "cuLaunchKernel light_bounded (512 threads, bound 256)",
    );
    rec.fact(OVER_BOUND_LAUNCHES, over);
    Ok(())
}
// ANCHOR_END: run

// ANCHOR: bound
/// The light kernel alone, compiled with `__launch_bounds__(256)`, launched
/// with 512 threads a block (and with 256 and 257, at its bound and just
/// above it).
pub fn bound(rec: &mut Recorder) -> anyhow::Result<()> {
    light_launches(rec, "light_bounded")
}
// ANCHOR_END: bound

// ANCHOR: no_bound
/// The same kernel compiled without a bound, the same launches.
pub fn no_bound(rec: &mut Recorder) -> anyhow::Result<()> {
    light_launches(rec, "light")
}
// ANCHOR_END: no_bound

/// Loads `name`, reads the most threads a block it allows, and launches it
/// with 512 threads a block, then with 256 and 257: whether each launch
/// was accepted.
fn light_launches(rec: &mut Recorder, name: &str) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let light = kernel(rec, &ctx, name)?;
    let most = attribute(
        rec,
        &light,
        "max threads per block",
        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
    )?;
    rec.measure(LIGHT_MAX_THREADS, most.into());
    for (block, fact) in [
        (512, LAUNCHED_512),
        (256, LAUNCHED_256),
        (257, LAUNCHED_257),
    ] {
        let label = format!("cuLaunchKernel {name} ({block} threads)");
        let accepted = accepted_at(rec, &ctx, &light, block, &label);
        rec.fact(fact, accepted);
    }
    Ok(())
}

/// Launches `light` with `block` threads a block, above its bound of 256
/// where it has one and `block` is; a refusal is provoked, so it is no
/// symptom. Whether it was accepted.
fn accepted_at(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    light: &CudaFunction,
    block: u32,
    label: &str,
) -> bool {
    let stream = ctx.default_stream();
    let Ok(input) = rec.step("cuMemAlloc + cuMemcpyHtoD", stream.clone_htod(&input())) else {
        return false;
    };
    let Ok(mut out) = rec.step("cuMemAlloc (out)", stream.alloc_zeros::<f32>(N)) else {
        return false;
    };
    let n = N as i32;
    let mut builder = stream.launch_builder(light);
    builder.arg(&mut out).arg(&input).arg(&n);
    let config = device::line((N as u32).div_ceil(block), block);
    let launched = rec.tolerate(label, unsafe { builder.launch(config) });
    launched.is_ok()
}
