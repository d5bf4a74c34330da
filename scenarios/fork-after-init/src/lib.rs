//! `fork-after-init`: a PyTorch program uses CUDA, then starts a worker with
//! multiprocessing's `fork` (the default start method on Linux before
//! Python 3.14). The worker is a copy of the parent's memory without its
//! CUDA context, which cannot be copied: its first CUDA call fails with
//! "Cannot re-initialize CUDA in forked subprocess". The `spawn` start
//! method makes a fresh interpreter, which starts CUDA itself.

use casebook_model::{Program, Requirement, Scenario, Symptom, Variant, pytorch};

casebook_model::names_module!();

const FILE: &str = "python/workers.py";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "fork-after-init",
        title: "Cannot re-initialize CUDA in forked subprocess",
        cause: "fork copies a process's memory but not its CUDA context, and the CUDA runtime \
                cannot start again in the copy. Start workers with spawn (or forkserver), or \
                fork before the parent touches CUDA.",
        symptoms: &[
            "an error in a worker process",
            "an error on the second call",
        ],
        requires: Requirement::GPU,
        reports: &[],
        claims: &[],
        variants: vec![
            Variant::broken(
                "broken-py",
                Symptom::cuda_error(pytorch::FORKED),
                Program::pytorch(FILE, "broken"),
            )
            .then_shows(Symptom::check_failed(WORKER_COMPUTED)),
            Variant::fixed("fixed-py", Program::pytorch(FILE, "fixed")),
        ],
    }
}
