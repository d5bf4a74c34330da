//! Compiles the kernels several scenarios share (`device/*.cu`) into
//! fatbins for the Rust variants, through the shared build helper.

use std::path::PathBuf;

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo"));
    println!("cargo::rerun-if-changed=device");
    let Some(nvcc) = casebook_build::nvcc() else {
        return;
    };
    println!("cargo::rustc-env=CASEBOOK_TOOLKIT={}", nvcc.version);
    match casebook_build::fatbins(&nvcc, &here.join("device")) {
        Ok(consts) => {
            let out = PathBuf::from(std::env::var("OUT_DIR").expect("run by cargo"));
            std::fs::write(out.join("fatbins.rs"), consts).expect("OUT_DIR is writable");
        }
        Err(e) => println!("cargo::error={e}"),
    }
}
