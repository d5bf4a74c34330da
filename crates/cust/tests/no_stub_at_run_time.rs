//! The libcuda link stub (see build.rs) is for the linker only: no directory
//! on the library path cargo or nextest gives the binaries they run holds a
//! `libcuda*`.
//!
//! cudarc opens `libcuda.so` by name at run time, so a stub found there first
//! would stand in for the driver and every call would return garbage. Cargo
//! starts each binary it runs (`cargo run`, `cargo test`) with the
//! link-search directories of every build script in that build on
//! `LD_LIBRARY_PATH`, as long as they lie inside `target/<profile>`
//! (`cargo nextest run`: inside the target directory): every build script,
//! not only those of the binary's own dependencies. So under
//! `cargo test --workspace` (what `cargo xtask test` runs) the snapshot suite
//! (`tests/snapshots.rs`) and the GPU children it starts inherit whatever
//! this crate's build script adds, exactly as this test does; a package
//! depending on casebook-cust would too. This test sees the path that all of
//! them see.
//!
//! Only directories inside the target directory are judged: one outside it
//! came from the environment cargo was started in (a GPU machine's
//! `LD_LIBRARY_PATH` may name the real driver's directory), never from the
//! build.

use std::path::{Path, PathBuf};

/// `<target>` from this test's own path, `<target>/<profile>/deps/<test>`
/// (or `<target>/<triple>/<profile>/deps/<test>`: then `<target>/<triple>`,
/// which still holds everything the build wrote).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

fn libcuda_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| is_libcuda(name))
        .collect()
}

/// `libcuda.so`, `libcuda.so.1` and the other names cudarc tries
/// (`libcuda64_13.so`, …); not `libcudarc-….rlib` nor `libcuda_casebook-….rmeta`.
fn is_libcuda(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("libcuda") else {
        return false;
    };
    let Some((tag, version)) = rest.split_once(".so") else {
        return false;
    };
    tag.chars().all(|c| c.is_ascii_digit() || c == '_')
        && (version.is_empty() || version.starts_with('.'))
}

#[test]
fn the_names_the_loader_would_open_are_recognised() {
    for name in [
        "libcuda.so",
        "libcuda.so.1",
        "libcuda.so.580.95.05",
        "libcuda64_13.so",
    ] {
        assert!(is_libcuda(name), "{name}");
    }
    for name in [
        "libcudarc-8c57d22e56960cc9.rlib",
        "libcuda_casebook-f0d8aa965ddd7368.rmeta",
        "libcudart.so.13",
        "libcudart_static.a",
    ] {
        assert!(!is_libcuda(name), "{name}");
    }
}

#[test]
fn no_libcuda_on_the_library_path_cargo_sets() {
    let path = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let target = target_dir();
    let shadowing: Vec<String> = std::env::split_paths(&path)
        .filter(|dir| dir.starts_with(&target))
        .filter_map(|dir| {
            let found = libcuda_files(&dir);
            (!found.is_empty()).then(|| format!("{}: {}", dir.display(), found.join(", ")))
        })
        .collect();
    assert!(
        shadowing.is_empty(),
        "these directories on LD_LIBRARY_PATH would hand cudarc a libcuda that is not the \
         driver:\n{}",
        shadowing.join("\n")
    );
}
