use std::time::Duration;

use crate::{CRecorder, Outcome, Recorder, Symptom};

/// A variant's entry point. It runs alone in a child process.
pub type VariantFn = fn(&mut Recorder) -> anyhow::Result<()>;

/// A C++ variant's entry point, as its `extern "C"` declaration names it:
/// it returns 0 when it ran to its end, or the `cudaError_t` that stopped it.
pub type CppFn = unsafe extern "C" fn(*const CRecorder) -> i32;

/// The program that serves the cust variants (see `crates/cust`).
pub const CUST_PROGRAM: &str = "casebook-cust";

/// The title of a case `cargo xtask new-scenario` wrote and nobody has
/// written yet: the catalogue's checks name such a case, so a skeleton never
/// counts as done.
pub const NOT_WRITTEN: &str = "(not written yet: the skeleton of cargo xtask new-scenario)";

/// One failure, with its broken and fixed variants: from the seed articles,
/// or from the public reports it names.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Names the bug: `missing-free`, `async-free-race`.
    pub slug: &'static str,
    /// The symptom in the words a user would search for.
    pub title: &'static str,
    /// The real cause, in one sentence.
    pub cause: &'static str,
    /// The fix, in one sentence, as a user applies it: what the fixed
    /// variants do.
    pub fix: &'static str,
    /// The headings of the cookbook's index by symptom this scenario is
    /// listed under: "out of memory", "wrong results, no error", …
    pub symptoms: &'static [&'static str],
    /// What every variant of this scenario needs to run.
    pub requires: &'static [Requirement],
    /// The public reports of this failure that the scenario reproduces.
    pub reports: &'static [Report],
    /// The published claims this scenario tests.
    pub claims: &'static [Claim],
    pub variants: Vec<Variant>,
}

impl Scenario {
    /// A scenario of `variants` and nothing else that a case declares (no
    /// title, cause or claims): for the tests of what reads a catalogue.
    pub fn test_only(
        slug: &'static str,
        requires: &'static [Requirement],
        variants: Vec<Variant>,
    ) -> Scenario {
        Scenario {
            slug,
            title: "",
            cause: "test-only",
            fix: "",
            symptoms: &[],
            requires,
            reports: &[],
            claims: &[],
            variants,
        }
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    pub fn needs_gpu(&self) -> bool {
        self.requires.contains(&Requirement::Gpu)
    }

    /// Whether the scenario must have the GPU to itself: it exhausts or
    /// measures the device's free memory, so a neighbour would disturb it.
    pub fn is_exclusive(&self) -> bool {
        self.requires.contains(&Requirement::ExclusiveGpu)
    }

    /// Whether every variant needs two GPUs of one host, both visible to
    /// its child, with nothing else on either while it runs (see
    /// [`Requirement::GpuPair`]).
    pub fn needs_pair(&self) -> bool {
        self.requires.contains(&Requirement::GpuPair)
    }

    /// Whether `variant` must have the GPU to itself: the whole scenario
    /// does (unless this variant is declared to share it), this variant
    /// measures device-wide free memory, faults the device or holds much of
    /// its memory, or it needs a pair of GPUs, both of them its own.
    pub fn runs_alone(&self, variant: &Variant) -> bool {
        self.alone_whatever_it_holds(variant) || variant.holds.is_some()
    }

    /// What makes `variant` run alone besides the memory it holds.
    fn alone_whatever_it_holds(&self, variant: &Variant) -> bool {
        (self.is_exclusive() && !variant.shares)
            || variant.alone
            || variant.faults
            || self.needs_pair()
    }

    /// Whether `variant`, which [`runs_alone`](Self::runs_alone) only because
    /// it holds much of a GPU's memory, may run beside light trials on a GPU
    /// of `memory` bytes: there is room for what it holds and
    /// [`NEIGHBOURS_ROOM`] more. One such trial at a time per GPU.
    pub fn holds_within(&self, variant: &Variant, memory: u64) -> bool {
        !self.alone_whatever_it_holds(variant)
            && variant
                .holds
                .is_some_and(|need| need.saturating_add(NEIGHBOURS_ROOM) <= memory)
    }

    /// Whether it must run alone under compute-sanitizer too.
    pub fn fills_gpu(&self) -> bool {
        self.requires.contains(&Requirement::FillsGpu)
    }

    /// Whether `variant` must have the GPU to itself under compute-sanitizer:
    /// its scenario fills the GPU and its reduced form still does. What
    /// makes a variant run alone elsewhere (device-wide free memory, kernels
    /// timed against each other) is not judged under the tool, whose cells
    /// are judged by its reports alone, so such a variant shares the GPU
    /// there, as a scenario that only reads free memory does; where it would
    /// fill the GPU, its form under the tool must not.
    ///
    /// A pair trial has its two GPUs to itself there too: what it provokes
    /// spans both, and no neighbour should see it.
    pub fn runs_alone_under_sanitizer(&self, variant: &Variant) -> bool {
        (self.fills_gpu() && !variant.shares && !variant.small_when_reduced) || self.needs_pair()
    }

    /// The claims judged from the outcome of `variant`.
    pub fn claims_judged_by<'a>(&'a self, variant: &'a str) -> impl Iterator<Item = &'a Claim> {
        self.claims.iter().filter(move |c| c.judged_by == variant)
    }

    /// The trial that runs `variant`: `<slug>::<variant>`.
    pub fn trial_id(&self, variant: &Variant) -> crate::TrialId {
        crate::TrialId::new(self.slug, variant.name)
    }

    /// [`Scenario::trial_id`], as text.
    pub fn trial_name(&self, variant: &Variant) -> String {
        self.trial_id(variant).to_string()
    }
}

/// The device memory left for the light trials beside one that holds much
/// of the GPU (see [`Variant::holds_memory`]): eight trials side by side,
/// each with a context and a little memory of its own.
pub const NEIGHBOURS_ROOM: u64 = 16 << 30;

/// The requirement sets scenarios declare.
impl Requirement {
    /// A GPU, shared with other trials.
    pub const GPU: &'static [Requirement] = &[Requirement::Gpu];
    /// The whole GPU: the scenario measures or exhausts free memory.
    pub const GPU_ALONE: &'static [Requirement] = &[Requirement::Gpu, Requirement::ExclusiveGpu];
    /// The whole GPU, filled: alone under the sanitizer too.
    pub const GPU_FILLED: &'static [Requirement] = &[
        Requirement::Gpu,
        Requirement::ExclusiveGpu,
        Requirement::FillsGpu,
    ];
    /// Two GPUs of one host, both the trial's own: a failure that needs a
    /// second device (a pointer of one used on the other, a rank per GPU).
    pub const GPU_PAIR: &'static [Requirement] = &[Requirement::Gpu, Requirement::GpuPair];
}

/// How many GPUs a trial of a scenario that needs a pair gets: both
/// visible to its child, in the order the run lists them, the first as its
/// device 0.
pub const PAIR: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// A CUDA driver and at least one device.
    Gpu,
    /// No other variant may run on the device at the same time.
    ExclusiveGpu,
    /// It fills most of the device's memory: even its reduced form under
    /// compute-sanitizer must run alone. (Other exclusive scenarios only
    /// measure free memory; under the sanitizer, where only the tools'
    /// findings count, they share the GPU.)
    FillsGpu,
    /// Two GPUs of one host ([`PAIR`]), both visible to the trial's child
    /// (its own `CUDA_VISIBLE_DEVICES` names the two), and nothing else on
    /// either while it runs: its failure needs a second device, and what it
    /// provokes (a fault on one, a rank that hangs on the other, a context
    /// on the wrong one) must be its own to read. Where a run sees fewer
    /// GPUs, its trials are skipped with the reason, never passed.
    GpuPair,
}

/// A sentence from a seed article that says what CUDA does.
#[derive(Debug, Clone, Copy)]
pub struct Claim {
    /// Stable id, unique across the catalogue: `000-second-call-fails`.
    pub id: &'static str,
    /// Where the sentence was published.
    pub source: Source,
    /// The exact quote.
    pub quote: &'static str,
    /// The variant whose outcome decides the claim.
    pub judged_by: &'static str,
    /// Computes the verdict from that variant's outcome.
    pub judge: fn(&Outcome) -> ClaimVerdict,
    /// What the experiment can show: either verdict, or at best "partly",
    /// with the reason. A CPU test feeds the judge changed outcomes and
    /// checks that it reaches what this declares.
    pub reach: Reach,
    /// The run beside the deciding one in which the same judge gives the
    /// other answer: what shows the experiment could have come out
    /// otherwise. A CPU test applies the judge to the control's recorded
    /// outcome.
    pub control: Control,
}

impl Claim {
    /// What a claim that declares no cap leaves out: it ends with
    /// `..Claim::EITHER`, and its experiment can reach either verdict. A
    /// claim that can reach at best "partly" writes its `reach` and all the
    /// rest. The other fields here are blanks the catalogue's checks refuse
    /// (no id, no seed, no quote, no deciding variant, a judge that decides
    /// nothing, no control chosen), so a claim that forgets one fails them.
    pub const EITHER: Claim = Claim {
        id: "",
        source: Source::Seed(""),
        quote: "",
        judged_by: "",
        judge: |_| ClaimVerdict::Undecided,
        reach: Reach::Either,
        control: Control::Pending,
    };
}

/// A claim's control: the run in which its measurement gives the other
/// answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// This variant of the same scenario, judged by the claim's own judge:
    /// the same program with one thing changed (the bug fixed, a size, a
    /// flag), declared in the variant's description.
    Run(&'static str),
    /// A "partly" verdict joins parts that came out apart (one holds, one
    /// does not), a "confirmed" one parts that all held: each part the run
    /// decides has a control of its own, a run in which that part comes out
    /// the other way, or the reason none can exist.
    Parts(&'static [Part]),
    /// No control can exist, and why; the page says so. The reason names
    /// what shows that the measurement could have read the other answer.
    Impossible(&'static str),
    /// None chosen yet: a debt the ledger counts, which may only shrink.
    Pending,
}

/// One part of a claim whose verdict is "partly" (or "confirmed", every
/// part holding), with its own control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// The part, in a few words: "idle open streams delay the next call".
    pub part: &'static str,
    /// A [`Control::Run`] or a [`Control::Impossible`] (or, while none is
    /// chosen, [`Control::Pending`]).
    pub control: Control,
}

impl Control {
    /// The control run's variant, if there is one.
    pub fn run(self) -> Option<&'static str> {
        match self {
            Control::Run(v) => Some(v),
            _ => None,
        }
    }

    /// Every control run this names: its own, or each part's.
    pub fn runs(self) -> Vec<&'static str> {
        match self {
            Control::Run(v) => vec![v],
            Control::Parts(parts) => parts.iter().filter_map(|p| p.control.run()).collect(),
            Control::Impossible(_) | Control::Pending => Vec::new(),
        }
    }
}

impl Claim {
    /// The verdict from the deciding variant's outcome, within the declared
    /// [`Reach`].
    pub fn verdict(&self, outcome: &Outcome) -> ClaimVerdict {
        self.reach.bound((self.judge)(outcome))
    }
}

/// Where a claim's sentence was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A seed article, as named in `shared/seeds/`.
    Seed(&'static str),
    /// A passage of NVIDIA's documentation.
    Nvidia(&'static Passage),
    /// A passage of PyTorch's documentation.
    Pytorch(&'static Passage),
}

impl Source {
    // The five seed articles, each named once: a claim says `Source::SEED_000`.
    pub const SEED_000: Source = Source::Seed("000_1633914ffce0e075.txt");
    pub const SEED_001: Source = Source::Seed("001_eb72388bf55c7443.txt");
    pub const SEED_002: Source = Source::Seed("002_245404227877bbf6.txt");
    pub const SEED_003: Source = Source::Seed("003_a513a38b5daed103.txt");
    pub const SEED_004: Source = Source::Seed("004_dd8d91b458147886.txt");

    /// The documentation's passage the sentence is quoted from; `None` for
    /// a seed article.
    pub fn passage(&self) -> Option<&'static Passage> {
        match *self {
            Source::Seed(_) => None,
            Source::Nvidia(p) | Source::Pytorch(p) => Some(p),
        }
    }
}

/// A passage of NVIDIA's or PyTorch's documentation, copied word for word
/// with its address, so that a claim quoted from it can be checked offline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passage {
    /// "CUDA C++ Programming Guide".
    pub document: &'static str,
    /// The section's heading.
    pub section: &'static str,
    pub url: &'static str,
    /// The paragraph, as published.
    pub text: &'static str,
}

/// A public report of the failure a scenario reproduces, and what the
/// report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// `owner/repo#N`.
    pub id: &'static str,
    /// What the report shows, in a sentence: the error its users saw and
    /// the cause found.
    pub shows: &'static str,
}

impl Report {
    /// The report's address on GitHub (which sends an issue number that
    /// names a pull request on to it).
    pub fn url(&self) -> Option<String> {
        thread_url(self.id)
    }
}

/// The address on GitHub of a thread cited as `owner/repo#N` (GitHub sends
/// an issue number that names a pull request on to it).
pub fn thread_url(id: &str) -> Option<String> {
    let (repo, number) = id.split_once('#')?;
    let (owner, name) = repo.split_once('/')?;
    number.parse::<u64>().ok()?;
    Some(format!("https://github.com/{owner}/{name}/issues/{number}"))
}

/// What a claim's experiment can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The judge can confirm the claim and can refute it.
    Either,
    /// Whatever the run finds, the verdict is at best "partly": the reason
    /// (the run tests only part of what the sentence says, say). The
    /// judge's "confirmed" is shown as "partly".
    AtBestPartly(&'static str),
}

impl Reach {
    /// `verdict`, capped as declared.
    pub fn bound(self, verdict: ClaimVerdict) -> ClaimVerdict {
        match (self, verdict) {
            (Reach::AtBestPartly(_), ClaimVerdict::Confirmed) => ClaimVerdict::Partly,
            _ => verdict,
        }
    }

    /// The reason for a cap, if one is declared.
    pub fn cap(self) -> Option<&'static str> {
        match self {
            Reach::Either => None,
            Reach::AtBestPartly(why) => Some(why),
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimVerdict {
    Confirmed,
    Refuted,
    Partly,
    /// The deciding variant did not get far enough to tell.
    Undecided,
}

impl ClaimVerdict {
    /// `confirmed`, `refuted`, `partly` or `undecided`: as reports write it.
    pub fn word(self) -> &'static str {
        match self {
            ClaimVerdict::Confirmed => "confirmed",
            ClaimVerdict::Refuted => "refuted",
            ClaimVerdict::Partly => "partly",
            ClaimVerdict::Undecided => "undecided",
        }
    }

    /// `yes` when the observation is true, `no` when it is false, and
    /// [`ClaimVerdict::Undecided`] when it was not made.
    pub fn when(observed: Option<bool>, yes: ClaimVerdict, no: ClaimVerdict) -> ClaimVerdict {
        match observed {
            Some(true) => yes,
            Some(false) => no,
            None => ClaimVerdict::Undecided,
        }
    }

    /// Confirmed when the observation is true, Refuted when it is false.
    pub fn confirmed_if(observed: Option<bool>) -> ClaimVerdict {
        ClaimVerdict::when(observed, ClaimVerdict::Confirmed, ClaimVerdict::Refuted)
    }

    /// Refuted when the observation is true, Confirmed when it is false.
    pub fn refuted_if(observed: Option<bool>) -> ClaimVerdict {
        ClaimVerdict::when(observed, ClaimVerdict::Refuted, ClaimVerdict::Confirmed)
    }

    /// A sentence whose parts must all hold: every part observed to hold,
    /// confirmed; one observed not to, refuted, whatever the others show;
    /// otherwise undecided.
    pub fn confirmed_if_all<const N: usize>(parts: [Option<bool>; N]) -> ClaimVerdict {
        ClaimVerdict::confirmed_if(all_hold(parts))
    }

    /// The other way round: every part observed to hold, refuted; one
    /// observed not to, confirmed; otherwise undecided.
    pub fn refuted_if_all<const N: usize>(parts: [Option<bool>; N]) -> ClaimVerdict {
        ClaimVerdict::refuted_if(all_hold(parts))
    }

    /// `verdict` where the run set up the sentence's condition; undecided
    /// where it did not.
    pub fn provided(condition: bool, verdict: ClaimVerdict) -> ClaimVerdict {
        if condition {
            verdict
        } else {
            ClaimVerdict::Undecided
        }
    }

    /// A sentence of two parts, each observed to hold or not: both hold,
    /// confirmed; neither, refuted; one, partly; a part not observed,
    /// undecided.
    pub fn of_two_parts(first: Option<bool>, second: Option<bool>) -> ClaimVerdict {
        match (first, second) {
            (Some(true), Some(true)) => ClaimVerdict::Confirmed,
            (Some(false), Some(false)) => ClaimVerdict::Refuted,
            (Some(_), Some(_)) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        }
    }

    /// A sentence that names an effect and says something more of it (its
    /// cause, where or how it shows): the effect absent, refuted, whatever
    /// else was read; present, and the rest as said, confirmed; present
    /// without the rest, partly; what decides not observed, undecided.
    pub fn of_an_effect(effect: Option<bool>, as_said: Option<bool>) -> ClaimVerdict {
        match (effect, as_said) {
            (Some(false), _) => ClaimVerdict::Refuted,
            (Some(true), Some(true)) => ClaimVerdict::Confirmed,
            (Some(true), Some(false)) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        }
    }
}

/// Whether every part holds: false as soon as one is observed not to, true
/// when all are observed to, and not known otherwise.
fn all_hold<const N: usize>(parts: [Option<bool>; N]) -> Option<bool> {
    if parts.contains(&Some(false)) {
        Some(false)
    } else if parts.iter().all(Option::is_some) {
        Some(true)
    } else {
        None
    }
}

/// The API a variant is written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Binding {
    /// Rust through cudarc (driver API).
    Cudarc,
    /// The article's C++ against the CUDA runtime API, built by nvcc.
    CudaRuntimeCpp,
    /// Rust through Rust-CUDA's cust.
    Cust,
    /// Python through PyTorch, where the article speaks of PyTorch.
    Pytorch,
    /// Host code only; used by the harness's own fault tests.
    Host,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The pattern from the article that goes wrong.
    Broken,
    /// The same program with the fix and nothing else changed.
    Fixed,
    /// The article's code exactly as printed, kept where its claim is in question.
    AsWritten,
    /// A third way that shows something about the fix (a safe API, say).
    Contrast,
}

/// What a variant must show for its trial to pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Runs to completion with no CUDA error, no failed check, no crash.
    Clean,
    /// Must show this symptom. If it stops doing so, the trial fails loudly:
    /// the bug no longer reproduces.
    Fails(Symptom),
    /// Its outcome is the measurement (the article's code run as printed,
    /// say, deciding a claim): it must run to its end, without a crash, a
    /// hang or garbage; the errors and checks it records are observations.
    Records,
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Clean => f.write_str("clean"),
            Expect::Fails(symptom) => write!(f, "fails: {symptom}"),
            Expect::Records => f.write_str("records what happens"),
        }
    }
}

/// How a variant is started in its child process.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    /// A function linked into the harness binary, called in a re-executed
    /// copy of that binary.
    InProcess(VariantFn),
    /// A C++ function linked into the harness binary, called the same way
    /// with the recorder's C table.
    Cpp(CppFn),
    /// Another program (another binding's binary, say), which serves the
    /// variant under its `<slug>::<variant>` name and reports through the
    /// same event file.
    External { program: &'static str },
    /// A function of a Python file in the scenario's `python/` folder, run
    /// by the interpreter (`python3`, or `CASEBOOK_PYTHON`) as
    /// `python3 -m casebook <file> <function>`; the `casebook` module
    /// (`crates/model/python`) records through the same event file.
    Python {
        file: &'static str,
        function: &'static str,
    },
}

/// Where a variant's code is, relative to its scenario's folder: the file,
/// and the `// ANCHOR:` in it when the file holds more than this variant.
/// The cookbook includes exactly this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub file: &'static str,
    pub anchor: Option<&'static str>,
}

/// What a variant runs: its entry point, the API it is written against and
/// where its code is. A scenario makes these with [`cudarc!`](crate::cudarc)
/// (a Rust module of its own), [`cpp_variants!`](crate::cpp_variants) (its
/// C++, listed by its build script for [`case_modules!`](crate::case_modules))
/// and [`Program::cust`] (its `cust.rs`).
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub binding: Binding,
    pub runner: Runner,
    pub code: Option<Code>,
}

impl Program {
    /// A Rust function through cudarc, and its code.
    pub const fn cudarc(run: VariantFn, code: Code) -> Program {
        Program {
            binding: Binding::Cudarc,
            runner: Runner::InProcess(run),
            code: Some(code),
        }
    }

    /// A C++ function against the CUDA runtime API, compiled from the
    /// scenario's `cpp/` by its build script: `file`, between
    /// `// ANCHOR: anchor` and `// ANCHOR_END: anchor` if an anchor is given.
    pub const fn cpp(run: CppFn, file: &'static str, anchor: Option<&'static str>) -> Program {
        Program {
            binding: Binding::CudaRuntimeCpp,
            runner: Runner::Cpp(run),
            code: Some(Code { file, anchor }),
        }
    }

    /// A function of the scenario's `cust.rs`, between its anchors: the
    /// `casebook-cust` program (found beside the harness binary) serves it
    /// under the variant's `<slug>::<variant>` name.
    pub const fn cust(anchor: &'static str) -> Program {
        Program {
            binding: Binding::Cust,
            runner: Runner::External {
                program: CUST_PROGRAM,
            },
            code: Some(Code {
                file: "cust.rs",
                anchor: Some(anchor),
            }),
        }
    }

    /// A function of `python/<file>` in the scenario's folder, written
    /// against PyTorch; the page shows the lines between `# ANCHOR: <function>`
    /// and `# ANCHOR_END: <function>`.
    pub const fn pytorch(file: &'static str, function: &'static str) -> Program {
        Program {
            binding: Binding::Pytorch,
            runner: Runner::Python { file, function },
            code: Some(Code {
                file,
                anchor: Some(function),
            }),
        }
    }

    /// Host code with no page of its own: the harness's own fault tests.
    pub const fn host(run: VariantFn) -> Program {
        Program {
            binding: Binding::Host,
            runner: Runner::InProcess(run),
            code: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Variant {
    /// `broken`, `fixed`, `broken-cpp`, `fixed-cpp`, `as-written`, …
    pub name: &'static str,
    pub role: Role,
    pub binding: Binding,
    pub expect: Expect,
    pub runner: Runner,
    /// The child is killed, with its process group, after this long.
    pub timeout: Duration,
    /// It reads device-wide free memory, or times its kernels against each
    /// other, so it runs alone even where its scenario's other variants
    /// share the GPU. Under compute-sanitizer it shares the GPU (see
    /// [`Scenario::runs_alone_under_sanitizer`]).
    pub alone: bool,
    /// It faults the device (an illegal address, an assert, a trap), so it
    /// runs alone: on an H100 a fault in one context was seen to change what
    /// the calls of a context beside it return (a neighbour's own assert
    /// reported as a launch failure; a training loop beside a device-side
    /// assert ended on "unspecified launch failure").
    pub faults: bool,
    /// It runs beside other trials although its scenario needs the GPU to
    /// itself: at its scale it neither fills the GPU nor reads device-wide
    /// memory (see [`Variant::shares_gpu`]).
    pub shares: bool,
    /// Its reduced form under compute-sanitizer stays within a small budget
    /// of device memory, so there it shares the GPU although its scenario
    /// fills it (see [`Variant::small_when_reduced`]).
    pub small_when_reduced: bool,
    /// It holds up to this much device memory and reads only its own
    /// figures (see [`Variant::holds_memory`]).
    pub holds: Option<u64>,
    /// It creates contexts in a loop (see [`Variant::creates_contexts`]).
    pub creates_contexts: bool,
    /// Its code (see [`Variant::code`]).
    pub code: Option<Code>,
    /// What else differs from the variant it pairs with, besides the fix,
    /// where something must (see [`Variant::also_differs`]).
    pub also_differs: Option<&'static str>,
    /// The one parameter that sets this variant, a control, apart from the
    /// variant it controls (see [`Variant::one_change`]).
    pub one_change: Option<OneChange>,
    /// What this variant shows about its binding (see [`Variant::states`]).
    pub statements: Vec<Statement>,
    /// Symptoms that follow from the one it must show, and so do not fail
    /// it (see [`Variant::then_shows`]).
    pub then_shows: Vec<Symptom>,
    /// What compute-sanitizer reports in this variant that is not the
    /// program's bug (see [`Variant::sanitizer_sees`]).
    pub sanitizer_sees: Option<SanitizerSees>,
    /// Its time limit under each compute-sanitizer tool, where it is not the
    /// pass's default (see [`Variant::sanitizer_time_limit`]).
    pub sanitizer_limit: Option<Duration>,
    /// It puts a worker in a memory cgroup of its own (see
    /// [`Variant::needs_memory_cgroup`]).
    pub memory_cgroup: bool,
}

/// Where cgroup v2 is mounted: a variant that
/// [needs a memory cgroup](Variant::needs_memory_cgroup) makes its own
/// under it.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// A control's one declared parameter: the variant it is the same program
/// as, what that parameter is, and the line it reads there and here. The
/// page shows the two lines as a diff; a CPU test finds each, word for word,
/// in its variant's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneChange {
    /// The variant this one controls: the same program but for `parameter`.
    pub from: &'static str,
    /// The parameter, in a few words: "the shared buffer's size".
    pub parameter: &'static str,
    /// The line as `from` has it.
    pub was: &'static str,
    /// The line as this variant has it.
    pub is: &'static str,
}

/// Kinds of compute-sanitizer report that a variant's libraries cause and
/// handle themselves, and why: a cell that shows only these is judged so.
#[derive(Debug, Clone, Copy)]
pub struct SanitizerSees {
    /// As the sanitizer report names them: `API error CUDA_ERROR_OUT_OF_MEMORY`.
    pub kinds: &'static [&'static str],
    /// Where a device-side report of those kinds must be, for it to be the
    /// libraries': the kernels whose names start so (`cudnn::`). Empty: any.
    pub within: &'static [&'static str],
    pub why: &'static str,
}

/// A sentence about a binding that a variant's outcome shows or not: the
/// cookbook's comparison of bindings is made of these.
#[derive(Debug, Clone, Copy)]
pub struct Statement {
    pub says: &'static str,
    /// From the outcome: does the sentence hold? `None` if not recorded.
    pub holds: fn(&Outcome) -> Option<bool>,
    /// The measured figure or fact shown beside it.
    pub evidence: fn(&Outcome) -> String,
}

impl Variant {
    pub fn new(name: &'static str, role: Role, expect: Expect, program: Program) -> Self {
        Variant {
            name,
            role,
            binding: program.binding,
            expect,
            runner: program.runner,
            timeout: Duration::from_secs(120),
            alone: false,
            faults: false,
            shares: false,
            small_when_reduced: false,
            holds: None,
            creates_contexts: false,
            code: program.code,
            also_differs: None,
            one_change: None,
            statements: Vec::new(),
            then_shows: Vec::new(),
            sanitizer_sees: None,
            sanitizer_limit: None,
            memory_cgroup: false,
        }
    }

    /// The article's pattern; it must show `symptom`.
    pub fn broken(name: &'static str, symptom: Symptom, program: Program) -> Self {
        Variant::new(name, Role::Broken, Expect::Fails(symptom), program)
    }

    /// The same program with the fix; it must be clean.
    pub fn fixed(name: &'static str, program: Program) -> Self {
        Variant::new(name, Role::Fixed, Expect::Clean, program)
    }

    /// The article's code as printed; its outcome decides a claim.
    pub fn as_written(name: &'static str, program: Program) -> Self {
        Variant::new(name, Role::AsWritten, Expect::Records, program)
    }

    /// A third way that shows something about the fix.
    pub fn contrast(name: &'static str, expect: Expect, program: Program) -> Self {
        Variant::new(name, Role::Contrast, expect, program)
    }

    /// A contrast that records what happens, expecting nothing.
    pub fn records(name: &'static str, program: Program) -> Self {
        Variant::contrast(name, Expect::Records, program)
    }

    /// A contrast expected to run clean.
    pub fn contrast_clean(name: &'static str, program: Program) -> Self {
        Variant::contrast(name, Expect::Clean, program)
    }

    /// Says what else differs from the variant it pairs with, besides the
    /// fix; its page says so.
    pub fn also_differs(mut self, what: &'static str) -> Self {
        self.also_differs = Some(what);
        self
    }

    /// Declares this variant the control of `from`: the same program with
    /// one parameter changed, the line `was` there reading `is` here. The
    /// page shows the change as a diff, and nothing else may differ.
    pub fn one_change(
        mut self,
        from: &'static str,
        parameter: &'static str,
        was: &'static str,
        is: &'static str,
    ) -> Self {
        self.one_change = Some(OneChange {
            from,
            parameter,
            was,
            is,
        });
        self
    }

    /// Says what this variant shows about its binding, for the page that
    /// compares bindings: `holds` decides from the outcome whether it does.
    pub fn states(
        mut self,
        says: &'static str,
        holds: fn(&Outcome) -> Option<bool>,
        evidence: fn(&Outcome) -> String,
    ) -> Self {
        self.statements.push(Statement {
            says,
            holds,
            evidence,
        });
        self
    }

    /// Declares a symptom that follows from the one the variant must show:
    /// a failed check that the error causes, say. A `Fails` variant passes
    /// only if everything it shows besides its symptom is declared so.
    pub fn then_shows(mut self, symptom: Symptom) -> Self {
        self.then_shows.push(symptom);
        self
    }

    /// What it must show, in one line: `fails: <symptom>`, and what follows.
    pub fn expected_text(&self) -> String {
        let mut text = self.expect.to_string();
        for then in &self.then_shows {
            text.push_str(&format!(", then {then}"));
        }
        text
    }

    /// Whether it runs PyTorch, and so needs an interpreter that imports
    /// torch with CUDA.
    pub fn needs_torch(&self) -> bool {
        self.binding == Binding::Pytorch
    }

    /// Declares what compute-sanitizer reports here that the libraries
    /// under the program cause and handle (PyTorch's allocator asking the
    /// driver for pages it does not get, say), and why.
    pub fn sanitizer_sees(mut self, kinds: &'static [&'static str], why: &'static str) -> Self {
        self.sanitizer_sees = Some(SanitizerSees {
            kinds,
            within: &[],
            why,
        });
        self
    }

    /// Declares device-side reports of `kinds` that a library's own kernels
    /// cause (cuDNN's reading memory its engine never wrote, say): they are
    /// the library's only where every one the tool prints is in a kernel
    /// whose name starts with one of `within`.
    pub fn sanitizer_sees_within(
        mut self,
        kinds: &'static [&'static str],
        within: &'static [&'static str],
        why: &'static str,
    ) -> Self {
        self.sanitizer_sees = Some(SanitizerSees { kinds, within, why });
        self
    }

    /// Gives it `limit` under each compute-sanitizer tool instead of the
    /// pass's default: the tool checks every access, and a variant whose
    /// reduced form still runs libraries' large kernels needs longer.
    pub fn sanitizer_time_limit(mut self, limit: Duration) -> Self {
        self.sanitizer_limit = Some(limit);
        self
    }

    /// It runs a worker in a memory cgroup of its own, with a limit on the
    /// worker's memory ([`CGROUP_ROOT`], cgroup v2): that takes root and a
    /// cgroup tree it may write. Where the run has neither, the trial is
    /// skipped with the reason.
    pub fn needs_memory_cgroup(mut self) -> Self {
        self.memory_cgroup = true;
        self
    }

    /// Runs alone on the GPU (see [`Variant::alone`]).
    pub fn alone(mut self) -> Self {
        self.alone = true;
        self
    }

    /// It faults the device: it runs alone (see [`Variant::faults`]).
    pub fn faults_device(mut self) -> Self {
        self.faults = true;
        self
    }

    /// Shares the GPU with other trials although its scenario runs alone:
    /// it neither fills the GPU nor reads device-wide memory (the article's
    /// own small program, say).
    pub fn shares_gpu(mut self) -> Self {
        self.shares = true;
        self
    }

    /// Its reduced form under compute-sanitizer holds only a small budget
    /// of device memory: it shares the GPU there.
    pub fn small_when_reduced(mut self) -> Self {
        self.small_when_reduced = true;
        self
    }

    /// It holds up to `bytes` of device memory but reads only figures of its
    /// own (the memory NVML counts for its process), never free memory. On a
    /// GPU with room for `bytes` and [`NEIGHBOURS_ROOM`] it runs beside light
    /// trials in `run-all`, one such trial at a time; elsewhere, and in the
    /// snapshot suite, it runs alone. Its reduced form under compute-sanitizer
    /// must be small: there it shares the GPU.
    pub fn holds_memory(mut self, bytes: u64) -> Self {
        self.holds = Some(bytes);
        self
    }

    /// It creates (and destroys) contexts in a loop. Two such loops side by
    /// side on one GPU each ran many times slower on an H100 (20 contexts
    /// created and destroyed: 3 s alone, 68 s beside a loop that leaks
    /// them), so `run-all` runs it beside light trials but never beside
    /// another that creates contexts or holds much memory, as if it held
    /// much memory itself. A variant that holds memory by leaking contexts
    /// declares [`Variant::holds_memory`] as well.
    pub fn creates_contexts(mut self) -> Self {
        self.creates_contexts = true;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A broken program and its fix, written against the same binding: the two
/// variants a case shows side by side. They are named by their binding, as
/// every case names them: `broken` and `fixed` through cudarc, with `-cpp`,
/// `-py` or `-cust` after them in the other bindings.
#[derive(Debug, Clone)]
pub struct Pair {
    pub broken: Variant,
    pub fixed: Variant,
}

impl Pair {
    /// `broken` must show `symptom`; `fixed`, the same program with the fix,
    /// must be clean. Both must be written against the same binding.
    pub fn new(symptom: Symptom, broken: Program, fixed: Program) -> Pair {
        assert_eq!(
            broken.binding, fixed.binding,
            "a pair's two programs are written against one binding"
        );
        let (broken_name, fixed_name) = Pair::names(broken.binding);
        Pair {
            broken: Variant::broken(broken_name, symptom, broken),
            fixed: Variant::fixed(fixed_name, fixed),
        }
    }

    /// The functions `broken` and `fixed` of the scenario's `python/<file>`.
    pub fn pytorch(file: &'static str, symptom: Symptom) -> Pair {
        Pair::new(
            symptom,
            Program::pytorch(file, "broken"),
            Program::pytorch(file, "fixed"),
        )
    }

    /// The two variants' names in `binding`.
    fn names(binding: Binding) -> (&'static str, &'static str) {
        match binding {
            Binding::Cudarc | Binding::Host => ("broken", "fixed"),
            Binding::CudaRuntimeCpp => ("broken-cpp", "fixed-cpp"),
            Binding::Pytorch => ("broken-py", "fixed-py"),
            Binding::Cust => ("broken-cust", "fixed-cust"),
        }
    }

    /// A symptom that follows from the broken variant's own (see
    /// [`Variant::then_shows`]).
    pub fn then_shows(mut self, symptom: Symptom) -> Pair {
        self.broken = self.broken.then_shows(symptom);
        self
    }

    /// Declares something of both variants: `.both(Variant::alone)`.
    pub fn both(mut self, declare: impl Fn(Variant) -> Variant) -> Pair {
        self.broken = declare(self.broken);
        self.fixed = declare(self.fixed);
        self
    }

    /// Declares something of the broken variant alone:
    /// `.with_broken(|v| v.alone())`.
    pub fn with_broken(mut self, declare: impl FnOnce(Variant) -> Variant) -> Pair {
        self.broken = declare(self.broken);
        self
    }

    /// Declares something of the fixed variant alone (see
    /// [`Pair::with_broken`]).
    pub fn with_fixed(mut self, declare: impl FnOnce(Variant) -> Variant) -> Pair {
        self.fixed = declare(self.fixed);
        self
    }
}

/// What a scenario's list of variants is made of: single variants and
/// [`Pair`]s (see [`variants!`](crate::variants)).
pub trait IntoVariants {
    fn into_variants(self) -> Vec<Variant>;
}

impl IntoVariants for Variant {
    fn into_variants(self) -> Vec<Variant> {
        vec![self]
    }
}

impl IntoVariants for Pair {
    fn into_variants(self) -> Vec<Variant> {
        vec![self.broken, self.fixed]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nothing(_: &mut crate::Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    #[test]
    fn a_pair_is_named_by_its_binding_broken_first() {
        let symptom = Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY");
        let names = |pair: Pair| -> Vec<&'static str> {
            pair.into_variants().iter().map(|v| v.name).collect()
        };
        assert_eq!(
            names(Pair::new(
                symptom.clone(),
                Program::host(nothing),
                Program::host(nothing)
            )),
            ["broken", "fixed"]
        );
        let cust = Pair::new(
            symptom.clone(),
            Program::cust("broken"),
            Program::cust("fixed"),
        );
        assert_eq!(names(cust), ["broken-cust", "fixed-cust"]);
        let py = Pair::pytorch("python/x.py", symptom.clone())
            .then_shows(Symptom::cuda_error("later"))
            .both(Variant::alone);
        assert_eq!(py.broken.name, "broken-py");
        assert_eq!(py.broken.expect, Expect::Fails(symptom));
        assert_eq!(py.broken.then_shows.len(), 1);
        assert!(py.fixed.then_shows.is_empty());
        assert_eq!(py.fixed.expect, Expect::Clean);
        assert!(py.broken.alone && py.fixed.alone);
        assert!(matches!(
            py.fixed.runner,
            Runner::Python {
                function: "fixed",
                ..
            }
        ));
        let apart = Pair::new(
            Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY"),
            Program::cust("broken"),
            Program::cust("fixed"),
        )
        .with_broken(Variant::alone)
        .with_fixed(|v| v.shares_gpu());
        assert!(apart.broken.alone && !apart.broken.shares);
        assert!(apart.fixed.shares && !apart.fixed.alone);
    }

    #[test]
    #[should_panic(expected = "one binding")]
    fn a_pair_of_two_bindings_is_refused() {
        Pair::new(
            Symptom::cuda_error("x"),
            Program::cust("broken"),
            Program::host(nothing),
        );
    }

    #[test]
    fn two_parts_make_each_verdict() {
        use ClaimVerdict::*;
        let of = ClaimVerdict::of_two_parts;
        assert_eq!(of(Some(true), Some(true)), Confirmed);
        assert_eq!(of(Some(false), Some(false)), Refuted);
        assert_eq!(of(Some(true), Some(false)), Partly);
        assert_eq!(of(Some(false), Some(true)), Partly);
        assert_eq!(of(None, Some(true)), Undecided);
        assert_eq!(of(Some(true), None), Undecided);
    }

    #[test]
    fn an_effect_absent_refutes_whatever_else_was_read() {
        use ClaimVerdict::*;
        let of = ClaimVerdict::of_an_effect;
        assert_eq!(of(Some(true), Some(true)), Confirmed);
        assert_eq!(of(Some(true), Some(false)), Partly);
        assert_eq!(of(Some(false), Some(true)), Refuted);
        assert_eq!(of(Some(false), None), Refuted);
        assert_eq!(of(Some(true), None), Undecided);
        assert_eq!(of(None, Some(true)), Undecided);
    }

    #[test]
    fn one_part_seen_not_to_hold_decides_whatever_the_others() {
        use ClaimVerdict::*;
        let all = ClaimVerdict::confirmed_if_all;
        assert_eq!(all([Some(true), Some(true)]), Confirmed);
        assert_eq!(all([Some(false), None]), Refuted);
        assert_eq!(all([None, Some(false)]), Refuted);
        assert_eq!(all([Some(true), None]), Undecided);
        let all = ClaimVerdict::refuted_if_all;
        assert_eq!(all([Some(true), Some(true)]), Refuted);
        assert_eq!(all([Some(true), Some(false)]), Confirmed);
        assert_eq!(all([None, Some(true)]), Undecided);
    }

    #[test]
    fn a_run_that_missed_the_condition_decides_nothing() {
        use ClaimVerdict::*;
        assert_eq!(ClaimVerdict::provided(true, Refuted), Refuted);
        assert_eq!(ClaimVerdict::provided(false, Confirmed), Undecided);
    }

    fn scenario(requires: &'static [Requirement], variants: Vec<Variant>) -> Scenario {
        Scenario::test_only("s", requires, variants)
    }

    #[test]
    fn a_report_links_to_its_thread_and_a_malformed_id_to_nothing() {
        let report = |id| Report { id, shows: "" };
        assert_eq!(
            report("chelsea0x3b/cudarc#274").url().as_deref(),
            Some("https://github.com/chelsea0x3b/cudarc/issues/274")
        );
        assert_eq!(report("chelsea0x3b/cudarc").url(), None);
        assert_eq!(report("cudarc#274").url(), None);
        assert_eq!(report("chelsea0x3b/cudarc#x").url(), None);
    }

    fn variant(name: &'static str) -> Variant {
        fn nothing(_: &mut Recorder) -> anyhow::Result<()> {
            Ok(())
        }
        Variant::fixed(name, Program::host(nothing as VariantFn))
    }

    #[test]
    fn a_variant_declared_to_share_runs_beside_others_where_its_scenario_runs_alone() {
        let s = scenario(
            Requirement::GPU_FILLED,
            vec![variant("full"), variant("small").shares_gpu()],
        );
        assert!(s.runs_alone(&s.variants[0]));
        assert!(!s.runs_alone(&s.variants[1]));
        assert!(s.runs_alone_under_sanitizer(&s.variants[0]));
        assert!(!s.runs_alone_under_sanitizer(&s.variants[1]));
    }

    #[test]
    fn a_variant_that_faults_the_device_runs_alone_even_where_it_holds_memory() {
        let s = scenario(
            Requirement::GPU,
            vec![
                variant("fault").faults_device(),
                variant("big-fault").holds_memory(1).faults_device(),
                variant("light"),
            ],
        );
        assert!(s.runs_alone(&s.variants[0]));
        assert!(!s.holds_within(&s.variants[1], u64::MAX));
        assert!(!s.runs_alone(&s.variants[2]));
    }

    #[test]
    fn a_variant_that_holds_much_memory_shares_only_a_gpu_with_room_for_it_and_its_neighbours() {
        let need = 60u64 << 30;
        let s = scenario(
            Requirement::GPU,
            vec![variant("leak").holds_memory(need), variant("light")],
        );
        let (leak, light) = (&s.variants[0], &s.variants[1]);
        assert!(s.runs_alone(leak));
        assert!(!s.runs_alone(light));
        assert!(s.holds_within(leak, need + NEIGHBOURS_ROOM));
        assert!(!s.holds_within(leak, need + NEIGHBOURS_ROOM - 1));
        assert!(!s.holds_within(light, u64::MAX));
        assert!(!s.runs_alone_under_sanitizer(leak));
        // A scenario that needs the whole GPU keeps it whatever its variant holds.
        let s = scenario(
            Requirement::GPU_ALONE,
            vec![variant("leak").holds_memory(1)],
        );
        assert!(!s.holds_within(&s.variants[0], u64::MAX));
    }

    #[test]
    fn a_pair_trial_has_its_gpus_to_itself_wherever_it_runs() {
        let s = scenario(
            Requirement::GPU_PAIR,
            vec![
                variant("broken"),
                variant("fixed").shares_gpu().holds_memory(1),
            ],
        );
        assert!(s.needs_pair());
        for v in &s.variants {
            assert!(s.runs_alone(v), "{}", v.name);
            assert!(s.runs_alone_under_sanitizer(v), "{}", v.name);
            assert!(!s.holds_within(v, u64::MAX), "{}", v.name);
        }
        assert!(!scenario(Requirement::GPU_ALONE, vec![]).needs_pair());
    }

    #[test]
    fn a_small_reduced_form_shares_only_under_the_sanitizer() {
        let s = scenario(
            Requirement::GPU_FILLED,
            vec![variant("v").small_when_reduced()],
        );
        assert!(s.runs_alone(&s.variants[0]));
        assert!(!s.runs_alone_under_sanitizer(&s.variants[0]));
        // A scenario that only reads free memory shares under the tool, and
        // so does a variant that runs alone for what it reads or times; in a
        // scenario that fills the GPU, only a small reduced form shares.
        let s = scenario(
            Requirement::GPU_ALONE,
            vec![variant("v"), variant("w").alone()],
        );
        assert!(s.runs_alone(&s.variants[0]));
        assert!(s.runs_alone(&s.variants[1]));
        assert!(!s.runs_alone_under_sanitizer(&s.variants[0]));
        assert!(!s.runs_alone_under_sanitizer(&s.variants[1]));
        let s = scenario(Requirement::GPU, vec![variant("w").alone()]);
        assert!(!s.runs_alone_under_sanitizer(&s.variants[0]));
        let s = scenario(
            Requirement::GPU_FILLED,
            vec![
                variant("v").alone(),
                variant("w").alone().small_when_reduced(),
            ],
        );
        assert!(s.runs_alone_under_sanitizer(&s.variants[0]));
        assert!(!s.runs_alone_under_sanitizer(&s.variants[1]));
    }
}
