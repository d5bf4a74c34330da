//! A C++ variant run over the recorder's table of C callbacks.

use std::ffi::{c_int, c_void};

use casebook_model::{CppFn, Recorder};

use crate::device;

/// Runs a C++ variant with `rec` as its recorder. A non-zero return (the
/// `cudaError_t` that stopped it) becomes an error; the failed call itself
/// is already recorded as a step.
pub fn run_cpp(rec: &mut Recorder, variant: CppFn) -> anyhow::Result<()> {
    let table = rec.c_abi(c_own_memory);
    // SAFETY: the table borrows `rec` for the duration of the call.
    match unsafe { variant(&table) } {
        0 => Ok(()),
        code => anyhow::bail!("the C++ variant stopped with cudaError_t {code}"),
    }
}

/// [`device::own_memory`] for the C++ side's `own_memory`.
extern "C" fn c_own_memory(ctx: *mut c_void, bytes: *mut u64) -> c_int {
    // SAFETY: `ctx` is the recorder `run_cpp` made the table over.
    match device::own_memory(unsafe { Recorder::from_c_table(ctx) }) {
        Ok(Some(held)) => {
            if !bytes.is_null() {
                // SAFETY: the C++ side passes a pointer to one integer.
                unsafe { *bytes = held };
            }
            1
        }
        // The failed NVML call is recorded as a step; "no figure" is all
        // the C++ side needs to know.
        Ok(None) | Err(_) => 0,
    }
}
