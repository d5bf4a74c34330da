"""Attention over a batch of 65536 sequences with PyTorch's flash-attention
backend: its kernel puts the batch on a grid dimension, which holds at most
65535 blocks, so the launch is refused ("invalid argument" under CUDA 13.0;
"invalid configuration argument" in reports from older CUDA). A batch of
65535 runs.

What to notice: nothing about the data is wrong and memory is plentiful;
the batch's size alone decides. The fix splits the batch into pieces the
grid holds, through the same backend.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from casebook import names

# Sequences of 16 tokens, one head of 16 dimensions: 32 MiB a tensor in half
# precision at the largest batch.
SEQ, DIM = 16, 16
LIMIT = 65535


def _qkv(batch, heads=1):
    gen = torch.Generator(device="cuda").manual_seed(0)
    return torch.randn(batch, heads, SEQ, DIM, device="cuda", dtype=torch.half, generator=gen)


def _attend(q, backend):
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(q, q, q)
    torch.cuda.synchronize()
    return out


def broken(rec):
    q = _qkv(LIMIT + 1)
    # ANCHOR: broken
    # BUG: the whole batch in one call; the flash kernel's grid holds 65535.
    out = rec.attempt(
        "scaled_dot_product_attention (flash, batch 65536)",
        lambda: _attend(q, SDPBackend.FLASH_ATTENTION),
    )
    # ANCHOR_END: broken
    if not out.ok:
        rec.fact(names.MESSAGE, out.error)
    rec.fact(names.OVER_LIMIT_RUNS, out.ok)
    at_limit = rec.attempt(
        "later: scaled_dot_product_attention (flash, batch 65535)",
        lambda: _attend(q[:LIMIT], SDPBackend.FLASH_ATTENTION),
    )
    rec.fact(names.AT_LIMIT_RUNS, at_limit.ok)
    # The other backends PyTorch has for the same call, on the same batch.
    efficient = rec.attempt(
        "later: scaled_dot_product_attention (efficient, batch 65536)",
        lambda: _attend(q, SDPBackend.EFFICIENT_ATTENTION),
    )
    rec.fact(names.EFFICIENT_TAKES_BATCH, efficient.ok)
    heads = _qkv(1, LIMIT + 1)
    by_heads = rec.attempt(
        "later: scaled_dot_product_attention (efficient, 65536 heads)",
        lambda: _attend(heads, SDPBackend.EFFICIENT_ATTENTION),
    )
    rec.fact(names.EFFICIENT_TAKES_HEADS, by_heads.ok)


def fixed(rec):
    q = _qkv(LIMIT + 1)
    # ANCHOR: fixed
    # FIX: pieces of at most 65535 sequences, through the same backend.
    out = rec.step(
        "scaled_dot_product_attention (flash, two pieces of the batch)",
        lambda: torch.cat([_attend(piece, SDPBackend.FLASH_ATTENTION) for piece in q.split(LIMIT)]),
    )
    # ANCHOR_END: fixed
    reference = rec.step(
        "scaled_dot_product_attention (math, batch 65536)",
        lambda: _attend(q, SDPBackend.MATH),
    )
    rec.check(names.MATCHES_MATH, torch.allclose(out.float(), reference.float(), atol=2e-3))
