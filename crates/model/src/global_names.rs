// Names any scenario may record. Included by `casebook_model::names::global`
// and by the build helper (kernels/build), which writes them into every
// scenario's C++ header.
vocabulary! {
    /// A variant that fills the GPU or runs long runs a reduced form under
    /// compute-sanitizer, and records that it did.
    fact REDUCED = "reduced for the sanitizer";
}
