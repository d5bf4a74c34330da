"""The program keeps its data on the GPU (a cache of batches, a second
model, another framework's pool) until the allocator refuses, and only
then makes its first matrix product or convolution. cuBLAS and cuDNN
create their handle, and its workspace, at their first use, with memory of
their own: none is left, and the error names the library, not the memory:
"CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
"cuDNN error: CUDNN_STATUS_INTERNAL_ERROR".

What to notice: the same product and convolution on the same inputs run in
the fix, which leaves the libraries room (its cache stops 2 GiB short of
the GPU's free memory); and in the broken variants the failure comes from
the libraries' first call, after every tensor was allocated.
"""

import torch

from casebook import names

CHUNK = 1 << 30
SMALLEST = 1 << 16
HEADROOM = 2 << 30  # the fix: what the cache leaves free for the libraries


def _inputs():
    a = torch.ones(64, 64, device="cuda")
    conv = torch.nn.Conv2d(3, 8, 3).cuda()
    x = torch.ones(1, 3, 32, 32, device="cuda")
    return a, conv, x


def _cache(leave):
    """The program's data, allocated until the allocator refuses (or until
    `leave` bytes are left free): what a cache of batches does."""
    blocks, chunk = [], CHUNK
    while chunk >= SMALLEST:
        free, _ = torch.cuda.mem_get_info()
        if leave and free - chunk < leave:
            chunk //= 2
            continue
        try:
            blocks.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            chunk //= 2
    return blocks


def _matmul(rec, a):
    product = rec.attempt("a @ a (cuBLAS's first call)", lambda: (a @ a).sum().item())
    rec.check(names.PRODUCT, product.ok and product.value == 64.0 * 64 * 64)


def _conv(rec, conv, x):
    result = rec.attempt("conv(x) (cuDNN's first call)", lambda: conv(x).shape[1])
    rec.check(names.CONVOLUTION, result.ok and result.value == 8)


def broken(rec):
    a, conv, x = _inputs()
    # ANCHOR: broken
    cache = _cache(leave=0)  # BUG: the data takes all the memory there is
    _matmul(rec, a)
    # ANCHOR_END: broken
    rec.measure(names.FREE_AT_FIRST_CALL, torch.cuda.mem_get_info()[0])
    del cache


def broken_cudnn(rec):
    a, conv, x = _inputs()
    # ANCHOR: broken_cudnn
    cache = _cache(leave=0)  # BUG: the data takes all the memory there is
    _conv(rec, conv, x)
    # ANCHOR_END: broken_cudnn
    rec.measure(names.FREE_AT_FIRST_CALL, torch.cuda.mem_get_info()[0])
    del cache


def fixed(rec):
    a, conv, x = _inputs()
    # ANCHOR: fixed
    cache = _cache(leave=HEADROOM)  # FIX: room left for the libraries' handles
    _matmul(rec, a)
    _conv(rec, conv, x)
    # ANCHOR_END: fixed
    del cache
