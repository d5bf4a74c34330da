//! `explain`: from a pasted CUDA error text to the case of cuda-casebook
//! that reproduces it.
//!
//! The crate reads only the generated index (`docs/src/explain/index.json`:
//! the texts each case's variants returned on a GPU and the texts users
//! paste for it, cited), so it builds in seconds without CUDA, nvcc or the
//! casebook's runner. `casebook explain` and the standalone
//! `casebook-explain` binary share its command line; the book's "Paste your
//! error" page runs the same ranking in JavaScript.

pub mod answer;
pub mod cli;
pub mod description;
pub mod features;
pub mod heldout;
pub mod index;
pub mod matcher;
pub mod rank;
pub mod vocabulary;

pub use answer::{Answer, Match, explain};
pub use index::Index;
