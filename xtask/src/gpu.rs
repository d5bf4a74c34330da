//! Whether this machine can run trials at all, asked before a release build
//! of minutes. `casebook` asks again after the build, through a CUDA probe,
//! and exits with the same code; this check only answers where the answer
//! is certain (no driver library anywhere the loader looks, or nvidia-smi
//! saying there is no device or no driver), and otherwise lets the probe
//! decide. A GPU it cannot see, the probe cannot use either, so there is
//! nothing to bypass.

use std::path::Path;
use std::process::{Command, ExitCode};

/// `casebook`'s exit for no GPU or driver (`casebook_report::Exit::NoGpu`);
/// spelled here to keep xtask free of the workspace's crates, and held to
/// it by a test.
pub const NO_GPU: u8 = 3;

/// `casebook sanitize`'s exit when there is no compute-sanitizer
/// (`casebook_report::Exit::NoSanitizer`).
pub const NO_SANITIZER: u8 = 8;

/// `None` where trials may run; otherwise says, in one line, why not and
/// returns the exit `casebook <command>` would give after the build.
pub fn require(command: &str) -> Option<ExitCode> {
    let why = no_gpu()?;
    eprintln!("error: {command} needs a GPU: {why}");
    Some(ExitCode::from(NO_GPU))
}

/// For `sanitize`: [`require`]'s check, then compute-sanitizer where
/// `casebook sanitize` looks for it (PATH, then /usr/local/cuda/bin); the
/// first that fails is said in one line, with its exit.
pub fn require_sanitize() -> Option<ExitCode> {
    let (code, why) = sanitize_refusal(no_gpu(), sanitizer_found)?;
    eprintln!("error: {why}");
    Some(ExitCode::from(code))
}

/// Why trials cannot run here, where that is certain.
fn no_gpu() -> Option<String> {
    let libcuda_in_dirs = loader_dirs().iter().any(|dir| holds_libcuda(dir));
    verdict(ldconfig().as_deref(), libcuda_in_dirs, nvidia_smi())
}

fn sanitizer_found() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("compute-sanitizer"))
        .chain(["/usr/local/cuda/bin/compute-sanitizer".into()])
        .any(|p| p.is_file())
}

/// `sanitize`'s refusal, the missing GPU first: a machine without one
/// seldom has compute-sanitizer either, and "no GPU" (exit 3) is the answer
/// that tells its user what to do; compute-sanitizer is looked for only
/// where there may be a GPU.
fn sanitize_refusal(
    no_gpu: Option<String>,
    sanitizer_found: impl FnOnce() -> bool,
) -> Option<(u8, String)> {
    if let Some(why) = no_gpu {
        return Some((NO_GPU, format!("sanitize needs a GPU: {why}")));
    }
    (!sanitizer_found()).then(|| {
        (
            NO_SANITIZER,
            "compute-sanitizer not found on PATH or in /usr/local/cuda/bin".to_owned(),
        )
    })
}

/// The decision, from what was seen: `ldconfig -p`'s listing (`None` when
/// it could not be run), whether a directory the loader searches besides
/// its cache holds a libcuda, and nvidia-smi's exit code and message
/// (`None` when there is no nvidia-smi).
fn verdict(
    ldconfig: Option<&str>,
    libcuda_in_dirs: bool,
    smi: Option<(Option<i32>, String)>,
) -> Option<String> {
    let in_cache = ldconfig.map(|listing| {
        listing
            .lines()
            .any(|line| line.trim_start().starts_with("libcuda.so"))
    });
    if in_cache == Some(false) && !libcuda_in_dirs {
        return Some(
            "no CUDA driver: no libcuda.so.1 where the dynamic loader looks (ldconfig -p, \
             LD_LIBRARY_PATH, /usr/lib)"
                .into(),
        );
    }
    // 6: no device found; 9: the driver is not loaded.
    match smi {
        Some((Some(code @ (6 | 9)), said)) => Some(format!("nvidia-smi -L exited {code}: {said}")),
        _ => None,
    }
}

fn ldconfig() -> Option<String> {
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .find_map(|cmd| {
            let out = Command::new(cmd).arg("-p").output().ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        })
}

/// LD_LIBRARY_PATH, then the loader's default folders.
fn loader_dirs() -> Vec<std::path::PathBuf> {
    let from_env = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    std::env::split_paths(&from_env)
        .filter(|d| !d.as_os_str().is_empty())
        .chain(
            [
                "/lib",
                "/lib64",
                "/usr/lib",
                "/usr/lib64",
                "/lib/x86_64-linux-gnu",
                "/usr/lib/x86_64-linux-gnu",
                "/lib/aarch64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu",
            ]
            .map(Into::into),
        )
        .collect()
}

fn holds_libcuda(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with("libcuda.so"))
    })
}

fn nvidia_smi() -> Option<(Option<i32>, String)> {
    let out = Command::new("nvidia-smi").arg("-L").output().ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_owned();
    Some((out.status.code(), first))
}

#[cfg(test)]
mod tests {
    use super::{NO_GPU, NO_SANITIZER, sanitize_refusal, verdict};

    #[test]
    fn the_codes_spelled_here_are_casebooks() {
        use casebook_report::Exit;
        assert_eq!(NO_GPU, Exit::NoGpu.code());
        assert_eq!(NO_SANITIZER, Exit::NoSanitizer.code());
    }

    const WITH_DRIVER: &str = "1234 libs found in cache `/etc/ld.so.cache'\n\
        \tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.13\n\
        \tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n";
    const WITHOUT: &str = "1233 libs found in cache `/etc/ld.so.cache'\n\
        \tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.13\n";

    #[test]
    fn no_libcuda_anywhere_is_no_gpu() {
        let why = verdict(Some(WITHOUT), false, None).unwrap();
        assert!(why.starts_with("no CUDA driver: no libcuda.so.1"), "{why}");
    }

    #[test]
    fn a_libcuda_in_the_cache_or_on_the_path_lets_the_probe_decide() {
        assert_eq!(verdict(Some(WITH_DRIVER), false, None), None);
        assert_eq!(verdict(Some(WITHOUT), true, None), None);
        let listed = Some((
            Some(0),
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)".to_owned(),
        ));
        assert_eq!(verdict(Some(WITH_DRIVER), false, listed), None);
    }

    #[test]
    fn without_ldconfig_only_nvidia_smi_can_say_no() {
        assert_eq!(verdict(None, false, None), None);
        // Exits nvidia-smi gives for reasons other than an absent GPU.
        assert_eq!(
            verdict(None, false, Some((Some(4), "no permission".into()))),
            None
        );
        assert_eq!(verdict(None, false, Some((None, String::new()))), None);
    }

    #[test]
    fn nvidia_smi_finding_no_device_or_no_driver_is_no_gpu() {
        let none = Some((Some(6), "No devices were found".to_owned()));
        assert_eq!(
            verdict(Some(WITH_DRIVER), false, none).as_deref(),
            Some("nvidia-smi -L exited 6: No devices were found")
        );
        let unloaded = Some((
            Some(9),
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
                .to_owned(),
        ));
        assert!(verdict(Some(WITH_DRIVER), false, unloaded).is_some());
    }

    #[test]
    fn sanitize_without_a_gpu_is_no_gpu_whether_or_not_compute_sanitizer_is_here() {
        let no_gpu = || Some("no CUDA driver: no libcuda.so.1".to_owned());
        let asked = std::cell::Cell::new(false);
        let absent = || {
            asked.set(true);
            false
        };
        let (code, why) = sanitize_refusal(no_gpu(), absent).unwrap();
        assert_eq!(code, NO_GPU);
        assert_eq!(why, "sanitize needs a GPU: no CUDA driver: no libcuda.so.1");
        assert!(
            !asked.get(),
            "compute-sanitizer was looked for before the GPU"
        );
        assert_eq!(sanitize_refusal(no_gpu(), || true).unwrap().0, NO_GPU);
    }

    #[test]
    fn sanitize_with_a_gpu_needs_compute_sanitizer() {
        let (code, why) = sanitize_refusal(None, || false).unwrap();
        assert_eq!(code, NO_SANITIZER);
        assert!(why.starts_with("compute-sanitizer not found"), "{why}");
        assert_eq!(sanitize_refusal(None, || true), None);
    }
}
