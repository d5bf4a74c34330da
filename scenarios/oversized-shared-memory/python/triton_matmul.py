"""A Triton matmul whose tiles were tuned for another GPU: tiles of
128 x 128 with a depth of 128 and six pipeline stages. Triton keeps each
stage's tiles of A and B in shared memory, which is far more than a block
may have here, so the kernel never runs: at the launch Triton raises
OutOfResources, naming what it needs and what the GPU allows.

What to notice: Triton checks the limit the C++ launch leaves unchecked;
the fix sizes the stages from the device's own limit.
"""

import torch
import triton
import triton.language as tl

from casebook import names

SIZE = 512


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, N, BK):
        a = tl.load(a_ptr + rm[:, None] * N + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _multiply(rec, block_k, stages):
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(SIZE, SIZE, device="cuda", generator=gen)
    b = torch.randn(SIZE, SIZE, device="cuda", generator=gen)
    c = torch.full((SIZE, SIZE), float("nan"), device="cuda")
    grid = (SIZE // 128, SIZE // 128)
    launched = rec.attempt(
        f"matmul_kernel[grid](..., BM=128, BN=128, BK={block_k}, num_stages={stages})",
        lambda: (
            matmul_kernel[grid](a, b, c, SIZE, BM=128, BN=128, BK=block_k, num_stages=stages),
            torch.cuda.synchronize(),
        ),
    )
    reference = a.double() @ b.double()
    error = ((c.double() - reference).norm() / reference.norm()).item()
    rec.check(names.PRODUCT_IS_RIGHT, launched.ok and error < 1e-2)


def _shared_limit(rec):
    device = torch.cuda.current_device()
    limit = triton.runtime.driver.active.utils.get_device_properties(device)["max_shared_mem"]
    rec.measure(names.MAX_SHARED_BYTES_TRITON, limit)
    return limit


def broken(rec):
    _shared_limit(rec)
    # ANCHOR: broken
    _multiply(rec, block_k=128, stages=6)  # BUG: tuned elsewhere: six stages of 128^3 tiles
    # ANCHOR_END: broken


def fixed(rec):
    limit = _shared_limit(rec)
    # ANCHOR: fixed
    block_k = 32
    per_stage = (128 * block_k + block_k * 128) * 4  # the A and B tiles of one stage, in bytes
    stages = max(1, min(6, (limit // 2) // per_stage))  # FIX: stages that fit, with room to spare
    _multiply(rec, block_k=block_k, stages=stages)
    # ANCHOR_END: fixed
