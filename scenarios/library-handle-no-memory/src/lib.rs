//! `library-handle-no-memory`: a program fills the GPU with its own data
//! (a cache of batches, a second model, another framework's pool), and only
//! then makes its first matrix product or convolution. cuBLAS and cuDNN
//! create their handle and workspace at first use, with memory of their
//! own; none is left, and the error names the library, not the memory:
//! `CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)`,
//! `cuDNN error: CUDNN_STATUS_INTERNAL_ERROR`. The fix leaves the libraries
//! room, and the same calls on the same inputs run: the control that shows
//! the cause is memory, not the library.

use casebook_model::{Program, Requirement, Scenario, Symptom, Variant};

casebook_model::names_module!();

const FILE: &str = "python/handles.py";

/// What PyTorch 2.11 raises when cuBLAS cannot create its handle.
const CUBLAS_ALLOC_FAILED: &str =
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`";
/// What PyTorch 2.11 raises when cuDNN cannot (its status says nothing of
/// memory).
const CUDNN_INTERNAL_ERROR: &str = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "library-handle-no-memory",
        title: "CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle), CUDNN_STATUS_INTERNAL_ERROR \
                (no memory left for the library)",
        cause: "cuBLAS and cuDNN allocate their handle and workspace at their first call, outside \
                the tensors' memory. When the program (or another process, or another framework's \
                pool) has taken all the GPU's memory, that first call fails with the library's \
                status, which does not say memory.",
        fix: "Leave the libraries room: stop caching data short of the GPU's free memory (or cap \
              it with torch.cuda.set_per_process_memory_fraction), make the first matrix product \
              and convolution before filling the GPU, and keep other frameworks from \
              preallocating it.",
        symptoms: &["an error on the first call", "out of memory"],
        requires: Requirement::GPU_FILLED,
        reports: &[],
        claims: &[],
        variants: vec![
            Variant::broken(
                "broken-py",
                Symptom::cuda_error(CUBLAS_ALLOC_FAILED),
                Program::pytorch(FILE, "broken"),
            )
            .then_shows(Symptom::check_failed(PRODUCT)),
            Variant::broken(
                "cudnn-py",
                Symptom::cuda_error(CUDNN_INTERNAL_ERROR),
                Program::pytorch(FILE, "broken_cudnn"),
            )
            .then_shows(Symptom::check_failed(CONVOLUTION)),
            Variant::fixed("fixed-py", Program::pytorch(FILE, "fixed")),
        ],
    }
}
