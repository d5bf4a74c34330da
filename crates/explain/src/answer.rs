//! What `explain` answers: the errors in the text, the matching cases, and,
//! where none matches, a report a user can file.

use serde::Serialize;

use crate::features::{self, Token};
use crate::index::{Case, Index, RunCommands, RunInfo};
use crate::rank::{Ranked, Ranker};

/// Fragments of errors that the GPU reports after the fact: the call that
/// returns them need not be the one that failed.
pub const ASYNCHRONOUS: &[&str] = &[
    "illegal memory access",
    "device-side assert",
    "misaligned address",
    "unspecified launch failure",
    "illegal instruction",
    "hardware stack error",
    "invalid program counter",
    "cudaerrorinvalidpc",
    "cuda_error_invalid_pc",
    "asynchronously reported",
    "cuda_error_illegal_address",
    "cudaerrorillegaladdress",
    "cuda_error_assert",
    "cudaerrorassert",
    "cuda_error_launch_failed",
    "cudaerrorlaunchfailure",
    "cuda_error_misaligned_address",
    "cudaerrormisalignedaddress",
];

pub const ASYNCHRONOUS_HINT: &str = "The GPU reports this error after the fact: the call that \
     returned it need not be the one that failed. Run again with CUDA_LAUNCH_BLOCKING=1 (every \
     launch then waits for its kernel, so the error comes from the kernel that failed), or under \
     `compute-sanitizer --tool memcheck`, which names the kernel, the thread and the address.";

/// Said where the first matches tie (`{n}`: how many): the text names an
/// error that several cases return in the same words.
pub const TIED_NOTE: &str = "The first {n} cases match this text equally: each is known by this \
     error in these words (its run returned them or users reported them), and the text alone does \
     not tell which one you hit. Their causes differ: read each cause below against what your \
     program does, or paste more of the log (the lines before the error, the output of a run with \
     CUDA_LAUNCH_BLOCKING=1). Among them, cases reproduced on a GPU come before known failures; \
     then cases whose own words the text holds (shown among what matched) come first, then those more of whose reports and runs hold these words, then the \
     catalogue's order.";

/// Said where the text is compute-sanitizer's report of an out-of-bounds
/// access and no error of the runtime beside it
/// ([`Ranker::only_an_out_of_bounds_access`]).
pub const OUT_OF_BOUNDS_NOTE: &str = "compute-sanitizer reports an access outside every \
     allocation: a kernel read or wrote out of bounds (the report's `at` line names it, \
     `CUDA_LAUNCH_BLOCKING=1` or `-lineinfo` the line), a bug of its own indexing, which no case \
     reproduces as such. What follows such a fault is sticky-error's: the context is lost, and \
     every later call in the process fails with \"an illegal memory access was encountered\"; \
     index-overflow is one way an index runs past its allocation (a 32-bit index past 2^31 \
     elements).";

/// Said where the text names an error and the first match's texts do not
/// (`{names}`: the names as the text wrote them).
pub const UNNAMED_NOTE: &str = "Your text names {names}, which none of the cases below returned or \
     was reported with: they match only words around it, so read their causes as guesses, not as \
     a diagnosis.";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The errors the text shows, in order; the first is the likely cause.
    pub errors: Vec<String>,
    /// Whether the first error is one the GPU reports asynchronously.
    pub asynchronous: bool,
    /// Best first; empty when nothing matches.
    pub matches: Vec<Match>,
    /// How many matches, from the first, score the same as the first: two
    /// or more, and the text alone does not tell those cases apart.
    pub tied: usize,
    /// The error names the text holds, as it wrote them, where the first
    /// match's texts hold none of them ([`UNNAMED_NOTE`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmatched_names: Vec<String>,
    /// The first match matched on words of its description, not on an
    /// error text ([`crate::description::DESCRIPTION_NOTE`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_description: bool,
    /// The text is compute-sanitizer's report of an out-of-bounds access,
    /// which no case reproduces ([`OUT_OF_BOUNDS_NOTE`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub out_of_bounds: bool,
    /// Where no reproduced case matches: a report to file, prefilled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    pub scenario: String,
    pub reproduced: bool,
    pub title: String,
    pub matched: Vec<String>,
    pub score: f64,
    pub cause: String,
    pub fix: String,
    pub page: Option<String>,
    pub run: Option<RunCommands>,
    /// Where the case was reproduced: GPU, driver, CUDA, PyTorch where its
    /// variants use it, commit.
    pub reproduced_on: Option<RunInfo>,
    pub reports: Vec<String>,
    /// For a case not reproduced here: why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not_here: Option<String>,
}

pub fn explain(index: &Index, text: &str) -> Answer {
    let ranker = Ranker::new(index);
    let found = ranker.errors(text);
    let ranked = ranker.rank_with(text, &found);
    let tied = ranked.first().map_or(0, |best| {
        ranked
            .iter()
            .take_while(|r| {
                crate::rank::score_key(r.score) == crate::rank::score_key(best.score)
                    && r.names_the_error == best.names_the_error
                    && r.by_calls == best.by_calls
                    && r.by_description == best.by_description
            })
            .count()
    });
    let unmatched_names = if ranked.first().is_some_and(|r| !r.names_the_error) {
        error_names(text)
    } else {
        Vec::new()
    };
    let by_description = ranked.first().is_some_and(|r| r.by_description);
    let matches: Vec<Match> = ranked.into_iter().map(to_match).collect();
    let errors: Vec<String> = found.into_iter().map(|e| e.line).collect();
    let first = errors.first().map(|l| l.to_ascii_lowercase());
    let asynchronous = first.is_some_and(|l| ASYNCHRONOUS.iter().any(|a| l.contains(a)));
    let report = (!matches.iter().any(|m| m.reproduced)).then(|| prefilled_report(text));
    Answer {
        errors,
        asynchronous,
        matches,
        tied,
        unmatched_names,
        by_description,
        out_of_bounds: ranker.only_an_out_of_bounds_access(text),
        report,
    }
}

/// The error names of `text`, each once, as it wrote them.
fn error_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in features::tokens(text) {
        if let Token::Word(w) = t
            && features::is_identifier(&w)
            && features::is_error_name(&format!("id:{}", w.to_ascii_lowercase()))
            && !out.contains(&w)
        {
            out.push(w);
        }
    }
    out
}

fn to_match(r: Ranked) -> Match {
    let c: &Case = r.case;
    let reproduced_on = c.reproduced_on.clone().map(|mut run| {
        if !c.pytorch {
            run.pytorch = None;
        }
        run
    });
    Match {
        scenario: c.scenario.clone(),
        reproduced: c.reproduced,
        title: c.title.clone(),
        matched: r.matched,
        score: (r.score * 100.0).round() / 100.0,
        cause: c.cause.clone(),
        fix: c.fix.clone(),
        page: c.page.clone(),
        run: c.run.clone(),
        reproduced_on,
        reports: c.reports.clone(),
        why_not_here: c.why_not_here.clone(),
    }
}

/// The text as the matcher read it (frames dropped, figures and paths as
/// `…`), with the versions the log states: what an issue about a failure
/// the casebook lacks should hold.
pub fn prefilled_report(text: &str) -> String {
    let mut lines = Vec::new();
    for line in features::without_frames(text) {
        let words: Vec<String> = features::line_tokens(line)
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w,
                Token::Break => "…".to_owned(),
            })
            .collect();
        let mut joined = words.join(" ");
        while joined.contains("… …") {
            joined = joined.replace("… …", "…");
        }
        if !joined.is_empty() {
            lines.push(joined);
        }
    }
    let mut out = String::from("### Error text (figures and paths removed)\n\n```\n");
    out.push_str(&lines.join("\n"));
    out.push_str("\n```\n");
    let versions = versions(text);
    if !versions.is_empty() {
        out.push_str("\n### Versions the log shows\n\n");
        for v in versions {
            out.push_str(&format!("- {v}\n"));
        }
    }
    out.push_str(
        "\n### What is missing\n\nNo reproduced case of cuda-casebook matches this text. \
         What the program did before the error, and the smallest code that shows it, would \
         let a case reproduce it.\n",
    );
    out
}

/// Lines of a log that state a version: PyTorch's `collect_env`,
/// nvidia-smi's header, nvcc's banner.
fn versions(text: &str) -> Vec<String> {
    const MARKERS: &[&str] = &[
        "PyTorch version:",
        "CUDA used to build PyTorch:",
        "Is CUDA available:",
        "CUDA runtime version:",
        "GPU models and configuration:",
        "Nvidia driver version:",
        "cuDNN version:",
        "Driver Version:",
        "CUDA Version:",
        "Cuda compilation tools, release",
        "torch==",
        "torch.__version__",
    ];
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim().trim_matches('|').trim();
        if MARKERS.iter().any(|m| t.contains(m)) && !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::LazyLock;

    #[test]
    fn a_line_that_only_names_a_later_device_is_no_error_but_counts() {
        let text = "RuntimeError: CUDA error: an illegal memory access was encountered\ndevice = torch.device('cuda:1')";
        explained_as(text, "wrong-current-device");
    }

    #[test]
    fn the_report_keeps_words_and_versions_and_drops_figures() {
        let text = "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |\nRuntimeError: CUDA error: invalid device ordinal at /x/y.cpp:12";
        let r = prefilled_report(text);
        assert!(r.contains("RuntimeError CUDA error invalid device ordinal at …"));
        assert!(r.contains("Driver Version: 550.54.15"));
        assert!(!r.contains("/x/y.cpp"));
    }

    #[test]
    fn a_two_word_message_is_found_inside_another_program_s_sentence() {
        // ctranslate2 wraps the runtime's "initialization error" in a
        // sentence of its own; the run returned the two words alone.
        let answer = explained("RuntimeError: CUDA failed with error initialization error");
        assert_first(&answer, "fork-after-init");
        assert!(
            answer.matches[0]
                .matched
                .contains(&"initialization error".to_owned()),
            "{:?}",
            answer.matches[0].matched
        );
    }

    #[test]
    fn a_phrase_many_cases_users_write_ties_them_unless_a_case_s_own_word_is_beside_it() {
        // "memory leak" is in the texts of several leaking cases; one holds
        // "memory leak caused", which tells it from none of the others.
        let leak = "Memory leak caused by the preprocessing step\nAfter a few hours the job dies. \
                    I suspect a memory leak in the resize function.";
        let answer = explained(leak);
        assert!(answer.tied >= 2, "{:?}", answer.matches);
        for m in &answer.matches[..answer.tied] {
            assert!(
                m.matched
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case("memory leak")),
                "{:?}",
                m.matched
            );
        }
        // Beside the case's own words ("appending", "loss") it tells that case.
        let loss = "Memory leak caused by appending the loss to a list\nGPU memory keeps growing \
                    every epoch.";
        let answer = explained(loss);
        assert_eq!(answer.tied, 1);
        assert_first(&answer, "kept-loss-graphs");
    }

    #[test]
    fn an_error_s_name_outranks_the_words_a_framework_wraps_it_in() {
        // Numba's frame ("Call to … results in") is also in texts users
        // paste for a context on the wrong thread; the name is the error.
        let numba = "numba.cuda.cudadrv.driver.CudaAPIError: [702] Call to cuMemcpyDtoH results in \
                     CUDA_ERROR_LAUNCH_TIMEOUT";
        let answer = explained(numba);
        assert_first(&answer, "launch-timeout");
        assert!(answer.unmatched_names.is_empty());
        // A name no case holds is said, and the matches are guesses.
        let unknown = "numba.cuda.cudadrv.driver.CudaAPIError: [999] Call to cuMemcpyDtoH results \
                       in CUDA_ERROR_NOT_A_REAL_ONE";
        let answer = explained(unknown);
        assert_first(&answer, "wrong-context-thread");
        assert_eq!(answer.unmatched_names, ["CUDA_ERROR_NOT_A_REAL_ONE"]);
    }

    #[test]
    fn the_letters_of_e_g_are_no_phrase() {
        // A report's "e.g." line shares only "e g" with the cases' texts.
        let text = "kernel launches with 0 grid size\n\ne.g. the code below gets executed even if \
                    n == 0";
        assert!(explained(text).matches.is_empty());
    }

    #[test]
    fn in_a_tie_the_reproduced_cases_come_before_the_known_failures() {
        // "Performance" is a word of a known failure's (faulty-gpu) own;
        // the illegal address ties it with the cases that reproduce it.
        let text = "RuntimeError: CUDA error: an illegal memory access was encountered\n\
                    ptxas warning : Potential Performance Loss: wmma.load.a.sync requires 128-bit \
                    alignment";
        let answer = explained(text);
        let tied = &answer.matches[..answer.tied];
        assert!(
            tied.len() > 1 && tied.iter().any(|m| !m.reproduced),
            "{tied:?}"
        );
        let first_known = tied.iter().position(|m| !m.reproduced).unwrap();
        assert!(
            tied[first_known..].iter().all(|m| !m.reproduced),
            "{tied:?}"
        );
        assert!(answer.matches[0].reproduced);
    }

    #[test]
    fn a_check_against_success_names_no_error() {
        // glog's CHECK frame around an error no case reproduces.
        let text = "F1119 math_functions.cu:79] Check failed: error == cudaSuccess (999 vs. 0)  \
                    a made-up failure of the machine";
        let answer = explained(text);
        assert!(
            answer.matches.iter().all(|m| !m.reproduced),
            "{:?}",
            answer
                .matches
                .iter()
                .map(|m| &m.scenario)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn an_nccl_error_and_its_last_error_are_one_error() {
        let log = "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n[rank1]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n[rank1]: Last error:\n[rank1]: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000";
        explained_as(log, "nccl-duplicate-gpu");
    }

    #[test]
    fn warnings_information_and_tables_are_passed_over_for_the_first_error() {
        // A whole log: nvidia-smi's table, a deprecation warning with its
        // code line, a C++ warning, settings, then the error.
        let log = "\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
/opt/conda/lib/python3.10/site-packages/torch/functional.py:504: UserWarning: torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.
  return _VF.meshgrid(tensors, **kwargs)  # type: ignore[attr-defined]
[W socket.cpp:663] [c10d] The client socket has timed out after 60s while trying to connect to (127.0.0.1, 29500).
CUDA Runtime version: 12.1.105
GPU memory: 79.15 GiB
Traceback (most recent call last):
  File \"train.py\", line 88, in <module>
    loss.backward()
RuntimeError: CUDA error: misaligned address
";
        let answer = explained(log);
        assert_eq!(
            answer.errors,
            ["RuntimeError: CUDA error: misaligned address"],
            "{:?}",
            answer.errors
        );
        assert_first(&answer, "misaligned-address");
        // A warning's own lines belong to it: PyTorch's sm_XX warning spans
        // several, and the error after it is the first.
        let log = "\
/usr/lib/python3/dist-packages/torch/cuda/__init__.py:145: UserWarning:
NVIDIA GeForce RTX 4090 with CUDA capability sm_89 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.
If you want to use the NVIDIA GeForce RTX 4090 GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/

  warnings.warn(incompatible_device_warn.format(device_name, capability, \" \".join(arch_list), device_name))
RuntimeError: CUDA error: no kernel image is available for execution on the device
";
        let answer = explained(log);
        assert_one_error(&answer);
        assert!(answer.errors[0].contains("no kernel image"));
        assert_first(&answer, "arch-mismatch");
        // TensorFlow's levels: the I and W lines inform, the E line is the
        // error.
        let log = "\
2021-03-02 10:11:12.000001: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened dynamic library libcudart.so.11.0
2021-03-02 10:11:12.000002: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1720] Found device 0 with properties: pciBusID: 0000:3b:00.0 name: Tesla V100
2021-03-02 10:11:13.000003: E tensorflow/stream_executor/cuda/cuda_driver.cc:328] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected
";
        let answer = explained(log);
        assert_one_error(&answer);
        assert!(answer.errors[0].contains(": E tensorflow"));
    }

    #[test]
    fn a_warning_that_reports_an_error_or_stands_alone_is_still_an_error() {
        // PyTorch warns that CUDA could not initialise, then raises: the
        // warning names the error, and it came first.
        let log = "\
[W CUDAFunctions.cpp:109] Warning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero. (function operator())
RuntimeError: No CUDA GPUs are available
";
        let answer = explained(log);
        assert_eq!(answer.errors.len(), 2, "{:?}", answer.errors);
        assert!(answer.errors[0].contains("CUDA unknown error"));
        // A text of warnings alone: they are what it shows.
        let answer = explained(
            "2019-07-11 12:42:11.226602: W tensorflow/core/common_runtime/bfc_allocator.cc:314] \
             Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB",
        );
        assert_one_error(&answer);
        assert!(!answer.matches.is_empty());
    }

    #[test]
    fn information_lines_give_no_phrases_beside_an_error() {
        // glog's information lines say what ran; the failed check is the
        // error, and the driver's version in them names no case.
        let log = "\
I1127 10:13:38.892240 12760 caffe.cpp:456] CuDNN version: 7005
I1127 10:13:38.892247 12760 caffe.cpp:459] CUDA driver version: 9000
F1127 10:13:40.100000 12760 parallel.cpp:60] Check failed: result == ncclSuccess (2 vs. 0)  system error
";
        let answer = explained(log);
        assert_one_error(&answer);
        assert!(answer.errors[0].contains("Check failed"));
        assert!(
            answer
                .matches
                .iter()
                .all(|m| m.scenario != "driver-too-old"),
            "{:?}",
            first_scenarios(&answer)
        );
        // A table's cells are data: a process nvidia-smi cannot name is
        // no CUDA unknown error.
        let answer = explained(
            "|    0     31794    C   Unknown Error                                 5371MiB |",
        );
        assert!(answer.matches.is_empty(), "{:?}", first_scenarios(&answer));
    }

    #[test]
    fn a_function_s_name_alone_makes_no_match() {
        // `cublas_gemm` is in a case's texts, as where its program was: a
        // crash in it says nothing of what failed.
        let answer = explained("the program crashes inside cublas_gemm after an upgrade");
        assert!(answer.matches.is_empty(), "{:?}", first_scenarios(&answer));
    }

    fn first_scenarios(answer: &Answer) -> Vec<(&str, bool)> {
        answer
            .matches
            .iter()
            .take(3)
            .map(|m| (m.scenario.as_str(), m.reproduced))
            .collect()
    }

    /// The answer to `text` from the index this crate embeds.
    fn explained(text: &str) -> Answer {
        static INDEX: LazyLock<Index> = LazyLock::new(|| Index::embedded().unwrap());
        explain(&INDEX, text)
    }

    /// Fails unless the answer to `text` finds one error and gives
    /// `expected` first.
    fn explained_as(text: &str, expected: &str) {
        let answer = explained(text);
        assert_one_error(&answer);
        assert_first(&answer, expected);
    }

    /// Fails, naming them, unless the answer found one error.
    fn assert_one_error(answer: &Answer) {
        assert_eq!(answer.errors.len(), 1, "{:?}", answer.errors);
    }

    /// Fails, naming the first three answers, unless `expected` is first.
    fn assert_first(answer: &Answer, expected: &str) {
        assert_eq!(
            answer.matches[0].scenario,
            expected,
            "{:?}",
            first_scenarios(answer)
        );
    }

    #[test]
    fn a_case_s_own_words_order_the_cases_a_bare_out_of_memory_ties() {
        let scenarios = |a: &Answer| {
            a.matches
                .iter()
                .map(|m| m.scenario.clone())
                .collect::<Vec<_>>()
        };
        let losses = explained(
            "RuntimeError: CUDA error: out of memory\nafter some steps; I append each step's loss to a list to plot the graph",
        );
        assert!(losses.tied > 1, "{:?}", scenarios(&losses));
        assert_first(&losses, "kept-loss-graphs");
        assert!(
            losses.matches[0]
                .matched
                .iter()
                .any(|m| m.contains("loss") && m.contains("graph")),
            "{:?}",
            losses.matches[0].matched
        );
        let retry = explained(
            "RuntimeError: CUDA error: out of memory\nI catch it and retry with a smaller batch, and every retry fails",
        );
        assert!(retry.tied > 1, "{:?}", scenarios(&retry));
        assert_first(&retry, "unhandled-oom-path");
    }

    #[test]
    fn the_first_gpu_holding_memory_for_every_rank_is_found_in_other_words() {
        let answer = explained(
            "With four GPUs, every rank also puts some memory on GPU 0 beside its own GPU",
        );
        assert_first(&answer, "contexts-on-gpu-zero");
    }

    #[test]
    fn a_sanitizer_s_out_of_bounds_report_alone_names_no_case() {
        let report = "\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 8 bytes
=========     at scatter(const int *, float *, int)+0x4bd0
=========     by thread (16,0,0) in block (0,0,0)
=========     Access at 0x0 is out of bounds
=========     and is 140229602181120 bytes before the nearest allocation at 0x7f89bfa00000 of size 1020 bytes
";
        let answer = explained(report);
        assert!(answer.matches.is_empty(), "{:?}", first_scenarios(&answer));
        assert!(answer.out_of_bounds && answer.report.is_some());
        // With the runtime's error after it, the fault's aftermath is a case.
        let answer = explained(&format!(
            "{report}RuntimeError: CUDA error: an illegal memory access was encountered\n"
        ));
        assert!(!answer.out_of_bounds);
        assert!(
            answer.matches.iter().any(|m| m.scenario == "sticky-error"),
            "{:?}",
            first_scenarios(&answer)
        );
    }

    #[test]
    fn an_xid_number_names_the_driver_s_error() {
        // A program's error, then the kernel's log: the Xid number decides,
        // not the frame every Xid report shares.
        let log = "\
CUDA error at kernel.cu:120 code=999(cudaErrorUnknown) \"cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost)\"
Mar  3 04:05:06 gpu7 kernel: [ 8812.331200] NVRM: Xid (PCI:0000:3b:00): 48, pid=2211, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.
";
        let answer = explained(log);
        assert_first(&answer, "ecc-error");
        assert!(answer.matches[0].matched.contains(&"Xid 48".to_owned()));
        let fell = "Mar  3 04:05:06 gpu7 kernel: [ 8812.331200] NVRM: Xid (PCI:0000:3b:00): 79, \
                    pid=2211, name=python3, GPU has fallen off the bus.";
        assert_eq!(explained(fell).matches[0].scenario, "gpu-fell-off-the-bus");
        // An Xid no entry cites matches no entry by the report's frame.
        let other = "Mar  3 04:05:06 gpu7 kernel: [ 8812.331200] NVRM: Xid (PCI:0000:3b:00): 119, \
                     pid='<unknown>', name=<unknown>, Timeout after 6s of waiting for RPC response";
        assert!(
            explained(other)
                .matches
                .iter()
                .all(|m| !["ecc-error", "gpu-fell-off-the-bus"].contains(&m.scenario.as_str())),
            "{:?}",
            first_scenarios(&explained(other))
        );
    }

    #[test]
    fn a_container_without_its_gpu_reaches_the_failure_of_the_container() {
        // TensorFlow in a container started without the GPU's device files.
        let log = "\
2022-05-06 07:08:09.100000: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: UNKNOWN ERROR (34)
2022-05-06 07:08:09.100100: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] no NVIDIA GPU device is present: /dev/nvidia0 does not exist
";
        let answer = explained(log);
        assert_first(&answer, "driver-not-loaded");
        // A container that lost its GPU while it ran.
        let log =
            "$ docker exec -it trainer nvidia-smi\nFailed to initialize NVML: Unknown Error\n";
        let answer = explained(log);
        assert_first(&answer, "container-lost-gpu");
        // The driver and its libraries of different releases stay apart.
        let answer = explained("Failed to initialize NVML: Driver/library version mismatch");
        assert_first(&answer, "driver-library-mismatch");
    }

    #[test]
    fn the_cuda_calls_a_user_names_find_the_case_that_names_them() {
        // Prose with no error's name or message: the calls tell the case.
        let prose = "Host memory keeps growing: the pinned staging buffer from cudaMallocHost \
                     is never freed with cudaFreeHost";
        let answer = explained(prose);
        assert_first(&answer, "host-memory-leak");
        assert!(
            answer.matches[0]
                .matched
                .iter()
                .any(|m| m == "cudaFreeHost"),
            "{:?}",
            answer.matches[0].matched
        );
        // The case's failure is the missing cudaFreeHost: a text that makes
        // the call tells another failure.
        let freed = "RSS stays high: the pinned buffer from cudaMallocHost is released with \
                     cudaFreeHost, but the RSS does not drop";
        assert!(explained(freed).matches.is_empty());
        // One call alone, named by a single case, is no match.
        assert!(explained("a buffer from cudaMallocHost").matches.is_empty());
        // The calls do not reorder the cases the error's words match: the
        // cudaMemcpy that reported the fault, which one of them names,
        // leaves them tied.
        let fault = "CUDA failure 77: an illegal memory access was encountered ; \
                     expr=cudaMemcpy(pArray, Data(), cudaMemcpyDeviceToHost)";
        let answer = explained(fault);
        assert!(answer.tied > 1, "{:?}", first_scenarios(&answer));
    }

    #[test]
    fn the_calls_every_program_makes_match_no_case_alone() {
        // cudaMemcpy is where a kernel's fault surfaces, cudaMalloc where
        // every allocation is made: naming them says which calls ran, not
        // which failure this is.
        let prose = "`device_allocate` calls `cudaMalloc` and then copies the initial value with \
                     `cudaMemcpy`; cuMemAlloc and cuMemFree in the driver's version.";
        assert!(
            explained(prose).matches.is_empty(),
            "{:?}",
            first_scenarios(&explained(prose))
        );
        // Beside an error's words they change nothing of the answer.
        let oom = "cudaMalloc failed: out of memory";
        assert_eq!(
            first_scenarios(&explained(oom)),
            first_scenarios(&explained("CUDA error: out of memory"))
        );
    }

    #[test]
    fn a_debugger_s_or_a_checker_s_stack_overflow_is_the_kernel_s_stack() {
        // cuda-gdb's exception and compute-sanitizer's report say the
        // thread's stack overflowed, whatever the warp or lane.
        for text in [
            "CUDA Exception: Warp Hardware Stack Overflow\nThe exception was triggered at PC 0x555555c86a78",
            "Program received signal CUDA_EXCEPTION_2, Lane User Stack Overflow.",
            "========= Stack overflow",
        ] {
            assert_first(&explained(text), "kernel-stack-overflow");
        }
        // An invalid program counter is a kernel's fault the GPU reports
        // after the fact, as an illegal address is.
        assert!(explained("RuntimeError: CUDA error: invalid program counter").asynchronous);
    }

    #[test]
    fn a_later_device_by_number_reaches_the_ordinal_that_does_not_exist() {
        // cuda:1 on a machine with one GPU is the commonest reason a script
        // names cuda:1: the text alone ties it with the cases of a later GPU.
        let answer = explained("the `cuda:1` in the script should be changed to `DEVICE`");
        assert!(
            answer.matches[..answer.tied]
                .iter()
                .any(|m| m.scenario == "invalid-device-ordinal"),
            "{:?}",
            first_scenarios(&answer)
        );
    }

    #[test]
    fn memory_usage_is_every_memory_report_s_words() {
        let text = "GPU memory usage is very high at the beginning of training.";
        assert!(
            explained(text).matches.is_empty(),
            "{:?}",
            first_scenarios(&explained(text))
        );
        assert!(!features::specific(&["gpu", "memory", "usage"]));
        assert!(features::specific(&["memory", "usage", "grows"]));
    }
}
