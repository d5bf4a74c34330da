//! The exit codes of `casebook` and its commands, as one type: each number
//! means one thing whichever command gives it, and the words here are the
//! ones `--help` and the book print. `casebook-explain` and `cargo xtask`,
//! which build without this crate, spell the few they give; a test of each
//! holds them to these.

use std::process::ExitCode;

/// The enum and [`Exit::ALL`] from one list, so that no code can be left
/// out of `ALL`.
macro_rules! exits {
    ($($name:ident = $code:literal,)*) => {
        /// An exit code. The discriminants are the codes, so two variants
        /// cannot share one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Exit {
            $($name = $code,)*
        }

        impl Exit {
            /// Every code, in order.
            pub const ALL: &'static [Exit] = &[$(Exit::$name,)*];
        }
    };
}

exits! {
    Success = 0,
    TrialFailed = 1,
    BadInput = 2,
    NoGpu = 3,
    NoMatch = 4,
    SnapshotsDiffer = 5,
    Io = 6,
    DocsStale = 7,
    NoSanitizer = 8,
    MemoryLeftHeld = 9,
    Interrupted = 10,
    DriverTooOld = 11,
    Flaky = 12,
    LeftByAnEndedRun = 13,
    CannotMerge = 14,
    NoCaseMatches = 15,
    KnownFailureFirst = 16,
}

impl Exit {
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// What it means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Success => "done, and everything held",
            Exit::TrialFailed => {
                "an expectation failed: a trial's, or a fixed variant's under compute-sanitizer"
            }
            Exit::BadInput => {
                "the command line is wrong, or explain's text is empty or its index unreadable"
            }
            Exit::NoGpu => "no GPU or driver",
            Exit::NoMatch => "a filter matched nothing",
            Exit::SnapshotsDiffer => "every expectation held, but snapshots are new or changed",
            Exit::Io => "a report could not be read or written, or a child not started",
            Exit::DocsStale => "a generated page is stale",
            Exit::NoSanitizer => "no compute-sanitizer",
            Exit::MemoryLeftHeld => "device memory was left held after a trial",
            Exit::Interrupted => {
                "interrupted (Ctrl-C, SIGTERM: the partial report is written, unfinished trials \
                 marked not run)"
            }
            Exit::DriverTooOld => "the driver is older than the build needs (CUDA 13.0)",
            Exit::Flaky => "an outcome or a claim's verdict differed between runs",
            Exit::LeftByAnEndedRun => {
                "trials of a run that ended hold GPU memory (each named with the command that \
                 stops it; the trials that need a whole GPU did not run)"
            }
            Exit::CannotMerge => {
                "the reports cannot be merged or compared: of different commits, of uncommitted \
                 changes, a shard given twice or missing, a trial run twice on one machine, or \
                 not a report (the error names the file)"
            }
            Exit::NoCaseMatches => {
                "no case matches the text, reproduced or known (a report to file is printed)"
            }
            Exit::KnownFailureFirst => {
                "the first answer is a known failure that the casebook cannot provoke, not a \
                 reproduced case (its cause and what to check are printed)"
            }
        }
    }

    /// `Exit codes: 0 …; 1 …`, for `codes`: the end of a command's `--help`.
    pub fn help(codes: &[Exit]) -> String {
        let each: Vec<String> = codes
            .iter()
            .map(|e| format!("{} {}", e.code(), e.meaning()))
            .collect();
        format!("Exit codes: {}.", each.join("; "))
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// The commands of `casebook`, as the command line names them.
pub const COMMANDS: &[&str] = &[
    "run-all",
    "bench",
    "reproduce",
    "sanitize",
    "collect",
    "matrix",
    "list",
    "env",
    "docs",
    "explain",
];

impl Exit {
    /// Whether `command` gives this code.
    pub fn given_by(self, command: &str) -> bool {
        // The commands that run trials as run-all does, and with sanitize,
        // those that run anything on the GPU.
        let runs = matches!(command, "run-all" | "bench" | "reproduce");
        let on_gpu = runs || command == "sanitize";
        match self {
            Exit::Success => true,
            Exit::TrialFailed | Exit::SnapshotsDiffer => on_gpu || command == "collect",
            Exit::BadInput | Exit::NoCaseMatches | Exit::KnownFailureFirst => command == "explain",
            Exit::NoGpu => on_gpu || matches!(command, "collect" | "env"),
            Exit::NoMatch => on_gpu || command == "list",
            Exit::Io => on_gpu || matches!(command, "collect" | "matrix" | "docs"),
            Exit::DocsStale => command == "docs",
            Exit::NoSanitizer => command == "sanitize",
            Exit::MemoryLeftHeld | Exit::Interrupted | Exit::LeftByAnEndedRun => runs,
            Exit::DriverTooOld => on_gpu || command == "env",
            Exit::Flaky => command == "reproduce",
            Exit::CannotMerge => matches!(command, "reproduce" | "matrix"),
        }
    }

    /// The commands that give this code, in [`COMMANDS`]' order.
    pub fn commands(self) -> impl Iterator<Item = &'static str> {
        COMMANDS.iter().copied().filter(move |c| self.given_by(c))
    }
}

/// The codes `command` gives, in order.
pub fn of_command(command: &str) -> Vec<Exit> {
    Exit::ALL
        .iter()
        .copied()
        .filter(|e| e.given_by(command))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_holds_every_code_once_from_0_in_order() {
        for (i, exit) in Exit::ALL.iter().enumerate() {
            assert_eq!(usize::from(exit.code()), i, "{exit:?}");
        }
    }

    #[test]
    fn explain_spells_its_codes_as_this_type_has_them() {
        use casebook_explain::cli::exit;
        assert_eq!(exit::NO_CASE_MATCHES, Exit::NoCaseMatches.code());
        assert_eq!(exit::KNOWN_FAILURE_FIRST, Exit::KnownFailureFirst.code());
        assert_eq!(exit::BAD_INPUT, Exit::BadInput.code());
    }

    #[test]
    fn every_code_is_given_by_a_command() {
        for exit in Exit::ALL {
            assert!(exit.commands().next().is_some(), "{exit:?}");
        }
        assert_eq!(
            Exit::help(&of_command("list")),
            "Exit codes: 0 done, and everything held; 4 a filter matched nothing."
        );
    }
}
