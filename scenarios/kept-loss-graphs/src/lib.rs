//! `kept-loss-graphs`: an evaluation loop at batch size 1 keeps every loss
//! tensor for its log, and each one keeps its autograd graph alive, with
//! the activations the forward pass saved. Memory in use grows step by
//! step until PyTorch runs out, and `torch.cuda.empty_cache()` after every
//! step changes nothing: it hands back cached blocks no tensor uses, and
//! here nearly every reserved byte is in use. The fix keeps the number.
//!
//! PyTorch is held to a budget of 16 GiB (its per-process memory fraction),
//! which stands for a GPU of that size; the variants read only their own
//! process's figures, so they run beside light trials where the GPU has
//! room for the budget.

use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::names_module!();

const FILE: &str = "python/loss_history.py";
/// What a variant holds at most: the budget `BUDGET` in the Python file,
/// and its process's context.
const HOLDS: u64 = 17 << 30;

pub fn scenario() -> Scenario {
    Scenario {
        slug: "kept-loss-graphs",
        title: "CUDA out of memory with batch size 1, even after torch.cuda.empty_cache()",
        cause: "Live tensors hold the memory: a list of losses keeps every step's autograd graph, \
                and with it the saved activations. empty_cache returns only cached blocks that no \
                tensor uses. Keep loss.item() (or detach()), or evaluate under torch.no_grad().",
        fix: "Append loss.item() (a Python number) to the loss log instead of the loss tensor, so each \
              step's autograd graph and saved activations can be freed.",
        symptoms: &["out of memory", "out of memory with batch size 1"],
        requires: Requirement::GPU_FILLED,
        reports: &[],
        claims: CLAIMS,
        variants: variants![
            Pair::pytorch(FILE, Symptom::cuda_error(pytorch::OUT_OF_MEMORY))
                .then_shows(Symptom::check_failed(EVERY_STEP_RAN))
                .both(Variant::shares_gpu)
                .both(|v| v.holds_memory(HOLDS))
                .both(Variant::small_when_reduced),
        ],
    }
}

/// Out of memory at batch size 1 after emptying the cache each step: with
/// nearly all reserved memory allocated (live tensors), mismanagement is the
/// cause and fragmentation is not; with much of it unallocated, both are.
fn bs1_verdict(o: &Outcome) -> ClaimVerdict {
    match (
        o.check(EVERY_STEP_RAN),
        o.flag(NEARLY_ALL_RESERVED_IS_ALLOCATED),
    ) {
        (Some(true), _) => ClaimVerdict::Refuted,
        (Some(false), Some(true)) => ClaimVerdict::Partly,
        (Some(false), Some(false)) => ClaimVerdict::Confirmed,
        _ => ClaimVerdict::Undecided,
    }
}

const CLAIMS: &[Claim] = &[Claim {
    id: "003-bs1-oom-after-cache-clear-from-fragmentation",
    source: Source::SEED_003,
    quote: "CUDA out-of-memory errors with a batch size of 1, even after explicit cache clearing, \
            typically stem from memory fragmentation and resource mismanagement beyond the \
            immediate scope of the individual kernel launch.",
    judged_by: "broken-py",
    control: Control::Run("fixed-py"),
    reach: Reach::AtBestPartly(
        "one program shows what one cause does, not what is typical; here the cause is tensors \
         kept alive, so \"partly\" names mismanagement without fragmentation",
    ),
    judge: bs1_verdict,
}];
