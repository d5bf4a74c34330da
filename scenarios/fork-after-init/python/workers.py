"""A process that has used CUDA starts a worker with multiprocessing's
`fork` (the default start method on Linux before Python 3.14): the worker's
first CUDA call fails with "Cannot re-initialize CUDA in forked subprocess".
A forked child inherits the parent's memory but not its CUDA context, which
cannot be copied.

What to notice: the parent is fine and the worker fails; with `spawn` the
worker is a fresh interpreter, starts CUDA itself, and works.
"""

import multiprocessing

import torch

from casebook import names, result_name


def worker(results):
    """The worker's first CUDA call; it reports the result's name."""
    try:
        results.put(float(torch.ones(4, device="cuda").sum()))
    except Exception as e:
        results.put(result_name(e))


def _run(rec, start_method):
    # The parent uses CUDA first: a model, a tensor.
    rec.step(
        "parent: torch.ones(4, device='cuda').sum()",
        lambda: torch.ones(4, device="cuda").sum().item(),
    )
    rec.fact(names.START_METHOD, start_method)
    context = multiprocessing.get_context(start_method)
    results = context.Queue()
    process = context.Process(target=worker, args=(results,))
    process.start()
    said = results.get(timeout=120)
    process.join(timeout=60)
    rec.step_result("worker: torch.ones(4, device='cuda').sum()", "ok" if said == 4.0 else said)
    rec.check(names.WORKER_COMPUTED, said == 4.0)


def broken(rec):
    # ANCHOR: broken
    _run(rec, "fork")  # BUG: a copy of a process whose CUDA context cannot be copied
    # ANCHOR_END: broken


def fixed(rec):
    # ANCHOR: fixed
    _run(rec, "spawn")  # a fresh interpreter, which starts CUDA for itself
    # ANCHOR_END: fixed
