//! The snapshot regression suite: every variant of every scenario, each in
//! its own child process, judged and compared with its committed snapshot.
//! Without a GPU the GPU trials are ignored, with the reason. Also checks
//! that the generated cookbook is fresh.

use libtest_mimic::Trial;

fn main() -> std::process::ExitCode {
    let root = casebook_harness::workspace::root();
    let docs = Trial::test("catalog::docs-are-fresh", move || {
        let book = cuda_casebook::book(&root).map_err(|e| format!("{e:#}"))?;
        let stale = book.stale(&root);
        if stale.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        Err(format!(
            "stale generated files (run `cargo xtask docs`):\n{}",
            list.join("\n")
        )
        .into())
    });
    casebook_harness::suite::main(cuda_casebook::catalog(), vec![docs])
}
