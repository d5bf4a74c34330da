//! A light kernel (it scales a buffer) launched with 2048 threads a block:
//! more than any block may have, whatever the kernel; then with 1024, the
//! limit, and with 1025, one thread past it.

use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::names::*;
use crate::{N, message};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, "scale")?;
    let stream = ctx.default_stream();
    let mut data = rec.step("cuMemAlloc", stream.alloc_zeros::<f32>(N))?;
    let n = N as i32;
    let mut config = LaunchConfig::for_num_elems(N as u32);
    // BUG: more threads than a block may have.
    config.block_dim = (2048, 1, 1);
    config.grid_dim = ((N as u32).div_ceil(2048), 1, 1);
    let mut launch = stream.launch_builder(&scale);
    launch.arg(&mut data).arg(&n).arg(&2.0f32);
    let launched = rec.step("cuLaunchKernel scale (2048 threads)", unsafe {
        launch.launch(config)
    });
    if let Err(e) = &launched {
        rec.fact(MESSAGE, message(e));
    }
    rec.fact(BLOCK_2048_LAUNCHES, launched.is_ok());
    // The largest block a launch may have.
    let mut launch = stream.launch_builder(&scale);
    launch.arg(&mut data).arg(&n).arg(&2.0f32);
    let mut config = LaunchConfig::for_num_elems(N as u32);
    config.block_dim = (1024, 1, 1);
    config.grid_dim = ((N as u32).div_ceil(1024), 1, 1);
    let later = rec.step("later: cuLaunchKernel scale (1024 threads)", unsafe {
        launch.launch(config)
    });
    let synced = later.and_then(|_| rec.step("cuStreamSynchronize", stream.synchronize()));
    rec.fact(BLOCK_1024_LAUNCHES, synced.is_ok());
    rec.fact(LATER_CALL, synced.is_ok());
    // One thread past the limit.
    let mut launch = stream.launch_builder(&scale);
    launch.arg(&mut data).arg(&n).arg(&2.0f32);
    let mut config = LaunchConfig::for_num_elems(N as u32);
    config.block_dim = (1025, 1, 1);
    config.grid_dim = ((N as u32).div_ceil(1025), 1, 1);
    let just_over = rec.step("later: cuLaunchKernel scale (1025 threads)", unsafe {
        launch.launch(config)
    });
    rec.fact(BLOCK_1025_LAUNCHES, just_over.is_ok());
    Ok(())
}
// ANCHOR_END: run
