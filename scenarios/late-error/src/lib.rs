//! `late-error`: a kernel faults, but its launch returned success. The
//! program goes on, and the error surfaces in whichever later call first
//! waits for the GPU: an innocent copy takes the blame. Checking right after
//! the launch (a synchronise in debug builds) names the real culprit.
//!
//! Deterministic by construction: the kernel faults 50 ms after it starts,
//! so the calls right after the launch run before the fault.

use std::sync::Arc;

use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use cudarc::driver::{CudaContext, CudaFunction, DriverError, PushKernelArg};

mod broken;
mod fixed;
mod launch_blocking;
mod pinpoint;

casebook_model::case_modules!();

pub const SPIN_NS: u64 = 50_000_000;
pub(crate) const LAUNCH: &str = "cuLaunchKernel spin_then_fault (the culprit)";
pub(crate) const CHECK: &str = "cuCtxSynchronize right after the launch";

casebook_model::scenario!(Scenario {
    title: "CUDA error from an unrelated call (illegal address reported by a later memcpy)",
    cause: "Kernel launches are asynchronous: a fault is reported by the first later call that \
            waits for the GPU, not by the launch. Check right after the launch to name the culprit.",
    fix: "Synchronise (cuCtxSynchronize) and check the result right after each kernel launch, so a \
          fault is reported at the launch that caused it, not by a later copy.",
    symptoms: &[
        "an error on the second call",
        "an illegal memory access was encountered",
    ],
    requires: Requirement::GPU,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(AT_LAUNCH)).both(|v| v.faults_device()),
        Variant::records("launch-blocking", cudarc!(launch_blocking)).faults_device(),
        Variant::records("under-tools", cudarc!(pinpoint::under_tools at "pinpoint"))
            .faults_device()
            .timeout(std::time::Duration::from_secs(300)),
        Variant::records(
            "under-racecheck",
            cudarc!(pinpoint::under_racecheck, anchored)
        )
        .faults_device()
        .timeout(std::time::Duration::from_secs(300))
        .one_change(
            "under-tools",
            "the tool the broken program runs under: compute-sanitizer's \
             memcheck, which checks every address a kernel reads and \
             writes, there; its racecheck, which checks shared-memory \
             races only, here",
            "pinpoint(rec, &[MEMCHECK])",
            "pinpoint(rec, &[RACECHECK])",
        ),
    ],
});

pub(crate) struct Program {
    pub ctx: Arc<CudaContext>,
    pub fault: CudaFunction,
}

pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<Program> {
    let ctx = device::context(rec)?;
    let fault = device::kernel(rec, &ctx, fatbin::FAULT, KERNEL)?;
    Ok(Program { ctx, fault })
}

/// The kernel that faults, as a report that names it spells it.
pub(crate) const KERNEL: &str = "spin_then_fault";

/// Records which call first reports the (provoked) fault, and whether any
/// error the program's calls return names the kernel that faulted.
#[derive(Default)]
pub(crate) struct Blame {
    first: Option<String>,
    names_the_kernel: bool,
}

impl Blame {
    /// Records a call; every error here is the provoked fault, so it is
    /// noted as provoked and judged by [`Blame::finish`] instead.
    pub fn note<T>(
        &mut self,
        rec: &mut Recorder,
        call: &str,
        result: Result<T, DriverError>,
    ) -> Option<T> {
        let result = rec.tolerate(call, result);
        if let Err(e) = &result {
            self.names_the_kernel |= e.to_string().contains(KERNEL);
            if self.first.is_none() {
                self.first = Some(call.to_owned());
            }
        }
        result.ok()
    }

    pub fn caught(&self) -> bool {
        self.first.is_some()
    }

    pub fn finish(self, rec: &mut Recorder) {
        let first = self.first.unwrap_or_else(|| "none".to_owned());
        rec.check(AT_LAUNCH, first == LAUNCH || first == CHECK);
        rec.fact(FIRST, first);
        rec.fact(
            THE_PROGRAM_S_OWN_ERRORS_NAME_THE_FAULTING_KERNEL,
            self.names_the_kernel,
        );
    }
}

/// The faulty launch. It returns at once, and (almost always) successfully.
pub(crate) fn launch_faulty(rec: &mut Recorder, p: &Program, blame: &mut Blame) {
    let stream = p.ctx.default_stream();
    let mut launch = stream.launch_builder(&p.fault);
    launch.arg(&SPIN_NS);
    let cfg = casebook_driver::device::line(1, 32);
    blame.note(rec, LAUNCH, unsafe { launch.launch(cfg) });
}

/// What the program does next, none of it related to the faulty kernel.
pub(crate) fn unrelated_work(rec: &mut Recorder, p: &Program, blame: &mut Blame) {
    use cudarc::driver::result;
    let data = vec![1.0f32; 1 << 18];
    let Some(buf) = blame.note(rec, "cuMemAlloc (unrelated)", unsafe {
        result::malloc_sync(data.len() * 4)
    }) else {
        return;
    };
    blame.note(rec, "cuMemcpyHtoD (unrelated)", unsafe {
        result::memcpy_htod_sync(buf, &data)
    });
    blame.note(rec, "cuCtxSynchronize (end of step)", p.ctx.synchronize());
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-errors-on-subsequent-calls",
        source: Source::SEED_000,
        quote: "Improper handling of CUDA streams, memory allocations, and kernel launches leads to seemingly \
                inexplicable errors on subsequent calls.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        reach: Reach::AtBestPartly(
            "of the three causes, the kernel launch gives the seemingly inexplicable error: its fault \
             is returned by a later, unrelated call (this run). Memory and streams left behind fail a \
             later call only once they have used up the device's memory, and then with an out of \
             memory at the allocation that asks for more, an error that says what it is \
             (missing-free's broken-cpp: 40 calls served, the 41st refused; open-streams' \
             leak-streams-cpp: 100,000 streams before an allocation of half the memory is refused)",
        ),
        // Judged on the kernel launch: its fault is returned by a later,
        // unrelated call (confirmed, capped), or at the launch (refuted;
        // fixed, a synchronise right after the launch, is the control).
        judge: |o: &Outcome| match (o.check(AT_LAUNCH), o.fact_text(FIRST)) {
            (Some(false), Some(_)) => ClaimVerdict::Confirmed,
            (Some(true), _) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
    },
    Claim {
        id: "000-error-messages-generic",
        source: Source::SEED_000,
        quote: "The error messages themselves are often unhelpful, generically pointing to memory allocation issues or invalid device operations, making diagnosis challenging.",
        judged_by: "broken",
        // Two parts. Where the error surfaces: the control changes one thing,
        // a synchronise right after the launch, and the error then surfaces
        // there, with the same message. What the message says: no control,
        // and the page says why.
        control: Control::Parts(&[
            Part {
                part: "the error surfaces at a call that did nothing wrong, which makes diagnosis hard",
                control: Control::Run("fixed"),
            },
            Part {
                part: "the error a call returns is generic: its message names no kernel and no line",
                control: Control::Impossible(
                    "the message a call returns is the driver's text for the error's code \
                     (cuGetErrorString), the same whichever kernel faulted and wherever: no run can \
                     make a call's error name the kernel. What a user reads can name it where the \
                     kernel itself writes it: a device-side assert prints the kernel, the file and \
                     the line to the program's output beside the generic \"device-side assert \
                     triggered\" (device-assert's runs record both), and compute-sanitizer's report \
                     names the kernel that faulted. That is what shows the reading would see a \
                     kernel's name where one is given: the same program under compute-sanitizer \
                     (under-tools), its report read the same way, while the program's own errors \
                     still do not.",
                ),
            },
        ]),
        // The messages the program's calls return: do they name the kernel
        // that faulted? And does the error surface at the launch that
        // caused it? Generic, at an unrelated call: confirmed. Generic, but
        // at the launch (fixed, a synchronise right after it): partly, the
        // message is as generic and the place is known. A message that
        // names the kernel: refuted.
        judge: |o: &Outcome| {
            ClaimVerdict::of_an_effect(
                o.flag(THE_PROGRAM_S_OWN_ERRORS_NAME_THE_FAULTING_KERNEL)
                    .map(|names| !names),
                o.check(AT_LAUNCH).map(|at_launch| !at_launch),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-debugger-pinpoints-errors",
        source: Source::SEED_000,
        quote: "Using a debugger to pinpoint the exact location of errors is crucial, and learning how to analyze the CUDA profilerâ€™s output allows for optimal performance tuning and resource allocation.",
        judged_by: "under-tools",
        // The same broken program with its launches made blocking
        // (CUDA_LAUNCH_BLOCKING=1) and no tool: the launch that faulted
        // returns the fault itself, so nothing is left for a tool to find
        // (racecheck, the control before, checks shared-memory races only,
        // and could not have seen the fault).
        control: Control::Run("launch-blocking"),
        reach: Reach::AtBestPartly(
            "the sentence's second half, that learning to read the profiler's output allows optimal \
             tuning, is advice no run decides; the run tests the first: a tool names the kernel that \
             faulted where the program's own errors blame a later call. The debugger itself, cuda-gdb \
             13.0, cannot be tested on the machines this ran on: on the same H100 it named the \
             kernel in one run of ten and in the others let the program run to its end with every \
             call returning success (docs/evidence/cuda-gdb.md), so it is not run. The tool that names the kernel in every run \
             is compute-sanitizer. Where cuda-gdb works, it stops at the faulting kernel and names \
             it (its output quoted in tile-ai/tilelang#3249). And a tool is not all that finds \
             the launch: with CUDA_LAUNCH_BLOCKING=1 (the control) the launch that faulted returns \
             the fault itself",
        ),
        // A report that names the kernel that faulted, where the program's
        // own errors name none of it: the tool pinpoints what nothing else
        // did (confirmed). No report names it: refuted. The program's own
        // errors name the kernel already, or, run without a tool, put the
        // fault at the launch that caused it (the control): nothing for a
        // debugger to add (refuted).
        judge: |o: &Outcome| match o.flag(THE_PROGRAM_S_OWN_ERRORS_NAME_THE_FAULTING_KERNEL) {
            Some(true) => ClaimVerdict::Refuted,
            Some(false) => ClaimVerdict::confirmed_if(o.flag(A_REPORT_NAMES_THE_FAULTING_KERNEL)),
            None => match o.check(AT_LAUNCH) {
                Some(true) => ClaimVerdict::Refuted,
                _ => ClaimVerdict::Undecided,
            },
        },
    },
];
