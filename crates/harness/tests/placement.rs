//! Trials spread over several GPUs, on the CPU: the schedule is given two
//! GPUs that do not exist, and each child records what it was pinned to
//! and when it ran. An exclusive trial must have its GPU to itself, no GPU
//! may run more shared trials than `jobs`, every trial is pinned, and the
//! record says where each ran. Trials that hold much of a GPU's memory run
//! beside shared ones where the GPU has room, but never two at once on one
//! GPU; where it has not, alone. A trial that needs a pair sees both GPUs,
//! in the run's order, and nothing runs on either beside it.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use casebook_harness::gpus::Gpu;
use casebook_harness::runner::placement;
use casebook_harness::runner::scheduler::Placement;
use casebook_harness::runner::{self, Trial as Planned};
use casebook_harness::{child, gpus};
use casebook_model::{
    Expect, Program, Recorder, Requirement, Role, Scenario, Variant, VariantFn, vocabulary,
};
use casebook_report::Place;
use libtest_mimic::{Arguments, Trial};

vocabulary! {
    fact PINNED_TO = "pinned to";
    measure STARTED_AT = "started_at" in Seconds;
    measure ENDED_AT = "ended_at" in Seconds;
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn works(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.measure(STARTED_AT, now());
    rec.fact(
        PINNED_TO,
        std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default(),
    );
    std::thread::sleep(Duration::from_millis(300));
    rec.measure(ENDED_AT, now());
    Ok(())
}

const JOBS: usize = 2;

fn catalog() -> Vec<Scenario> {
    let v = |name| {
        Variant::new(
            name,
            Role::Fixed,
            Expect::Clean,
            Program::host(works as VariantFn),
        )
    };
    let shared = ["s1", "s2", "s3", "s4", "s5", "s6"].map(v).to_vec();
    let alone = ["x1", "x2", "x3"].map(v).to_vec();
    // On GPUs of 80 GiB: room for 40 GiB and the neighbours, not for 70.
    let holding = vec![
        v("h1").holds_memory(40 << 30),
        v("h2").holds_memory(40 << 30),
        v("h3").holds_memory(70 << 30),
        v("c1").creates_contexts(),
    ];
    vec![
        Scenario {
            title: "trials that share a GPU",
            ..Scenario::test_only("shared", &[], shared)
        },
        Scenario {
            title: "trials that need a whole GPU",
            ..Scenario::test_only("alone", &[Requirement::ExclusiveGpu], alone)
        },
        Scenario {
            title: "trials that need two GPUs",
            ..Scenario::test_only(
                "pair",
                &[Requirement::GpuPair],
                ["p1", "p2"].map(v).to_vec(),
            )
        },
        Scenario {
            title: "trials that hold much of a GPU's memory",
            ..Scenario::test_only("holding", &[], holding)
        },
    ]
}

fn gpus() -> Vec<Gpu> {
    Gpu::test_gpus(2)
}

fn spread() -> Result<(), libtest_mimic::Failed> {
    let catalog = catalog();
    let trials: Vec<Planned> = catalog
        .iter()
        .flat_map(|scenario| {
            scenario
                .variants
                .iter()
                .map(move |variant| Planned { scenario, variant })
        })
        .collect();
    let placement = Placement {
        gpus: gpus(),
        ..Placement::default()
    };
    let executed = runner::run(&trials, JOBS, &placement, &Default::default(), |_, _, _| {});
    let memory = placement::smallest_memory(&placement.gpus);
    let places: Vec<Place> = trials.iter().map(|t| t.place(memory)).collect();
    let expected = |name: &str| match name {
        "holding::h1" | "holding::h2" | "holding::c1" => Place::Holds,
        "holding::h3" => Place::Alone,
        n if n.starts_with("alone::") => Place::Alone,
        n if n.starts_with("pair::") => Place::Pair,
        _ => Place::Shared,
    };
    for (t, p) in trials.iter().zip(&places) {
        if *p != expected(&t.name().to_string()) {
            return Err(format!("{} placed {p:?}", t.name()).into());
        }
    }
    // (gpu uuid, place, start, end) of each trial; a pair trial's once
    // for each of its GPUs.
    let mut ran = Vec::new();
    for ((t, r), &place) in trials.iter().zip(&executed.records).zip(&places) {
        let r = r.as_ref().ok_or(format!("{} did not run", t.name()))?;
        let pinned = r.outcome.fact_text(PINNED_TO).unwrap_or("").to_owned();
        // What the child saw, read back as CUDA reads it: one GPU, or a
        // pair trial's two in the run's order.
        let seen = gpus::select(&gpus(), Some(&pinned));
        let want = if place == Place::Pair { 2 } else { 1 };
        let indices: Vec<u32> = seen.iter().map(|g| g.index).collect();
        if seen.len() != want || pinned.split(',').count() != want || r.gpus != indices {
            return Err(format!(
                "{} was pinned to {pinned:?}, its record says GPUs {:?}",
                t.name(),
                r.gpus
            )
            .into());
        }
        let (start, end) = (
            r.outcome.measure(STARTED_AT).ok_or("no start")?,
            r.outcome.measure(ENDED_AT).ok_or("no end")?,
        );
        for gpu in seen {
            ran.push((gpu.uuid, place, start, end, t.name()));
        }
    }
    for gpu in gpus() {
        let on: Vec<_> = ran.iter().filter(|r| r.0 == gpu.uuid).collect();
        if on.is_empty() {
            return Err(format!("nothing ran on {}", gpu.uuid).into());
        }
        for a in &on {
            let overlapping = on
                .iter()
                .filter(|b| b.4 != a.4 && b.2 < a.3 && a.2 < b.3)
                .count();
            if matches!(a.1, Place::Alone | Place::Pair) && overlapping > 0 {
                return Err(format!("{} shared {} with another trial", a.4, gpu.uuid).into());
            }
            let beside_its_like = on.iter().any(|b| {
                b.4 != a.4 && a.1 == Place::Holds && b.1 == Place::Holds && b.2 < a.3 && a.2 < b.3
            });
            if beside_its_like {
                return Err(format!("{} ran beside another that holds much memory", a.4).into());
            }
            // The most trials at once on a GPU is reached as one starts.
            let at_its_start = on.iter().filter(|b| b.2 <= a.2 && a.2 < b.3).count();
            if at_its_start > JOBS {
                return Err(format!("{at_its_start} trials at once on {}", gpu.uuid).into());
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    child::serve_if_child(&catalog());
    let args = Arguments::from_args();
    let trials = vec![Trial::test(
        "placement::trials-are-pinned-and-exclusive-and-pair-ones-have-their-gpus-alone",
        spread,
    )];
    libtest_mimic::run(&args, trials).exit_code()
}
