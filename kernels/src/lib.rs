//! The CUDA every scenario shares, compiled once by nvcc (see `build.rs`):
//! the device kernels several scenarios' Rust variants load with cudarc,
//! and `include/casebook.h`, the C++ side of the recorder ABI. Each
//! scenario's own C++ is in its folder (`scenarios/<slug>/cpp/`), compiled
//! by its build script through `casebook-build`.

/// The toolkit that compiled these kernels (`13.0.88`).
pub const TOOLKIT: &str = env!("CASEBOOK_TOOLKIT");

pub mod fatbin {
    include!(concat!(env!("OUT_DIR"), "/fatbins.rs"));
}
