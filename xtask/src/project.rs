//! The project xtask works on: where its root is, and what a command run
//! there amounts to. Every command's module reads these; none reads `main`.

use std::process::ExitCode;

/// The workspace root: xtask lives one folder below it.
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Where cargo puts what it builds: `CARGO_TARGET_DIR` where it is set
/// (relative to the root, as cargo reads it), else the root's `target/`.
pub fn target_dir() -> std::path::PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

/// The exit of a finished command, as this process's exit.
pub fn exit_of(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    }
}
