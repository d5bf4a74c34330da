//! The error texts PyTorch users see, as the Python recorder names a failed
//! call: the exception's type and the start of its message, cut before the
//! first figure so that every GPU gives the same text.

/// `torch.cuda.OutOfMemoryError` from the caching allocator.
pub const OUT_OF_MEMORY: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …";

/// A kernel's bounds check failed on the device; from then on, every call.
pub const DEVICE_ASSERT: &str = "torch.AcceleratorError: CUDA error: device-side assert triggered";

/// A CUDA call in a child made by `fork` after the parent started CUDA.
pub const FORKED: &str = "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA \
                          with multiprocessing, you must use the 'spawn' start method";

/// A device ordinal the process does not see (`cuda:1` on a machine with one GPU).
pub const INVALID_DEVICE_ORDINAL: &str =
    "torch.AcceleratorError: CUDA error: invalid device ordinal";

/// An op given tensors on two devices: PyTorch's device check, by the start of
/// its message (the rest, which names the two devices, has been worded in more
/// than one way and goes whole to the report).
pub const SAME_DEVICE: &str = "RuntimeError: Expected all tensors to be on the same device";

/// cuBLAS could not create its handle (PyTorch 2.11).
pub const CUBLAS_ALLOC_FAILED: &str =
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`";

/// cuDNN could not start, its status saying nothing of memory (PyTorch 2.11).
pub const CUDNN_INTERNAL_ERROR: &str = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR";

/// Two ranks of one NCCL communicator on one GPU: PyTorch's exception and
/// NCCL's own lines, with the device's bus id and the ranks as `…`.
pub const NCCL_DUPLICATE_GPU: &str = "torch.DistBackendError: ncclInvalidUsage: This usually \
                                      reflects invalid usage of NCCL library. Duplicate GPU \
                                      detected : rank … and rank … both on CUDA device …";

/// CUDA sees no GPU (`CUDA_VISIBLE_DEVICES` names none).
pub const NO_GPUS: &str = "RuntimeError: No CUDA GPUs are available";

/// The first call after `cudaDeviceReset` under PyTorch.
pub const DEVICES_UNAVAILABLE: &str =
    "torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable";

/// Triton's launch of a kernel whose shared memory exceeds the block's limit,
/// cut before its figures.
pub const TRITON_OUT_OF_RESOURCES: &str =
    "triton.OutOfResources: out of resource: shared memory, Required: …";

/// A launch PyTorch checked and the runtime refused: under CUDA 13.0, a grid
/// or block outside the device's limits (older CUDA: "invalid configuration
/// argument").
pub const INVALID_ARGUMENT: &str = "torch.AcceleratorError: CUDA error: invalid argument";
