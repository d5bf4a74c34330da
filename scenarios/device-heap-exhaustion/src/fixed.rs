//! Before the first launch, the heap limit is raised to what the kernel can
//! hold at once: every thread that can be resident, times its allocation,
//! with room for the allocator's own overhead. The kernel also checks for
//! null. No thread gets null, and the output matches the CPU.

use crate::fatbin;
use casebook_driver::RecordSteps;
use casebook_driver::device::{self, measure_bytes};
use casebook_model::Recorder;
use cudarc::driver::{PushKernelArg, sys};

use crate::names::*;
use crate::{FLOATS, config, input, probe, setup};

/// Room for the device allocator's own bookkeeping.
const OVERHEAD: usize = 4;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut k = setup(rec)?;
    let use_heap = device::kernel(rec, &k.ctx, fatbin::HEAP, "heap_use_checked")?;
    use sys::CUdevice_attribute::*;
    let sms = k.ctx.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
    let per_sm = k
        .ctx
        .attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as usize;
    let need = sms * per_sm * FLOATS * 4 * OVERHEAD; // FIX: size the heap from the need
    measure_bytes(rec, HEAP_LIMIT_SET, need);
    rec.step(
        "cuCtxSetLimit MALLOC_HEAP_SIZE",
        k.ctx
            .set_limit(sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE, need),
    )?;
    let nulls = probe(rec, &mut k)?;
    let host_input = input(k.threads);
    let input = rec.step("cuMemcpyHtoDAsync", k.stream.clone_htod(&host_input))?;
    let mut output = rec.step("cuMemAllocAsync", k.stream.alloc_zeros::<f32>(k.threads))?;
    rec.step("cuMemsetD8Async", k.stream.memset_zeros(&mut k.nulls))?;
    let (n, floats) = (k.threads as i32, FLOATS as i32);
    let mut launch = k.stream.launch_builder(&use_heap);
    launch
        .arg(&input)
        .arg(&mut output)
        .arg(&n)
        .arg(&floats)
        .arg(&mut k.nulls); // FIX: checks null
    rec.step("cuLaunchKernel heap_use_checked", unsafe {
        launch.launch(config(k.threads))
    })?;
    let out = rec.step("cuMemcpyDtoH", k.stream.clone_dtoh(&output))?;
    let late_nulls = rec.step("cuMemcpyDtoH", k.stream.clone_dtoh(&k.nulls))?[0];
    rec.measure(NULL_ALLOCATIONS_IN_USE, late_nulls as f64);
    rec.check(NO_THREAD_GETS_NULL, nulls == 0 && late_nulls == 0);
    let expected: Vec<f32> = host_input.iter().map(|x| x * 2.0).collect();
    rec.check(OUTPUT_MATCHES_THE_CPU, out == expected);
    Ok(())
}
// ANCHOR_END: run
