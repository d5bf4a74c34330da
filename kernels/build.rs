//! Compiles kernels/ with nvcc, once:
//! - `device/*.cu` become fatbins (sm_80, sm_90, and compute_90 PTX for newer
//!   GPUs) that the Rust variants load with cudarc;
//! - `host/*.cu`, the articles' C++ made runnable, become one static library
//!   linked against the static CUDA runtime.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const GENCODE: &[&str] = &[
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
];

fn main() {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    for var in ["NVCC", "CUDA_HOME", "CUDA_PATH", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    for dir in ["device", "host", "include"] {
        println!("cargo::rerun-if-changed={}", here.join(dir).display());
    }

    let Some(nvcc) = find_nvcc() else {
        println!(
            "cargo::error=no CUDA compiler (nvcc) found in NVCC, CUDA_HOME, CUDA_PATH, \
             /usr/local/cuda or PATH: run `cargo xtask test`, which installs one"
        );
        return;
    };
    let cuda_home = nvcc.parent().and_then(Path::parent).unwrap().to_path_buf();

    let version = Command::new(&nvcc)
        .arg("--version")
        .output()
        .expect("nvcc runs");
    let version = String::from_utf8_lossy(&version.stdout);
    let toolkit = version
        .split(", V")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("unknown");
    println!("cargo::rustc-env=CASEBOOK_TOOLKIT={toolkit}");

    let mut consts = String::new();
    for source in sources(&here.join("device")) {
        let stem = source.file_stem().unwrap().to_str().unwrap().to_owned();
        let fatbin = out.join(format!("{stem}.fatbin"));
        let status = Command::new(&nvcc)
            .arg("-fatbin")
            .args(GENCODE)
            .arg("-I")
            .arg(here.join("device"))
            .arg("-o")
            .arg(&fatbin)
            .arg(&source)
            .status()
            .expect("nvcc runs");
        if !status.success() {
            println!("cargo::error=nvcc failed on {}", source.display());
            return;
        }
        writeln!(
            consts,
            "/// `kernels/device/{stem}.cu`, compiled by nvcc.\npub const {}: &[u8] = include_bytes!({:?});",
            stem.to_uppercase(),
            fatbin
        )
        .unwrap();
    }
    fs::write(out.join("fatbins.rs"), consts).unwrap();

    // cc finds nvcc through NVCC. SAFETY: the build script has one thread.
    unsafe { env::set_var("NVCC", &nvcc) };
    let mut build = cc::Build::new();
    build
        .cuda(true)
        .cudart("static")
        .include(here.join("include"))
        .include(here.join("device"))
        .flag("-std=c++17")
        .flag("-diag-suppress=177")
        .warnings(false)
        // cc turns a profile's debug info into nvcc's -G, which compiles device
        // code unoptimised: kernels twice as slow, timings meaningless. Line
        // info is enough for the sanitizer's reports.
        .debug(false)
        .flag("-lineinfo");
    for code in GENCODE {
        build.flag(code);
    }
    for source in sources(&here.join("host")) {
        build.file(source);
    }
    build.compile("casebook_cpp");

    // The PyPI toolkit keeps its libraries in lib/, a system one in lib64/.
    for lib in ["lib", "lib64", "targets/x86_64-linux/lib"] {
        let dir = cuda_home.join(lib);
        if dir.join("libcudart_static.a").exists() {
            println!("cargo::rustc-link-search=native={}", dir.display());
        }
    }
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo::rustc-link-lib={lib}");
    }
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "cu"));
    files.sort();
    files
}

fn find_nvcc() -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    let candidates = env::var_os("NVCC")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            ["CUDA_HOME", "CUDA_PATH"]
                .iter()
                .filter_map(env::var_os)
                .map(|home| PathBuf::from(home).join("bin/nvcc")),
        )
        .chain(std::iter::once(PathBuf::from("/usr/local/cuda/bin/nvcc")))
        .chain(env::split_paths(&path).map(|d| d.join("nvcc")));
    candidates.into_iter().find(|p| p.is_file())
}
