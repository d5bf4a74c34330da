//! Links the cust binary against a stub `libcuda.so` generated here from the
//! toolkit's `cuda.h`, the same idea as the toolkit's `lib64/stubs/libcuda.so`:
//! it defines every driver entry point the header declares (in both its
//! current and its versioned legacy names) and nothing else, with the soname
//! `libcuda.so.1`. The binary it produces loads the real driver at start, so
//! it builds on a machine with no driver and runs on one with a driver.
//!
//! The stub is for the linker only, so its folder is handed to the linker
//! (`-L`, a link argument) and never declared a link-search directory: cargo
//! puts every link-search directory inside `target/<profile>` on the
//! `LD_LIBRARY_PATH` of each binary it runs (`cargo run`, `cargo test`) in
//! the same build, nextest every one inside the target directory, and cudarc
//! opens `libcuda.so` by name at run time, so a stub there would stand in for
//! the driver (`tests/no_stub_at_run_time.rs` holds this). A link argument
//! reaches this package's own binary and tests, the only ones that link cust;
//! a package that linked this library would need the same `-L`.

use std::collections::BTreeSet;
use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    // The toolkit the kernels are compiled with, found the same way.
    let Some(nvcc) = casebook_build::nvcc() else {
        return;
    };
    let include = nvcc.home().join("include");
    let header = include.join("cuda.h");
    if !header.is_file() {
        println!(
            "cargo::error=the CUDA toolkit at {} has no include/cuda.h",
            nvcc.home().display()
        );
        return;
    }
    println!("cargo::rerun-if-changed={}", header.display());

    // The header names each entry point through macros (cuMemAlloc is
    // cuMemAlloc_v2); its internal mode declares the legacy names as well.
    let mut symbols = BTreeSet::new();
    for legacy in [false, true] {
        let mut build = cc::Build::new();
        build.include(&include).file(&header).cargo_warnings(false);
        if legacy {
            build.define("__CUDA_API_VERSION_INTERNAL", None);
        }
        let expanded = String::from_utf8_lossy(&build.expand()).into_owned();
        symbols.extend(entry_points(&expanded));
    }
    assert!(
        symbols.contains("cuInit") && symbols.contains("cuMemAlloc_v2"),
        "cuda.h at {} declares no driver API",
        header.display()
    );

    let mut source =
        String::from("// Generated from cuda.h by build.rs: a link stub, never run.\n");
    for name in &symbols {
        source.push_str(&format!("void {name}(void) {{}}\n"));
    }
    let c = out.join("libcuda_stub.c");
    fs::write(&c, source).unwrap();
    let stub_dir = out.join("stub");
    fs::create_dir_all(&stub_dir).unwrap();
    let compiler = cc::Build::new().get_compiler();
    let status = Command::new(compiler.path())
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(stub_dir.join("libcuda.so"))
        .arg(&c)
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "building the libcuda stub failed");
    // cust_raw asks for `-lcuda`; this is where the linker finds it.
    println!("cargo::rustc-link-arg=-L{}", stub_dir.display());
    // The tests (which check the served table against the catalogue and make
    // no CUDA call) must start where there is no driver: only their binaries
    // find the stub at run time, through their own run path, never through
    // LD_LIBRARY_PATH.
    let test_dir = out.join("stub-for-tests");
    fs::create_dir_all(&test_dir).unwrap();
    fs::copy(stub_dir.join("libcuda.so"), test_dir.join("libcuda.so.1")).unwrap();
    println!(
        "cargo::rustc-link-arg-tests=-Wl,-rpath,{}",
        test_dir.display()
    );
}

/// Identifiers `cu…` declared as functions in preprocessed `cuda.h`.
fn entry_points(expanded: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in expanded.match_indices("CUresult ") {
        let rest = &expanded[i + "CUresult ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        if name.starts_with("cu") && after.starts_with('(') {
            names.insert(name);
        }
    }
    names
}
