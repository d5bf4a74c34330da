"""Batch size 1, and out of memory anyway: one input tensor larger than the
whole GPU. The message's request ("Tried to allocate …") is larger than its
"total capacity": no allocator setting, no cache emptied, no smaller batch
count helps, because the one tensor does not fit.

What to notice: the fix asks how much is free (`torch.cuda.mem_get_info`)
and streams the same data through one tile that fits, with the same result.
"""

import torch

from casebook import names, reduced_for_sanitizer

# The fix's reduced form, for compute-sanitizer: its tiles over twice the
# GPU would outlast the tools. The broken variant's refused allocation
# launches nothing, so it runs as it is.
REDUCED_BYTES = 256 << 20
REDUCED_TILE = 64 << 20


# Doubles: their sums stay exact far beyond these counts, and summing a
# tensor of its own dtype makes no temporary copy.
ITEM = 8


def _batch_items():
    _, total = torch.cuda.mem_get_info()
    return 2 * total // ITEM  # one sample's tensor: twice the GPU's memory


def broken(rec):
    n = _batch_items()
    # ANCHOR: broken
    attempt = rec.attempt(
        "torch.ones(n, dtype=torch.float64, device='cuda')",  # BUG: one tensor, larger than the GPU
        lambda: torch.ones(n, dtype=torch.float64, device="cuda"),
    )
    counted = attempt.value.sum().item() if attempt.ok else None
    # ANCHOR_END: broken
    del attempt
    rec.fact(names.BATCH_SIZE, 1)
    rec.fact(names.USABLE, torch.ones(1, device="cuda").sum().item() == 1.0)
    rec.check(names.MATCHES, counted == n)


def fixed(rec):
    reduced = reduced_for_sanitizer(rec)
    n = REDUCED_BYTES // ITEM if reduced else _batch_items()
    # ANCHOR: fixed
    free, _ = torch.cuda.mem_get_info()
    tile = (free // 2 if not reduced else REDUCED_TILE) // ITEM  # FIX: one tile that fits
    buffer = torch.empty(tile, dtype=torch.float64, device="cuda")
    counted, done, tiles = 0, 0, 0
    while done < n:
        part = buffer[: min(tile, n - done)]
        part.fill_(1)  # this tile's share of the batch
        counted += part.sum().item()
        done += part.numel()
        tiles += 1
    # ANCHOR_END: fixed
    rec.measure(names.TILES_COUNT, tiles)
    rec.measure(names.TILE_BYTES, tile * ITEM)
    rec.fact(names.BATCH_SIZE, 1)
    rec.check(names.MATCHES, counted == n)
