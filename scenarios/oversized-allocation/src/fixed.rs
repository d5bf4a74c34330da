//! Ask how much is free, allocate one tile that fits (half of it), and
//! stream the batch through it. The output equals the CPU's.

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_model::Recorder;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::names::*;
use crate::{MATCHES, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let s = setup(rec)?;
    let free = device::free_bytes(rec, &s.ctx)?; // FIX: ask first
    let tile = (free / 2 / PAGE * PAGE).min(s.input.len() * 4) / 4;
    measure_bytes(rec, TILE_BYTES, tile * 4);
    let mut buf = rec.step("cuMemAllocAsync (one tile)", unsafe {
        s.stream.alloc::<f32>(tile)
    })?;
    let mut output = vec![0.0f32; s.input.len()];
    let mut tiles = 0;
    for (chunk, out) in s.input.chunks(tile).zip(output.chunks_mut(tile)) {
        rec.iteration("tile", |rec| -> anyhow::Result<()> {
            let mut view = buf.slice_mut(..chunk.len());
            rec.step("cuMemcpyHtoDAsync", s.stream.memcpy_htod(chunk, &mut view))?;
            let n = chunk.len() as i32;
            let mut launch = s.stream.launch_builder(&s.scale);
            launch.arg(&mut view).arg(&n).arg(&2.0f32);
            rec.step("cuLaunchKernel scale", unsafe {
                launch.launch(LaunchConfig::for_num_elems(n as u32))
            })?;
            rec.step(
                "cuMemcpyDtoHAsync",
                s.stream.memcpy_dtoh(&buf.slice(..chunk.len()), out),
            )?;
            Ok(())
        })?;
        tiles += 1;
    }
    rec.measure(TILES_COUNT, tiles as f64);
    rec.fact(TILES, tiles);
    let right = s.input.iter().zip(&output).all(|(x, y)| *y == 2.0 * x);
    rec.check(MATCHES, right);
    drop(buf);
    rec.step("cuStreamSynchronize", s.stream.synchronize())?;
    s.release(rec)?;
    Ok(())
}
// ANCHOR_END: run
