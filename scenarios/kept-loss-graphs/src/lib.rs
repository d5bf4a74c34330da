//! `kept-loss-graphs`: an evaluation loop at batch size 1 keeps every loss
//! tensor for its log, and each one keeps its autograd graph alive, with
//! the activations the forward pass saved. Memory in use grows step by
//! step until PyTorch runs out, and `torch.cuda.empty_cache()` after every
//! step changes nothing: it hands back cached blocks no tensor uses, and
//! here nearly every reserved byte is in use. The fix keeps the number.
//! Beside it, the volumes: each step's output, kept on the GPU, lands in
//! the segment its step's work just left, so every segment holds a live
//! block and a free piece, and the error comes with gigabytes reserved but
//! unallocated: fragmentation beside the mismanagement.
//!
//! PyTorch is held to a budget of 16 GiB (its per-process memory fraction),
//! which stands for a GPU of that size; the variants read only their own
//! process's figures, so they run beside light trials where the GPU has
//! room for the budget.

use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::case_modules!();

const FILE: &str = "python/loss_history.py";
/// Outputs kept on the GPU in segments their step's work left.
const VOLUMES: &str = "python/volumes.py";
/// What a variant holds at most: the budget `BUDGET` in the Python file,
/// and its process's context.
const HOLDS: u64 = 17 << 30;

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory with batch size 1, even after torch.cuda.empty_cache()",
    cause: "Live tensors hold the memory: a list of losses keeps every step's autograd graph, \
            and with it the saved activations. empty_cache returns only cached blocks that no \
            tensor uses. Keep loss.item() (or detach()), or evaluate under torch.no_grad().",
    fix: "Append loss.item() (a Python number) to the loss log instead of the loss tensor, so each \
          step's autograd graph and saved activations can be freed.",
    symptoms: &["out of memory", "out of memory with batch size 1"],
    requires: Requirement::GPU_FILLED,
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(pytorch::OUT_OF_MEMORY))
            .then_shows(Symptom::check_failed(EVERY_STEP_RAN))
            .both(within_the_budget),
        // Fragmentation beside the mismanagement: each step's work freed
        // before its output, which the program keeps, is made.
        within_the_budget(Variant::records(
            "kept-volumes-py",
            Program::pytorch(VOLUMES, "kept_volumes")
        )),
        within_the_budget(Variant::records(
            "kept-volumes-expandable-py",
            Program::pytorch(VOLUMES, "kept_volumes_expandable")
        ))
        .one_change(
            "kept-volumes-py",
            "PyTorch's allocator setting: the default there; expandable segments here",
            "_volumes(rec, keep=_on_the_gpu, alloc_conf=None)",
            "_volumes(rec, keep=_on_the_gpu, alloc_conf=\"expandable_segments:True\")",
        ),
        within_the_budget(Variant::records(
            "volume-numbers-py",
            Program::pytorch(VOLUMES, "volume_numbers")
        ))
        .one_change(
            "kept-volumes-py",
            "what the program keeps of each step: its output on the GPU there; a number \
                 here (output.mean().item())",
            "_volumes(rec, keep=_on_the_gpu, alloc_conf=None)",
            "_volumes(rec, keep=_a_number, alloc_conf=None)",
        ),
    ],
});

/// Where every variant runs: beside light trials, holding at most its
/// budget and its context, in a reduced form under the sanitizer.
fn within_the_budget(v: Variant) -> Variant {
    v.shares_gpu().holds_memory(HOLDS).small_when_reduced()
}

/// Out of memory at batch size 1 after emptying the cache each step: which
/// of the two causes were there at the error. Fragmentation: more was
/// reserved but unallocated than the step asked for. Mismanagement: the
/// tensors the program kept held nearly all that was allocated. Both:
/// confirmed; one: partly; every step ran, or neither cause: refuted.
fn bs1_verdict(o: &Outcome) -> ClaimVerdict {
    match (
        o.check(EVERY_STEP_RAN),
        o.flag(THE_FREE_PIECES_TOGETHER_EXCEED_THE_REQUEST),
        o.flag(KEPT_TENSORS_HOLD_NEARLY_ALL_ALLOCATED),
    ) {
        (Some(true), _, _) => ClaimVerdict::Refuted,
        (Some(false), Some(true), Some(true)) => ClaimVerdict::Confirmed,
        (Some(false), Some(fragmented), Some(mismanaged)) if fragmented || mismanaged => {
            ClaimVerdict::Partly
        }
        (Some(false), Some(_), Some(_)) => ClaimVerdict::Refuted,
        _ => ClaimVerdict::Undecided,
    }
}

const CLAIMS: &[Claim] = &[Claim {
    id: "003-bs1-oom-after-cache-clear-from-fragmentation",
    source: Source::SEED_003,
    quote: "CUDA out-of-memory errors with a batch size of 1, even after explicit cache clearing, \
            typically stem from memory fragmentation and resource mismanagement beyond the \
            immediate scope of the individual kernel launch.",
    judged_by: "kept-volumes-py",
    // Each cause the sentence names, shown at batch size 1 after the cache
    // was emptied, with its own control: without the fragmentation
    // (expandable segments) and without the mismanagement (a number kept,
    // not the output), every step runs. broken-py, whose loss graphs hold
    // nearly every reserved byte, is mismanagement alone.
    control: Control::Parts(&[
        Part {
            part: "memory fragmentation",
            control: Control::Run("kept-volumes-expandable-py"),
        },
        Part {
            part: "resource mismanagement",
            control: Control::Run("volume-numbers-py"),
        },
    ]),
    reach: Reach::AtBestPartly(
        "both causes occur, in one program here and mismanagement alone in broken-py; which is \
         typical is not measured",
    ),
    judge: bs1_verdict,
}];
