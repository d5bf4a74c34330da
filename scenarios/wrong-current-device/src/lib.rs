//! `wrong-current-device`: a library's op (an extension's kernel wrapper,
//! an `nms`, a fused optimizer step) launches its kernel on the current
//! device, whatever device holds its data. A job given its second GPU puts
//! its data on device 1, but the current device is still 0 (the default,
//! or what a new thread starts with), so the kernel runs on device 0 and
//! dereferences device 1's memory: "an illegal memory access was
//! encountered", which no run on the first GPU shows. Device 0's context is
//! then lost, and in the two-GPU runs a later, unrelated call on device 1
//! fails with the same error too (both forms record it). The fix is a
//! device guard: run the op on the device that holds its data. With peer
//! access enabled from device 0 to device 1 (where `cuDeviceCanAccessPeer`
//! says it can be), the same launch reaches the memory. Needs two GPUs.

use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
    PushKernelArg, sys,
};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Floats of data.
pub const N: usize = 1 << 20;

casebook_model::scenario!(Scenario {
    title: "CUDA error: an illegal memory access was encountered, only on cuda:1 (a kernel \
            launched on device 0 with device 1's memory)",
    cause: "A kernel runs on the current device, not on the device that holds its pointers. \
            An op without a device guard, called while device 0 is current (the default, a \
            new thread's, a framework's), launches on device 0 with memory of device 1; \
            unless peer access from device 0 to device 1 was enabled, the kernel faults and \
            device 0's context is lost.",
    fix: "Guard the op with the device of its data before it allocates or launches \
          (at::cuda::CUDAGuard guard(tensor.device()) in an extension, cudaSetDevice of \
          cudaPointerGetAttributes' device in C++, the data's own stream in cudarc), or call \
          torch.cuda.set_device(local_rank) at the start so the current device is the job's \
          GPU.",
    symptoms: &["only with several GPUs", "an illegal memory access"],
    requires: Requirement::GPU_PAIR,
    reports: REPORTS,
    variants: variants![
        cpp_pair!(Symptom::cuda_error(runtime::ILLEGAL_ADDRESS))
            .then_shows(Symptom::check_failed(MATCHES)),
        Variant::records("peer-cpp", cpp::peer).one_change(
            "broken-cpp",
            "peer access from device 0 to device 1, enabled before the launch",
            "cudaError_t launched = twice_unguarded(r, data, kN);",
            "cudaError_t enabled = rec(r, \"cudaDeviceEnablePeerAccess (device 0 to device 1's \
             memory)\", cudaDeviceEnablePeerAccess(1, 0));\n\
             cudaError_t launched = twice_unguarded(r, data, kN);",
        ),
        Variant::records("peer-pool-access-cpp", cpp::peer_pool_access).one_change(
            "peer-cpp",
            "device 1's default stream-ordered pool gives device 0 read-write access \
             (cudaMemPoolSetAccess) before its block is asked for",
            "return peer<false>(r);",
            "return peer<true>(r);",
        ),
        cudarc_pair!(Symptom::cuda_error(driver::ILLEGAL_ADDRESS))
            .then_shows(Symptom::check_failed(MATCHES)),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "facebookresearch/maskrcnn-benchmark#537",
        shows: "`nms.cu line=103 error=77 : an illegal memory access was encountered` with \
                MODEL.DEVICE cuda:1: the current device was device 0 while the boxes were on \
                device 1; the fix switches to the tensors' device around the kernel.",
    },
    Report {
        id: "facebookresearch/maskrcnn-benchmark#74",
        shows: "The demo works on \"cuda\" and fails on \"cuda: 2\" with `nms.cu line=103 error=77 \
                : an illegal memory access was encountered`.",
    },
    Report {
        id: "NVIDIA/apex#319",
        shows: "`an illegal memory access was encountered (multi_tensor_apply at \
                csrc/multi_tensor_apply.cuh:101)` with the model on a GPU other than the \
                default: amp's overflow buffer was made on the default device; a maintainer \
                advises torch.cuda.set_device before building the model.",
    },
    Report {
        id: "Tiiiger/QPyTorch#46",
        shows: "An illegal memory access on a machine with two GPUs when using cuda:1: the \
                extension must call cudaSetDevice before allocating its output and launching; \
                the pull request adds it.",
    },
    Report {
        id: "IDEA-Research/Grounded-Segment-Anything#530",
        shows: "`--device 'cuda:2'` fails with `CUDA error: an illegal memory access was \
                encountered`; calling torch.cuda.set_device with that GPU first makes it work.",
    },
];

static ENABLE_PEER_DOC: Passage = Passage {
    document: "CUDA Runtime API",
    section: "Peer Device Memory Access: cudaDeviceEnablePeerAccess",
    url: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html",
    text: "On success, all allocations from peerDevice will immediately be accessible by the \
           current device. They will remain accessible until access is explicitly disabled using \
           cudaDeviceDisablePeerAccess() or either device is reset using cudaDeviceReset().",
};

fn value(i: usize) -> f32 {
    (i % 1000) as f32
}

/// Both devices' contexts and streams, the op's kernel loaded in each, and
/// the data on device 1 with its address.
pub(crate) struct Program {
    pub stream0: Arc<CudaStream>,
    pub stream1: Arc<CudaStream>,
    pub twice0: CudaFunction,
    pub twice1: CudaFunction,
    pub data: CudaSlice<f32>,
    /// The data's address, as a raw pointer carries it.
    pub address: sys::CUdeviceptr,
}

pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<Program> {
    let ctx0 = rec.step("cuDevicePrimaryCtxRetain (device 0)", CudaContext::new(0))?;
    let ctx1 = rec.step("cuDevicePrimaryCtxRetain (device 1)", CudaContext::new(1))?;
    let mut peer = 0;
    rec.step(
        "cuDeviceCanAccessPeer (device 0 to device 1's memory)",
        // SAFETY: writes one int; both devices exist.
        unsafe { sys::cuDeviceCanAccessPeer(&mut peer, ctx0.cu_device(), ctx1.cu_device()) }
            .result(),
    )?;
    rec.fact(PEER_CAPABLE, peer != 0);
    let twice0 = device::kernel(rec, &ctx0, fatbin::TWICE, "twice")?;
    let twice1 = device::kernel(rec, &ctx1, fatbin::TWICE, "twice")?;
    let (stream0, stream1) = (ctx0.default_stream(), ctx1.default_stream());
    let host: Vec<f32> = (0..N).map(value).collect();
    let data = rec.step("cuMemAlloc + copy (on device 1)", stream1.clone_htod(&host))?;
    let address = data.device_ptr(&stream1).0;
    Ok(Program {
        stream0,
        stream1,
        twice0,
        twice1,
        data,
        address,
    })
}

/// Launches `kernel` on `stream` over the N floats at `address`.
pub(crate) fn launch(
    stream: &Arc<CudaStream>,
    kernel: &CudaFunction,
    address: sys::CUdeviceptr,
) -> Result<(), DriverError> {
    let n = N as i32;
    let mut b = stream.launch_builder(kernel);
    b.arg(&address).arg(&n);
    // SAFETY: the kernel writes N floats at `address`, which holds N floats
    // on device 1; whether the stream's device reaches them is what the
    // variants show.
    unsafe { b.launch(LaunchConfig::for_num_elems(N as u32)) }.map(|_| ())
}

/// Reads the data back on device 1 and compares it with the CPU's, then
/// tries one unrelated call on each device: which device's context the op
/// left usable.
pub(crate) fn finish(rec: &mut Recorder, p: Program, synced: Result<(), DriverError>) {
    let copied = rec.step(
        "cuMemcpyDtoH (from device 1)",
        p.stream1.clone_dtoh(&p.data),
    );
    let same = synced.is_ok()
        && copied
            .as_ref()
            .is_ok_and(|got| got.iter().enumerate().all(|(i, &x)| x == 2.0 * value(i)));
    rec.check(MATCHES, same);
    let _ = p.stream0.context().bind_to_thread();
    let usable0 = device::later_call(rec, LATER_CALL_DEVICE0);
    let _ = p.stream1.context().bind_to_thread();
    device::later_call(rec, LATER_CALL_DEVICE1);
    if !usable0 {
        // Device 0's context is lost: its module and stream cannot be released.
        std::mem::forget(p);
    }
}

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-enabled-peer-memory-is-accessible",
    source: Source::Nvidia(&ENABLE_PEER_DOC),
    quote: "On success, all allocations from peerDevice will immediately be accessible by the \
            current device.",
    judged_by: "peer-cpp",
    control: Control::Parts(&[
        Part {
            part: "device 1's allocations from cudaMalloc, made before the enable and after it",
            // The same launch without the enabling line (one change):
            // device 0's kernel does not reach the data.
            control: Control::Run("broken-cpp"),
        },
        Part {
            part: "a block of device 1's default stream-ordered pool, made after the enable",
            // The same program with the pool giving device 0 access first
            // (one change).
            control: Control::Run("peer-pool-access-cpp"),
        },
    ]),
    // "All allocations from peerDevice": after cudaDeviceEnablePeerAccess(1)
    // succeeds on device 0, device 0's kernel doubles device 1's data in a
    // cudaMalloc buffer made before the enable and in one made after it, and
    // in a block of device 1's default stream-ordered pool made after it.
    // All reached: confirmed; the cudaMalloc buffers but not the pool's
    // block (NVIDIA's notes on stream-ordered allocation give pools their
    // own access, cudaMemPoolSetAccess): partly; none: refuted. Where the
    // enable does not succeed (cudaDeviceCanAccessPeer says no), the
    // sentence's condition is not met. broken-cpp never enables it: device
    // 0's kernel does not reach the data.
    judge: |o: &Outcome| {
        let malloced = match (
            o.check(MATCHES),
            o.flag(A_CUDAMALLOC_BUFFER_MADE_AFTER_THE_ENABLE_IS_REACHED),
        ) {
            (Some(before), Some(after)) => Some(before && after),
            (Some(false), None) => Some(false),
            _ => None,
        };
        match (o.flag(PEER_ENABLED), malloced) {
            (Some(true), _) => {
                ClaimVerdict::of_two_parts(malloced, o.flag(A_POOL_BLOCK_OF_DEVICE_1_IS_REACHED))
            }
            (None, Some(false)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        }
    },
    ..Claim::EITHER
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(enabled: Option<bool>, reached: Option<(bool, bool, bool)>) -> Outcome {
        let mut o = Outcome::empty();
        if let Some(e) = enabled {
            o = o.with_fact(PEER_ENABLED, e);
        }
        match reached {
            Some((before, after, pool)) => o.with_check(MATCHES, before).with_facts([
                (A_CUDAMALLOC_BUFFER_MADE_AFTER_THE_ENABLE_IS_REACHED, after),
                (A_POOL_BLOCK_OF_DEVICE_1_IS_REACHED, pool),
            ]),
            None => o.with_check(MATCHES, false),
        }
    }

    #[test]
    fn the_claim_turns_on_what_device_0_s_kernel_reached() {
        let judge = CLAIMS[0].judge;
        for (reached, verdict) in [
            ((true, true, true), ClaimVerdict::Confirmed),
            // The pool's block, which has its own access, not reached.
            ((true, true, false), ClaimVerdict::Partly),
            ((true, false, false), ClaimVerdict::Refuted),
            ((false, false, false), ClaimVerdict::Refuted),
        ] {
            assert_eq!(judge(&outcome(Some(true), Some(reached))), verdict);
        }
        // Where peer access cannot be enabled, the sentence's condition is not met.
        assert_eq!(
            judge(&outcome(Some(false), Some((false, false, false)))),
            ClaimVerdict::Undecided
        );
        // The control, which never enables it: device 0's kernel does not reach the data.
        assert_eq!(judge(&outcome(None, None)), ClaimVerdict::Refuted);
    }
}
