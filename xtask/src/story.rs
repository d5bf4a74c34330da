//! The order a case's `src/lib.rs` reads in, checked by this module's test:
//! its story first (the doc comment, the scenario: symptom and variants),
//! then the experiment its variants share, then the claims (`CLAIMS` and
//! the judges it names), then the tests. A reader follows the case top to
//! bottom and meets each claim after the program it is decided on.

use std::path::Path;

/// What in `lib_rs` stands after its claims but is not a claim's judge: the
/// first line of each such item, or nothing when the file is in order (or
/// has no claims).
pub fn after_the_claims(lib_rs: &str) -> Vec<String> {
    let lines: Vec<&str> = lib_rs.lines().collect();
    let Some(claims) = lines.iter().position(|l| is_claims(l)) else {
        return Vec::new();
    };
    let Some(end) =
        (claims..lines.len()).find(|&i| lines[i].starts_with("];") || lines[i].starts_with("}];"))
    else {
        return vec![format!("{}: CLAIMS has no end", lines[claims])];
    };
    let mut out = Vec::new();
    let mut i = end + 1;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if starts_an_item(line) {
            // The item's head: its lines up to the first `{`.
            let head: String = lines[i..]
                .iter()
                .take_while(|l| !l.contains('{'))
                .chain(lines[i..].iter().find(|l| l.contains('{')))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let head = head.split('{').next().unwrap_or("");
            if !(is_fn(line) && head.contains("-> ClaimVerdict")) {
                out.push(line.trim_end().to_owned());
            }
        }
        i += 1;
    }
    out
}

/// `const CLAIMS`, public or not.
fn is_claims(line: &str) -> bool {
    [
        "const CLAIMS",
        "pub const CLAIMS",
        "pub(crate) const CLAIMS",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

/// A line that begins a top-level item (rustfmt puts it at column 0).
fn starts_an_item(line: &str) -> bool {
    !line.is_empty()
        && !line.starts_with(char::is_whitespace)
        && !line.starts_with(['/', '#', '}', ']', ')'])
}

fn is_fn(line: &str) -> bool {
    ["fn ", "pub fn ", "pub(crate) fn "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// Every case under `root`'s `scenarios/` whose `lib.rs` is out of order,
/// with what stands after its claims.
pub fn out_of_order(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root.join("scenarios")) else {
        return vec!["no scenarios/ folder".to_owned()];
    };
    let mut dirs: Vec<_> = dirs.flatten().map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs {
        let lib = dir.join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            continue;
        };
        for line in after_the_claims(&text) {
            found.push(format!("{}: after the claims: {line}", lib.display()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_reads_symptom_experiment_claims() {
        let found = out_of_order(&crate::project::root());
        assert!(
            found.is_empty(),
            "the experiment goes before the claims (move CLAIMS and its judges to the end, \
             before the tests):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn only_a_judge_may_follow_the_claims() {
        let in_order = "pub fn scenario() {}\n\nfn setup() {}\n\nconst CLAIMS: &[Claim] = &[\n    \
                        Claim {},\n];\n\nfn judge(\n    o: &Outcome,\n) -> ClaimVerdict {\n    \
                        todo!()\n}\n\n#[cfg(test)]\nmod tests {\n    fn helper() {}\n}\n";
        assert!(after_the_claims(in_order).is_empty());
        let out = "pub fn scenario() {}\n\nconst CLAIMS: &[Claim] = &[\n];\n\n/// Shared.\n\
                   pub(crate) struct Setup {\n    a: u8,\n}\n\nfn judge(o: &Outcome) -> ClaimVerdict {}\n";
        assert_eq!(after_the_claims(out), vec!["pub(crate) struct Setup {"]);
        assert!(after_the_claims("pub fn scenario() {}\n").is_empty());
        let one = "const CLAIMS: &[Claim] = &[Claim {\n    id: \"a\",\n}];\n\nfn setup() {}\n";
        assert_eq!(after_the_claims(one), vec!["fn setup() {}"]);
    }
}
