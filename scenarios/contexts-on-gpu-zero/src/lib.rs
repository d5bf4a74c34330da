//! `contexts-on-gpu-zero`: a data-parallel job starts one process per GPU
//! and each rank selects its own (`torch.cuda.set_device(rank)`), yet every
//! rank also holds a CUDA context on GPU 0, and GPU 0 runs out of memory
//! before the others. Two ways in: a checkpoint rank 0 saved from `cuda:0`,
//! loaded without `map_location`, goes back to `cuda:0` in every rank; and a
//! CUDA call before `set_device` runs on the current device, still GPU 0.
//! NVML's per-GPU list of compute processes, read while the ranks wait,
//! says which GPU holds each rank's context. Needs two GPUs.

use std::time::Duration;

use casebook_model::prelude::*;

casebook_model::case_modules!();

const FILE: &str = "python/ranks.py";

casebook_model::scenario!(Scenario {
    title: "Every rank holds memory on GPU 0, then out of memory on GPU 0 (torch.load without \
            map_location, or a CUDA call before set_device)",
    cause: "A CUDA call runs on the current device, GPU 0 until torch.cuda.set_device(rank) \
            selects another, and torch.load puts each tensor back on the device it was saved \
            from. A rank that calls CUDA before set_device, or loads a checkpoint that rank 0 \
            saved from cuda:0 without map_location, creates a CUDA context (hundreds of MiB) \
            on GPU 0 besides its own; with every rank doing so, GPU 0 fills first.",
    fix: "Call torch.cuda.set_device(local_rank) before any CUDA call (or start each rank with \
          CUDA_VISIBLE_DEVICES naming its GPU alone), and load checkpoints with \
          torch.load(path, map_location=f\"cuda:{local_rank}\") or map_location=\"cpu\".",
    symptoms: &["only with several GPUs", "out of memory"],
    requires: Requirement::GPU_PAIR,
    reports: REPORTS,
    variants: vec![
        Variant::broken(
            "broken-py",
            Symptom::check_failed(EACH_RANK_ON_ITS_OWN_GPU),
            Program::pytorch(FILE, "broken"),
        )
        .timeout(RANKS_TIMEOUT),
        Variant::broken(
            "early-call-py",
            Symptom::check_failed(EACH_RANK_ON_ITS_OWN_GPU),
            Program::pytorch(FILE, "early_call"),
        )
        .timeout(RANKS_TIMEOUT),
        Variant::records("meta-load-py", Program::pytorch(FILE, "meta_load"))
            .one_change(
                "broken-py",
                "torch.load's map_location: none there; \"meta\" here, with which \
                 torch.load makes each storage on the meta device and reads none of its \
                 data (load_state_dict then takes the meta tensors as they are, assign=True, \
                 since they hold no data to copy)",
                "state = torch.load(path)\n    model.load_state_dict(state)",
                "state = torch.load(path, map_location=\"meta\")\n    \
                 model.load_state_dict(state, assign=True)",
            )
            .timeout(RANKS_TIMEOUT),
        Variant::fixed("fixed-py", Program::pytorch(FILE, "fixed"))
            .one_change(
                "broken-py",
                "torch.load's map_location",
                "state = torch.load(path)",
                "state = torch.load(path, map_location=f\"cuda:{rank}\")",
            )
            .timeout(RANKS_TIMEOUT),
    ],
});

/// Two ranks start CUDA, save and load; the variant waits two minutes for
/// them at most, and a minute more for them to end.
const RANKS_TIMEOUT: Duration = Duration::from_secs(240);

const REPORTS: &[Report] = &[
    Report {
        id: "NVIDIA/apex#222",
        shows: "With four GPUs, the processes of GPUs 1, 2 and 3 each used almost a GB on GPU 0; \
                the reporter had loaded parameters before setting the current device, and had to \
                pass map_location to torch.load; a maintainer names both causes.",
    },
    Report {
        id: "pytorch/examples#969",
        shows: "DDP with two GPUs: process 2 allocates memory on GPU 0; a comment points to \
                torch.load without map_location, which puts the checkpoint's tensors back on the \
                device they were saved on.",
    },
    Report {
        id: "pytorch/pytorch#3477",
        shows: "`RuntimeError: cuda runtime error (2) : out of memory` when another process had \
                filled GPU 0 and the model was on GPU 5: tensors moved with `.cuda()` (no index) \
                went to the default device, GPU 0.",
    },
    Report {
        id: "lucidrains/imagen-pytorch#132",
        shows: "`torch.load(str(path))` put the state dict on cuda:0 in each process; the fix \
                loads it to the CPU first.",
    },
];

static LOAD_DOC: Passage = Passage {
    document: "PyTorch documentation",
    section: "torch.load",
    url: "https://docs.pytorch.org/docs/stable/generated/torch.load.html",
    text: "torch.load() uses Python's unpickling facilities but treats storages, which underlie \
           tensors, specially. They are first deserialized on the CPU and are then moved to the \
           device they were saved from. If this fails (e.g. because the run time system doesn't \
           have certain devices), an exception is raised. However, storages can be dynamically \
           remapped to an alternative set of devices using the map_location argument.",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "pytorch-load-moves-tensors-to-the-device-they-were-saved-from",
    source: Source::Pytorch(&LOAD_DOC),
    quote: "They are first deserialized on the CPU and are then moved to the device they were \
            saved from.",
    judged_by: "broken-py",
    control: Control::Parts(&[
        Part {
            part: "first deserialized on the CPU",
            // The one argument with which torch.load makes its storages
            // elsewhere: on the meta device, their data never read. Its
            // restore function is handed none (recorded "not seen") and the
            // tensors come back on the meta device: nothing was deserialized
            // on the CPU, and the judge reads this half as failing. ("Not
            // seen" would also come from a callable map_location, which
            // bypasses the wrapped restore function; no run here passes one.)
            control: Control::Run("meta-load-py"),
        },
        Part {
            part: "then moved to the device they were saved from",
            control: Control::Run("fixed-py"),
        },
    ]),
    // Rank 1 selected cuda:1 and loads a checkpoint saved from cuda:0. The
    // storages torch.load reads are first on the CPU (its restore function,
    // wrapped, is handed them there), then on cuda:0: confirmed. First on
    // another device: partly where they end on cuda:0 or on the CPU then
    // elsewhere; refuted where neither half holds. Each half's control
    // changes map_location: "meta" (meta-load-py, whose load_state_dict then
    // takes the meta tensors as they are), the rank's own GPU (fixed-py).
    judge: |o: &Outcome| {
        let first_on_cpu = o.fact_text(RANK1_STORAGES_FIRST_ON).map(|on| on == "cpu");
        ClaimVerdict::of_two_parts(first_on_cpu, o.flag(LOADED_WHERE_SAVED))
    },
    ..Claim::EITHER
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(first_on: Option<&str>, where_saved: Option<bool>) -> Outcome {
        let mut o = Outcome::empty();
        if let Some(on) = first_on {
            o = o.with_fact(RANK1_STORAGES_FIRST_ON, on);
        }
        if let Some(w) = where_saved {
            o = o.with_fact(LOADED_WHERE_SAVED, w);
        }
        o
    }

    #[test]
    fn the_claim_turns_on_both_halves() {
        let claim = &CLAIMS[0];
        let verdict = |on, saved| claim.verdict(&loaded(on, saved));
        assert_eq!(verdict(Some("cpu"), Some(true)), ClaimVerdict::Confirmed);
        assert_eq!(verdict(Some("cpu"), Some(false)), ClaimVerdict::Partly);
        assert_eq!(verdict(Some("not seen"), Some(true)), ClaimVerdict::Partly);
        assert_eq!(verdict(Some("cuda"), Some(false)), ClaimVerdict::Refuted);
        assert_eq!(verdict(None, Some(true)), ClaimVerdict::Undecided);
    }

    #[test]
    fn every_variant_needs_the_pair() {
        let s = scenario();
        assert!(s.needs_pair());
        assert!(s.variants.iter().all(|v| s.runs_alone(v)));
    }
}
