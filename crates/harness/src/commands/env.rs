//! `casebook env`: the machine's fingerprint (GPU, driver, CUDA, toolkit)
//! as JSON.

use std::process::ExitCode;

use crate::environment;

pub fn run() -> ExitCode {
    match environment::detect() {
        Ok(env) => {
            println!("{}", serde_json::to_string_pretty(&env).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(reason) => {
            eprintln!("error: {reason}");
            reason.exit().into()
        }
    }
}
