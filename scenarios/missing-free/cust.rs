//! missing-free through cust. `DeviceBuffer` frees its memory when dropped,
//! so a call that lets its buffer go out of scope cannot leak it: the
//! article's missing `cudaFree` has no cust spelling. What cust still allows
//! is a buffer that outlives the call (kept in a cache, a struct, a `Vec`),
//! which leaks exactly as much. And it adds a failure of its own: the drop
//! throws away `cuMemFree`'s result, so a free that fails says nothing.

use casebook_driver::RecordSteps;
use casebook_kernels::fatbin;
use casebook_model::{Recorder, VariantFn};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
#[allow(unused_imports)]
use scenario_missing_free::names::*;
use scenario_missing_free::{SAMPLE, back_to_baseline, bytes_per_call, model_calls, sample};

use crate::common::{Cu, cu, free_bytes, free_log, module, new_stream, primary_context};

struct Model {
    module: Module,
    stream: Stream,
    floats: usize,
    input: Vec<f32>,
    expected: Vec<f32>,
}

/// One model call: a working buffer of 1/CALLS_TO_FILL of the free memory,
/// the kernel on its first SAMPLE floats, the result checked. Returns the
/// buffer; what the caller does with it is the difference.
fn model_call(rec: &mut Recorder, m: &Model) -> anyhow::Result<DeviceBuffer<f32>> {
    // SAFETY: every element the kernel reads is written first.
    let buf = rec.step(
        "cuMemAlloc",
        cu(unsafe { DeviceBuffer::uninitialized(m.floats) }),
    )?;
    let mut head = buf.index(..SAMPLE);
    rec.step("cuMemcpyHtoD", cu(head.copy_from(&m.input[..])))?;
    let (n, stream) = (SAMPLE as i32, &m.stream);
    let module = &m.module;
    rec.step(
        "cuLaunchKernel scale",
        cu(unsafe {
            launch!(module.scale<<<(n as u32).div_ceil(256), 256, 0, stream>>>(
                head.as_device_ptr(), n, 2.0f32
            ))
        }),
    )?;
    let mut output = vec![0.0f32; SAMPLE];
    rec.step("cuMemcpyDtoH", cu(head.copy_to(&mut output[..])))?;
    rec.check(MODEL_OUTPUT_IS_RIGHT, output == m.expected);
    Ok(buf)
}

fn drive(
    rec: &mut Recorder,
    keep: fn(DeviceBuffer<f32>, &mut Vec<DeviceBuffer<f32>>),
) -> anyhow::Result<()> {
    let _ctx = primary_context(rec)?;
    let module = module(rec, fatbin::SCALE)?;
    let stream = new_stream(rec, "cuStreamCreate", StreamFlags::DEFAULT)?;
    let baseline = free_bytes(rec)?;
    let bytes = bytes_per_call(rec, baseline);
    let (input, expected) = sample();
    let m = Model {
        module,
        stream,
        floats: bytes / 4,
        input,
        expected,
    };
    let mut kept = Vec::new();
    model_calls(rec, baseline, bytes, |rec| {
        let buf = model_call(rec, &m)?;
        keep(buf, &mut kept);
        free_bytes(rec)
    })?;
    rec.step("cuStreamSynchronize", cu(m.stream.synchronize()))?;
    let after = free_bytes(rec)?;
    back_to_baseline(rec, baseline, after);
    Ok(())
}

// ANCHOR: broken
pub fn broken(rec: &mut Recorder) -> anyhow::Result<()> {
    // BUG: every call's buffer is kept (a cache of outputs that nothing
    // evicts): cust never drops it, so it is never freed.
    drive(rec, |buf, kept| kept.push(buf))
}
// ANCHOR_END: broken

// ANCHOR: fixed
pub fn fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    // The buffer goes out of scope at the end of the call; its Drop frees it.
    drive(rec, |buf, _| drop(buf))
}
// ANCHOR_END: fixed

// ANCHOR: drop_after_fault
/// A kernel faults; then two buffers are freed, one by its Drop and one by
/// `DeviceBuffer::drop`, which returns cuMemFree's result.
pub fn drop_after_fault(rec: &mut Recorder) -> anyhow::Result<()> {
    let _ctx = primary_context(rec)?;
    let module = module(rec, fatbin::FAULT)?;
    let stream = new_stream(rec, "cuStreamCreate", StreamFlags::DEFAULT)?;
    let implicit = rec.step("cuMemAlloc", cu(DeviceBuffer::<f32>::zeroed(1 << 20)))?;
    let explicit = rec.step("cuMemAlloc", cu(DeviceBuffer::<f32>::zeroed(1 << 20)))?;
    let spin = 0u64;
    rec.step(
        "cuLaunchKernel spin_then_fault",
        cu(unsafe { launch!(module.spin_then_fault<<<1, 1, 0, stream>>>(spin)) }),
    )?;
    let fault = rec.tolerate("cuStreamSynchronize", cu(stream.synchronize()));
    rec.fact(THE_KERNEL_FAULTED, fault.is_err());

    free_log::take_last();
    // ANCHOR: silent_drop
    drop(implicit); // cuMemFree runs here; its result is thrown away
    // ANCHOR_END: silent_drop
    // What that cuMemFree returned, read where the call passed on its way
    // to the driver: the program itself was told nothing.
    let implicit_failed = match free_log::take_last() {
        Some(result) => {
            let failed = result.is_err();
            let _ = rec.tolerate("cuMemFree (inside Drop, result discarded)", result);
            Some(failed)
        }
        None => None,
    };
    rec.fact(THE_IMPLICIT_DROP_CALLS_CUMEMFREE, implicit_failed.is_some());

    // ANCHOR: checked_drop
    let freed = DeviceBuffer::drop(explicit);
    // ANCHOR_END: checked_drop
    let failed = match freed {
        Ok(()) => {
            rec.step::<(), Cu>("DeviceBuffer::drop (cuMemFree)", Ok(()))?;
            false
        }
        Err((e, buf)) => {
            let _ = rec.tolerate::<(), _>("DeviceBuffer::drop (cuMemFree)", Err(Cu::from(e)));
            // Dropping it again would call cuMemFree again, silently.
            std::mem::forget(buf);
            true
        }
    };
    rec.fact(CUMEMFREE_FAILS_AFTER_THE_FAULT, failed);
    if let Some(lost) = implicit_failed {
        rec.fact(AN_IMPLICIT_DROP_IN_THE_SAME_STATE_LOSES_AN_ERROR, lost);
    }
    Ok(())
}
// ANCHOR_END: drop_after_fault

/// The variants of this file, by their names in the catalogue.
pub const VARIANTS: &[(&str, VariantFn)] = &[
    ("broken-cust", broken),
    ("fixed-cust", fixed),
    ("drop-after-fault-cust", drop_after_fault),
];
