//! `library-handle-no-memory`: a program fills the GPU with its own data
//! (a cache of batches, a second model, another framework's pool), and only
//! then makes its first matrix product or convolution. cuBLAS and cuDNN
//! create their handle and workspace at first use, with memory of their
//! own; none is left, and the error names the library, not the memory:
//! `CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)`,
//! `cuDNN error: CUDNN_STATUS_INTERNAL_ERROR`. The fix leaves the libraries
//! room, and the same calls on the same inputs run: the control that shows
//! the cause is memory, not the library.

use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::case_modules!();

const FILE: &str = "python/handles.py";

casebook_model::scenario!(Scenario {
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
    variants: vec![
        Variant::broken(
            "broken-py",
            Symptom::cuda_error(pytorch::CUBLAS_ALLOC_FAILED),
            Program::pytorch(FILE, "broken"),
        )
        .then_shows(Symptom::check_failed(PRODUCT)),
        Variant::broken(
            "cudnn-py",
            Symptom::cuda_error(pytorch::CUDNN_INTERNAL_ERROR),
            Program::pytorch(FILE, "broken_cudnn"),
        )
        .then_shows(Symptom::check_failed(CONVOLUTION)),
        Variant::fixed("fixed-py", Program::pytorch(FILE, "fixed")),
        // Seed 001's pipeline: each step loads a batch of images and
        // trains a convolutional network on it, and the batches are
        // kept, until the memory runs out.
        Variant::broken(
            "leaky-loader-py",
            Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
            Program::pytorch(FILE, "leaky_loader"),
        )
        .then_shows(Symptom::check_failed(EVERY_STEP_RUNS)),
        Variant::broken(
            "leaky-loader-sizes-py",
            Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
            Program::pytorch(FILE, "leaky_loader_sizes"),
        )
        .then_shows(Symptom::check_failed(EVERY_STEP_RUNS))
        .one_change(
            "leaky-loader-py",
            "the images' size: 512 pixels a side in every batch there; a pixel more in each \
             batch here, a shape cuDNN has not seen at every step",
            "_pipeline(rec, keep=True)",
            "_pipeline(rec, keep=True, grow=True)",
        ),
        Variant::records(
            "leaky-loader-small-batches-py",
            Program::pytorch(FILE, "leaky_loader_small_batches"),
        )
        .one_change(
            "leaky-loader-py",
            "the images' size: 512 pixels a side there (96 MiB a batch); 128 here (6 MiB a \
             batch), so that what the last refused batch leaves free is smaller when the \
             next run's cuDNN asks for its handle and workspace",
            "_pipeline(rec, keep=True)",
            "_pipeline(rec, keep=True, side=SMALL_SIDE)",
        )
        .timeout(std::time::Duration::from_secs(300)),
        Variant::records(
            "leaky-loader-small-next-on-the-gpu-py",
            Program::pytorch(FILE, "leaky_loader_small_next_on_the_gpu"),
        )
        .one_change(
            "leaky-loader-small-batches-py",
            "what the next run trains on: a batch copied from the host there; here the first \
             image of the last batch the pipeline kept, already on the GPU, so that no batch is \
             copied before the next run's first convolution",
            "_pipeline(rec, keep=True, side=SMALL_SIDE)",
            "_pipeline(rec, keep=True, side=SMALL_SIDE, next_run_on=ALREADY_ON_THE_GPU)",
        )
        .timeout(std::time::Duration::from_secs(300)),
        Variant::records(
            "leaky-loader-tiny-next-on-the-gpu-py",
            Program::pytorch(FILE, "leaky_loader_tiny_next_on_the_gpu"),
        )
        .one_change(
            "leaky-loader-small-next-on-the-gpu-py",
            "the images' pixels a side: 128 there (6 MiB a batch); 48 here (0.84 MiB a batch, \
             under the 1 MiB below which PyTorch serves a request from 2 MiB blocks rather \
             than 20 MiB ones), so that the pipeline ends with less memory free",
            "_pipeline(rec, keep=True, side=SMALL_SIDE, next_run_on=ALREADY_ON_THE_GPU)",
            "_pipeline(rec, keep=True, side=TINY_SIDE, next_run_on=ALREADY_ON_THE_GPU)",
        )
        .timeout(std::time::Duration::from_secs(420)),
        Variant::records(
            "leaky-loader-next-on-the-gpu-py",
            Program::pytorch(FILE, "leaky_loader_next_on_the_gpu"),
        )
        .one_change(
            "leaky-loader-py",
            "what the next run trains on: a batch copied from the host there; here the first \
             image of the last batch the pipeline kept, already on the GPU, so that no batch is \
             copied before the next run's first convolution (its model's parameters are still \
             made first)",
            "_pipeline(rec, keep=True)",
            "_pipeline(rec, keep=True, next_run_on=ALREADY_ON_THE_GPU)",
        ),
        Variant::records(
            "released-loader-tiny-next-on-the-gpu-py",
            Program::pytorch(FILE, "released_loader_tiny_next_on_the_gpu"),
        )
        .one_change(
            "leaky-loader-tiny-next-on-the-gpu-py",
            "whether the pipeline keeps a reference to each batch it loaded: yes there, no \
             here (its next run then trains on a batch copied from the host: none is kept \
             on the GPU)",
            "_pipeline(rec, keep=True, side=TINY_SIDE, next_run_on=ALREADY_ON_THE_GPU)",
            "_pipeline(rec, keep=False, side=TINY_SIDE, next_run_on=ALREADY_ON_THE_GPU)",
        )
        .timeout(std::time::Duration::from_secs(420)),
        Variant::fixed(
            "released-loader-py",
            Program::pytorch(FILE, "released_loader")
        )
        .one_change(
            "leaky-loader-py",
            "whether the pipeline keeps a reference to each batch it loaded: yes there, \
                 no here",
            "_pipeline(rec, keep=True)",
            "_pipeline(rec, keep=False)",
        ),
        // Seed 004's library temporaries: cuBLAS's workspace, taken from
        // the pool of the user's tensors between a free and the same
        // request again.
        Variant::broken(
            "workspace-splits-py",
            Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
            Program::pytorch(FILE, "workspace_splits"),
        )
        .then_shows(Symptom::check_failed(THE_SAME_SIZE_IS_SERVED_AGAIN)),
        Variant::fixed(
            "workspace-first-py",
            Program::pytorch(FILE, "workspace_first")
        )
        .one_change(
            "workspace-splits-py",
            "when cuBLAS's first product runs: after the 4 GiB tensor is freed there; \
                 before the data fills the GPU here, so its workspace has its place already",
            "_library_temporary(rec, product_first=False)",
            "_library_temporary(rec, product_first=True)",
        ),
        // The library's own memory, measured where nothing is short: what
        // each first product on a stream adds beyond its output.
        Variant::records("workspace-py", Program::pytorch(FILE, "workspace")).shares_gpu(),
        Variant::records(
            "workspace-none-py",
            Program::pytorch(FILE, "workspace_none")
        )
        .shares_gpu()
        .one_change(
            "workspace-py",
            "CUBLAS_WORKSPACE_CONFIG: PyTorch's default there; :0:0 here, the setting PyTorch's \
             notes give to make cuBLAS use no workspace (with cuBLASLt's workspace set to 0)",
            "_workspaces(rec, None)",
            "_workspaces(rec, NO_WORKSPACE)",
        ),
        Variant::records(
            "workspace-one-combination-py",
            Program::pytorch(FILE, "workspace_one_combination"),
        )
        .shares_gpu()
        .one_change(
            "workspace-py",
            "where the products after the first run: on a second stream, a new thread's \
             handle, a third and a fourth stream there; all on the default stream and the main \
             thread here, so that no new combination of handle and stream arises",
            "_workspaces(rec, None)",
            "_workspaces(rec, None, one_combination=True)",
        ),
    ],
});

static WORKSPACES_DOC: Passage = Passage {
    document: "PyTorch documentation",
    section: "CUDA semantics: cuBLAS workspaces",
    url: "https://docs.pytorch.org/docs/stable/notes/cuda.html#cublas-workspaces",
    text: "For each combination of cuBLAS handle and CUDA stream, a cuBLAS workspace will be \
           allocated if that handle and stream combination executes a cuBLAS kernel that requires \
           a workspace. In order to avoid repeatedly allocating workspaces, these workspaces are \
           not deallocated unless torch._C._cuda_clearCublasWorkspaces() is called. The workspace \
           size per allocation can be specified via the environment variable \
           CUBLAS_WORKSPACE_CONFIG with the format :[SIZE]:[COUNT]. As an example, the default \
           workspace size per allocation is CUBLAS_WORKSPACE_CONFIG=:4096:2:16:8 which specifies \
           a total size of 2 * 4096 + 8 * 16 KiB. To force cuBLAS to avoid using workspaces, set \
           CUBLAS_WORKSPACE_CONFIG=:0:0.",
};

const CLAIMS: &[Claim] = &[
    Claim {
        id: "001-previous-batch-not-released",
        source: Source::SEED_001,
        quote: "The pipeline failed to properly release GPU memory occupied by the previous batch of \
                images before loading the next, leading to memory exhaustion and subsequent cuDNN failures.",
        // Decided where the sentence can hold whole: the pipeline's batches
        // under 1 MiB (0.84 MiB), which PyTorch serves from 2 MiB blocks, so
        // that it ends with about 2 MiB free, and the next run trains on an
        // image already on the GPU, so that its first convolution, cuDNN's
        // first call in its thread, comes before any copy. With larger
        // batches the pipeline ends with more free and the next run fails
        // elsewhere: 96 MiB batches (leaky-loader-py), on PyTorch's own
        // 128 MiB with 68 MiB free; 6 MiB batches (the control), on cuBLAS's
        // handle with cuDNN's first call passed.
        judged_by: "leaky-loader-tiny-next-on-the-gpu-py",
        control: Control::Parts(&[
            Part {
                part: "a pipeline that keeps each batch it loaded exhausts the memory",
                control: Control::Run("released-loader-tiny-next-on-the-gpu-py"),
            },
            Part {
                part: "cuDNN fails after the memory is exhausted",
                control: Control::Run("leaky-loader-small-next-on-the-gpu-py"),
            },
        ]),
        // The pipeline ends on an error: the memory ran out. Then, the
        // batches still held, the next run in the same process (a new model,
        // one step, in a new thread: cuDNN's first call there). The error
        // that ends the pipeline, or the next run's, names cuDNN: the whole
        // sentence holds. Neither does: the exhaustion holds, and what fails
        // after it is not cuDNN (partly). The pipeline runs to its last step:
        // nothing was exhausted (released-loader-tiny-next-on-the-gpu-py and
        // released-loader-py, which let each batch go, and whose next run
        // follows the same way).
        judge: |o: &Outcome| match (
            o.flag(IT_ENDS_ON_AN_ERROR),
            o.flag(THE_ERROR_THAT_ENDS_IT_NAMES_CUDNN),
            o.flag(THE_NEXT_RUN_S_ERROR_NAMES_CUDNN),
        ) {
            (Some(false), _, _) => ClaimVerdict::Refuted,
            (Some(true), Some(true), _) | (Some(true), _, Some(true)) => ClaimVerdict::Confirmed,
            (Some(true), Some(false), Some(false))
                if o.shows(&Symptom::cuda_error(pytorch::OUT_OF_MEMORY)) =>
            {
                ClaimVerdict::Partly
            }
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "004-library-temporaries-fragment",
        source: Source::SEED_004,
        quote: "If not properly controlled and these libraries create their temporary arrays that might \
                introduce their own fragmentation that is not within the user's scope and directly observable.",
        judged_by: "workspace-splits-py",
        control: Control::Run("workspace-first-py"),
        // PyTorch's defaults, nothing controlled. The library's temporary
        // (cuBLAS's workspace) comes from the pool of the user's tensors,
        // is carved from the block the user just freed, and the same size
        // cannot be served again though the block's memory, less the
        // workspace, is still reserved: confirmed. The same size is served
        // again: refuted (workspace-first-py, the first product made before
        // the data filled the GPU).
        judge: |o: &Outcome| match (
            o.flag(THE_PRODUCT_TAKES_MEMORY_FROM_THE_USER_S_POOL),
            o.flag(THE_FREED_SIZE_IS_SERVED_AGAIN),
            o.flag(A_FREED_BLOCK_S_WORTH_IS_LEFT_UNUSABLE),
        ) {
            (_, Some(true), _) => ClaimVerdict::Refuted,
            (Some(true), Some(false), Some(true)) => ClaimVerdict::Confirmed,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "pytorch-cublas-workspace-per-handle-and-stream",
        source: Source::Pytorch(&WORKSPACES_DOC),
        quote: "For each combination of cuBLAS handle and CUDA stream, a cuBLAS workspace will be \
            allocated if that handle and stream combination executes a cuBLAS kernel that requires \
            a workspace.",
        judged_by: "workspace-py",
        control: Control::Run("workspace-none-py"),
        // A workspace at each combination's first product (a second stream,
        // a second handle) and none at its next, and none where the kernel
        // needs none: confirmed. The same, but a matrix-vector product also
        // gets one at its combination's first call: partly, PyTorch gives
        // every combination a workspace at its first cuBLAS call, whatever
        // the kernel (the matrix products and the matrix-vector product alike
        // run and are right with the workspace set to nothing,
        // workspace-none-py). No memory at the second stream's and the second
        // handle's first products: refuted. The control makes the same calls
        // on the same streams and handles with the setting the passage gives
        // to make cuBLAS use no workspace (CUBLAS_WORKSPACE_CONFIG=:0:0, one
        // change), where no kernel requires one.
        // (The matrix-vector product's figure counts only where it ran.)
        judge: |o: &Outcome| match (
            o.flag(THE_FIRST_PRODUCT_ADDS_MEMORY),
            o.flag(THE_NEXT_PRODUCT_ON_THE_SAME_STREAM_ADDS_NONE),
            o.flag(THE_FIRST_PRODUCT_ON_A_SECOND_STREAM_ADDS_MEMORY),
            o.flag(THE_FIRST_PRODUCT_OF_A_SECOND_HANDLE_ADDS_MEMORY),
            o.flag(A_MATRIX_VECTOR_PRODUCT_ON_A_FOURTH_STREAM_ADDS_MEMORY)
                .filter(|_| o.flag(THE_MATRIX_VECTOR_PRODUCT_RUNS) == Some(true)),
        ) {
            (Some(true), Some(true), Some(true), Some(true), Some(false)) => {
                ClaimVerdict::Confirmed
            }
            (_, _, Some(false), Some(false), _) => ClaimVerdict::Refuted,
            (Some(_), Some(_), Some(_), Some(_), Some(_)) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn workspaces(first: bool, again_none: bool, other: bool, gemv: bool) -> Outcome {
        Outcome::empty().with_facts([
            (THE_FIRST_PRODUCT_ADDS_MEMORY, first),
            (THE_NEXT_PRODUCT_ON_THE_SAME_STREAM_ADDS_NONE, again_none),
            (THE_FIRST_PRODUCT_ON_A_SECOND_STREAM_ADDS_MEMORY, other),
            (THE_FIRST_PRODUCT_OF_A_SECOND_HANDLE_ADDS_MEMORY, other),
            (A_MATRIX_VECTOR_PRODUCT_ON_A_FOURTH_STREAM_ADDS_MEMORY, gemv),
            (THE_MATRIX_VECTOR_PRODUCT_RUNS, true),
        ])
    }

    #[test]
    fn the_workspace_claim_turns_on_what_each_first_product_adds() {
        let claim = &CLAIMS[2];
        for (first, again_none, other, gemv, verdict) in [
            (true, true, true, false, ClaimVerdict::Confirmed),
            (true, true, true, true, ClaimVerdict::Partly),
            // The control: no workspace anywhere (CUBLAS_WORKSPACE_CONFIG=:0:0).
            (false, true, false, false, ClaimVerdict::Refuted),
            // The first combination's workspace, and no other.
            (true, true, false, false, ClaimVerdict::Refuted),
        ] {
            let outcome = workspaces(first, again_none, other, gemv);
            assert_eq!(claim.verdict(&outcome), verdict);
        }
        assert_eq!(claim.verdict(&Outcome::empty()), ClaimVerdict::Undecided);
    }
}
