"""Batch size 1, and out of memory anyway: an evaluation loop keeps every
loss for a log, and each loss tensor keeps its autograd graph, with every
activation the forward pass saved, alive. `torch.cuda.empty_cache()` after
each step changes nothing: it returns cached blocks no tensor uses, and
here every byte is in use.

What to notice: `memory_allocated` climbs with `memory_reserved`; the cache
holds nothing to give back. The fix keeps the number (`loss.item()`), not
the tensor.

PyTorch is held to a budget (its per-process memory fraction), which stands
for a GPU of that size: the variants read only their own process's figures,
so they run beside other trials, and fill the budget, not the device.
"""

import torch

from casebook import names, reduced_for_sanitizer

SIDE = 1024  # one 1024 x 1024 RGB image per step: batch size 1
# What PyTorch may hold: each kept graph takes about 1 GiB, so the bug runs
# out after some fifteen steps, and the step that fails (less than one
# graph, freed into the cache) stays a small share of what is reserved.
BUDGET = 16 << 30
STEPS = 48  # more than the budget survives with the bug
# The reduced form, for compute-sanitizer: racecheck and initcheck check
# every access of the convolutions, and at full size three steps outlast
# them. The broken variant keeps its graphs there too, but three small
# steps do not fill the GPU: the tools see the pattern, not the error.
STEPS_UNDER_SANITIZER = 3
SIDE_UNDER_SANITIZER = 128


def _model():
    layers = [torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU()]
    for _ in range(3):
        layers += [torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).cuda()


def _evaluate(rec, keep, steps=STEPS, side=SIDE, budget=BUDGET):
    if budget:
        _, total = torch.cuda.mem_get_info()
        torch.cuda.set_per_process_memory_fraction(budget / total)
    model = _model()
    losses = []
    failed_at = None
    for step in range(steps):
        image = torch.randn(1, 3, side, side, device="cuda")
        attempt = rec.attempt("model(image).mean()", lambda image=image: model(image).mean())
        if not attempt.ok:
            failed_at = step
            rec.fact(
                names.MESSAGE_NAMES_RESERVED_BUT_UNALLOCATED,
                "reserved by PyTorch but unallocated" in attempt.message,
            )
            break
        keep(losses, attempt.value)
        del attempt
        torch.cuda.empty_cache()  # "even after clearing the cache"
        rec.point(names.ALLOCATED_BYTES, step, torch.cuda.memory_allocated())
        rec.point(names.RESERVED_BYTES, step, torch.cuda.memory_reserved())
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    rec.measure(names.ALLOCATED_AT_END, allocated)
    rec.measure(names.RESERVED_AT_END, reserved)
    rec.measure(names.STEPS_RUN, steps if failed_at is None else failed_at)
    rec.fact(names.NEARLY_ALL_RESERVED_IS_ALLOCATED, allocated >= 0.9 * reserved)
    rec.check(names.EVERY_STEP_RAN, failed_at is None)
    rec.fact(names.BATCH_SIZE, 1)


def broken(rec):
    # ANCHOR: broken
    def keep(losses, loss):
        losses.append(loss)  # BUG: the tensor, and with it its whole graph

    # ANCHOR_END: broken
    if reduced_for_sanitizer(rec):
        _evaluate(rec, keep, STEPS_UNDER_SANITIZER, SIDE_UNDER_SANITIZER, budget=None)
    else:
        _evaluate(rec, keep)


def fixed(rec):
    # ANCHOR: fixed
    def keep(losses, loss):
        losses.append(loss.item())  # the number; the graph is freed

    # ANCHOR_END: fixed
    if reduced_for_sanitizer(rec):
        _evaluate(rec, keep, STEPS_UNDER_SANITIZER, SIDE_UNDER_SANITIZER, budget=None)
    else:
        _evaluate(rec, keep)
