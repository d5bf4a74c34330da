//! CUDA's error names, as a recorded step names a failed call and as a
//! case's [`Symptom::cuda_error`](crate::Symptom::cuda_error) expects them:
//! the driver API's `CUresult` for the cudarc and cust variants, the
//! runtime API's `cudaError_t` for the C++ variants. Each case names the
//! errors it shows from here; PyTorch's texts are in [`crate::pytorch`].

/// `CUresult`, as the recorder writes it: the enum's own name. Each is a
/// name of cudarc's enum: `casebook_driver` checks them against it as it
/// compiles, so that a name the enum does not have does not build.
pub mod driver {
    macro_rules! named {
        ($($name:ident = $variant:ident,)*) => {
            $(pub const $name: &str = stringify!($variant);)*
        };
    }

    crate::driver_error_names!(named);
}

/// The driver's error names [`driver`] declares, as `NAME = VARIANT` pairs
/// handed to the macro `$then`: the model makes its constants from them,
/// `casebook_driver` checks each against cudarc's `CUresult`.
#[doc(hidden)]
#[macro_export]
macro_rules! driver_error_names {
    ($then:ident) => {
        $then! {
            ASSERT = CUDA_ERROR_ASSERT,
            ILLEGAL_ADDRESS = CUDA_ERROR_ILLEGAL_ADDRESS,
            INVALID_CONTEXT = CUDA_ERROR_INVALID_CONTEXT,
            INVALID_DEVICE = CUDA_ERROR_INVALID_DEVICE,
            INVALID_VALUE = CUDA_ERROR_INVALID_VALUE,
            LAUNCH_OUT_OF_RESOURCES = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            MISALIGNED_ADDRESS = CUDA_ERROR_MISALIGNED_ADDRESS,
            NO_BINARY_FOR_GPU = CUDA_ERROR_NO_BINARY_FOR_GPU,
            NO_DEVICE = CUDA_ERROR_NO_DEVICE,
            NOT_INITIALIZED = CUDA_ERROR_NOT_INITIALIZED,
            OUT_OF_MEMORY = CUDA_ERROR_OUT_OF_MEMORY,
            STREAM_CAPTURE_INVALIDATED = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
            STREAM_CAPTURE_ISOLATION = CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
            STREAM_CAPTURE_UNSUPPORTED = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
            UNSUPPORTED_PTX_VERSION = CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
        }
    };
}

/// `cudaError_t`, as the C++ recorder writes it (`cudaGetErrorName`).
pub mod runtime {
    pub const ASSERT: &str = "cudaErrorAssert";
    pub const DEVICES_UNAVAILABLE: &str = "cudaErrorDevicesUnavailable";
    pub const ILLEGAL_ADDRESS: &str = "cudaErrorIllegalAddress";
    pub const INITIALIZATION_ERROR: &str = "cudaErrorInitializationError";
    pub const INVALID_DEVICE: &str = "cudaErrorInvalidDevice";
    pub const INVALID_VALUE: &str = "cudaErrorInvalidValue";
    pub const LAUNCH_FAILURE: &str = "cudaErrorLaunchFailure";
    pub const LAUNCH_OUT_OF_RESOURCES: &str = "cudaErrorLaunchOutOfResources";
    pub const MEMORY_ALLOCATION: &str = "cudaErrorMemoryAllocation";
    pub const MISALIGNED_ADDRESS: &str = "cudaErrorMisalignedAddress";
    pub const NO_DEVICE: &str = "cudaErrorNoDevice";
    pub const NO_KERNEL_IMAGE_FOR_DEVICE: &str = "cudaErrorNoKernelImageForDevice";
    pub const STREAM_CAPTURE_INVALIDATED: &str = "cudaErrorStreamCaptureInvalidated";
    pub const STREAM_CAPTURE_UNJOINED: &str = "cudaErrorStreamCaptureUnjoined";
    pub const STREAM_CAPTURE_UNSUPPORTED: &str = "cudaErrorStreamCaptureUnsupported";
}
