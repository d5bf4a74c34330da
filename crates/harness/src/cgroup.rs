//! Whether this run can give a variant the memory cgroup it asks for
//! ([`Variant::needs_memory_cgroup`]): cgroup v2 mounted at
//! [`CGROUP_ROOT`] with its memory controller, and a tree this process may
//! write (root, as a rule).

use std::path::Path;
use std::sync::OnceLock;

use casebook_model::{CGROUP_ROOT, Variant};

/// Why `variant` cannot run here, if it needs a memory cgroup and the run
/// cannot make one.
pub fn skip_reason(variant: &Variant) -> Option<String> {
    if !variant.memory_cgroup {
        return None;
    }
    static WHY_NOT: OnceLock<Option<String>> = OnceLock::new();
    WHY_NOT
        .get_or_init(|| why_not(Path::new(CGROUP_ROOT)))
        .as_ref()
        .map(|why| format!("needs a memory cgroup of its own: {why}"))
}

/// What stops a memory cgroup from being made under `root`, if anything.
fn why_not(root: &Path) -> Option<String> {
    let controllers = root.join("cgroup.controllers");
    let Ok(available) = std::fs::read_to_string(&controllers) else {
        return Some(format!(
            "no cgroup v2 tree at {} ({} cannot be read)",
            root.display(),
            controllers.display()
        ));
    };
    if !available.split_whitespace().any(|c| c == "memory") {
        return Some(format!(
            "the cgroup v2 tree at {} has no memory controller",
            root.display()
        ));
    }
    // Opened for writing and closed again: nothing is written.
    let subtree = root.join("cgroup.subtree_control");
    match std::fs::OpenOptions::new().write(true).open(&subtree) {
        Ok(_) => None,
        Err(e) => Some(format!(
            "{} cannot be written ({e}): run as root, with the cgroup tree writable",
            subtree.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_without_its_files_or_memory_controller_is_refused() {
        let dir = std::env::temp_dir().join(format!("casebook-cgroup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(why_not(&dir).unwrap().contains("no cgroup v2 tree"));
        std::fs::write(dir.join("cgroup.controllers"), "cpu io pids\n").unwrap();
        assert!(why_not(&dir).unwrap().contains("no memory controller"));
        std::fs::write(dir.join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        std::fs::write(dir.join("cgroup.subtree_control"), "").unwrap();
        assert_eq!(why_not(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn noop(_: &mut casebook_model::Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    #[test]
    fn only_a_variant_that_asks_is_checked() {
        let plain = Variant::records("plain", casebook_model::Program::host(noop));
        assert_eq!(skip_reason(&plain), None);
    }
}
