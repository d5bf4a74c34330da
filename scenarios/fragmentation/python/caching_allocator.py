"""PyTorch's caching allocator, fragmented: every cached segment keeps one
live block, so none can be handed back, and a request larger than any free
piece fails although the pieces together are many times its size. The error
says so: memory "reserved by PyTorch but unallocated".

What to notice: the program is the same in both variants; the fix is one
setting, `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, under which the
allocator can unmap the free pieces' pages and map them again where the
request needs them. (A naive attempt does not fragment: a cached segment
with no live block is freed, and the request retried, before the error.)

`per_step_buffer` and `preallocated`: a need that recurs, its buffer
allocated at each step or taken once and reused.
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
    holds with room for four more, counted once at the start."""
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


def _request(rec):
    """The large request at the end."""
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
    alive = _fragment(rec, _segments(rec))
    _layout(rec)
    _request(rec)
    # ANCHOR_END: fragmented
    del alive


# Seed 004's first strategy, "pre-allocating and reusing buffers", on a
# need that recurs: each step writes a REQUEST-byte buffer and keeps a result
# of KEEP bytes, more than half the buffer. Allocated each step, the freed
# buffer is the cache's best fit for the step's result, which splits it; the
# next buffer needs a new segment, and the budget fills with segments each
# holding a result and a piece too small for a buffer. Taken once and reused,
# the buffer is never freed, and each result has a segment of its own: the
# same bytes live at every step, in fewer segments.
KEEP = 1024 * MiB
STEPS = 22  # the buffer and 22 results fit the budget; 22 buffer-sized segments do not


def _steps(rec, buffer):
    """STEPS steps, each writing the need's buffer (`buffer`, or one
    allocated for the step when it is None) and keeping a result."""
    keep = KEEP
    if reduced_for_sanitizer(rec):
        keep //= SCALE_UNDER_SANITIZER
    results = []

    def step(i):
        need = buffer if buffer is not None else _bytes(REQUEST)
        need.fill_(i % 256)  # the step's use of its buffer
        del need
        results.append(_bytes(keep))

    run = 0
    for i in range(STEPS):
        got = rec.attempt("one step: write the buffer, keep a result", lambda i=i: step(i))
        if not got.ok:
            unallocated = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
            rec.measure(names.RESERVED_BUT_UNALLOCATED, unallocated)
            rec.fact(
                names.OOM_MESSAGE_NAMES_RESERVED_BUT_UNALLOCATED,
                "reserved by PyTorch but unallocated" in got.message,
            )
            break
        run += 1
    rec.measure(names.STEPS_RUN, run)
    rec.measure(names.SEGMENTS, len(torch.cuda.memory_snapshot()))
    rec.check(names.EVERY_STEP_RAN, run == STEPS)


def per_step_buffer(rec):
    # ANCHOR: per_step_buffer
    rec.fact(names.ALLOC_CONF, os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(default)"))
    _setup(rec)
    buffer = None  # the need's buffer, allocated at each step
    _steps(rec, buffer)
    # ANCHOR_END: per_step_buffer


def preallocated(rec):
    # ANCHOR: preallocated
    rec.fact(names.ALLOC_CONF, os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(default)"))
    _setup(rec)
    buffer = _bytes(REQUEST)  # the need's buffer, taken once and reused
    _steps(rec, buffer)
    # ANCHOR_END: preallocated
    del buffer


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
