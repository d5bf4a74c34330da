//! `no-visible-device`: the job sets CUDA_VISIBLE_DEVICES itself (a script's
//! `os.environ["CUDA_VISIBLE_DEVICES"] = "1"`, a launcher's
//! `CUDA_VISIBLE_DEVICES=$GPU` with `$GPU` unset, an invalid entry ahead of
//! the GPU) to a value that names no GPU the machine has. CUDA then sees no
//! GPU at all: "no CUDA-capable device is detected" (cudaErrorNoDevice,
//! CUDA_ERROR_NO_DEVICE), PyTorch's "No CUDA GPUs are available". The driver
//! and the GPU are fine; the same program with a GPU the launcher gave runs.
//! Every variant names only the GPU the harness gave it, or none.

use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use casebook_model::pytorch;
use cudarc::driver::result;

mod broken;
mod fixed;

casebook_model::case_modules!();

const FILE: &str = "python/visible.py";

casebook_model::scenario!(Scenario {
    title: "No CUDA GPUs are available / no CUDA-capable device is detected (CUDA_VISIBLE_DEVICES names no GPU)",
    cause: "The job sets CUDA_VISIBLE_DEVICES itself (a script's export CUDA_VISIBLE_DEVICES=2 \
            or os.environ line, a launcher's $GPU left empty) to a value that names no GPU \
            the machine has, or puts an invalid entry ahead of the GPU. CUDA then sees no \
            GPU at all, though the driver and the GPU are fine.",
    fix: "Remove the script's own CUDA_VISIBLE_DEVICES line and let the launcher choose, or \
          name a GPU that nvidia-smi -L lists (its index or UUID), with no invalid entry \
          before it.",
    symptoms: &[
        "an error on the first call",
        "no CUDA-capable device is detected",
        "torch.cuda.is_available() is False",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        Pair::pytorch(FILE, Symptom::cuda_error(pytorch::NO_GPUS))
            .then_shows(Symptom::check_failed(RAN)),
        // What cuInit returns where CUDA sees no GPU.
        cudarc_pair!(Symptom::cuda_error(driver::NO_DEVICE)).then_shows(Symptom::check_failed(RAN)),
        // What the runtime returns for it ("no CUDA-capable device is detected").
        cpp_pair!(Symptom::cuda_error(runtime::NO_DEVICE)).then_shows(Symptom::check_failed(RAN)),
        Variant::broken(
            "invalid-first-cpp",
            Symptom::cuda_error(runtime::NO_DEVICE),
            cpp::invalid_first,
        )
        .then_shows(Symptom::check_failed(RAN)),
        Variant::contrast_clean("invalid-last-cpp", cpp::invalid_last).one_change(
            "invalid-first-cpp",
            "where the invalid index stands in CUDA_VISIBLE_DEVICES: ahead of the GPU there, \
             after it here",
            "return drive(r, true);",
            "return drive(r, false);",
        ),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "thuml/Time-Series-Library#10",
        shows: "`RuntimeError: No CUDA GPUs are available` with `torch.cuda.is_available()` \
                False on a one-GPU machine; the reporter resolved it by removing \
                `export CUDA_VISIBLE_DEVICES=2` from the script.",
    },
    Report {
        id: "Grace9994/CoMoSVC#6",
        shows: "`RuntimeError: No CUDA GPUs are available` until the line \
                `os.environ[\"CUDA_VISIBLE_DEVICES\"]='1'` in train.py is commented out.",
    },
    Report {
        id: "slczgwh/REDN#5",
        shows: "`cuda runtime error (100) : no CUDA-capable device is detected`: the example \
                set CUDA_VISIBLE_DEVICES to GPU 2 or 3 on a machine with fewer GPUs.",
    },
    Report {
        id: "kuku-sichuan/FPN_Faster_RCNN#3",
        shows: "`failed call to cuInit: CUDA_ERROR_NO_DEVICE`, solved by changing train.py's \
                `os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"` to `\"0\"`.",
    },
];

static VISIBLE_DEVICES_DOC: Passage = Passage {
    document: "CUDA Programming Guide, CUDA Environment Variables",
    section: "5.2.1.1. CUDA_VISIBLE_DEVICES",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
    text: "If the variable is set to an empty string, no GPU devices are visible. […] If an \
           invalid index is encountered, only devices with indices that appear before the \
           invalid index in the list are visible. For example, setting \
           CUDA_VISIBLE_DEVICES=0,2,-1,1 makes devices 0 and 2 visible, while device 1 is not \
           visible because it appears after the invalid index -1.",
};

/// How many GPUs the machine has, as nvidia-smi numbers them (NVML reads
/// them all, whatever CUDA_VISIBLE_DEVICES says).
pub(crate) fn machine_gpus() -> anyhow::Result<u32> {
    Ok(nvml_wrapper::Nvml::init()?.device_count()?)
}

/// The GPUs the launcher gave this process, as it named them (the harness
/// names one by UUID), or every index where it named none.
pub(crate) fn launcher_gpus() -> anyhow::Result<Vec<String>> {
    match std::env::var("CUDA_VISIBLE_DEVICES") {
        Ok(given) if !given.is_empty() => {
            Ok(given.split(',').map(|e| e.trim().to_owned()).collect())
        }
        _ => Ok((0..machine_gpus()?).map(|i| i.to_string()).collect()),
    }
}

/// Sets CUDA_VISIBLE_DEVICES in this process, as the job's script does,
/// before its first CUDA call.
pub(crate) fn set_visible(value: &str) {
    // SAFETY: set before the first CUDA call, while this process has one
    // thread; the driver reads it when it initialises.
    unsafe { std::env::set_var("CUDA_VISIBLE_DEVICES", value) };
}

/// The job's work: start CUDA, count the GPUs it sees, write a buffer on
/// the first. Nothing runs where CUDA sees none.
pub(crate) fn work(rec: &mut Recorder) -> anyhow::Result<()> {
    let ran = (|| -> anyhow::Result<()> {
        let started = rec.step("cuInit", result::init());
        let seen = match started {
            Ok(()) => rec.step("cuDeviceGetCount", result::device::get_count())?,
            Err(_) => 0,
        };
        rec.measure(DEVICES_SEEN, f64::from(seen));
        started?;
        let device = rec.step("cuDeviceGet(0)", result::device::get(0))?;
        casebook_driver::device::small_job(rec, device)?;
        Ok(())
    })()
    .is_ok();
    rec.check(RAN, ran);
    Ok(())
}

/// Whether CUDA saw the GPU: the count it returned, 0 where it returned an
/// error. `None` where the count was not recorded.
fn saw_the_gpu(o: &Outcome) -> Option<bool> {
    o.measure(DEVICES_SEEN).map(|seen| seen >= 1.0)
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-visible-devices-empty-hides-all",
        source: Source::Nvidia(&VISIBLE_DEVICES_DOC),
        quote: "If the variable is set to an empty string, no GPU devices are visible.",
        judged_by: "broken-cpp",
        control: Control::Run("fixed-cpp"),
        // CUDA_VISIBLE_DEVICES empty: cudaGetDeviceCount sees no GPU and
        // says cudaErrorNoDevice (confirmed), or sees the GPU (refuted).
        // fixed-cpp, the same program with the launcher's GPU named, is the
        // control, in which the GPU is seen.
        judge: |o: &Outcome| match (saw_the_gpu(o), o.first_error_is(runtime::NO_DEVICE)) {
            (Some(false), Some(true)) => ClaimVerdict::Confirmed,
            (Some(true), _) => ClaimVerdict::Refuted,
            (Some(false), _) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-visible-devices-invalid-index-hides-the-rest",
        source: Source::Nvidia(&VISIBLE_DEVICES_DOC),
        quote: "If an invalid index is encountered, only devices with indices that appear before \
                the invalid index in the list are visible.",
        judged_by: "invalid-first-cpp",
        control: Control::Impossible(
            "the passage predicts, for every list, how many devices a run sees: those listed \
             before the invalid index; a run reading refuted would need a driver that breaks the \
             rule, and no list is one on a driver that keeps it. What shows that the count could \
             read otherwise: the same list with the GPU ahead of the invalid index \
             (invalid-last-cpp, one change: the order) sees the GPU, and this one, the GPU after \
             it, sees none; each count is what the rule predicts for its list.",
        ),
        // `-1,<the GPU>`: the devices seen against the rule's prediction
        // for the list (the GPUs listed before the invalid index, none
        // here). Equal: confirmed; different: refuted. invalid-last-cpp,
        // the GPU ahead of the same invalid index, sees the GPU, as the rule
        // predicts for its list: the invalid entry hides what follows it,
        // not the whole list.
        judge: |o: &Outcome| match (
            o.measure(DEVICES_SEEN),
            o.measure(GPUS_LISTED_BEFORE_THE_INVALID_INDEX),
        ) {
            (Some(seen), Some(predicted)) => ClaimVerdict::confirmed_if(Some(seen == predicted)),
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(first: &str, seen: f64) -> Outcome {
        Outcome::empty()
            .with_step("cudaGetDeviceCount", first)
            .with_measure(DEVICES_SEEN, seen)
    }

    #[test]
    fn the_empty_string_claim_turns_on_the_count() {
        let judge = CLAIMS[0].judge;
        assert_eq!(
            judge(&outcome(runtime::NO_DEVICE, 0.0)),
            ClaimVerdict::Confirmed
        );
        assert_eq!(judge(&outcome("cudaSuccess", 1.0)), ClaimVerdict::Refuted);
        assert_eq!(
            judge(&outcome("cudaErrorInsufficientDriver", 0.0)),
            ClaimVerdict::Partly
        );
        assert_eq!(judge(&Outcome::empty()), ClaimVerdict::Undecided);
    }

    #[test]
    fn the_invalid_index_claim_compares_the_count_with_the_list() {
        let judge = CLAIMS[1].judge;
        let listed = |first, seen, before| {
            outcome(first, seen).with_measure(GPUS_LISTED_BEFORE_THE_INVALID_INDEX, before)
        };
        // -1 first: none seen, none listed before it.
        assert_eq!(
            judge(&listed(runtime::NO_DEVICE, 0.0, 0.0)),
            ClaimVerdict::Confirmed
        );
        // The GPU first: seen, as listed before -1.
        assert_eq!(
            judge(&listed("cudaSuccess", 1.0, 1.0)),
            ClaimVerdict::Confirmed
        );
        // The GPU seen though listed after -1, or hidden though listed before.
        assert_eq!(
            judge(&listed("cudaSuccess", 1.0, 0.0)),
            ClaimVerdict::Refuted
        );
        assert_eq!(
            judge(&listed(runtime::NO_DEVICE, 0.0, 1.0)),
            ClaimVerdict::Refuted
        );
        assert_eq!(
            judge(&outcome(runtime::NO_DEVICE, 0.0)),
            ClaimVerdict::Undecided
        );
    }
}
