//! `casebook-cust`: serves one cust variant to the harness (see the library).

use std::process::ExitCode;

const USAGE: &str = "casebook-cust: runs one cust variant when the casebook harness starts it \
                     (CASEBOOK_CHILD=<scenario>::<variant>, CASEBOOK_EVENTS=<file>); run the \
                     variants with `casebook run-all --filter cust`";

fn main() -> ExitCode {
    casebook_runtime::child::serve_variants_if_child(&casebook_cust::lookup);
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        for (name, _) in casebook_cust::served() {
            println!("  {name}");
        }
        return ExitCode::SUCCESS;
    }
    eprintln!("{USAGE}");
    casebook_report::Exit::BadInput.into()
}
