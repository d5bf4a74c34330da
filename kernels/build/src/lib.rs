//! The one build helper every crate with CUDA code uses from its `build.rs`.
//!
//! - [`scenario`]: a scenario's `cpp/*.cu` become one static library, linked
//!   against the static CUDA runtime, and its vocabulary (`src/names.rs`)
//!   becomes the C++ header `names.h` those files include;
//! - [`fatbins`]: device kernels become fatbins that Rust loads with cudarc
//!   (used by `casebook-kernels` for the kernels several scenarios share).
//!
//! A scenario's build script is one line: `casebook_build::build_scenario!();`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// sm_80 and sm_90 machine code, and compute_90 PTX for newer GPUs.
pub const GENCODE: &[&str] = &[
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
];

/// One name of a vocabulary, as the build script sees it.
#[derive(Debug, Clone, Copy)]
pub struct Name {
    /// `check`, `fact`, `measure` or `series`.
    pub kind: &'static str,
    /// The constant's identifier: `READER_OK`.
    pub ident: &'static str,
    /// The name as recorded.
    pub text: &'static str,
    /// A series' x label.
    pub per: Option<&'static str>,
    /// A measure's or series' unit: `Bytes`, `Count`, `Seconds`, `Ratio`.
    pub unit: Option<&'static str>,
}

/// The same grammar as `casebook_model::vocabulary!`, read at build time.
#[macro_export]
macro_rules! vocabulary {
    ($($(#[$doc:meta])* $kind:ident $name:ident = $text:literal $(per $x:literal)? $(in $unit:ident)?;)*) => {
        pub const VOCABULARY: &[$crate::Name] = &[
            $( $crate::Name {
                kind: stringify!($kind),
                ident: stringify!($name),
                text: $text,
                per: $crate::vocabulary!(@opt $($x)?),
                unit: $crate::vocabulary!(@opt $(stringify!($unit))?),
            }, )*
        ];
    };
    (@opt) => { None };
    (@opt $e:expr) => { Some($e) };
}

/// A scenario's whole `build.rs`: its vocabulary from `src/names.rs`, its
/// `device/` and `cpp/` compiled by [`scenario`].
#[macro_export]
macro_rules! build_scenario {
    () => {
        mod names {
            use $crate::vocabulary;
            include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/names.rs"));
        }

        fn main() {
            $crate::scenario(names::VOCABULARY);
        }
    };
}

/// Names every scenario may record (`crates/model/src/global_names.rs`).
pub mod global {
    include!("../../../crates/model/src/global_names.rs");
}

/// Where the shared C++ lives: `kernels/include` (the recorder ABI,
/// `casebook.h`) and `kernels/device` (kernels several scenarios share).
fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("kernels/build has a parent")
        .to_path_buf()
}

/// The CUDA compiler, and the toolkit version it reports (`13.0.88`).
pub struct Nvcc {
    pub path: PathBuf,
    pub version: String,
}

/// Finds nvcc (NVCC, CUDA_HOME, CUDA_PATH, /usr/local/cuda, PATH, then the
/// wheels `cargo xtask` installs under `target/cuda-wheels`), or stops the
/// build with a one-line error that says how to get one.
pub fn nvcc() -> Option<Nvcc> {
    for var in ["NVCC", "CUDA_HOME", "CUDA_PATH", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let Some(path) = find_nvcc() else {
        println!(
            "cargo::error=no CUDA compiler (nvcc) found in NVCC, CUDA_HOME, CUDA_PATH, \
             /usr/local/cuda, PATH or target/cuda-wheels: run `cargo xtask toolkit`, which \
             installs one"
        );
        return None;
    };
    let out = Command::new(&path).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .split(", V")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("unknown")
        .to_owned();
    Some(Nvcc { path, version })
}

fn find_nvcc() -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    // target/cuda-wheels, found from OUT_DIR (target/<profile>/build/<pkg>/out).
    let wheels = env::var_os("OUT_DIR").and_then(|out| {
        PathBuf::from(out)
            .ancestors()
            .find(|d| d.join("cuda-wheels").is_dir())
            .map(|target| target.join("cuda-wheels/nvidia/cu13/bin/nvcc"))
    });
    env::var_os("NVCC")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            ["CUDA_HOME", "CUDA_PATH"]
                .iter()
                .filter_map(env::var_os)
                .map(|home| PathBuf::from(home).join("bin/nvcc")),
        )
        .chain(std::iter::once(PathBuf::from("/usr/local/cuda/bin/nvcc")))
        .chain(env::split_paths(&path).map(|d| d.join("nvcc")))
        .chain(wheels)
        .find(|p| p.is_file())
}

/// The `.cu` files of `dir`, sorted.
pub fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "cu"));
    files.sort();
    files
}

/// Compiles a scenario's code for the GPU: `device/*.cu` (kernels its Rust
/// variants load) into fatbins listed in `OUT_DIR/fatbins.rs`, and
/// `cpp/*.cu` into one static library, with `names.h` generated from
/// `vocabulary`, linked against the static CUDA runtime.
pub fn scenario(vocabulary: &[Name]) {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("run by cargo"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("run by cargo"));
    for dir in ["src/names.rs", "cpp", "device"] {
        println!("cargo::rerun-if-changed={dir}");
    }
    fs::write(out.join("names.h"), header(vocabulary)).expect("OUT_DIR is writable");
    let device = here.join("device");
    let cpp = sources(&here.join("cpp"));
    if sources(&device).is_empty() && cpp.is_empty() {
        return;
    }
    let Some(nvcc) = nvcc() else { return };
    match fatbins(&nvcc, &device) {
        Ok(consts) => fs::write(out.join("fatbins.rs"), consts).expect("OUT_DIR is writable"),
        Err(e) => {
            println!("cargo::error={e}");
            return;
        }
    }
    if cpp.is_empty() {
        return;
    }
    let package = env::var("CARGO_PKG_NAME").expect("run by cargo");
    let mut build = host_build(&nvcc);
    build.include(&out).include(&device);
    for file in cpp {
        build.file(file);
    }
    build.compile(&package.replace('-', "_"));
}

/// A cc build for host C++ with device code: nvcc, C++17, the static CUDA
/// runtime, the shared headers on the include path.
pub fn host_build(nvcc: &Nvcc) -> cc::Build {
    let kernels = kernels_dir();
    println!(
        "cargo::rerun-if-changed={}",
        kernels.join("include").display()
    );
    println!(
        "cargo::rerun-if-changed={}",
        kernels.join("device").display()
    );
    // cc finds nvcc through NVCC. SAFETY: a build script has one thread.
    unsafe { env::set_var("NVCC", &nvcc.path) };
    let mut build = cc::Build::new();
    build
        .cuda(true)
        .cudart("static")
        .include(kernels.join("include"))
        .include(kernels.join("device"))
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
    link_search(nvcc);
    build
}

/// Where the static CUDA runtime is: the PyPI toolkit keeps it in lib/, a
/// system one in lib64/.
fn link_search(nvcc: &Nvcc) {
    let home = nvcc
        .path
        .parent()
        .and_then(Path::parent)
        .expect("nvcc is in <toolkit>/bin");
    for lib in ["lib", "lib64", "targets/x86_64-linux/lib"] {
        let dir = home.join(lib);
        if dir.join("libcudart_static.a").exists() {
            println!("cargo::rustc-link-search=native={}", dir.display());
        }
    }
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo::rustc-link-lib={lib}");
    }
}

/// Compiles each `.cu` of `dir` to a fatbin in OUT_DIR and returns the Rust
/// source of one `pub const NAME: &[u8]` per kernel file.
pub fn fatbins(nvcc: &Nvcc, dir: &Path) -> Result<String, String> {
    let out = PathBuf::from(env::var("OUT_DIR").expect("run by cargo"));
    let mut consts = String::new();
    for source in sources(dir) {
        let stem = source
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name")
            .to_owned();
        let fatbin = out.join(format!("{stem}.fatbin"));
        let status = Command::new(&nvcc.path)
            .arg("-fatbin")
            .args(GENCODE)
            .arg("-I")
            .arg(dir)
            .arg("-o")
            .arg(&fatbin)
            .arg(&source)
            .status()
            .map_err(|e| format!("nvcc does not run: {e}"))?;
        if !status.success() {
            return Err(format!("nvcc failed on {}", source.display()));
        }
        let _ = writeln!(
            consts,
            "/// `{}`, compiled by nvcc.\npub const {}: &[u8] = include_bytes!({:?});",
            source.display(),
            stem.to_uppercase(),
            fatbin
        );
    }
    Ok(consts)
}

/// `names.h`: the vocabulary as typed C++ constants, in `namespace names`.
pub fn header(vocabulary: &[Name]) -> String {
    let mut h = String::from(
        "// Generated from src/names.rs by casebook-build: do not edit.\n\
         // The names this scenario's variants record, declared once in Rust.\n\
         #pragma once\n#include \"casebook.h\"\n\nnamespace names {\n",
    );
    for name in vocabulary.iter().chain(global::VOCABULARY) {
        let text = format!("{:?}", name.text);
        let unit = name.unit.map(|u| format!("casebook::{u}"));
        let line = match (name.kind, unit, name.per) {
            ("check", None, None) => format!("casebook::CheckName {}{{{text}}}", name.ident),
            ("fact", None, None) => format!("casebook::FactName {}{{{text}}}", name.ident),
            ("measure", Some(unit), None) => {
                format!("casebook::MeasureName {}{{{text}, {unit}}}", name.ident)
            }
            ("series", Some(unit), Some(per)) => format!(
                "casebook::SeriesName {}{{{text}, {:?}, {unit}}}",
                name.ident, per
            ),
            (kind, ..) => panic!(
                "names.rs: `{kind} {}` is not a check, fact, measure (with `in UNIT`) or \
                 series (with `per \"x\" in UNIT`)",
                name.ident
            ),
        };
        let _ = writeln!(h, "inline constexpr {line};");
    }
    h.push_str(
        "}  // namespace names\n\nnamespace casebook {\n\
         // Whether the variant runs under compute-sanitizer, where heavy variants\n\
         // run a reduced form; records that it does.\n\
         inline bool under_sanitizer(const casebook_recorder *r) {\n  \
         return under_sanitizer(r, names::REDUCED);\n}\n}  // namespace casebook\n",
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    mod sample {

        vocabulary! {
            /// Documented.
            check OK = "reader sees \"what\" it was given";
            fact REUSED = "reused";
            measure FREE = "free_bytes" in Bytes;
            series CURVE = "free_bytes" per "call" in Bytes;
        }
    }

    #[test]
    fn the_header_declares_every_name_with_its_unit() {
        let h = header(sample::VOCABULARY);
        assert!(h.contains(
            r#"inline constexpr casebook::CheckName OK{"reader sees \"what\" it was given"};"#
        ));
        assert!(h.contains(r#"inline constexpr casebook::FactName REUSED{"reused"};"#));
        assert!(h.contains(
            r#"inline constexpr casebook::MeasureName FREE{"free_bytes", casebook::Bytes};"#
        ));
        assert!(h.contains(
            r#"inline constexpr casebook::SeriesName CURVE{"free_bytes", "call", casebook::Bytes};"#
        ));
        assert!(h.contains(r#"FactName REDUCED{"reduced for the sanitizer"}"#));
    }
}
