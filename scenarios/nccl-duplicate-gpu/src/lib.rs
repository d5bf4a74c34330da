//! `nccl-duplicate-gpu`: a data-parallel job starts a process per rank
//! (torch.distributed with NCCL), and two ranks end up on the same GPU: no
//! rank selects its own device, so all use `cuda:0`, or the job starts more
//! ranks than the machine has GPUs. NCCL refuses the communicator:
//! `ncclInvalidUsage … Duplicate GPU detected : rank 1 and rank 0 both on
//! CUDA device …`. The fix starts no more ranks than there are GPUs and
//! puts each rank on its own; on a machine with one GPU, that is one rank,
//! and its all_reduce completes.

use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::case_modules!();

const FILE: &str = "python/ranks.py";

casebook_model::scenario!(Scenario {
    title: "ncclInvalidUsage: Duplicate GPU detected (two ranks of one job on the same GPU)",
    cause: "Every rank of an NCCL communicator must have a GPU of its own. Ranks that never \
            call torch.cuda.set_device(local_rank) all use cuda:0, and a job that starts more \
            ranks than the machine has GPUs puts two on one; NCCL refuses the communicator.",
    fix: "Start no more ranks than there are GPUs (torchrun --nproc-per-node equal to the GPU \
          count) and select each rank's own device first: torch.cuda.set_device(local_rank), \
          or init_process_group(device_id=...).",
    symptoms: &["an error on the first call", "NCCL error"],
    // Two GPUs: the fix runs one rank on each, so that its all_reduce
    // is one of two ranks, as the broken one's is (on one GPU the fix
    // could run only one rank, whose all_reduce cannot fail).
    requires: Requirement::GPU_PAIR,
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(pytorch::NCCL_DUPLICATE_GPU))
            .then_shows(Symptom::check_failed(ALL_REDUCED))
            .both(|v| v.sanitizer_sees(NCCL_PROBES_ITS_KERNELS, NCCL_PROBES_WHY)),
    ],
});

/// What compute-sanitizer's memcheck reports in every rank that creates a
/// communicator, the fixed one's too.
const NCCL_PROBES_ITS_KERNELS: &[&str] = &["API error cudaErrorNoKernelImageForDevice"];

/// Traced on an H100 (a one-rank all_reduce under memcheck with host
/// backtraces): both reports come from ncclInitKernelsForDevice
/// (enqueue.cc:52 and :54), called by ncclCommInitRankFunc.
const NCCL_PROBES_WHY: &str = "NCCL, creating the communicator, asks cudaFuncGetAttributes about \
                               each of its kernels (ncclInitKernelsForDevice); for those it holds no machine code for on this \
                               GPU the runtime answers cudaErrorNoKernelImageForDevice, which NCCL reads back with \
                               cudaGetLastError and passes over";

static COMMUNICATORS_DOC: Passage = Passage {
    document: "NCCL User Guide",
    section: "Creating a Communicator",
    url: "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/communicators.html",
    text: "When creating a communicator, a unique rank between 0 and n-1 has to be assigned to \
           each of the n CUDA devices which are part of the communicator. Using the same CUDA \
           device multiple times as different ranks of the same NCCL communicator is not \
           supported and may lead to hangs.",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-nccl-one-device-per-rank",
    source: Source::Nvidia(&COMMUNICATORS_DOC),
    quote: "Using the same CUDA device multiple times as different ranks of the same NCCL \
            communicator is not supported and may lead to hangs.",
    judged_by: "broken-py",
    control: Control::Run("fixed-py"),
    reach: Reach::AtBestPartly(
        "the run shows the second use of the device refused (not supported); that it may hang \
         instead is a possibility a run that was refused at once neither shows nor rules out",
    ),
    // Two ranks on one device: NCCL refuses them (confirmed, shown as
    // partly), or both all_reduces complete (refuted). fixed-py, the two
    // ranks on two devices, is the control.
    judge: |o: &Outcome| match (
        o.first_error_is(pytorch::NCCL_DUPLICATE_GPU),
        o.check(ALL_REDUCED),
    ) {
        (Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (None, Some(true)) => ClaimVerdict::Refuted,
        (Some(false), _) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    },
}];
