"""Seed 001's Example 1: train a CNN, then redefine the model and train again
in the same process, with nothing cleaned up in between ("Second run (likely
to fail)").

What to notice: at the article's scale the second run succeeds: the first
model's memory is freed as soon as nothing refers to it, and the caching
allocator hands its blocks to the second. It fails when the first run's
objects are still referenced (here the optimizer holds the old parameters)
and the two runs do not fit together: then the error is PyTorch's out of
memory, and `torch.cuda.empty_cache()` does not help, because that memory is
in use. Dropping the references does.

A ResNet-50, the model the article's author debugged, trained at a batch
that fills most of what PyTorch may use, keeps little of its first run: its
parameters and gradients, a few percent of the budget.

The sized variants hold PyTorch to a budget (its per-process memory
fraction), which stands for a GPU of that size: they read only their own
process's figures, so they run beside other trials, and they fill that
budget (1 GiB for the small CNN, 8 GiB for the ResNet-50), not the device.
"""

import contextlib
import gc
import os
import subprocess
import sys
import threading

import torch

from casebook import (
    SANITIZER_ENV,
    SUCCESS,
    Recorded,
    Recorder,
    fill_device,
    message_of,
    names,
    reduced_for_sanitizer,
    result_name,
)

EPOCHS = 2
BATCHES = 4
# What PyTorch may hold in the sized variants (its per-process memory
# fraction), and the width of their linear layers (64 MiB each).
BUDGET = 1 << 30
WIDTH = 4096
# The reduced form run under compute-sanitizer, which checks every access of
# every kernel and shadows every byte the process allocates: each run trains
# on one batch once, and the sized variants are held to a smaller budget,
# with narrower layers. Two runs still do not fit together, one does.
EPOCHS_UNDER_SANITIZER = 1
BATCHES_UNDER_SANITIZER = 1
BUDGET_UNDER_SANITIZER = 512 << 20
WIDTH_UNDER_SANITIZER = 2048


def _reduced():
    return SANITIZER_ENV in os.environ


class Net(torch.nn.Module):
    """Convolutions (cuDNN runs them), then `width`-wide linear layers that
    set how much memory the parameters take. Those are made where `head_on`
    says: on the host, as the article's model is (`model.cuda()` then moves
    them), or straight on the GPU in the sized variants, which saves filling
    them on the host and copying them over and changes nothing on the GPU.
    They are initialised where they are made, so no kernel reads memory
    nothing wrote (initcheck reports every such read)."""

    def __init__(self, width, depth, head_on="cpu"):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(4),
            torch.nn.Flatten(),
            torch.nn.Linear(64 * 16, width),
        )
        self.head = torch.nn.Sequential(
            *[torch.nn.Linear(width, width, device=head_on) for _ in range(depth)],
            torch.nn.Linear(width, 10),
        )

    def forward(self, x):
        return self.head(self.features(x))


def _loader(batch, image):
    """Random `image` x `image` images and labels, in batches of `batch`."""
    batches = BATCHES_UNDER_SANITIZER if _reduced() else BATCHES
    images = torch.randn(batches * batch, 3, image, image)
    labels = torch.randint(0, 10, (batches * batch,))
    return torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, labels), batch_size=batch
    )


def _dataloader():
    return _loader(16, 32)


def _train(model, optimizer, dataloader):
    for _ in range(EPOCHS_UNDER_SANITIZER if _reduced() else EPOCHS):
        for data, target in dataloader:
            data, target = data.cuda(), target.cuda()  # Move data to GPU
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()


def _memory(rec, when, series_x):
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    free, _ = torch.cuda.mem_get_info()
    rec.point(names.ALLOCATED_BYTES, series_x, allocated)
    rec.point(names.RESERVED_BYTES, series_x, reserved)
    rec.measure(when["allocated"], allocated)
    rec.measure(when["reserved"], reserved)
    rec.measure(when["free"], free)


AFTER_FIRST = {
    "allocated": names.ALLOCATED_AFTER_FIRST,
    "reserved": names.RESERVED_AFTER_FIRST,
    "free": names.FREE_AFTER_FIRST,
}
AFTER_SECOND = {
    "allocated": names.ALLOCATED_AFTER_SECOND,
    "reserved": names.RESERVED_AFTER_SECOND,
    "free": names.FREE_AFTER_SECOND,
}
AFTER_CLEANUP = {
    "allocated": names.ALLOCATED_AFTER_CLEANUP,
    "reserved": names.RESERVED_AFTER_CLEANUP,
    "free": names.FREE_AFTER_CLEANUP,
}


def _sized(share):
    """Holds PyTorch to its budget, and returns linear layers whose
    parameters take `share` of it (their gradients as much again)."""
    budget, width = BUDGET, WIDTH
    if _reduced():
        budget, width = BUDGET_UNDER_SANITIZER, WIDTH_UNDER_SANITIZER
    _, total = torch.cuda.mem_get_info()
    torch.cuda.set_per_process_memory_fraction(budget / total)
    layer = width * width * 4
    return width, max(1, int(budget * share) // layer)


def _names_cudnn(error):
    """Whether an error is cuDNN's: it names cuDNN (CUDNN_STATUS_..., "cuDNN
    error"), or it is cuDNN's refusal to run for want of workspace, which
    PyTorch words as finding no engine ("GET was unable to find an engine
    to execute this computation")."""
    error = error.lower()
    return "cudnn" in error or "unable to find an engine" in error


def _failed(rec, attempt, allocated_before):
    """The second run failed and the program caught the error: what it says,
    and whether catching it gave anything back."""
    rec.fact(names.SECOND_RUN_ERROR_MENTIONS_CUDNN, _names_cudnn(attempt.message))
    allocated = torch.cuda.memory_allocated()
    rec.measure(names.ALLOCATED_AFTER_CATCH, allocated)
    rec.fact(names.MEMORY_STILL_HELD_AFTER_THE_CATCH, allocated >= allocated_before)
    return False


def _cnn(width, depth, head_on="cpu"):
    """The small CNN at `width` and `depth` (see `Net`), and its data."""
    return (lambda: Net(width, depth, head_on)), _dataloader


def _example(rec, width, depth, cleanup, head_on="cpu"):
    """The article's two runs of the small CNN; returns whether the second
    ran to its end."""
    return _two_runs(rec, *_cnn(width, depth, head_on), cleanup=cleanup)


def _two_runs(rec, new_model, dataloader, cleanup):
    """The article's two runs, in its order, of the model `new_model` makes,
    on `dataloader`'s data; returns whether the second ran to its end."""
    reduced_for_sanitizer(rec)
    rec.fact(
        names.CUDNN_ENABLED, torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled
    )
    # First run
    model = new_model()  # Define your model
    model.cuda()  # Move model to GPU
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    rec.step("first run: training loop", lambda: _train(model, optimizer, dataloader()))
    _memory(rec, AFTER_FIRST, 0)
    allocated_first = torch.cuda.memory_allocated()
    optimizer, model = cleanup(optimizer, model)
    _memory(rec, AFTER_CLEANUP, 1)
    allocated_before = torch.cuda.memory_allocated()
    rec.fact(names.FIRST_RUN_MEMORY_STILL_ALLOCATED, allocated_before >= 0.9 * allocated_first)
    # Second run
    # Redefine the model, and move it to the GPU
    moved = rec.attempt("second run: Net().cuda()", lambda: new_model().cuda())
    if not moved.ok:
        return _failed(rec, moved, allocated_before)
    model = moved.value
    del moved
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    trained = rec.attempt(
        "second run: training loop", lambda: _train(model, optimizer, dataloader())
    )
    if not trained.ok:
        return _failed(rec, trained, allocated_before)
    _memory(rec, AFTER_SECOND, 2)
    return True


def as_written(rec):
    # ANCHOR: as_written
    def nothing(optimizer, model):
        # *MISSING*: torch.cuda.empty_cache() or context cleanup
        return optimizer, model

    # The model, its size against the memory PyTorch may use:
    size = _cnn(256, 2)  # a small CNN
    rec.fact(names.SECOND_RUN_COMPLETES, _two_runs(rec, *size, cleanup=nothing))
    # ANCHOR_END: as_written


def as_written_sized(rec):
    # ANCHOR: as_written_sized
    def nothing(optimizer, model):
        # *MISSING*: torch.cuda.empty_cache() or context cleanup
        return optimizer, model

    # The model, its size against the memory PyTorch may use:
    size = _cnn(*_sized(0.4))  # layers taking 40% of 1 GiB, PyTorch held to 1 GiB
    rec.fact(names.SECOND_RUN_COMPLETES, _two_runs(rec, *size, cleanup=nothing))
    # ANCHOR_END: as_written_sized


# The realistic arm: a ResNet-50, the model the article's author debugged,
# trained at a batch that fills most of what PyTorch may use, a budget that
# stands for a GPU of that size (as in the sized variants).
RESNET_BUDGET = 8 << 30
RESNET_IMAGE = 128  # 3 x 128 x 128 images
RESNET_SHARE = 0.85  # of the budget, one training step's peak at the batch chosen
RESNET_PROBE_BATCHES = (4, 8)
# Under compute-sanitizer: smaller images and budget, the same share.
RESNET_BUDGET_UNDER_SANITIZER = 1 << 30
RESNET_IMAGE_UNDER_SANITIZER = 32


class Bottleneck(torch.nn.Module):
    """ResNet-50's block: 1x1, 3x3 and 1x1 convolutions with batch norm, and
    the input added back (through a 1x1 convolution where the shape changes)."""

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(cin, width, 1, bias=False),
            torch.nn.BatchNorm2d(width),
            torch.nn.ReLU(inplace=True),
            torch.nn.Conv2d(width, width, 3, stride, 1, bias=False),
            torch.nn.BatchNorm2d(width),
            torch.nn.ReLU(inplace=True),
            torch.nn.Conv2d(width, cout, 1, bias=False),
            torch.nn.BatchNorm2d(cout),
        )
        self.skip = torch.nn.Identity()
        if stride != 1 or cin != cout:
            self.skip = torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def resnet50(classes=10):
    """ResNet-50 (stages of 3, 4, 6 and 3 bottleneck blocks), as torchvision
    builds it, with `classes` outputs."""
    layers = [
        torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        torch.nn.BatchNorm2d(64),
        torch.nn.ReLU(inplace=True),
        torch.nn.MaxPool2d(3, 2, 1),
    ]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = width * 4
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(cin, classes)]
    return torch.nn.Sequential(*layers)


def _resnet_budget_and_image():
    """The ResNet-50 arm's budget and image side (smaller under the tool)."""
    if _reduced():
        return RESNET_BUDGET_UNDER_SANITIZER, RESNET_IMAGE_UNDER_SANITIZER
    return RESNET_BUDGET, RESNET_IMAGE


def _batch_filling(rec, share):
    """Holds PyTorch to its budget, and returns the batch whose training
    step peaks at `share` of it: the peak grows with the batch by the same
    amount an image, measured on two small probe batches (their models
    dropped and the cache emptied afterwards)."""
    budget, image = _resnet_budget_and_image()
    _, total = torch.cuda.mem_get_info()
    torch.cuda.set_per_process_memory_fraction(budget / total)
    peaks = []
    for batch in RESNET_PROBE_BATCHES:
        model = resnet50().cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        data = torch.randn(batch, 3, image, image, device="cuda")
        target = torch.randint(0, 10, (batch,), device="cuda")
        torch.cuda.reset_peak_memory_stats()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(data), target).backward()
        optimizer.step()
        torch.cuda.synchronize()
        peaks.append(torch.cuda.max_memory_allocated())
        del model, optimizer, data, target
        gc.collect()
        torch.cuda.empty_cache()
    (small, large), (small_peak, large_peak) = RESNET_PROBE_BATCHES, peaks
    per_image = (large_peak - small_peak) / (large - small)
    fixed = small_peak - small * per_image
    batch = max(1, int((share * budget - fixed) // per_image))
    rec.measure(names.RESNET_BATCH, batch)
    rec.measure(names.RESNET_PEAK_PER_IMAGE, per_image)
    rec.measure(names.BUDGET_BYTES, budget)
    return batch


def _resnet50_filling(rec, share):
    """A ResNet-50 and data at the batch whose training step peaks at
    `share` of the budget (`_batch_filling`)."""
    batch = _batch_filling(rec, share)
    data = _loader(batch, _resnet_budget_and_image()[1])
    return resnet50, lambda: data


def as_written_resnet(rec):
    # ANCHOR: as_written_resnet
    def nothing(optimizer, model):
        # *MISSING*: torch.cuda.empty_cache() or context cleanup
        return optimizer, model

    # The model, its size against the memory PyTorch may use:
    size = _resnet50_filling(rec, RESNET_SHARE)  # a ResNet-50, its batch filling 85% of 8 GiB
    rec.fact(names.SECOND_RUN_COMPLETES, _two_runs(rec, *size, cleanup=nothing))
    # ANCHOR_END: as_written_resnet


# The nearest form of the article's program that can fail: a script that
# keeps the first run's model and optimizer under names of its own (or a
# notebook, whose cells keep them), so the second run trains beside them.
# The article's own program rebinds both before the second loop, so its
# second run meets the first only at `.cuda()`.
def _keep(optimizer, model):
    # *MISSING*: torch.cuda.empty_cache() or context cleanup
    # kept by the program, as a script's names or a notebook's cells keep them:
    PROGRAM_STATE.extend((model, optimizer))
    return optimizer, model


def _rebind(optimizer, model):
    # *MISSING*: torch.cuda.empty_cache() or context cleanup
    return optimizer, model


# "Likely" is read over batches, not at one: from half of the largest batch
# at which the first run fits up to that batch, the one a user who tunes the
# batch to the GPU ends with. At each, the article's script runs again in
# this process, as in a notebook re-run, once nothing of the last is left:
# every tensor dropped and PyTorch's cache emptied.
SERIES_FRACTIONS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# How close the search comes to the largest batch that fits: the kept form's
# second run needs a ResNet-50's parameters and gradients more (about 200 MB,
# some eight images of this batch's peak).
LARGEST_WITHIN = 3


class _Kept(Recorder):
    """A recorder that keeps its events, for one script of the series,
    whose steps the variant reads."""

    def __init__(self):  # noqa: D107 (no sink: the events stay here)
        self.events = []

    def emit(self, event):
        self.events.append(event)


def _script_at(batch, keep, first_only=False):
    """The article's script, its ResNet-50 at `batch`: the first run, then
    (unless `first_only`) the second, the first run's model and optimizer
    kept by the program (`keep`) or rebound as the article's code does.
    Returns its steps, each call and its result, once nothing of it is left
    on the GPU."""
    data = _loader(batch, _resnet_budget_and_image()[1])
    rec = _Kept()
    if first_only:
        model = resnet50().cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        rec.attempt("first run: training loop", lambda: _train(model, optimizer, data))
        del model, optimizer
    else:
        # A first run refused ends the script (Recorded): its step says so.
        with contextlib.suppress(Recorded):
            _two_runs(rec, resnet50, lambda: data, cleanup=_keep if keep else _rebind)
    PROGRAM_STATE.clear()
    gc.collect()
    torch.cuda.empty_cache()
    return [e["step"] for e in rec.events if "step" in e]


def _first_run_fits(batch):
    return all(s["result"] == SUCCESS for s in _script_at(batch, keep=False, first_only=True))


def _largest_fitting_batch(rec):
    """The largest batch at which the first run fits, to within
    `LARGEST_WITHIN` images: bisected from the batch whose training step is
    estimated to peak at the whole budget (two probe batches, as
    `_batch_filling` measures), between one that fits and one that does
    not."""
    estimate = _batch_filling(rec, 1.0)
    torch.cuda.empty_cache()
    low, high = int(estimate * 0.85), estimate + 1
    while not _first_run_fits(low):
        low, high = low // 2, low
    while _first_run_fits(high):
        low, high = high, high * 2
    while high - low > LARGEST_WITHIN:
        middle = (low + high) // 2
        low, high = (middle, high) if _first_run_fits(middle) else (low, middle)
    rec.measure(names.LARGEST_FITTING_BATCH, low)
    rec.measure(names.SMALLEST_REFUSED_BATCH, high)
    return low


def _series(rec, keep):
    """The article's script at each batch of the series; records each
    second run's result and what they add up to."""
    if reduced_for_sanitizer(rec):
        # Under compute-sanitizer: one script, at the batch estimated to
        # fill 85% of the smaller budget.
        batches = {1.0: _batch_filling(rec, RESNET_SHARE)}
        torch.cuda.empty_cache()
    else:
        largest = _largest_fitting_batch(rec)
        batches = {f: max(1, round(f * largest)) for f in SERIES_FRACTIONS}
    results = {f: _script_at(batch, keep) for f, batch in batches.items()}
    fitted, failed, loop_failed = 0, [], 0
    for fraction, ran in results.items():
        steps = {s["call"]: s for s in ran}
        first = steps.get("first run: training loop", {"result": "missing"})
        if first["result"] != SUCCESS:
            # The first run itself did not fit: not counted (-1 in the series).
            rec.point(names.SECOND_RUN_FAILED_AT, fraction * 100, -1)
            continue
        fitted += 1
        second = [s for c, s in steps.items() if c.startswith("second run")]
        refused = [s for s in second if s["result"] != SUCCESS]
        rec.point(names.SECOND_RUN_FAILED_AT, fraction * 100, 1 if refused else 0)
        if refused:
            failed.append(refused[0])
            loop_failed += refused[0]["call"] == "second run: training loop"
        if fraction == 1.0:
            rec.fact(names.SECOND_RUN_COMPLETES_AT_THE_LARGEST_BATCH, not refused)
    rec.measure(names.SERIES_BATCHES_FITTED, fitted)
    rec.measure(names.SERIES_SECOND_RUNS_FAILED, len(failed))
    rec.fact(names.SECOND_RUN_FAILS_AT_SOME_BATCH, bool(failed))
    rec.fact(names.SECOND_RUN_FAILS_AT_MOST_BATCHES, 2 * len(failed) > fitted)
    rec.fact(names.SECOND_TRAINING_LOOP_FAILS_AT_SOME_BATCH, loop_failed > 0)
    rec.fact(names.SECOND_TRAINING_LOOP_FAILS_AT_MOST_BATCHES, 2 * loop_failed > fitted)
    if failed:
        first_failure = failed[0]
        rec.step_result(
            f"at the smallest batch where the second run fails: {first_failure['call']}",
            first_failure["result"],
            message=first_failure.get("message"),
        )
        rec.fact(
            names.SECOND_RUN_ERROR_MENTIONS_CUDNN,
            any(_names_cudnn(f["result"] + " " + f.get("message", "")) for f in failed),
        )


def as_written_resnet_series(rec):
    # ANCHOR: as_written_resnet_series
    # At each batch of the series, the article's two runs (_two_runs) of a
    # ResNet-50: the second run rebinds the model and makes a
    # new optimizer (cleanup=_rebind), as the article's code does.
    _series(rec, keep=False)
    # ANCHOR_END: as_written_resnet_series


def kept_resnet_series(rec):
    # ANCHOR: kept_resnet_series
    # At each batch of the series, the article's two runs (_two_runs) of a
    # ResNet-50: the program keeps the first run's model and
    # optimizer (cleanup=_keep), so the second run trains beside them.
    _series(rec, keep=True)
    # ANCHOR_END: kept_resnet_series


def broken(rec):
    # ANCHOR: broken
    def nothing(optimizer, model):
        # *MISSING*: torch.cuda.empty_cache() or context cleanup
        return optimizer, model  # the old optimizer still holds the old parameters

    # Parameters take 40% of the budget, their gradients as much: one run
    # fits; the second model does not fit beside the first.
    width, depth = _sized(0.4)
    ok = _example(rec, width, depth, cleanup=nothing, head_on="cuda")
    rec.fact(names.SECOND_RUN_COMPLETES, ok)
    rec.check(names.SECOND_RUN_RAN, ok)
    # ANCHOR_END: broken


def empty_cache(rec):
    # ANCHOR: empty_cache
    def article_fix(optimizer, model):
        torch.cuda.empty_cache()  # the article's line, and nothing else
        return optimizer, model

    width, depth = _sized(0.4)
    rec.fact(
        names.SECOND_RUN_COMPLETES, _example(rec, width, depth, cleanup=article_fix, head_on="cuda")
    )
    # ANCHOR_END: empty_cache


def fixed(rec):
    # ANCHOR: fixed
    def drop_references(optimizer, model):
        gc.collect()
        return None, None  # nothing refers to the first run's model and optimizer any more

    width, depth = _sized(0.4)
    ok = _example(rec, width, depth, cleanup=drop_references, head_on="cuda")
    rec.fact(names.SECOND_RUN_COMPLETES, ok)
    rec.check(names.SECOND_RUN_RAN, ok)
    # ANCHOR_END: fixed


# What the program keeps between runs: a script's globals, a notebook's cells.
PROGRAM_STATE = []


def _train_twice(rec, seen, keep):
    """The first run trains; its model and optimizer go into `keep`; then a
    second run, beside them, is refused for memory."""
    width, depth = seen["size"] = _sized(0.4)
    model = Net(width, depth, "cuda").cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    rec.step("first run: training loop", lambda: _train(model, optimizer, _dataloader()))
    keep.extend((model, optimizer))
    seen["allocated before the second run"] = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()  # the peak from here is the refused run's
    second = Net(width, depth, "cuda").cuda()  # second run: no room beside the first
    _train(second, torch.optim.SGD(second.parameters(), lr=0.01), _dataloader())


def _after_the_catch(rec, seen, error):
    """What the caught error left: the memory still allocated once the
    except clause is over, against what was allocated before the refused
    run and while the error was held, and whether the next run fails too."""
    allocated = torch.cuda.memory_allocated()
    rec.measure(names.ALLOCATED_AFTER_CATCH, allocated)
    rec.fact(
        names.MEMORY_STILL_HELD_AFTER_THE_CATCH,
        allocated >= seen["allocated before the second run"],
    )
    if error is not None:
        name, message, while_held = error
        # The refusal comes while the second model is built on the GPU
        # (_train_twice: Net(...).cuda()), before its training loop.
        rec.step_result("second run: the model built and trained", name, message=message)
        rec.measure(names.ALLOCATED_WHILE_THE_ERROR_IS_HELD, while_held)
        rec.fact(names.THE_REFUSED_RUN_S_OWN_MEMORY_IS_RELEASED, allocated < while_held)
        # The most the refused run had allocated, up to its refusal.
        peak = torch.cuda.max_memory_allocated()
        rec.measure(names.PEAK_ALLOCATED_IN_THE_REFUSED_RUN, peak)
        rec.fact(names.THE_REFUSED_RUN_S_OWN_MEMORY_IS_GONE_AFTER_THE_CATCH, allocated < peak)
    width, depth = seen["size"]  # the first run's, under the budget it set

    def third_run():
        model = Net(width, depth, "cuda").cuda()
        _train(model, torch.optim.SGD(model.parameters(), lr=0.01), _dataloader())
        torch.cuda.synchronize()

    third = rec.attempt("next run, after the catch: training loop", third_run)
    rec.fact(names.THE_NEXT_RUN_FAILS_TOO, not third.ok)


def caught(rec):
    # ANCHOR: caught
    # The article's example 2 (TensorFlow) in PyTorch: the program keeps the
    # first run's model, the run after it is refused for memory, and the
    # error is caught and printed.
    seen, error = {}, None
    try:
        _train_twice(rec, seen, keep=PROGRAM_STATE)  # the program keeps the first run's model
    except torch.OutOfMemoryError as e:
        print(f"Resource Exhausted Error: {e}")  # This will print but won't solve the problem
        # added: the error, and the memory allocated while it is held
        error = (result_name(e), message_of(e), torch.cuda.memory_allocated())
        # *MISSING*: Proper resource cleanup
    _after_the_catch(rec, seen, error)
    # ANCHOR_END: caught


def caught_cleaned_up(rec):
    # ANCHOR: caught_cleaned_up
    # The article's example 2 (TensorFlow) in PyTorch: the program keeps the
    # first run's model, the run after it is refused for memory, and the
    # error is caught and printed.
    seen, error = {}, None
    try:
        _train_twice(rec, seen, keep=PROGRAM_STATE)  # the program keeps the first run's model
    except torch.OutOfMemoryError as e:
        print(f"Resource Exhausted Error: {e}")  # This will print but won't solve the problem
        # added: the error, and the memory allocated while it is held
        error = (result_name(e), message_of(e), torch.cuda.memory_allocated())
        PROGRAM_STATE.clear()  # the cleanup: the program lets go of the first run's model
    _after_the_catch(rec, seen, error)
    # ANCHOR_END: caught_cleaned_up


def caught_nothing_kept(rec):
    # ANCHOR: caught_nothing_kept
    # The control: the same, but nothing outside the failing call refers to
    # the first run's model; the scope the error leaves holds it alone.
    seen, error = {}, None
    try:
        _train_twice(rec, seen, keep=[])  # the first run's model, in that call's scope only
    except torch.OutOfMemoryError as e:
        print(f"Resource Exhausted Error: {e}")  # This will print but won't solve the problem
        # added: the error, and the memory allocated while it is held
        error = (result_name(e), message_of(e), torch.cuda.memory_allocated())
        # *MISSING*: Proper resource cleanup
    _after_the_catch(rec, seen, error)
    # ANCHOR_END: caught_nothing_kept


def _unused_cache_then_second_run(rec, empty_cache, new_thread=True):
    """Where the article's remedy can act: the first run's memory is no
    longer referenced, only cached. The first run trains the article's
    model (cuDNN and cuBLAS start in this thread) and leaves the GPU's
    memory in PyTorch's cache; the second run trains again in a new thread,
    as a notebook's or a server's worker does, and a new thread needs its
    own cuDNN and cuBLAS handles, which the libraries allocate themselves,
    outside PyTorch's cache. With `new_thread` false, the second run trains
    in the first run's thread, whose handles exist already."""
    model = Net(256, 1, "cuda").cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    rec.step(
        "first run: training loop",
        lambda m=model, o=optimizer: _train(m, o, _dataloader()),
    )
    del model, optimizer
    # The first run's data, kept on the GPU until the allocator refuses, then
    # dropped: PyTorch keeps the blocks cached, unused, and the driver counts
    # them as taken.
    fill_device()
    rec.measure(
        names.CACHED_UNUSED_BEFORE_THE_SECOND_RUN,
        torch.cuda.memory_reserved() - torch.cuda.memory_allocated(),
    )
    if empty_cache:
        torch.cuda.empty_cache()  # the article's line
    rec.measure(names.FREE_BEFORE_THE_SECOND_RUN, torch.cuda.mem_get_info()[0])

    def second_run():
        model = Net(256, 1, "cuda").cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        _train(model, optimizer, _dataloader())
        torch.cuda.synchronize()

    if new_thread:
        result = {}
        worker = threading.Thread(
            target=lambda: result.update(
                attempt=rec.attempt("second run, in a new thread: training loop", second_run)
            )
        )
        worker.start()
        worker.join()
        attempt = result["attempt"]
    else:
        attempt = rec.attempt("second run, in the same thread: training loop", second_run)
    if not attempt.ok:
        rec.fact(names.SECOND_RUN_ERROR_MENTIONS_CUDNN, _names_cudnn(attempt.message))
    rec.fact(names.SECOND_RUN_COMPLETES, attempt.ok)


def unused_cache_kept(rec):
    # ANCHOR: unused_cache_kept
    _unused_cache_then_second_run(rec, empty_cache=False)
    # ANCHOR_END: unused_cache_kept


def unused_cache_kept_same_thread(rec):
    # ANCHOR: unused_cache_kept_same_thread
    _unused_cache_then_second_run(rec, empty_cache=False, new_thread=False)
    # ANCHOR_END: unused_cache_kept_same_thread


def unused_cache_emptied(rec):
    # ANCHOR: unused_cache_emptied
    _unused_cache_then_second_run(rec, empty_cache=True)
    # ANCHOR_END: unused_cache_emptied


# A fresh process fills the GPU through PyTorch, all but `headroom`, and then
# runs its first convolution: cuDNN starts (its handle, its workspace) with
# that little room. Prints the result's name. It starts PyTorch (seconds)
# first, then waits for a line on its input before it touches the GPU.
UNDER_PRESSURE = """
import sys, torch
from casebook import result_name
sys.stdin.readline()
headroom, budget, batch, side = (int(a) for a in sys.argv[1:5])
headroom <<= 20
conv = torch.nn.Conv2d(64, 64, 3, padding=1).cuda()
image = torch.randn(batch, 64, side, side, device="cuda")
try:
    free, _ = torch.cuda.mem_get_info()
    free = min(free, budget or free)
    ballast = torch.empty(free - headroom, dtype=torch.uint8, device="cuda")
    conv(image).sum().backward()
    torch.cuda.synchronize()
    print("ok")
except Exception as e:
    print(result_name(e))
"""

HEADROOMS_MIB = (16, 64, 256, 512, 1024)
# The control: headrooms just above the 64 MiB the first convolution's output
# takes (16 x 64 x 128 x 128 floats), so that the output fits and cuDNN
# starts with the few MiB left, as in library-handle-no-memory's cudnn-py,
# where about 2 MiB left gives CUDNN_STATUS_INTERNAL_ERROR.
HEADROOMS_MIB_JUST_ABOVE_THE_OUTPUT = (65, 66, 68, 72, 80, 96, 128)
IMAGES = (16, 128)  # a batch of 16 images, 128 x 128
# The reduced form: one process, whose ballast leaves this much of the
# budget above, not of the device (each process under the sanitizer starts
# PyTorch afresh, and fills nothing), and one small image.
HEADROOMS_MIB_UNDER_SANITIZER = (256,)
IMAGES_UNDER_SANITIZER = (1, 32)


def cudnn_under_pressure(rec):
    _under_pressure(rec, HEADROOMS_MIB)


def cudnn_just_above_the_output(rec):
    # ANCHOR: cudnn_just_above_the_output
    _under_pressure(rec, HEADROOMS_MIB_JUST_ABOVE_THE_OUTPUT)
    # ANCHOR_END: cudnn_just_above_the_output


def _under_pressure(rec, headrooms_mib):
    # ANCHOR: cudnn_under_pressure
    # Does occupied memory show up as a cuDNN error? One process per headroom,
    # so cuDNN starts afresh each time.
    results = []
    reduced = reduced_for_sanitizer(rec)
    budget = BUDGET_UNDER_SANITIZER if reduced else 0  # 0: all that is free
    headrooms = HEADROOMS_MIB_UNDER_SANITIZER if reduced else headrooms_mib
    batch, side = IMAGES_UNDER_SANITIZER if reduced else IMAGES
    # All start PyTorch at once; then one at a time takes the GPU.
    children = [
        subprocess.Popen(
            [sys.executable, "-c", UNDER_PRESSURE, *map(str, (headroom, budget, batch, side))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for headroom in headrooms
    ]
    for headroom, child in zip(headrooms, children, strict=True):
        out, _ = child.communicate("go\n", timeout=120)
        said = (out.strip().splitlines() or [f"exit status {child.returncode}"])[-1]
        # The result at each headroom goes to the log: where the boundary
        # falls, and which of cuDNN's spellings of a refused allocation it
        # gives there, differ from run to run; whether a cuDNN error and an
        # out-of-memory error appear at all is the finding.
        print(f"{headroom} MiB left: first convolution: {said}")
        results.append(said)
    rec.fact(names.SOME_RESULT_IS_A_CUDNN_ERROR, any("cudnn" in r.lower() for r in results))
    rec.fact(names.SOME_RESULT_IS_OUT_OF_MEMORY, any("out of memory" in r.lower() for r in results))
    # ANCHOR_END: cudnn_under_pressure


def _gpu_memory_of_this_process():
    """The memory nvidia-smi lists for this process, in MiB, read from
    outside it; None where it lists none (or nvidia-smi cannot run)."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        pid, _, used = line.partition(",")
        if pid.strip() == str(os.getpid()):
            return int(used.strip() or 0)
    return None


def _first_run(rec, device):
    # ANCHOR: first_run
    # Nothing in this process has touched the GPU yet: the model's first run,
    # with nvidia-smi asked before and after whether the process holds GPU
    # memory (a context).
    before = _gpu_memory_of_this_process()
    model = Net(256, 2).to(device)
    data, target = next(iter(_dataloader()))
    loss = torch.nn.functional.cross_entropy(model(data.to(device)), target.to(device))
    rec.step("first run: one training step", loss.backward)
    after = _gpu_memory_of_this_process()
    # ANCHOR_END: first_run
    rec.fact(names.NVIDIA_SMI_LISTS_THE_PROCESS_BEFORE_THE_FIRST_RUN, before is not None)
    rec.fact(names.NVIDIA_SMI_LISTS_THE_PROCESS_AFTER_THE_FIRST_RUN, after is not None)
    rec.measure(names.GPU_MEMORY_AFTER_THE_FIRST_RUN, (after or 0) << 20)


def first_run(rec):
    _first_run(rec, "cuda")


def first_run_on_cpu(rec):
    # ANCHOR: first_run_on_cpu
    _first_run(rec, "cpu")  # the control: the same model and data, run on the CPU
    # ANCHOR_END: first_run_on_cpu
