//! `ipc-tensor-other-device`: a producer process on GPU 0 sends CUDA
//! tensors through a `torch.multiprocessing` queue to a consumer that works
//! on GPU 1. The tensor is shared through CUDA IPC and keeps its device:
//! the consumer receives it on `cuda:0`, holds a context on GPU 0 for it,
//! and its first op that mixes the tensor with its own raises "Expected all
//! tensors to be on the same device". The fix copies the tensor to the
//! consumer's GPU on arrival. A third variant lets the producer exit while
//! the consumer still holds the tensor: PyTorch warns "Producer process has
//! been terminated before all shared CUDA tensors released", and what the
//! consumer then reads is recorded. Needs two GPUs.

use std::time::Duration;

use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::case_modules!();

const FILE: &str = "python/share.py";

/// What the producer writes to its stderr as it exits with a tensor still
/// held, from its first words (a log prefix with the time comes before).
const PRODUCER_GONE: &str = "Producer process has been terminated before all shared CUDA tensors \
                             released. See Note [Sharing CUDA tensors]";

casebook_model::scenario!(Scenario {
    title: "Expected all tensors to be on the same device with a tensor from another \
            process; Producer process has been terminated before all shared CUDA tensors \
            released (CUDA IPC across GPUs)",
    cause: "A CUDA tensor sent through torch.multiprocessing is shared through CUDA IPC, not \
            copied: it stays on the producer's GPU, so a consumer working on another GPU \
            receives it there, opens a context on that GPU to map it, and cannot mix it with \
            its own tensors. The producer owns the memory and must keep the tensor until \
            every consumer has let go of it.",
    fix: "Copy a received tensor to the consumer's device on arrival (`t.to(device)`), or send \
          it from the GPU the consumer uses, or through CPU memory; keep the producer's \
          tensors, and the producer, alive until the consumers have released theirs.",
    symptoms: &["only with several GPUs", "tensors on different devices"],
    requires: Requirement::GPU_PAIR,
    reports: REPORTS,
    claims: &[],
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(pytorch::SAME_DEVICE))
            .then_shows(Symptom::check_failed(RESULT_RIGHT))
            .both(|v| v.timeout(PROCESSES_TIMEOUT))
            .with_fixed(|v| v.one_change(
                "broken-py",
                "the received tensor copied to the consumer's GPU",
                "return received * weights",
                "return received.to(weights.device) * weights",
            )),
        Variant::broken(
            "producer-exits-py",
            Symptom::cuda_error(PRODUCER_GONE),
            Program::pytorch(FILE, "producer_exits"),
        )
        .also_differs(
            "the consumer does not use the tensor with its own: it reads it once the \
             producer has exited, and what the read gives is recorded as an observation",
        )
        .timeout(PROCESSES_TIMEOUT),
    ],
});

/// Each process gets a minute for each of its parts; the variant waits for
/// them, then ends them.
const PROCESSES_TIMEOUT: Duration = Duration::from_secs(300);

const REPORTS: &[Report] = &[
    Report {
        id: "pytorch/pytorch#64504",
        shows: "A CUDA tensor made on device A and sent through torch.multiprocessing.Queue to a \
                child running on device B: a kernel the child launches on device B with the \
                tensor's pointer hits an illegal memory access.",
    },
    Report {
        id: "Lucaslab-Berkeley/Leopard-EM#72",
        shows: "`Producer process has been terminated before all shared CUDA tensors released`: \
                CUDA tensors made in the parent and passed to worker processes were shared \
                through CUDA IPC, and the producer exited before the consumers released them; \
                the fix makes each worker allocate its own tensors.",
    },
];

#[cfg(test)]
mod tests {
    #[test]
    fn every_variant_needs_the_pair() {
        let s = super::scenario();
        assert!(s.needs_pair());
        assert!(s.variants.iter().all(|v| s.runs_alone(v)));
    }
}
