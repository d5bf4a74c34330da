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
