//! The build script of every case, named by each one's manifest
//! (`build = "../../kernels/build/scenario.rs"`): its vocabulary, kernels
//! and C++ (see `casebook_build::scenario`).

fn main() {
    casebook_build::scenario();
}
