//! `tensors-on-two-devices`: a job puts its model on a GPU other than the
//! first (`cuda:1`), and its `forward` makes a tensor with `device="cuda"`:
//! the current device, `cuda:0`, as nothing selected another. The first
//! operation that mixes it with the activations on `cuda:1` raises
//! "Expected all tensors to be on the same device", before any kernel runs;
//! a tensor made with no device at all, on the CPU, is refused the same
//! way. The fix makes the tensor on its input's device; selecting the job's GPU
//! first (`torch.cuda.set_device`) makes a bare `"cuda"` mean that GPU.
//! Needs two GPUs.

use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::case_modules!();

const FILE: &str = "python/mask.py";

casebook_model::scenario!(Scenario {
    title: "Expected all tensors to be on the same device, but found at least two devices, \
            cuda:1 and cuda:0! (a tensor made with device=\"cuda\" lands on the default GPU)",
    cause: "`device=\"cuda\"` (and `.cuda()`, `.to(\"cuda\")`) means the current device, GPU 0 \
            until torch.cuda.set_device selects another. A model placed on cuda:1, or spread \
            over GPUs, that makes a tensor that way gets one on cuda:0, and PyTorch refuses \
            an operation whose operands are on two devices; a tensor made with no device at \
            all is on the CPU, and the same check refuses it.",
    fix: "Make new tensors on their inputs' device (`device=x.device`, `torch.ones_like`, \
          `x.new_ones`), or select the job's GPU first (`torch.cuda.set_device`, or \
          CUDA_VISIBLE_DEVICES naming it alone) so that \"cuda\" means it; with a model \
          spread over GPUs, move inputs to the device of the layer that takes them.",
    symptoms: &["only with several GPUs", "tensors on different devices"],
    requires: Requirement::GPU_PAIR,
    reports: REPORTS,
    variants: vec![
        Variant::broken(
            "broken-py",
            Symptom::cuda_error(pytorch::SAME_DEVICE),
            Program::pytorch(FILE, "broken"),
        )
        .then_shows(Symptom::check_failed(FORWARD_RAN)),
        Variant::broken(
            "cpu-tensor-py",
            Symptom::cuda_error(pytorch::SAME_DEVICE),
            Program::pytorch(FILE, "cpu_tensor"),
        )
        .then_shows(Symptom::check_failed(FORWARD_RAN)),
        Variant::fixed("fixed-py", Program::pytorch(FILE, "fixed")).one_change(
            "broken-py",
            "the mask's device",
            "return torch.ones(x.shape[-1], device=\"cuda\")",
            "return torch.ones(x.shape[-1], device=x.device)",
        ),
        Variant::fixed(
            "set-device-first-py",
            Program::pytorch(FILE, "set_device_first"),
        )
        .also_differs(
            "it runs broken-py's code, the mask made with device=\"cuda\", after \
                 torch.cuda.set_device(\"cuda:1\"): the other fix, which makes \"cuda\" mean \
                 the job's GPU",
        ),
        Variant::records("peer-enabled-py", Program::pytorch(FILE, "peer_enabled")).also_differs(
            "it runs broken-py's code after enabling cuda:1's peer-to-peer access to cuda:0 \
             (cudaDeviceEnablePeerAccess, through the CUDA runtime PyTorch loaded): the \
             condition the documentation's sentence names",
        ),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "Lightning-AI/pytorch-lightning#3030",
        shows: "`RuntimeError: Expected all tensors to be on the same device, but found at least \
                two devices, cuda:1 and cuda:0!` with a single GPU other than cuda:0: the \
                default device was not set to it, so tensors created with device='cuda' landed \
                on cuda:0; the reporter proposes torch.cuda.set_device.",
    },
    Report {
        id: "huggingface/transformers#34706",
        shows: "`Expected all tensors to be on the same device, but found at least two devices, \
                cuda:7 and cuda:0!` with a model spread over GPUs by device_map=\"auto\"; a \
                comment's reproducer moves the inputs with `.to(\"cuda\")`, the default device.",
    },
];

static CUDA_SEMANTICS: Passage = Passage {
    document: "PyTorch documentation",
    section: "CUDA semantics",
    url: "https://docs.pytorch.org/docs/stable/notes/cuda.html",
    text: "Cross-GPU operations are not allowed by default, with the exception of copy_() and \
           other methods with copy-like functionality such as to() and cuda(). Unless you enable \
           peer-to-peer memory access, any attempts to launch ops on tensors spread across \
           different devices will raise an error.",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "pytorch-ops-across-gpus-raise",
    source: Source::Pytorch(&CUDA_SEMANTICS),
    quote: "Unless you enable peer-to-peer memory access, any attempts to launch ops on tensors \
            spread across different devices will raise an error.",
    judged_by: "broken-py",
    control: Control::Run("fixed-py"),
    reach: Reach::AtBestPartly(
        "one op (a product of a tensor on cuda:1 and one on cuda:0, peer access never \
         enabled) is tried, not any op; and the sentence's \"unless\" does not hold in PyTorch \
         2.11: with peer access enabled both ways, the same product raises the same error \
         (peer-enabled-py, on two H200s)",
    ),
    // The product of tensors on two GPUs raises PyTorch's device check
    // (confirmed, capped at partly), or raises nothing (refuted); another
    // error first decides nothing. fixed-py, the same product with both on
    // cuda:1, is the control: it raises nothing. peer-enabled-py records the
    // same product with peer access enabled, the sentence's "unless".
    judge: |o: &Outcome| match (o.first_error_is(pytorch::SAME_DEVICE), o.check(FORWARD_RAN)) {
        (Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (None, Some(_)) => ClaimVerdict::Refuted,
        _ => ClaimVerdict::Undecided,
    },
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn forward(result: &str, ran: bool) -> Outcome {
        Outcome::empty()
            .with_step("model(x)", result)
            .with_check(FORWARD_RAN, ran)
    }

    #[test]
    fn the_claim_turns_on_the_device_check() {
        let claim = &CLAIMS[0];
        assert_eq!(
            claim.verdict(&forward(pytorch::SAME_DEVICE, false)),
            ClaimVerdict::Partly
        );
        assert_eq!(claim.verdict(&forward("ok", true)), ClaimVerdict::Refuted);
        assert_eq!(claim.verdict(&forward("ok", false)), ClaimVerdict::Refuted);
        assert_eq!(
            claim.verdict(&forward("torch.AcceleratorError: CUDA error: …", false)),
            ClaimVerdict::Undecided
        );
    }
}
