"""PyTorch's caching allocator, fragmented: every cached segment keeps one
live block, so none can be handed back, and a request larger than any free
piece fails although the pieces together are many times its size. The error
says so: memory "reserved by PyTorch but unallocated".

What to notice: the program is the same in both variants; the fix is one
setting (or, in `preallocated`, the need's buffer taken once before the
workload and reused), `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, under which the
allocator can unmap the free pieces' pages and map them again where the
request needs them. (A naive attempt does not fragment: a cached segment
with no live block is freed, and the request retried, before the error.)
"""

import os

import torch

from casebook import names, reduced_for_sanitizer

MiB = 1 << 20
SEGMENT = 2048 * MiB  # the blocks that make the cached segments
KEPT = 1152 * MiB  # then, in each segment, a live block of this size ...
HOLE = SEGMENT - KEPT  # ... and a free piece of this size
REQUEST = 1536 * MiB  # more than a free piece, less than all of them
HEADROOM = 512 * MiB  # left free in the budget: less than the request
# PyTorch is held to this much (its per-process memory fraction), which
# stands for the device: room for nine segments and what the layout needs
# beside them, so that the free pieces together exceed the request four
# times. The variants read only their own process's figures, so they run
# beside light trials where the GPU has room for the budget.
BUDGET = 26 << 30
# The reduced form, for compute-sanitizer, which shadows every byte the
# process allocates: a smaller budget, and every size above divided by
# SCALE_UNDER_SANITIZER. The layout and the failure are the same.
BUDGET_UNDER_SANITIZER = 3 << 30
SCALE_UNDER_SANITIZER = 8


_budget = BUDGET


def _setup(rec):
    """Holds PyTorch to its budget (the smaller one, with every size scaled
    down, in the reduced form)."""
    global SEGMENT, KEPT, HOLE, REQUEST, HEADROOM, _budget
    if reduced_for_sanitizer(rec):
        _budget = BUDGET_UNDER_SANITIZER
        SEGMENT, KEPT, HOLE, REQUEST, HEADROOM = (
            size // SCALE_UNDER_SANITIZER for size in (SEGMENT, KEPT, HOLE, REQUEST, HEADROOM)
        )
    _, total = torch.cuda.mem_get_info()
    torch.cuda.set_per_process_memory_fraction(_budget / total)


def _free():
    """What is left of the budget (or of the device, if that is less)."""
    free, _ = torch.cuda.mem_get_info()
    return min(free, _budget - torch.cuda.memory_reserved())


def _bytes(size):
    return torch.empty(size, dtype=torch.uint8, device="cuda")


def _memory(rec, phase):
    rec.point(names.ALLOCATED_BYTES, phase, torch.cuda.memory_allocated())
    rec.point(names.RESERVED_BYTES, phase, torch.cuda.memory_reserved())


def _segments(rec):
    """How many cached segments the workload makes: as many as the budget
    holds with room for four more, counted once at the start, so that a
    buffer taken before the workload leaves their number as it is."""
    free = _free()
    rec.measure(names.FREE_AT_START, free)
    return (free - 4 * SEGMENT) // SEGMENT


def _fragment(rec, segments):
    """Fills the budget, then leaves every segment with a live block and a
    free piece. Returns what must stay alive."""
    blocks = [_bytes(SEGMENT) for _ in range(segments)]
    _memory(rec, 0)
    # The rest of the budget, but the headroom, in one block that stays.
    ballast = _bytes(_free() - HEADROOM)
    _memory(rec, 1)
    count = len(blocks)
    del blocks  # freed, but cached: the allocator keeps the segments
    _memory(rec, 2)
    # Each live block splits a cached segment; the free piece beside it is
    # taken for a while and freed again.
    kept, pieces = [], []
    for _ in range(count):
        kept.append(_bytes(KEPT))
        pieces.append(_bytes(HOLE))
    _memory(rec, 3)
    del pieces
    _memory(rec, 4)
    rec.measure(names.HOLES, count)
    return ballast, kept


def _layout(rec):
    """The allocator's own account of its segments."""
    segments = torch.cuda.memory_snapshot()
    rec.measure(names.SEGMENTS, len(segments))
    rec.fact(
        names.EVERY_SEGMENT_HOLDS_A_LIVE_BLOCK,
        all(s["active_size"] > 0 for s in segments),
    )
    free_pieces = [b["size"] for s in segments for b in s["blocks"] if b["state"] == "inactive"]
    largest = max(free_pieces, default=0)
    rec.measure(names.LARGEST_FREE_PIECE, largest)
    rec.measure(names.FREE_IN_PIECES, sum(free_pieces))
    rec.fact(names.NO_FREE_PIECE_FITS_THE_REQUEST, largest < REQUEST)
    rec.fact(names.THE_PIECES_TOGETHER_EXCEED_THE_REQUEST, sum(free_pieces) > 4 * REQUEST)
    unallocated = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    rec.measure(names.RESERVED_BUT_UNALLOCATED, unallocated)
    rec.measure(names.DEVICE_FREE_BEFORE_REQUEST, torch.cuda.mem_get_info()[0])


def _request(rec, taken_before=None):
    """The large request at the end; with `taken_before`, the buffer taken
    before the workload is reused for it instead (written, as the need
    would write it)."""
    if taken_before is not None:
        got = rec.attempt(
            f"reuse the {REQUEST // MiB} MiB buffer taken before the workload",
            lambda: taken_before.fill_(1),
        )
    else:
        got = rec.attempt(f"torch.empty({REQUEST // MiB} MiB)", lambda: _bytes(REQUEST))
    rec.check(names.REQUEST_SERVED, got.ok)
    if not got.ok:
        rec.fact(
            names.OOM_MESSAGE_NAMES_RESERVED_BUT_UNALLOCATED,
            "reserved by PyTorch but unallocated" in got.message,
        )
        rec.fact(
            names.OOM_MESSAGE_SUGGESTS_EXPANDABLE_SEGMENTS,
            "expandable_segments:True" in got.message,
        )
    _memory(rec, 5)
    del got


def fragmented(rec):
    # ANCHOR: fragmented
    # The default allocator: each segment is one cudaMalloc, split in place.
    rec.fact(names.ALLOC_CONF, os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(default)"))
    _setup(rec)
    segments = _segments(rec)
    buffer = None  # the need's buffer, allocated when it comes
    alive = _fragment(rec, segments)
    _layout(rec)
    _request(rec, taken_before=buffer)
    # ANCHOR_END: fragmented
    del alive


def preallocated(rec):
    # ANCHOR: preallocated
    # The default allocator: each segment is one cudaMalloc, split in place.
    rec.fact(names.ALLOC_CONF, os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(default)"))
    _setup(rec)
    segments = _segments(rec)
    buffer = _bytes(REQUEST)  # the need's buffer, taken before the workload
    alive = _fragment(rec, segments)
    _layout(rec)
    _request(rec, taken_before=buffer)
    # ANCHOR_END: preallocated
    del alive, buffer


def expandable(rec):
    # ANCHOR: expandable
    # The fix, read when the allocator starts: before the first CUDA call.
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    rec.fact(names.ALLOC_CONF, os.environ["PYTORCH_CUDA_ALLOC_CONF"])
    _setup(rec)
    alive = _fragment(rec, _segments(rec))
    _layout(rec)
    _request(rec)
    # ANCHOR_END: expandable
    del alive
