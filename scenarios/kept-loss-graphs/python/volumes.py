"""Batch size 1, the cache emptied after every step, and out of memory with
gigabytes reserved by PyTorch but unallocated: fragmentation beside the
mismanagement. Each step works in a large buffer (its activations), frees
it, then makes its output, as a step whose second stage allocates once the
first stage's buffers are gone. The output lands in the segment the work
just left, and the program keeps it on the GPU: every cached segment then
holds one live output and a free piece too small for the next step's work,
so `torch.cuda.empty_cache()` can give none of them back, and the next
step's work needs a segment of its own until the budget runs out.

What to notice: at the error, a third of what is reserved is unallocated,
more than the request, in pieces. Two one-change controls: with
`expandable_segments:True` (the allocator maps and unmaps pages, so free
pieces stop mattering) every step runs; keeping a number instead of the
output (nothing held) every step runs too.

PyTorch is held to a budget (its per-process memory fraction), which stands
for a GPU of that size: the variants read only their own process's
figures, so they run beside other trials, and fill the budget, not the
device.
"""

import os

import torch

from casebook import names, reduced_for_sanitizer

MiB = 1 << 20
WORK = 896 * MiB  # a step's activations, freed before its output is made
OUTPUT = 512 * MiB  # a step's output (a 512-cubed float32 volume)
BUDGET = 16 << 30
# Steps whose outputs fit the budget all together (14 GiB), with room for
# one step's work beside them: the bug's memory alone would not run out.
STEPS = 28
# The reduced form, for compute-sanitizer: every size divided by this, three
# steps, no budget. The tools see the pattern, not the error.
SCALE_UNDER_SANITIZER = 64
STEPS_UNDER_SANITIZER = 3


def _on_the_gpu(kept, output):
    kept.append(output)  # BUG: every output stays on the GPU


def _a_number(kept, output):
    kept.append(output.mean().item())  # what the metric needs; the output is freed


def _volumes(rec, keep, alloc_conf=None):
    if alloc_conf is not None:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf  # read when the allocator starts
    rec.fact(names.ALLOC_CONF, os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(default)"))
    scale, steps = 1, STEPS
    if reduced_for_sanitizer(rec):
        scale, steps = SCALE_UNDER_SANITIZER, STEPS_UNDER_SANITIZER
    else:
        _, total = torch.cuda.mem_get_info()
        torch.cuda.set_per_process_memory_fraction(BUDGET / total)
    work_bytes, output_floats = WORK // scale, OUTPUT // scale // 4

    def step():
        work = torch.ones(work_bytes, dtype=torch.uint8, device="cuda")  # batch size 1
        level = work[:1].float()
        del work  # the first stage's buffers are gone
        output = torch.full((output_floats,), 0.5, device="cuda")  # the output
        return output.mul_(level)

    kept, failed_at = [], None
    for i in range(steps):
        attempt = rec.attempt("one step at batch size 1", step)
        if not attempt.ok:
            failed_at = i
            allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
            unallocated = reserved - allocated
            rec.measure(names.RESERVED_BUT_UNALLOCATED_AT_THE_ERROR, unallocated)
            rec.fact(names.THE_FREE_PIECES_TOGETHER_EXCEED_THE_REQUEST, unallocated > work_bytes)
            on_gpu = sum(t.nbytes for t in kept if isinstance(t, torch.Tensor))
            rec.fact(names.KEPT_TENSORS_HOLD_NEARLY_ALL_ALLOCATED, on_gpu >= 0.9 * allocated)
            rec.fact(
                names.MESSAGE_NAMES_RESERVED_BUT_UNALLOCATED,
                "reserved by PyTorch but unallocated" in attempt.message,
            )
            break
        keep(kept, attempt.value)
        del attempt
        torch.cuda.empty_cache()  # "even after explicit cache clearing"
        rec.point(names.ALLOCATED_BYTES, i, torch.cuda.memory_allocated())
        rec.point(names.RESERVED_BYTES, i, torch.cuda.memory_reserved())
    rec.measure(names.STEPS_RUN, steps if failed_at is None else failed_at)
    rec.check(names.EVERY_STEP_RAN, failed_at is None)
    rec.fact(names.BATCH_SIZE, 1)


def kept_volumes(rec):
    # ANCHOR: kept_volumes
    _volumes(rec, keep=_on_the_gpu, alloc_conf=None)
    # ANCHOR_END: kept_volumes


def kept_volumes_expandable(rec):
    # ANCHOR: kept_volumes_expandable
    _volumes(rec, keep=_on_the_gpu, alloc_conf="expandable_segments:True")
    # ANCHOR_END: kept_volumes_expandable


def volume_numbers(rec):
    # ANCHOR: volume_numbers
    _volumes(rec, keep=_a_number, alloc_conf=None)
    # ANCHOR_END: volume_numbers
