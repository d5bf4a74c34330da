use std::path::{Path, PathBuf};

/// The root of the cuda-casebook tree: where `scenarios/` and the snapshots
/// are. `CASEBOOK_ROOT` or `INSTA_WORKSPACE_ROOT` if set; else the nearest
/// folder above the current one that holds `scenarios/` and `Cargo.toml`;
/// else the nearest such folder above this binary (a bundle in
/// `target/bundle/`); else the tree this binary was built from.
pub fn root() -> PathBuf {
    for var in ["CASEBOOK_ROOT", "INSTA_WORKSPACE_ROOT"] {
        if let Some(dir) = std::env::var_os(var) {
            return PathBuf::from(dir);
        }
    }
    if let Ok(cwd) = std::env::current_dir()
        && let Some(found) = cwd.ancestors().find(|d| is_root(d))
    {
        return found.to_path_buf();
    }
    // A bundle's binaries (`target/bundle/casebook`) sit inside the tree.
    if let Ok(exe) = std::env::current_exe()
        && let Some(found) = exe.ancestors().find(|d| is_root(d))
    {
        return found.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn is_root(dir: &Path) -> bool {
    dir.join("scenarios").is_dir() && dir.join("Cargo.toml").is_file()
}

/// The folder that holds a scenario's snapshots.
pub fn snapshot_dir(root: &Path, slug: &str) -> PathBuf {
    root.join("scenarios").join(slug).join("snapshots")
}

/// Points insta at `root`, so it never needs `cargo metadata` (the GPU box
/// has no cargo). Call first thing in `main`, before any thread starts.
pub fn pin_insta_root(root: &Path) {
    if std::env::var_os("INSTA_WORKSPACE_ROOT").is_none() {
        // SAFETY: called at the top of main, while the process has one thread.
        unsafe { std::env::set_var("INSTA_WORKSPACE_ROOT", root) };
    }
}

/// Keeps insta's diffs out of run-all's progress lines: the `.snap.new`
/// files hold the same for review. Same calling rule as [`pin_insta_root`].
pub fn quiet_insta() {
    if std::env::var_os("INSTA_OUTPUT").is_none() {
        // SAFETY: called at the top of main, while the process has one thread.
        unsafe { std::env::set_var("INSTA_OUTPUT", "none") };
    }
}
