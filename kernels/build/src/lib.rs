//! The one build helper every crate with CUDA code uses from its `build.rs`.
//!
//! - [`scenario`]: a scenario's `cpp/*.cu` become one static library, linked
//!   against the static CUDA runtime, and its vocabulary (`names.toml`)
//!   becomes the C++ header `names.h` those files include and the Rust
//!   `names.rs` its crate includes, with the list of its C++ entry points
//!   (`case.rs`, see [`case_modules`]);
//! - [`fatbins`]: device kernels become fatbins that Rust loads with cudarc
//!   (used by `casebook-kernels` for the kernels several scenarios share).
//!
//! Every scenario's build script is one file, `kernels/build/scenario.rs`,
//! which its manifest names (`build = "../../kernels/build/scenario.rs"`).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable a scenario's build script sets for its crate: what its C++
/// entry points' names start with (`casebook_<slug>_`, the slug's `-` as `_`).
pub const SYMBOL_PREFIX_ENV: &str = "CASEBOOK_SYMBOL_PREFIX";

/// The variable a scenario's build script sets for its crate: its slug, the
/// name of its folder (`missing-free`), for `casebook_model::scenario!`.
pub const SLUG_ENV: &str = "CASEBOOK_SLUG";

/// sm_80 and sm_90 machine code, and compute_90 PTX for newer GPUs.
pub const GENCODE: &[&str] = &[
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
];

/// One name of a vocabulary, as the build script sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// `check`, `fact`, `measure` or `series`.
    pub kind: &'static str,
    /// The constant's identifier: `READER_OK`.
    pub ident: String,
    /// The name as recorded.
    pub text: String,
    /// A series' x label.
    pub per: Option<String>,
    /// A measure's or series' unit: `Bytes`, `Count`, `Seconds`, `Ratio`, `Factor`.
    pub unit: Option<&'static str>,
    /// What it means, for the generated Rust's documentation.
    pub doc: Option<String>,
}

/// The same grammar as `casebook_model::vocabulary!`, read at build time
/// (for the global names, `crates/model/src/global_names.rs`).
#[macro_export]
macro_rules! vocabulary {
    ($($(#[$doc:meta])* $kind:ident $name:ident = $text:literal $(per $x:literal)? $(in $unit:ident)?;)*) => {
        pub fn vocabulary() -> Vec<$crate::Name> {
            vec![$( $crate::Name {
                kind: stringify!($kind),
                ident: stringify!($name).to_owned(),
                text: $text.to_owned(),
                per: $crate::vocabulary!(@opt $($x.to_owned())?),
                unit: $crate::vocabulary!(@opt $(stringify!($unit))?),
                doc: None,
            }, )*]
        }
    };
    (@opt) => { None };
    (@opt $e:expr) => { Some($e) };
}

/// Names every scenario may record (`crates/model/src/global_names.rs`).
pub mod global {
    include!("../../../crates/model/src/global_names.rs");
}

/// The four tables of `names.toml`, in the order the generated code lists them.
const KINDS: [(&str, &str); 4] = [
    ("checks", "check"),
    ("facts", "fact"),
    ("measures", "measure"),
    ("series", "series"),
];

/// Reads a scenario's `names.toml`: the one place its names are declared, for
/// its Rust, its C++ and its Python.
///
/// ```toml
/// [checks]
/// READER_OK = "reader sees the values it was given"
/// [facts]
/// REUSED = { name = "the next allocation reuses the freed block", doc = "Every run." }
/// [measures]
/// RUNS = { key = "runs", unit = "count" }
/// [series]
/// FREE = { key = "free_bytes", per = "call", unit = "bytes" }
/// ```
pub fn parse_vocabulary(text: &str) -> Result<Vec<Name>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("names.toml: {}", e.message()))?;
    if let Some(other) = table.keys().find(|k| !KINDS.iter().any(|(t, _)| t == k)) {
        return Err(format!(
            "names.toml: unknown table [{other}]; the tables are [checks], [facts], [measures], [series]"
        ));
    }
    let mut names = Vec::new();
    for (heading, kind) in KINDS {
        let Some(entries) = table.get(heading) else {
            continue;
        };
        let entries = entries
            .as_table()
            .ok_or_else(|| format!("names.toml: `{heading}` must be a table"))?;
        for (ident, value) in entries {
            names.push(
                entry(kind, ident, value)
                    .map_err(|e| format!("names.toml: {heading}.{ident}: {e}"))?,
            );
        }
    }
    Ok(names)
}

fn entry(kind: &'static str, ident: &str, value: &toml::Value) -> Result<Name, String> {
    if ident.is_empty()
        || ident.starts_with(|c: char| c.is_ascii_digit())
        || !ident
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    {
        return Err("a name's constant is written in UPPER_SNAKE_CASE".into());
    }
    let mut name = Name {
        kind,
        ident: ident.to_owned(),
        text: String::new(),
        per: None,
        unit: None,
        doc: None,
    };
    let fields: &[&str] = match kind {
        "check" | "fact" => &["name", "doc"],
        "measure" => &["key", "unit", "doc"],
        _ => &["key", "per", "unit", "doc"],
    };
    let table = match value {
        toml::Value::String(text) if fields[0] == "name" => {
            name.text = text.clone();
            return Ok(name);
        }
        toml::Value::Table(table) => table,
        _ => return Err(format!("expected a table with {}", fields.join(", "))),
    };
    if let Some(other) = table.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(format!(
            "unknown field `{other}`; the fields are {}",
            fields.join(", ")
        ));
    }
    let text = |field: &str| -> Result<Option<String>, String> {
        match table.get(field) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{field}` must be a string")),
        }
    };
    name.text = text(fields[0])?.ok_or_else(|| format!("`{}` is missing", fields[0]))?;
    name.doc = text("doc")?;
    if kind == "series" {
        name.per = Some(text("per")?.ok_or("`per` (what x counts) is missing")?);
    }
    if kind == "measure" || kind == "series" {
        let unit = text("unit")?.ok_or("`unit` is missing")?;
        name.unit = Some(match unit.as_str() {
            "bytes" => "Bytes",
            "count" => "Count",
            "seconds" => "Seconds",
            "ratio" => "Ratio",
            "factor" => "Factor",
            _ => {
                return Err(format!(
                    "unit `{unit}` is not bytes, count, seconds, ratio or factor"
                ));
            }
        });
    }
    Ok(name)
}

/// The Rust the scenario's `names` module includes: the vocabulary in the
/// grammar of `casebook_model::vocabulary!`.
pub fn rust_names(vocabulary: &[Name]) -> String {
    let mut rs = String::from(
        "// Generated from names.toml by casebook-build: do not edit.\nvocabulary! {\n",
    );
    for name in vocabulary {
        if let Some(doc) = &name.doc {
            let _ = writeln!(rs, "    #[doc = {doc:?}]");
        }
        let _ = write!(rs, "    {} {} = {:?}", name.kind, name.ident, name.text);
        if let Some(per) = &name.per {
            let _ = write!(rs, " per {per:?}");
        }
        if let Some(unit) = name.unit {
            let _ = write!(rs, " in {unit}");
        }
        rs.push_str(";\n");
    }
    rs.push_str("}\n");
    rs
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

impl Nvcc {
    /// The toolkit nvcc belongs to: `bin/`'s parent, with `include/` and
    /// `lib/` (or `lib64/`).
    pub fn home(&self) -> &Path {
        self.path
            .parent()
            .and_then(Path::parent)
            .expect("nvcc is in <toolkit>/bin")
    }
}

/// Where `cargo xtask` installs NVIDIA's CUDA wheels when it finds no
/// toolkit: the workspace's own `target/cuda-wheels`, whatever
/// CARGO_TARGET_DIR says (xtask/src/toolkit.rs installs there). Build
/// scripts look there themselves, so `cargo build` and `cargo run` find the
/// toolkit `cargo xtask` installed without being told, and both present
/// cargo the same environment: switching between them rebuilds nothing.
pub fn wheel_home() -> PathBuf {
    kernels_dir()
        .parent()
        .expect("kernels/ lies in the workspace")
        .join("target/cuda-wheels/nvidia/cu13")
}

/// Finds nvcc (NVCC, CUDA_HOME, CUDA_PATH, /usr/local/cuda, PATH, then the
/// wheels `cargo xtask` installs, [`wheel_home`]), or stops the build with a
/// one-line error that says how to get one. Every build script that needs
/// the toolkit (its headers included) finds it here, in this one order,
/// which `cargo xtask` searches in too.
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
        .chain(std::iter::once(wheel_home().join("bin/nvcc")))
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
/// `names.toml`, linked against the static CUDA runtime. The Rust side of the
/// vocabulary goes to `OUT_DIR/names.rs`.
pub fn scenario() {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("run by cargo"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("run by cargo"));
    for path in watched(&here) {
        println!("cargo::rerun-if-changed={path}");
    }
    // What the C++ entry points' names start with: `casebook_missing_free_`,
    // for `casebook_model::cpp_variants!` to name `casebook_<slug>_<anchor>_cpp`.
    let package = env::var("CARGO_PKG_NAME").expect("run by cargo");
    let slug = package.strip_prefix("scenario-").unwrap_or(&package);
    println!(
        "cargo::rustc-env={SYMBOL_PREFIX_ENV}=casebook_{}_",
        slug.replace('-', "_")
    );
    println!("cargo::rustc-env={SLUG_ENV}={slug}");
    let vocabulary = match fs::read_to_string(here.join("names.toml")) {
        Ok(text) => parse_vocabulary(&text),
        Err(_) => Ok(Vec::new()),
    };
    let vocabulary = match vocabulary {
        Ok(v) => v,
        Err(e) => {
            println!("cargo::error={e}");
            return;
        }
    };
    fs::write(out.join("names.rs"), rust_names(&vocabulary)).expect("OUT_DIR is writable");
    fs::write(out.join("names.h"), header(&vocabulary)).expect("OUT_DIR is writable");
    let device = here.join("device");
    let cpp = sources(&here.join("cpp"));
    let mut cpp_texts = Vec::new();
    for file in &cpp {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name");
        match fs::read_to_string(file) {
            Ok(text) => cpp_texts.push((format!("cpp/{name}"), text)),
            Err(e) => {
                println!("cargo::error=cannot read {}: {e}", file.display());
                return;
            }
        }
    }
    match case_modules(slug, &cpp_texts, !sources(&device).is_empty()) {
        Ok(rs) => fs::write(out.join("case.rs"), rs).expect("OUT_DIR is writable"),
        Err(e) => {
            println!("cargo::error={e}");
            return;
        }
    }
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
    let library = env::var("CARGO_PKG_NAME")
        .expect("run by cargo")
        .replace('-', "_");
    // The files compiled for the usual machine code make one library; a
    // file that names its own (GENCODE_LINE) makes one of its own.
    let mut usual = Vec::new();
    for file in cpp {
        let gencode = match gencode_of_file(&file) {
            Ok(g) => g,
            Err(e) => {
                println!("cargo::error={e}");
                return;
            }
        };
        if gencode.iter().eq(GENCODE.iter()) {
            usual.push(file);
            continue;
        }
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("cu");
        let mut build = host_build_for(&nvcc, &gencode);
        build.include(&out).include(&device).file(&file);
        build.compile(&format!("{library}_{stem}"));
    }
    if !usual.is_empty() {
        let mut build = host_build(&nvcc);
        build.include(&out).include(&device);
        for file in usual {
            build.file(file);
        }
        build.compile(&library);
    }
}

/// `case.rs`, what `casebook_model::case_modules!` includes: the modules a
/// scenario's folder makes. `names`, from `names.toml`; `cpp`, where `cpp/`
/// defines entry points (see [`cpp_variants`]); `fatbin`, where `device/` has
/// kernels (`fatbins.rs`).
pub fn case_modules(slug: &str, cpp: &[(String, String)], kernels: bool) -> Result<String, String> {
    let mut rs = String::from(
        "// Generated from the scenario's folder by casebook-build: do not edit.\n\
         casebook_model::names_module!();\n",
    );
    rs.push_str(&cpp_variants(slug, cpp)?);
    if kernels {
        rs.push_str(
            "/// The kernels of `device/`, one fatbin each, compiled by nvcc for the machine\n\
             /// code its `// gencode:` line names, or the usual.\n\
             pub mod fatbin {\n    include!(concat!(env!(\"OUT_DIR\"), \"/fatbins.rs\"));\n}\n",
        );
    }
    Ok(rs)
}

/// The C++ variants of a scenario's `cpp/` files (each a path and its
/// text), as `casebook_model::cpp_variants!` declares them: each entry point
/// a file defines, `extern "C" int casebook_<slug>_<anchor>_cpp(`, in its
/// order, shown on the page by its anchor where the file marks one
/// (`// ANCHOR: <anchor>`), and as the whole file where it does not.
pub fn cpp_variants(slug: &str, files: &[(String, String)]) -> Result<String, String> {
    let prefix = format!("extern \"C\" int casebook_{}_", slug.replace('-', "_"));
    let mut groups = String::new();
    for (path, text) in files {
        let mut anchors: Vec<&str> = Vec::new();
        for line in text.lines() {
            let Some(at) = line.find(&prefix) else {
                continue;
            };
            let rest = &line[at + prefix.len()..];
            let name = rest[..rest.find('(').unwrap_or(rest.len())].trim_end();
            match name.strip_suffix("_cpp") {
                Some(anchor) if !anchors.contains(&anchor) => anchors.push(anchor),
                Some(_) => {}
                None => return Err(format!("{path}: `{name}` does not end in `_cpp`")),
            }
        }
        let marked = |anchor: &&str| text.lines().any(|l| marks(l, anchor));
        let (shown, whole): (Vec<&str>, Vec<&str>) = anchors.into_iter().partition(marked);
        for (group, mode) in [(shown, ""), (whole, "(whole file) ")] {
            if group.is_empty() {
                continue;
            }
            let _ = writeln!(groups, "    {path:?} {mode}{{");
            for anchor in group {
                let _ = writeln!(groups, "        {anchor},");
            }
            groups.push_str("    }\n");
        }
    }
    if groups.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("casebook_model::cpp_variants! {{\n{groups}}}\n"))
}

/// Whether `line` opens the anchor `anchor`, read as mdBook reads it: after
/// `ANCHOR:` and any blanks, the longest run of word characters and `-`.
fn marks(line: &str, anchor: &str) -> bool {
    line.split_once("ANCHOR:").is_some_and(|(_, rest)| {
        let name = rest.trim_start();
        let end = name
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(name.len());
        &name[..end] == anchor
    })
}

/// What a scenario's build script is rerun for: its `names.toml`, `cpp/`
/// and `device/`, those of them that exist. Cargo takes a path that does not
/// exist for changed, which would rerun the script, and nvcc, on every
/// build; where one is missing, `src/lib.rs` stands in for it, since the
/// variants that run a new `cpp/` or load a new `device/` are declared
/// there: either comes with an edit there, which reruns the script.
pub fn watched(scenario: &Path) -> Vec<&'static str> {
    let mut paths: Vec<&str> = ["names.toml", "cpp", "device"]
        .into_iter()
        .filter(|p| scenario.join(p).exists())
        .collect();
    if paths.len() < 3 {
        paths.push("src/lib.rs");
    }
    paths
}

/// A cc build for host C++ with device code: nvcc, C++17, the static CUDA
/// runtime, the shared headers on the include path.
pub fn host_build(nvcc: &Nvcc) -> cc::Build {
    let gencode: Vec<String> = GENCODE.iter().map(|s| (*s).to_owned()).collect();
    host_build_for(nvcc, &gencode)
}

/// [`host_build`], with the device code compiled for `gencode`.
fn host_build_for(nvcc: &Nvcc, gencode: &[String]) -> cc::Build {
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
    for code in gencode {
        build.flag(code);
    }
    link_search(nvcc);
    build
}

/// The static CUDA runtime the kernels link, copied from the toolkit (the
/// PyPI toolkit keeps it in lib/, a system one in lib64/) into a folder of
/// its own under the target directory, which is what the link searches: a
/// link-search folder is also put on the run-time library path of the
/// binaries, and packed whole into a nextest archive, and the toolkit's own
/// holds its shared libraries too (libnvvm alone is 60 MB).
const STATIC_RUNTIME: &[&str] = &["libcudart_static.a", "libcudadevrt.a"];

fn link_search(nvcc: &Nvcc) {
    let home = nvcc.home();
    let Some(from) = ["lib", "lib64", "targets/x86_64-linux/lib"]
        .iter()
        .map(|lib| home.join(lib))
        .find(|dir| dir.join(STATIC_RUNTIME[0]).exists())
    else {
        return;
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("run by cargo"));
    // OUT_DIR is <target>/<profile>/build/<package>/out.
    let to = out
        .ancestors()
        .nth(4)
        .map(|target| target.join("cuda-static-runtime"))
        .unwrap_or_else(|| out.join("cuda-static-runtime"));
    let copied = std::fs::create_dir_all(&to).and_then(|()| {
        for lib in STATIC_RUNTIME {
            let source = from.join(lib);
            if !source.exists() {
                continue;
            }
            // Build scripts run side by side: each writes its own copy, then
            // renames it into place, so none links a half-written file.
            let part = to.join(format!("{lib}.{}", std::process::id()));
            std::fs::copy(&source, &part)?;
            std::fs::rename(&part, to.join(lib))?;
        }
        Ok(())
    });
    match copied {
        Ok(()) => println!("cargo::rustc-link-search=native={}", to.display()),
        // Linking from the toolkit's folder still works.
        Err(_) => println!("cargo::rustc-link-search=native={}", from.display()),
    }
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo::rustc-link-lib={lib}");
    }
}

/// The line by which a `.cu` file names the machine code it is compiled
/// for, in place of [`GENCODE`]: `// gencode: -gencode=arch=compute_75,code=sm_75`.
/// A scenario about architectures needs modules that lack the GPU's code.
/// The line may also ask for a compressed fatbin (`--compress-mode=size`),
/// for a module of many kernels.
pub const GENCODE_LINE: &str = "// gencode:";

/// The `-gencode` flags a source is compiled with: those its
/// [`GENCODE_LINE`] names, or [`GENCODE`].
pub fn gencode_of(source: &str) -> Result<Vec<String>, String> {
    let Some(line) = source
        .lines()
        .find_map(|l| l.trim().strip_prefix(GENCODE_LINE))
    else {
        return Ok(GENCODE.iter().map(|s| (*s).to_owned()).collect());
    };
    let flags: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    let allowed = |f: &String| f.starts_with("-gencode=arch=") || f.starts_with("--compress-mode=");
    if !flags.iter().any(|f| f.starts_with("-gencode=arch=")) || !flags.iter().all(allowed) {
        return Err(format!(
            "`{GENCODE_LINE}{line}`: name one or more -gencode=arch=…,code=… flags, and at most \
             a --compress-mode=…"
        ));
    }
    Ok(flags)
}

fn gencode_of_file(source: &Path) -> Result<Vec<String>, String> {
    let text =
        fs::read_to_string(source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    gencode_of(&text).map_err(|e| format!("{}: {e}", source.display()))
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
            .args(gencode_of_file(&source)?)
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
/// They are `static`: each translation unit keeps its own scenario's. Every
/// scenario's C++ is linked into one program, and scenarios reuse
/// identifiers (`LATER_CALL`) for different texts; with external linkage
/// (`inline constexpr`) the linker keeps one of them, and a variant records
/// another scenario's name.
pub fn header(vocabulary: &[Name]) -> String {
    let mut h = String::from(
        "// Generated from names.toml by casebook-build: do not edit.\n\
         // The names this scenario's variants record, declared once.\n\
         #pragma once\n#include \"casebook.h\"\n\nnamespace names {\n",
    );
    for name in vocabulary.iter().chain(&global::vocabulary()) {
        let text = format!("{:?}", name.text);
        let unit = name.unit.map(|u| format!("casebook::{u}"));
        let line = match (name.kind, unit, name.per.as_deref()) {
            ("check", None, None) => format!("casebook::CheckName {}{{{text}}}", name.ident),
            ("fact", None, None) => format!("casebook::FactName {}{{{text}}}", name.ident),
            ("measure", Some(unit), None) => {
                format!("casebook::MeasureName {}{{{text}, {unit}}}", name.ident)
            }
            ("series", Some(unit), Some(per)) => format!(
                "casebook::SeriesName {}{{{text}, {:?}, {unit}}}",
                name.ident, per
            ),
            (kind, ..) => unreachable!(
                "parse_vocabulary admits no `{kind} {}` like this",
                name.ident
            ),
        };
        let _ = writeln!(h, "static constexpr {line};");
    }
    h.push_str(
        "}  // namespace names\n\nnamespace casebook {\n\
         // Whether the variant runs under compute-sanitizer, where heavy variants\n\
         // run a reduced form; records that it does.\n\
         static inline bool under_sanitizer(const casebook_recorder *r) {\n  \
         return under_sanitizer(r, names::REDUCED);\n}\n}  // namespace casebook\n",
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
[checks]
OK = 'reader sees "what" it was given'
[facts]
REUSED = { name = "reused", doc = "Documented." }
[measures]
FREE = { key = "free_bytes", unit = "bytes" }
[series]
CURVE = { key = "free_bytes", per = "call", unit = "bytes" }
"#;

    #[test]
    fn the_header_declares_every_name_with_its_unit() {
        let h = header(&parse_vocabulary(SAMPLE).unwrap());
        assert!(h.contains(
            r#"static constexpr casebook::CheckName OK{"reader sees \"what\" it was given"};"#
        ));
        assert!(h.contains(r#"static constexpr casebook::FactName REUSED{"reused"};"#));
        assert!(h.contains(
            r#"static constexpr casebook::MeasureName FREE{"free_bytes", casebook::Bytes};"#
        ));
        assert!(h.contains(
            r#"static constexpr casebook::SeriesName CURVE{"free_bytes", "call", casebook::Bytes};"#
        ));
        assert!(h.contains(r#"FactName REDUCED{"reduced for the sanitizer"}"#));
    }

    #[test]
    fn every_name_in_the_header_is_local_to_its_translation_unit() {
        // Two scenarios may give one identifier different texts; their C++
        // is linked into one program, so nothing here may have external
        // linkage (an `inline` variable or function would be merged).
        let h = header(&parse_vocabulary(SAMPLE).unwrap());
        for line in h
            .lines()
            .filter(|l| l.contains("constexpr") || l.contains('('))
        {
            let local =
                line.starts_with("static ") || !line.contains("constexpr") && !line.contains(") {");
            assert!(local, "external linkage: {line}");
        }
    }

    #[test]
    fn the_rust_names_keep_the_order_docs_and_units() {
        let rs = rust_names(&parse_vocabulary(SAMPLE).unwrap());
        let body: Vec<&str> = rs.lines().skip(2).map(str::trim).collect();
        assert_eq!(
            body,
            [
                r#"check OK = "reader sees \"what\" it was given";"#,
                r#"#[doc = "Documented."]"#,
                r#"fact REUSED = "reused";"#,
                r#"measure FREE = "free_bytes" in Bytes;"#,
                r#"series CURVE = "free_bytes" per "call" in Bytes;"#,
                "}",
            ]
        );
    }

    #[test]
    fn a_source_is_compiled_for_the_machine_code_it_names_or_the_usual() {
        assert_eq!(gencode_of("__global__ void k() {}").unwrap(), GENCODE);
        assert_eq!(
            gencode_of("// gencode: -gencode=arch=compute_75,code=sm_75\n__global__ void k() {}")
                .unwrap(),
            ["-gencode=arch=compute_75,code=sm_75"]
        );
        let bad = gencode_of("// gencode: -arch=sm_75").unwrap_err();
        assert!(bad.contains("-gencode=arch="), "{bad}");
        assert!(gencode_of("// gencode:").is_err());
        assert_eq!(
            gencode_of("// gencode: -gencode=arch=compute_90,code=sm_90 --compress-mode=size")
                .unwrap(),
            [
                "-gencode=arch=compute_90,code=sm_90",
                "--compress-mode=size"
            ]
        );
        assert!(gencode_of("// gencode: --compress-mode=size").is_err());
        assert!(gencode_of("// gencode: -gencode=arch=compute_90,code=sm_90 -O0").is_err());
    }

    #[test]
    fn the_cpp_variants_are_the_entry_points_each_shown_by_its_anchor_or_whole() {
        let anchored = "// ANCHOR: broken\n\
             extern \"C\" int casebook_missing_free_broken_cpp(const casebook_recorder *r) {\n\
             // ANCHOR_END: broken\n\
             extern \"C\" int casebook_missing_free_fixed_cpp(const casebook_recorder *r) {\n\
             // ANCHOR: fixed_call\n\
             extern \"C\" int casebook_other_case_probe_cpp(const casebook_recorder *r) {\n";
        let files = [
            ("cpp/missing_free.cu".to_owned(), anchored.to_owned()),
            (
                "cpp/none.cu".to_owned(),
                "static int f() { return 0; }\n".to_owned(),
            ),
        ];
        assert_eq!(
            cpp_variants("missing-free", &files).unwrap(),
            "casebook_model::cpp_variants! {\n    \
             \"cpp/missing_free.cu\" {\n        broken,\n    }\n    \
             \"cpp/missing_free.cu\" (whole file) {\n        fixed,\n    }\n}\n"
        );
        assert_eq!(cpp_variants("missing-free", &files[1..]).unwrap(), "");
        let misnamed = [(
            "cpp/x.cu".to_owned(),
            "extern \"C\" int casebook_missing_free_broken(const casebook_recorder *r) {"
                .to_owned(),
        )];
        let e = cpp_variants("missing-free", &misnamed).unwrap_err();
        assert!(e.contains("`broken` does not end in `_cpp`"), "{e}");
    }

    #[test]
    fn a_build_script_watches_only_paths_that_exist() {
        let dir = std::env::temp_dir().join(format!("casebook-watched-{}", std::process::id()));
        fs::create_dir_all(dir.join("cpp")).unwrap();
        fs::write(dir.join("names.toml"), "").unwrap();
        assert_eq!(watched(&dir), ["names.toml", "cpp", "src/lib.rs"]);
        fs::create_dir_all(dir.join("device")).unwrap();
        assert_eq!(watched(&dir), ["names.toml", "cpp", "device"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_malformed_vocabulary_is_one_line_that_names_the_entry() {
        let cases = [
            ("[check]\nA = \"a\"", "unknown table [check]"),
            (
                "[checks]\nlower = \"a\"",
                "checks.lower: a name's constant is written in UPPER_SNAKE_CASE",
            ),
            (
                "[measures]\nM = \"m\"",
                "measures.M: expected a table with key, unit, doc",
            ),
            (
                "[measures]\nM = { key = \"m\" }",
                "measures.M: `unit` is missing",
            ),
            (
                "[measures]\nM = { key = \"m\", unit = \"GiB\" }",
                "unit `GiB` is not bytes",
            ),
            (
                "[series]\nS = { key = \"s\", unit = \"count\" }",
                "series.S: `per` (what x counts) is missing",
            ),
            (
                "[facts]\nF = { name = \"f\", units = \"x\" }",
                "facts.F: unknown field `units`",
            ),
            ("[facts\n", "names.toml: "),
        ];
        for (text, expected) in cases {
            let e = parse_vocabulary(text).unwrap_err();
            assert!(e.contains(expected), "{text:?} gave {e:?}");
            assert!(!e.contains('\n'), "{e:?} is more than one line");
        }
    }
}
