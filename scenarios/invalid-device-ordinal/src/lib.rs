//! `invalid-device-ordinal`: a job addresses its GPU by an ordinal from its
//! configuration (`cuda:1`, `--gpu 1`, a rank), and the process does not
//! see that many GPUs: a machine with one GPU, or CUDA_VISIBLE_DEVICES
//! naming fewer than the job assumes. CUDA refuses the ordinal before any
//! work starts ("invalid device ordinal"); nothing else is wrong, and the
//! same call with an ordinal the process sees works. Each variant asks for
//! the ordinal one past the last GPU it sees, which is `cuda:1` on a
//! machine with one GPU, so that it fails the same way on every machine.

use casebook_model::cuda_errors::{driver, runtime};
use casebook_model::prelude::*;
use casebook_model::pytorch;
use cudarc::driver::{DriverError, sys};

mod broken;
mod fixed;

casebook_model::case_modules!();

const FILE: &str = "python/ordinal.py";

casebook_model::scenario!(Scenario {
    title: "CUDA error: invalid device ordinal (cuda:1 on a machine with one GPU)",
    cause: "The job names its GPU by an ordinal from its configuration (cuda:1, a rank), and \
            the process sees fewer GPUs: the machine has fewer, or CUDA_VISIBLE_DEVICES \
            shows fewer and renumbers them from 0. CUDA refuses the ordinal at the first \
            call that selects the device.",
    fix: "Take the ordinal from what the process sees (torch.cuda.device_count(), the local \
          rank modulo the count) and choose the physical GPU with CUDA_VISIBLE_DEVICES \
          before the process starts, instead of hard-coding cuda:1.",
    symptoms: &["an error on the first call", "invalid device ordinal"],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(pytorch::INVALID_DEVICE_ORDINAL))
            .then_shows(Symptom::check_failed(RAN)),
        // What cuDeviceGet returns for an ordinal the process does not see.
        cudarc_pair!(Symptom::cuda_error(driver::INVALID_DEVICE))
            .then_shows(Symptom::check_failed(RAN)),
        // What cudaSetDevice returns for it.
        cpp_pair!(Symptom::cuda_error(runtime::INVALID_DEVICE))
            .then_shows(Symptom::check_failed(RAN)),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "yihong-chen/neural-collaborative-filtering#1",
        shows: "`RuntimeError: cuda runtime error (10) : invalid device ordinal`: the script's \
                default device_id was 7 on a server with 4 GPUs.",
    },
    Report {
        id: "yuanzhoulvpi2017/documentsearch#4",
        shows: "`RuntimeError: CUDA error: invalid device ordinal` on Colab's one GPU; the \
                answer: the demo's `.cuda(1)` must be `.cuda(0)`.",
    },
    Report {
        id: "meta-pytorch/tritonparse#176",
        shows: "`torch.AcceleratorError: CUDA error: invalid device ordinal` when a run \
                recorded on GPU 6 was reproduced on a machine with fewer GPUs.",
    },
];

static INVALID_DEVICE_DOC: Passage = Passage {
    document: "CUDA Runtime API, Data types used by CUDA Runtime",
    section: "enum cudaError: cudaErrorInvalidDevice = 101",
    url: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    text: "This indicates that the device ordinal supplied by the user does not correspond to a \
           valid CUDA device or that the action requested is invalid for the specified device.",
};

/// The job's work on the device it got: its primary context, a buffer
/// written and freed. Nothing runs where the device was refused.
pub(crate) fn work(
    rec: &mut Recorder,
    device: Result<sys::CUdevice, DriverError>,
) -> anyhow::Result<()> {
    casebook_driver::device::small_job(rec, device?)?;
    Ok(())
}

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-invalid-device-is-the-ordinal",
    source: Source::Nvidia(&INVALID_DEVICE_DOC),
    quote: "This indicates that the device ordinal supplied by the user does not correspond to a \
            valid CUDA device or that the action requested is invalid for the specified device.",
    judged_by: "broken-cpp",
    control: Control::Run("fixed-cpp"),
    // The ordinal one past the last GPU the process sees: cudaSetDevice
    // returns cudaErrorInvalidDevice (confirmed), or accepts it and the work
    // runs (refuted); fixed-cpp, the same program with an ordinal the
    // process sees, is the control, in which no such error comes. The
    // sentence's second case, an action invalid for a device that exists,
    // is not run: the same error, and the message "invalid device
    // ordinal", can come with an ordinal that is valid.
    judge: |o: &Outcome| match (o.first_error_is(runtime::INVALID_DEVICE), o.check(RAN)) {
        (Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (_, Some(true)) => ClaimVerdict::Refuted,
        (Some(false), Some(false)) => ClaimVerdict::Partly,
        _ => ClaimVerdict::Undecided,
    },
    ..Claim::EITHER
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(first: &str, ran: bool) -> Outcome {
        Outcome::empty()
            .with_step("cudaSetDevice", first)
            .with_check(RAN, ran)
    }

    #[test]
    fn the_claim_turns_on_the_refusal() {
        let judge = CLAIMS[0].judge;
        assert_eq!(
            judge(&outcome(runtime::INVALID_DEVICE, false)),
            ClaimVerdict::Confirmed
        );
        assert_eq!(judge(&outcome("cudaSuccess", true)), ClaimVerdict::Refuted);
        assert_eq!(
            judge(&outcome("cudaErrorNoDevice", false)),
            ClaimVerdict::Partly
        );
    }
}
