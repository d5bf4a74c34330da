//! `collective-skipped-hang`: two ranks train data-parallel with NCCL, one
//! per GPU, and all-reduce their gradients after every batch; the shards
//! are uneven and each rank loops over its own, so rank 1 skips the last
//! all_reduce. Nothing fails at once: rank 0 waits in it until PyTorch's
//! watchdog, after the process group's timeout (ten minutes by default, ten
//! seconds here), reports "Watchdog caught collective operation timeout"
//! and takes the process down. The variant keeps each rank's stderr and
//! ends both ranks. The fix runs the same number of steps on every rank.
//! Needs two GPUs.

use std::time::Duration;

use casebook_model::prelude::*;

casebook_model::case_modules!();

const FILE: &str = "python/ranks.py";

/// What rank 0's collective is recorded as: the watchdog's report, cut
/// before its first figure (its sequence number, sizes and times differ by
/// run); the whole line goes to the report.
const WATCHDOG: &str = "Watchdog caught collective operation timeout: WorkNCCL(SeqNum= …";

casebook_model::scenario!(Scenario {
    title: "Watchdog caught collective operation timeout: WorkNCCL(… OpType=ALLREDUCE …) \
            (one rank skipped a collective, the others wait for it)",
    cause: "An NCCL collective completes only when every rank of the communicator calls it. \
            A rank that skips one (it has one batch fewer, takes another branch, returns \
            early) leaves the others waiting in it with no error: PyTorch's watchdog reports \
            the collective after the process group's timeout, ten minutes by default, and \
            takes the waiting process down. The report names the rank that waited, not the \
            one that skipped.",
    fix: "Make every rank call the same collectives in the same order: run the same number of \
          steps on each (DistributedSampler with drop_last, an all_reduce(MIN) of the step \
          count, or the join context manager for uneven inputs), and take branches that \
          decide on a collective from values all ranks share. TORCH_NCCL_DESYNC_DEBUG and \
          the flight recorder name the rank that did not join.",
    symptoms: &["only with several GPUs", "a hang, no error", "NCCL error"],
    requires: Requirement::GPU_PAIR,
    reports: REPORTS,
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(WATCHDOG))
            .then_shows(Symptom::check_failed(ALL_STEPS_REDUCED))
            .both(|v| v.timeout(RANKS_TIMEOUT)),
    ],
});

/// The variant waits 90 s for its ranks (the ten-second timeout, the
/// watchdog, the abort), 40 s more to end them, besides starting them.
const RANKS_TIMEOUT: Duration = Duration::from_secs(240);

const REPORTS: &[Report] = &[Report {
    id: "pytorch/pytorch#118369",
    shows: "`[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96120, \
            OpType=ALLREDUCE, Timeout(ms)=1800000)`; a maintainer: such a timeout is more likely \
            one or more ranks that did not call the right collective at the right time than \
            NCCL or the network breaking down, and the flight recorder is being built to find \
            which.",
}];

static COLLECTIVES_DOC: Passage = Passage {
    document: "NCCL User Guide",
    section: "Collective Operations",
    url: "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/collectives.html",
    text: "Collective operations have to be called for each rank (hence CUDA device), using the \
           same count and the same datatype, to form a complete collective operation. Failure to \
           do so will result in undefined behavior, including hangs, crashes, or data \
           corruption.",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-nccl-a-skipped-collective-hangs",
    source: Source::Nvidia(&COLLECTIVES_DOC),
    quote: "Failure to do so will result in undefined behavior, including hangs, crashes, or data \
            corruption.",
    judged_by: "broken-py",
    control: Control::Run("fixed-py"),
    reach: Reach::AtBestPartly(
        "\"failure to do so\" is any of three: a rank that does not call the collective, a count or \
         a datatype that differs between ranks; the run tests the first, whose undefined behaviour \
         here is a hang (one of those the sentence lists), followed up to the timeout the run sets \
         (ten seconds), where PyTorch's watchdog ends it",
    ),
    // Rank 1 skips an all_reduce: rank 0's waits until the watchdog reports
    // it (confirmed, capped at partly), or every rank's collectives complete
    // (refuted). fixed-py, every rank calling every collective, is the
    // control: they complete.
    judge: |o: &Outcome| match (o.first_error_is(WATCHDOG), o.check(ALL_STEPS_REDUCED)) {
        (Some(true), Some(false)) => ClaimVerdict::Confirmed,
        (None, Some(true)) => ClaimVerdict::Refuted,
        _ => ClaimVerdict::Undecided,
    },
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(rank0: &str, reduced: bool) -> Outcome {
        [(0, rank0), (1, "ok")]
            .into_iter()
            .fold(Outcome::empty(), |o, (rank, result)| {
                o.with_step(
                    format!("rank {rank}: all_reduce of the gradient, once per batch"),
                    result,
                )
            })
            .with_check(ALL_STEPS_REDUCED, reduced)
    }

    #[test]
    fn the_claim_turns_on_the_watchdog_s_report() {
        let claim = &CLAIMS[0];
        assert_eq!(claim.verdict(&ranks(WATCHDOG, false)), ClaimVerdict::Partly);
        assert_eq!(claim.verdict(&ranks("ok", true)), ClaimVerdict::Refuted);
        // Rank 0 ended another way (an NCCL error, killed): no verdict.
        assert_eq!(
            claim.verdict(&ranks("ended without a word: killed by SIGKILL", false)),
            ClaimVerdict::Undecided
        );
    }
}
