//! `junit.xml`: a run for CI systems.

use casebook_report::{Report, Verdict};

/// The run as JUnit XML, for CI systems: one test case per trial, named
/// by its [`casebook_report::TrialId`]; a failed expectation is a failure
/// with its reason.
pub fn junit(report: &Report) -> String {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("cuda-casebook");
    for r in &report.results {
        let status = match r.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Fail => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(r.reason.clone().unwrap_or_default());
                status.set_description(format!("expected {}, observed {}", r.expected, r.observed));
                status
            }
        };
        let mut case = TestCase::new(r.trial().to_string(), status);
        case.set_classname(r.scenario.clone());
        case.set_time(std::time::Duration::from_secs_f64(r.seconds));
        suite.add_test_case(case);
    }
    for skipped in &report.run.skipped {
        let mut status = TestCaseStatus::skipped();
        status.set_message(format!("skipped: {}", skipped.reason));
        let mut case = TestCase::new(skipped.trial.to_string(), status);
        case.set_classname(skipped.trial.scenario.clone());
        suite.add_test_case(case);
    }
    for trial in &report.run.not_run {
        let mut status = TestCaseStatus::skipped();
        status.set_message(format!(
            "not run: the run was interrupted by {}",
            report.run.interrupted.as_deref().unwrap_or("a signal")
        ));
        let mut case = TestCase::new(trial.to_string(), status);
        case.set_classname(trial.scenario.clone());
        suite.add_test_case(case);
    }
    suite.set_time(std::time::Duration::from_secs_f64(report.wall_seconds));
    let mut junit =
        quick_junit::Report::new(format!("cuda-casebook on {}", report.environment.gpu));
    junit.add_test_suite(suite);
    junit.to_string().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use casebook_report::run::fixture::{self, environment};
    use casebook_report::{ResultEntry, Source};

    use super::*;

    fn entry(variant: &str, verdict: Verdict) -> ResultEntry {
        ResultEntry {
            expected: "fails: CUDA_ERROR_OUT_OF_MEMORY".into(),
            observed: "clean".into(),
            verdict,
            reason: (verdict == Verdict::Fail).then(|| "the bug no longer reproduces".into()),
            seconds: 0.5,
            ..fixture::result("missing-free", variant)
        }
    }

    #[test]
    fn junit_has_a_case_per_trial_and_failures_with_their_reason() {
        let env = environment("GPU");
        let report = Report::new(
            Source::default(),
            env,
            vec![
                entry("fixed", Verdict::Pass),
                entry("broken", Verdict::Fail),
            ],
            1.0,
        );
        let xml = junit(&report);
        assert!(xml.contains(r#"name="missing-free::fixed""#), "{xml}");
        assert!(xml.contains(r#"name="missing-free::broken""#), "{xml}");
        assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
        assert!(xml.contains("the bug no longer reproduces"), "{xml}");
        assert_eq!(report.summary.failed, 1);
    }
}
