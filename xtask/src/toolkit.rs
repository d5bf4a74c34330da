//! Finds a CUDA toolkit, or installs NVIDIA's pinned PyPI wheels.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The wheels pinned to CUDA 13.0: the GPU machines' driver (580) refuses
/// PTX from a newer toolkit.
pub const WHEELS: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-cccl==13.0.85",
];

pub struct Toolkit {
    /// Holds bin/nvcc, include/ and lib/ (or lib64/).
    pub home: PathBuf,
}

/// Where the wheels go: the workspace's own `target/cuda-wheels`, whatever
/// CARGO_TARGET_DIR says. The build scripts look there themselves
/// (`casebook_build::wheel_home`), after the places [`find`] searches, in
/// the same order; so xtask finds the toolkit they will use and puts nothing
/// in the environment of the cargo it starts. `cargo build` or `cargo run`
/// then sees what `cargo xtask` saw, and switching between them rebuilds no
/// kernel (a changed CUDA_HOME, NVCC or PATH would rerun every build script).
fn wheel_home() -> PathBuf {
    crate::project::root().join("target/cuda-wheels/nvidia/cu13")
}

/// NVCC, CUDA_HOME or CUDA_PATH, /usr/local/cuda, nvcc on PATH, then wheels
/// installed earlier (the build scripts' order); none of those: installs the
/// wheels.
pub fn ensure() -> anyhow::Result<Toolkit> {
    if let Some(home) = find() {
        return Ok(Toolkit { home });
    }
    install()?;
    let home = wheel_home();
    if !has_nvcc(&home) {
        bail!(
            "the CUDA wheels installed, but {} has no bin/nvcc",
            home.display()
        );
    }
    Ok(Toolkit { home })
}

fn has_nvcc(home: &Path) -> bool {
    home.join("bin/nvcc").is_file()
}

/// The first nvcc in the build scripts' order (`casebook_build::nvcc`), and
/// the toolkit it belongs to.
fn find() -> Option<PathBuf> {
    let homes = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain(std::iter::once(PathBuf::from("/usr/local/cuda")));
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::var_os("NVCC")
        .map(PathBuf::from)
        .into_iter()
        .chain(homes.map(|home| home.join("bin/nvcc")))
        .chain(std::env::split_paths(&path).map(|dir| dir.join("nvcc")))
        .chain(std::iter::once(wheel_home().join("bin/nvcc")))
        .find(|nvcc| nvcc.is_file())
        .and_then(|nvcc| Some(nvcc.parent()?.parent()?.to_path_buf()))
}

fn install() -> anyhow::Result<()> {
    let target = crate::project::root().join("target/cuda-wheels");
    eprintln!(
        "no CUDA toolkit found (NVCC, CUDA_HOME, CUDA_PATH, /usr/local/cuda, PATH): installing \
         the CUDA 13.0 compiler from NVIDIA's wheels on PyPI into {} (about 270 MB on disk, first \
         time only)…",
        target.display()
    );
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .context(
            "installing the CUDA toolkit needs python3 with pip; install one, or set CUDA_HOME",
        )?;
    let status = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--progress-bar",
            "on",
            "--target",
        ])
        .arg(&target)
        .args(WHEELS)
        // pip warns against installing as root into the system; this goes
        // into a folder of the build's own, so the warning says nothing here.
        .env("PIP_ROOT_USER_ACTION", "ignore")
        .status()
        .with_context(|| format!("cannot run {python} -m pip"))?;
    if !status.success() {
        bail!(
            "pip could not install the CUDA wheels ({status}); set CUDA_HOME to a CUDA 13.0 toolkit instead"
        );
    }
    eprintln!("CUDA toolkit installed in {}", target.display());
    Ok(())
}

/// Builds the release `casebook` binary, and `casebook-cust` beside it (the
/// harness starts the cust variants from there); returns the path of
/// `casebook`.
pub fn build_casebook() -> anyhow::Result<PathBuf> {
    ensure()?;
    let root = crate::project::root();
    eprintln!(
        "building casebook and casebook-cust (release; the first build compiles every \
         scenario's CUDA and takes a few minutes)…"
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args([
            "build",
            "--release",
            "--bin",
            "casebook",
            "--bin",
            "casebook-cust",
        ])
        .current_dir(&root);
    if !build.status()?.success() {
        bail!("building casebook failed");
    }
    Ok(crate::project::target_dir().join("release/casebook"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_wheels_go_where_the_build_scripts_look() {
        assert_eq!(super::wheel_home(), casebook_build::wheel_home());
    }
}
