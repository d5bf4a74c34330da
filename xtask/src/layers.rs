//! The layering rules, checked by the tests of this module.
//!
//! The graph is read from the code: each crate's modules (its `mod`
//! declarations) and the paths its code names (`use` statements and paths
//! in expressions: `crate::…`, `super::…`, `casebook_report::…`), with its
//! `#[cfg(test)]` modules left out. From it:
//! - which workspace crates each crate's code names: the child side
//!   (model, driver, runtime, the scenarios) names no parent side (runner,
//!   report), the readers of reports (cookbook, report) never the runner
//!   nor the recorded driver calls (`casebook-driver`), and
//!   `casebook-explain` no crate of the workspace, so it builds alone;
//! - each crate's modules import one another in no circle.
//!
//! Linking is `cargo metadata`'s to say, not the code's: the cookbook, the
//! report, the runner, the runtime and the model build without nvcc, and
//! the model, the report and the cookbook without cudarc or NVML.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate of the workspace: its name as code names it, and its modules.
#[derive(Debug)]
pub struct Crate {
    /// `casebook_harness`, `cuda_casebook`, `scenario_missing_free`.
    pub name: String,
    /// Module path (`crate`, `crate::runner::scheduler`) to its code, tests
    /// left out.
    pub modules: BTreeMap<String, String>,
}

/// Every crate of the workspace at `root`: `crates/*`, `kernels`,
/// `kernels/build`, `xtask`, `scenarios/*` and the root package.
pub fn workspace(root: &Path) -> Vec<Crate> {
    let mut dirs = vec![
        root.to_path_buf(),
        root.join("kernels"),
        root.join("kernels/build"),
        root.join("xtask"),
    ];
    for group in ["crates", "scenarios"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(group))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("Cargo.toml").is_file())
            .collect();
        found.sort();
        dirs.extend(found);
    }
    dirs.iter().filter_map(|dir| read_crate(dir)).collect()
}

/// The crate whose manifest is in `dir`, read from its `src/lib.rs` or
/// `src/main.rs`.
fn read_crate(dir: &Path) -> Option<Crate> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let name = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("name = \""))?
        .trim_end_matches('"')
        .replace('-', "_");
    let top = ["src/lib.rs", "src/main.rs"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())?;
    let mut modules = BTreeMap::new();
    read_module(&top, "crate", &mut modules);
    Some(Crate { name, modules })
}

/// Reads the module at `file`, named `path`, and the modules it declares.
fn read_module(file: &Path, path: &str, modules: &mut BTreeMap<String, String>) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let code = without_tests(&blank_literals(&text));
    // A module's own folder: `a.rs` keeps `a/`, `lib.rs` and `mod.rs` their own.
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = match stem {
        "lib" | "main" | "mod" => file.parent().map(Path::to_path_buf),
        _ => file.parent().map(|p| p.join(stem)),
    }
    .unwrap_or_default();
    for (name, at) in declared_modules(&code, &text) {
        let child = match at {
            Some(at) => file.parent().unwrap_or(Path::new(".")).join(at),
            None if dir.join(format!("{name}.rs")).is_file() => dir.join(format!("{name}.rs")),
            None => dir.join(&name).join("mod.rs"),
        };
        read_module(&child, &format!("{path}::{name}"), modules);
    }
    add_inline(path, code, modules);
}

/// Adds the module `path` whose code is `code`, and each inline module
/// (`mod name { … }`) in it as a module of its own.
fn add_inline(path: &str, code: String, modules: &mut BTreeMap<String, String>) {
    let mut outer = code;
    while let Some((name, open, close)) = inline_module(&outer) {
        let body: String = outer[open + 1..close].to_owned();
        let blanked: String = outer[open + 1..close]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        outer.replace_range(open + 1..close, &blanked);
        add_inline(&format!("{path}::{name}"), body, modules);
    }
    modules.insert(path.to_owned(), outer);
}

/// The first inline module of `code` that still has a body: its name and
/// the byte offsets of its braces.
fn inline_module(code: &str) -> Option<(String, usize, usize)> {
    let mut from = 0;
    while let Some(at) = code[from..].find("mod ") {
        let at = from + at;
        from = at + 4;
        if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let chars: Vec<char> = code.chars().collect();
        // Byte offsets and char offsets agree here: blanked code is ASCII
        // outside identifiers, and a module's braces are code.
        let close_char = matching(&chars, code[..open].chars().count());
        let close = code.char_indices().nth(close_char).map(|(b, _)| b)?;
        if code[open + 1..close].trim().is_empty() {
            continue;
        }
        return Some((name, open, close));
    }
    None
}

/// `mod name;` declarations (not inline modules), with a `#[path]` if given.
fn declared_modules(code: &str, text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let lines: Vec<&str> = code.lines().collect();
    let raw: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        let rest = ["pub mod ", "pub(crate) mod ", "mod "]
            .iter()
            .find_map(|p| line.strip_prefix(p));
        let Some(name) = rest.and_then(|r| r.strip_suffix(';')) else {
            continue;
        };
        // The path attribute's string is blanked in `code`; read it raw.
        let at = i
            .checked_sub(1)
            .and_then(|j| raw.get(j))
            .and_then(|l| l.trim().strip_prefix("#[path = \""))
            .and_then(|l| l.strip_suffix("\"]"))
            .map(str::to_owned);
        found.push((name.trim().to_owned(), at));
    }
    found
}

/// `text` with the insides of comments, strings and character literals
/// blanked (newlines kept), so that braces and paths in them are not code.
fn blank_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&chars, i) {
            // r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            let closing: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let closing: Vec<char> = closing.chars().collect();
            while j < chars.len() && chars[j..].get(..closing.len()) != Some(&closing[..]) {
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j + closing.len();
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'), not a lifetime ('a).
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push('\'');
                    (i + 1..end).for_each(|_| out.push(' '));
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// `code` without its `#[cfg(test)]` items: what only the tests import is
/// not the layering.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        // The item ends at its block's closing brace, or at its `;`.
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        out.extend(
            item[..end]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Every path `code` names (`crate::a::b`, `super::c`, `casebook_x::y`),
/// as written: `use` trees are expanded (`use crate::{a, b::c}` names
/// `crate::a` and `crate::b::c`).
fn named_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_alphabetic() || bytes[i] == '_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_alphanumeric() || bytes[i] == '_' || bytes[i] == ':')
            {
                i += 1;
            }
            let raw: String = bytes[start..i].iter().collect();
            let word = raw.trim_end_matches(':');
            // `$crate::…` in a macro is a path of wherever it expands.
            let preceded = start > 0 && matches!(bytes[start - 1], ':' | '.' | '$');
            if preceded {
                continue;
            }
            if raw.ends_with("::") && bytes.get(i) == Some(&'{') {
                // `prefix::{…}`: a use tree.
                let close = matching(&bytes, i);
                let inner: String = bytes[i + 1..close].iter().collect();
                for item in split_top(&inner) {
                    let item = if item.contains('{') {
                        item.trim().to_owned()
                    } else {
                        item.split(" as ").next().unwrap_or(&item).trim().to_owned()
                    };
                    match item.as_str() {
                        "" | "*" | "self" => paths.push(word.to_owned()),
                        _ if item.contains('{') => {
                            paths.extend(named_paths(&format!("{word}::{item}")))
                        }
                        _ => paths.extend(named_paths(&format!("{word}::{item}"))),
                    }
                }
                i = close + 1;
            } else if word.contains("::") {
                paths.push(word.to_owned());
            }
        } else {
            i += 1;
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

/// The index of the brace that closes the one at `open`.
fn matching(chars: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (k, &c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    chars.len() - 1
}

/// `a, b::{c, d}, e` split at its top-level commas.
fn split_top(list: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut depth = 0;
    for c in list.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        items.last_mut().expect("one").push(c);
    }
    items
}

/// The workspace crates `krate`'s code names, by their code names.
pub fn crates_named(krate: &Crate, all: &[Crate]) -> BTreeSet<String> {
    let names: BTreeSet<&str> = all.iter().map(|c| c.name.as_str()).collect();
    krate
        .modules
        .values()
        .flat_map(|code| named_paths(code))
        .filter_map(|p| p.split("::").next().map(str::to_owned))
        .filter(|first| names.contains(first.as_str()) && *first != krate.name)
        .collect()
}

/// Module → the other modules of its crate it names. A name a module
/// only re-exports (`pub use`) counts as the module that defines it.
pub fn module_graph(krate: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let exports = re_exports(krate);
    let mut graph = BTreeMap::new();
    for (module, code) in &krate.modules {
        let to = named_paths(code)
            .iter()
            .filter_map(|path| in_crate(krate, module, path))
            .filter_map(|path| defined_in(krate, &exports, &path, 0))
            .filter(|target| target != module)
            .collect();
        graph.insert(module.clone(), to);
    }
    graph
}

/// `path`, as written in `module`, from the crate's root; `None` for a
/// path into another crate. A path may start at a child module of this one
/// (`page::f` in `lib.rs`), as uniform paths allow.
fn in_crate(krate: &Crate, module: &str, path: &str) -> Option<String> {
    let first = path.split("::").next().unwrap_or("");
    if krate.modules.contains_key(&format!("{module}::{first}")) {
        return absolute(module, &format!("self::{path}"));
    }
    absolute(module, path)
}

/// What each module's `use` statements bring in by name: (module, name) →
/// the path it stands for, from the root, or `None` for a name from
/// another crate. A module that names `super::PathBuf` names std's, not
/// its parent.
fn re_exports(krate: &Crate) -> BTreeMap<(String, String), Option<String>> {
    let mut exports = BTreeMap::new();
    for (module, code) in &krate.modules {
        for statement in code.split(';') {
            let Some(tree) = use_tree(statement) else {
                continue;
            };
            for path in named_paths(tree) {
                let Some(name) = path.rsplit("::").next() else {
                    continue;
                };
                exports.insert(
                    (module.clone(), name.to_owned()),
                    in_crate(krate, module, &path),
                );
            }
        }
    }
    exports
}

/// The tree of the `use` statement that ends `chunk` (the code between
/// two semicolons), if one does.
fn use_tree(chunk: &str) -> Option<&str> {
    let at = chunk
        .match_indices("use ")
        .map(|(i, _)| i)
        .filter(|&i| !chunk[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .last()?;
    Some(&chunk[at + 4..])
}

/// The declared module that defines what `path` (from the root) names:
/// the longest module the path is in, or, where that module only
/// re-exports the name, the module it comes from.
fn defined_in(
    krate: &Crate,
    exports: &BTreeMap<(String, String), Option<String>>,
    path: &str,
    depth: usize,
) -> Option<String> {
    let mut target = path;
    let mut first_after = None;
    while !krate.modules.contains_key(target) {
        let (parent, name) = target.rsplit_once("::")?;
        first_after = Some(name);
        target = parent;
    }
    if let Some(name) = first_after
        && let Some(to) = exports.get(&(target.to_owned(), name.to_owned()))
        && depth < 8
    {
        // Brought in from another crate: no module of this one.
        let to = to.as_deref()?;
        if to != path {
            let rest = &path[target.len() + 2 + name.len()..];
            return defined_in(krate, exports, &format!("{to}{rest}"), depth + 1);
        }
    }
    Some(target.to_owned())
}

/// `path` as written in `module`, from the crate's root; `None` for a
/// path outside the crate.
fn absolute(module: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = module.split("::").collect();
    let mut rest = path.split("::").peekable();
    match *rest.peek()? {
        "crate" => {
            parts = vec!["crate"];
            rest.next();
        }
        "self" => {
            rest.next();
        }
        "super" => {
            while rest.peek() == Some(&"super") {
                rest.next();
                parts.pop();
            }
        }
        _ => return None,
    }
    parts.extend(rest);
    Some(parts.join("::"))
}

/// The circles of `graph`: its strongly connected parts of two or more
/// modules (Tarjan's algorithm), each sorted.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                part.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                s.found.push(part);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found.sort();
    state.found
}

/// Every layer the code crosses the wrong way, in words.
pub fn crossings(all: &[Crate]) -> Vec<String> {
    const PARENT_SIDE: &[&str] = &["casebook_harness", "casebook_report"];
    let mut problems = Vec::new();
    for krate in all {
        let named = crates_named(krate, all);
        let child_side = krate.name.starts_with("scenario_")
            || matches!(
                krate.name.as_str(),
                "casebook_model" | "casebook_driver" | "casebook_runtime"
            );
        let reader = matches!(krate.name.as_str(), "casebook_cookbook" | "casebook_report");
        let forbidden: Vec<&str> = if child_side {
            PARENT_SIDE.to_vec()
        } else if reader {
            vec!["casebook_harness", "casebook_driver"]
        } else if krate.name == "casebook_explain" {
            named.iter().map(String::as_str).collect()
        } else {
            Vec::new()
        };
        for name in named.iter().filter(|n| forbidden.contains(&n.as_str())) {
            problems.push(format!("{} names {name}", krate.name));
        }
    }
    problems
}

/// The packages each workspace package depends on, directly or not.
pub fn closures(metadata: &serde_json::Value) -> BTreeMap<String, BTreeSet<String>> {
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let direct: BTreeMap<&str, Vec<&str>> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let deps = n["deps"]
                .as_array()?
                .iter()
                .filter_map(|d| name_of.get(d["pkg"].as_str()?).copied())
                .collect();
            Some((*name_of.get(n["id"].as_str()?)?, deps))
        })
        .collect();
    let members = metadata["workspace_members"]
        .as_array()
        .into_iter()
        .flatten();
    members
        .filter_map(|id| name_of.get(id.as_str()?).copied())
        .map(|root| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![root];
            while let Some(p) = stack.pop() {
                for d in direct.get(p).into_iter().flatten() {
                    if seen.insert(d.to_string()) {
                        stack.push(d);
                    }
                }
            }
            (root.to_owned(), seen)
        })
        .collect()
}

/// The packages that depend on a GPU library (cudarc, NVML) but must not:
/// what declares cases and reads their reports builds without one.
pub fn links_a_gpu_library(closures: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for package in ["casebook-model", "casebook-report", "casebook-cookbook"] {
        for d in ["cudarc", "nvml-wrapper"] {
            if closures.get(package).is_some_and(|deps| deps.contains(d)) {
                problems.push(format!("{package} depends on {d}"));
            }
        }
    }
    problems
}

/// The packages that link the CUDA build (nvcc) but must not.
pub fn links_the_cuda_build(closures: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    let cuda_build = ["casebook-kernels", "casebook-build"];
    for package in [
        "casebook-cookbook",
        "casebook-report",
        "casebook-harness",
        "casebook-runtime",
        "casebook-model",
    ] {
        for d in cuda_build {
            if closures.get(package).is_some_and(|deps| deps.contains(d)) {
                problems.push(format!("{package} depends on the CUDA build ({d})"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_crate(name: &str, modules: &[(&str, &str)]) -> Crate {
        Crate {
            name: name.to_owned(),
            modules: modules
                .iter()
                .map(|(m, code)| ((*m).to_owned(), without_tests(&blank_literals(code))))
                .collect(),
        }
    }

    #[test]
    fn the_workspace_keeps_its_layers() {
        let all = workspace(&crate::project::root());
        for expected in [
            "casebook_harness",
            "casebook_cookbook",
            "casebook_runtime",
            "cuda_casebook",
        ] {
            assert!(
                all.iter().any(|c| c.name == expected),
                "{expected} not read"
            );
        }
        assert_eq!(crossings(&all), Vec::<String>::new());
    }

    #[test]
    fn no_crate_s_modules_import_each_other_in_a_circle() {
        let all = workspace(&crate::project::root());
        let harness = all
            .iter()
            .find(|c| c.name == "casebook_harness")
            .expect("read");
        assert!(harness.modules.len() > 10, "{:?}", harness.modules.keys());
        let mut found = Vec::new();
        for krate in all.iter().filter(|c| !c.name.starts_with("scenario_")) {
            for circle in circles(&module_graph(krate)) {
                found.push(format!("{}: {}", krate.name, circle.join(" <-> ")));
            }
        }
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn the_cuda_build_and_the_gpu_libraries_are_linked_only_where_needed() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(cargo)
            .args(["metadata", "--format-version", "1"])
            .current_dir(crate::project::root())
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let closures = closures(&metadata);
        assert!(closures.contains_key("casebook-cookbook"));
        assert_eq!(links_the_cuda_build(&closures), Vec::<String>::new());
        assert!(closures["casebook-driver"].contains("cudarc"));
        assert_eq!(links_a_gpu_library(&closures), Vec::<String>::new());
    }

    #[test]
    fn paths_are_read_from_use_trees_and_code_but_not_from_text() {
        let code = blank_literals(
            "use crate::{a, b::{c, d as e}, f::*};\nuse super::g;\n\
             // crate::in_a_comment\nfn x() { crate::h::call(\"crate::in_a_string\"); let c = '{'; }",
        );
        let paths = named_paths(&code);
        for p in [
            "crate::a",
            "crate::b::c",
            "crate::b::d",
            "crate::f",
            "super::g",
            "crate::h::call",
        ] {
            assert!(paths.contains(&p.to_owned()), "{p} not in {paths:?}");
        }
        assert!(!paths.iter().any(|p| p.contains("in_a")), "{paths:?}");
    }

    #[test]
    fn a_circle_is_found_and_test_only_imports_are_not_one() {
        let circled = code_crate(
            "x",
            &[
                ("crate", ""),
                ("crate::a", "use crate::b::thing;"),
                ("crate::b", "fn f() { super::a::other() }"),
                (
                    "crate::c",
                    "use crate::a;\n#[cfg(test)]\nmod tests { use crate::c; }",
                ),
                ("crate::d", "fn f() { e::g() }"),
                ("crate::d::e", "use crate::d;"),
            ],
        );
        assert_eq!(
            circles(&module_graph(&circled)),
            vec![
                vec!["crate::a".to_owned(), "crate::b".to_owned()],
                vec!["crate::d".to_owned(), "crate::d::e".to_owned()],
            ]
        );
        let tests_only = code_crate(
            "y",
            &[
                ("crate", ""),
                ("crate::a", "use crate::b;"),
                (
                    "crate::b",
                    "#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
                ),
            ],
        );
        assert!(circles(&module_graph(&tests_only)).is_empty());
    }

    #[test]
    fn a_scenario_or_the_cookbook_naming_the_runner_is_a_crossing() {
        let all = vec![
            code_crate("scenario_x", &[("crate", "use casebook_harness::trial;")]),
            code_crate(
                "casebook_cookbook",
                &[("crate", "fn f() { casebook_harness::x(); }")],
            ),
            code_crate(
                "casebook_report",
                &[("crate", "use casebook_driver::device;")],
            ),
            code_crate("casebook_driver", &[("crate", "")]),
            code_crate("casebook_harness", &[("crate", "")]),
            code_crate(
                "casebook_explain",
                &[("crate", "use casebook_model::Scenario;")],
            ),
            code_crate("casebook_model", &[("crate", "")]),
        ];
        assert_eq!(
            crossings(&all),
            vec![
                "scenario_x names casebook_harness",
                "casebook_cookbook names casebook_harness",
                "casebook_report names casebook_driver",
                "casebook_explain names casebook_model",
            ]
        );
    }
}
