"""An index one past the end of an nn.Embedding: the kernel's bounds check
fails on the device ("device-side assert triggered"), and from then on every
CUDA call in this process fails with that error, whatever it does.

What to notice: the lookup itself returns; the error surfaces at the next
call that waits for the GPU. `torch.cuda.empty_cache()` and a device reset do
not bring the process back. A new process is fine.
"""

import ctypes
import os
import subprocess
import sys

import torch

from casebook import fill_device, names

VOCABULARY = 1000
WIDTH = 64

# A fresh interpreter on the same GPU: prints the sum, or the error's name.
NEW_PROCESS = """
import torch
from casebook import result_name
try:
    print(float(torch.ones(4, device="cuda").sum()))
except Exception as e:
    print(result_name(e))
"""


def _afterwards(rec, reset):
    """What the process can still do. `reset`: try a device reset too (only
    where the context is lost anyway: a reset under a live PyTorch frees
    memory its allocator still hands out)."""
    unrelated = rec.attempt(
        "torch.ones(4, device='cuda').sum().item()",
        lambda: torch.ones(4, device="cuda").sum().item(),
    )
    rec.fact(names.UNRELATED_CALL, unrelated.error or "ok")
    rec.attempt("torch.cuda.empty_cache()", torch.cuda.empty_cache)
    again = rec.attempt(
        "after empty_cache: torch.ones(4, device='cuda').sum().item()",
        lambda: torch.ones(4, device="cuda").sum().item(),
    )
    rec.fact(names.AFTER_EMPTY_CACHE, again.error or "ok")
    if reset:
        # The runtime's reset, called as a C program would (PyTorch has none).
        cudart = ctypes.CDLL(_loaded("libcudart"))
        cudart.cudaGetErrorName.restype = ctypes.c_char_p
        code = cudart.cudaDeviceReset()
        rec.step_result("cudaDeviceReset()", cudart.cudaGetErrorName(code).decode())
        after_reset = rec.attempt(
            "after the reset: torch.ones(4, device='cuda').sum().item()",
            lambda: torch.ones(4, device="cuda").sum().item(),
        )
        rec.fact(names.TORCH_AFTER_RESET, after_reset.error or "ok")
    child = subprocess.run(
        [sys.executable, "-c", NEW_PROCESS], capture_output=True, text=True, timeout=120
    )
    said = (child.stdout.strip().splitlines() or [f"exit status {child.returncode}"])[-1]
    rec.step_result(
        "a new process: torch.ones(4, device='cuda').sum()", "ok" if said == "4.0" else said
    )
    rec.fact(names.NEW_PROCESS_WORKS, said == "4.0")


def _loaded(prefix):
    """The path of the already loaded library whose name starts with `prefix`."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(prefix):
                return path
    return prefix + ".so"


def broken(rec):
    # ANCHOR: broken
    embedding = torch.nn.Embedding(VOCABULARY, WIDTH).cuda()
    ids = torch.tensor([3, 7, VOCABULARY], device="cuda")  # BUG: VOCABULARY is one past the end
    lookup = rec.attempt("embedding(ids)", lambda: embedding(ids))
    rec.fact(names.LOOKUP_RETURNS, lookup.ok)
    synced = rec.attempt("torch.cuda.synchronize()", torch.cuda.synchronize)
    # ANCHOR_END: broken
    rec.fact(names.THE_FAULT, lookup.error or synced.error or "none")
    _afterwards(rec, reset=True)


def ids_on_host(rec):
    # ANCHOR: ids_on_host
    embedding = torch.nn.Embedding(VOCABULARY, WIDTH).cuda()
    ids = torch.tensor([3, 7, VOCABULARY])  # on the host: PyTorch refuses the lookup itself
    lookup = rec.attempt("embedding(ids)", lambda: embedding(ids))
    rec.fact(names.LOOKUP_RETURNS, lookup.ok)
    synced = rec.attempt("torch.cuda.synchronize()", torch.cuda.synchronize)
    # ANCHOR_END: ids_on_host
    rec.fact(names.THE_FAULT, lookup.error or synced.error or "none")
    _afterwards(rec, reset=True)


def fixed(rec):
    # ANCHOR: fixed
    embedding = torch.nn.Embedding(VOCABULARY, WIDTH).cuda()
    ids = torch.tensor([3, 7, VOCABULARY])
    # The fix: check the indices on the host, where a bad one is an ordinary
    # Python error, before they reach a kernel.
    valid = (ids >= 0) & (ids < embedding.num_embeddings)
    rec.fact(names.REJECTED_ON_HOST, int((~valid).sum()))
    ids = ids[valid].cuda()
    lookup = rec.attempt("embedding(ids)", lambda: embedding(ids))
    rec.fact(names.LOOKUP_RETURNS, lookup.ok)
    synced = rec.attempt("torch.cuda.synchronize()", torch.cuda.synchronize)
    # ANCHOR_END: fixed
    rec.fact(names.THE_FAULT, lookup.error or synced.error or "none")
    _afterwards(rec, reset=False)


def cache_held(rec):
    # ANCHOR: cache_held
    # A fault that empty_cache does clear: the data is freed to PyTorch's
    # cache, which keeps it reserved, and cuBLAS's first call, which
    # allocates outside PyTorch's allocator, finds no memory on the device.
    a = torch.ones(64, 64, device="cuda")
    blocks = fill_device()
    del blocks  # back in PyTorch's cache, still reserved on the device
    product = rec.attempt("a @ a (cuBLAS's first call)", lambda: (a @ a).sum().item())
    rec.fact(names.THE_FAULT, product.error or "none")
    rec.attempt("torch.cuda.empty_cache()", torch.cuda.empty_cache)
    again = rec.attempt("after empty_cache: a @ a", lambda: (a @ a).sum().item())
    rec.fact(names.AFTER_EMPTY_CACHE, again.error or "ok")
    # ANCHOR_END: cache_held


def launch_blocking(rec):
    # ANCHOR: launch_blocking
    # Read when CUDA starts in this process, so set before the first CUDA call.
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    embedding = torch.nn.Embedding(VOCABULARY, WIDTH).cuda()
    ids = torch.tensor([3, 7, VOCABULARY], device="cuda")
    lookup = rec.attempt("embedding(ids)", lambda: embedding(ids))
    rec.fact(names.LOOKUP_RETURNS, lookup.ok)
    rec.attempt("torch.cuda.synchronize()", torch.cuda.synchronize)
    # ANCHOR_END: launch_blocking


def _cnn_runs(rec, last_id):
    # ANCHOR: cnn_runs
    # A CNN runs once (cuDNN runs its convolution), then a lookup, then the
    # CNN runs again in the same process: is the second run's error cuDNN's?
    conv = torch.nn.Conv2d(3, 16, 3).cuda()
    images = torch.randn(8, 3, 32, 32, device="cuda")
    first = rec.attempt("first run: conv(images).sum().item()", lambda: conv(images).sum().item())
    embedding = torch.nn.Embedding(VOCABULARY, WIDTH).cuda()
    ids = torch.tensor([3, 7, last_id], device="cuda")
    rec.attempt("embedding(ids)", lambda: embedding(ids))
    _synchronize(rec)
    second = rec.attempt("second run: conv(images).sum().item()", lambda: conv(images).sum().item())
    # ANCHOR_END: cnn_runs
    rec.fact(names.THE_CNN_S_FIRST_RUN_WORKS, first.ok)
    rec.fact(names.THE_CNN_S_SECOND_RUN, second.error or "ok")
    rec.fact(names.THE_SECOND_RUN_S_ERROR_NAMES_CUDNN, "cudnn" in (second.message or "").lower())


def _synchronize(rec):
    """torch.cuda.synchronize() after the lookup. Where the lookup asserted,
    the driver names the fault in words that change from run to run (on an
    H100, "device-side assert triggered" in two full runs of three,
    "unspecified launch failure" in the third): the fact records whether it
    reports a fault, and its words go to the run's standard error, which the
    JSON report keeps."""
    try:
        torch.cuda.synchronize()
        words = None
    except torch.AcceleratorError as exc:
        words = str(exc).splitlines()[0]
        print(f"torch.cuda.synchronize(): {words}", file=sys.stderr)
    rec.fact(names.THE_SYNCHRONIZE_AFTER_THE_LOOKUP_REPORTS_A_FAULT, words is not None)


def cnn_after_fault(rec):
    # ANCHOR: cnn_after_fault
    _cnn_runs(rec, last_id=VOCABULARY)  # one past the end: the lookup's kernel asserts
    # ANCHOR_END: cnn_after_fault


def cnn_no_fault(rec):
    # ANCHOR: cnn_no_fault
    _cnn_runs(rec, last_id=VOCABULARY - 1)  # the last entry: no assert
    # ANCHOR_END: cnn_no_fault
