//! A module with PTX for compute capability 7.5 and no machine code at all:
//! the driver compiles it, at load time, for the GPU it runs on. Loads are
//! timed against the fixed module's machine code, five of each, with the
//! driver's compute cache off so that every PTX load compiles.

use std::time::Instant;

use casebook_driver::device;
use casebook_kernels::fatbin as shared;
use casebook_model::Recorder;

use crate::fatbin;
use crate::names::*;
use crate::{machine_code_for_device, scale_and_check};

const LOADS: usize = 9;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    // SAFETY: set before the first CUDA call, while this process has one
    // thread; the driver reads it when it initialises.
    unsafe { std::env::set_var("CUDA_CACHE_DISABLE", "1") };
    let ctx = device::context(rec)?;
    // The two images are loaded in turn, so that whatever else slows the
    // process (a neighbour's work, the first loads in a context) falls on
    // both alike; the median of each is compared.
    let (mut sass, mut ptx) = (Vec::new(), Vec::new());
    for i in 0..LOADS {
        let mut round = [
            (shared::SCALE, "machine code", &mut sass),
            (fatbin::SCALE_COMPUTE75_PTX, "PTX only", &mut ptx),
        ];
        // Which goes first alternates, so an order effect falls on both.
        if i % 2 == 1 {
            round.reverse();
        }
        for (image, label, seconds) in round {
            let start = Instant::now();
            rec.iteration(&format!("{label}, load {}", i + 1), |rec| {
                device::kernel(rec, &ctx, image, "scale")
            })?;
            seconds.push(start.elapsed().as_secs_f64());
        }
    }
    let median = |mut seconds: Vec<f64>| {
        seconds.sort_by(f64::total_cmp);
        seconds[LOADS / 2]
    };
    let (sass, ptx) = (median(sass), median(ptx));
    rec.measure(SASS_LOAD, sass);
    rec.measure(PTX_LOAD, ptx);
    rec.fact(PTX_LOADS_SLOWER, ptx > sass);

    let scale = device::kernel(rec, &ctx, fatbin::SCALE_COMPUTE75_PTX, "scale")?;
    let compiled_for_device = machine_code_for_device(rec, &ctx, &scale)?;
    rec.fact(MACHINE_CODE_FOR_DEVICE, compiled_for_device);
    scale_and_check(rec, &ctx, &scale)?;
    Ok(())
}
// ANCHOR_END: run
