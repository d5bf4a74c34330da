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

import math
import os
import threading

import torch

from casebook import fill_device, names

HEADROOM = 2 << 30  # the fix: what the cache leaves free for the libraries
NO_WORKSPACE = ":0:0"  # PyTorch's documented setting for no cuBLAS workspace


def _inputs():
    a = torch.ones(64, 64, device="cuda")
    conv = torch.nn.Conv2d(3, 8, 3).cuda()
    x = torch.ones(1, 3, 32, 32, device="cuda")
    return a, conv, x


def _matmul(rec, a):
    product = rec.attempt("a @ a (cuBLAS's first call)", lambda: (a @ a).sum().item())
    rec.check(names.PRODUCT, product.ok and product.value == 64.0 * 64 * 64)


def _conv(rec, conv, x):
    result = rec.attempt("conv(x) (cuDNN's first call)", lambda: conv(x).shape[1])
    rec.check(names.CONVOLUTION, result.ok and result.value == 8)
    return result


def broken(rec):
    a, conv, x = _inputs()
    # ANCHOR: broken
    cache = fill_device(leave=0)  # BUG: the data takes all the memory there is
    _matmul(rec, a)
    # ANCHOR_END: broken
    rec.measure(names.FREE_AT_FIRST_CALL, torch.cuda.mem_get_info()[0])
    del cache


def broken_cudnn(rec):
    a, conv, x = _inputs()
    # ANCHOR: broken_cudnn
    cache = fill_device(leave=0)  # BUG: the data takes all the memory there is
    convolved = _conv(rec, conv, x)
    # ANCHOR_END: broken_cudnn
    _ran_out(rec, convolved)
    rec.measure(names.FREE_AT_FIRST_CALL, torch.cuda.mem_get_info()[0])
    del cache


def fixed(rec):
    a, conv, x = _inputs()
    # ANCHOR: fixed
    cache = fill_device(leave=HEADROOM)  # FIX: room left for the libraries' handles
    _matmul(rec, a)
    _conv(rec, conv, x)
    # ANCHOR_END: fixed
    del cache


def _workspaces(rec, config, one_combination=False):
    """The memory each matrix product adds beyond its output (written into
    a tensor allocated beforehand): the first on the default stream, the
    next on the same stream, the first on a second stream, the first of a
    second handle (a new thread) on the default stream; then a dot product,
    another cuBLAS routine, on a third stream. PyTorch
    allocates cuBLAS's workspace through its own allocator, so
    memory_allocated counts it, and only this process's figure is read.
    `config`, if given, is set as CUBLAS_WORKSPACE_CONFIG (and the cuBLASLt
    workspace to 0) before any cuBLAS call, when PyTorch still reads them.
    `one_combination`: every call on the default stream and the main
    thread, so that no new combination of handle and stream arises."""
    if config is not None:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = config
        os.environ["CUBLASLT_WORKSPACE_SIZE"] = "0"
    a = torch.ones(256, 256, device="cuda")
    outs = [torch.empty_like(a) for _ in range(4)]
    v = torch.ones(256, device="cuda")
    dot = torch.empty((), device="cuda")
    default, second, third = torch.cuda.current_stream(), torch.cuda.Stream(), torch.cuda.Stream()
    fourth = torch.cuda.Stream()
    if one_combination:
        second = third = fourth = default
    torch.cuda.synchronize()

    def adds(stream, call):
        before = torch.cuda.memory_allocated()
        with torch.cuda.stream(stream):
            call()
        torch.cuda.synchronize()
        return torch.cuda.memory_allocated() - before

    def product(out):
        return lambda: torch.mm(a, a, out=out)

    first = adds(default, product(outs[0]))
    again = adds(default, product(outs[1]))
    other = adds(second, product(outs[2]))
    # A second handle: PyTorch gives each thread a cuBLAS handle of its own;
    # a new thread's product on the default stream.
    in_thread = {}

    def second_handle():
        in_thread.update(added=adds(default, product(outs[3])))

    if one_combination:
        second_handle()  # on the main thread, with its handle
    else:
        worker = threading.Thread(target=second_handle)
        worker.start()
        worker.join()
    # Another cuBLAS routine, a dot product (cublasSdot), the first call on
    # a third stream; with no workspace allowed, cuBLAS may refuse it.
    tried = {}

    def attempt(key, call, work):
        """A routine's first call, tolerated: what it ran is kept in `tried`."""
        return lambda: tried.update({key: rec.attempt(call, work, tolerated=True)})

    dotted = adds(
        third,
        attempt(
            "dot", "torch.dot (cublasSdot), on a third stream", lambda: torch.dot(v, v, out=dot)
        ),
    )

    # A matrix-vector product (cublasSgemv), the first call on a fourth
    # stream: a routine that may need no workspace.
    mv_out = torch.empty(256, device="cuda")
    mved = adds(
        fourth,
        attempt(
            "mv", "torch.mv (cublasSgemv), on a fourth stream", lambda: torch.mv(a, v, out=mv_out)
        ),
    )
    rec.check(names.PRODUCTS_RIGHT, all(float(o[0, 0]) == 256.0 for o in outs))
    rec.fact(names.THE_DOT_PRODUCT_RUNS, tried["dot"].ok and float(dot) == 256.0)
    rec.fact(names.THE_MATRIX_VECTOR_PRODUCT_RUNS, tried["mv"].ok and float(mv_out[0]) == 256.0)
    rec.measure(names.ADDED_BY_A_MATRIX_VECTOR_PRODUCT_ON_A_FOURTH_STREAM, mved)
    rec.fact(names.A_MATRIX_VECTOR_PRODUCT_ON_A_FOURTH_STREAM_ADDS_MEMORY, mved > 0)
    rec.measure(names.ADDED_BY_THE_FIRST_PRODUCT, first)
    rec.measure(names.ADDED_BY_THE_NEXT_PRODUCT_ON_THE_SAME_STREAM, again)
    rec.measure(names.ADDED_BY_THE_FIRST_PRODUCT_ON_A_SECOND_STREAM, other)
    rec.fact(names.THE_FIRST_PRODUCT_ADDS_MEMORY, first > 0)
    rec.fact(names.THE_NEXT_PRODUCT_ON_THE_SAME_STREAM_ADDS_NONE, again == 0)
    rec.fact(names.THE_FIRST_PRODUCT_ON_A_SECOND_STREAM_ADDS_MEMORY, other > 0)
    rec.measure(names.ADDED_BY_THE_FIRST_PRODUCT_OF_A_SECOND_HANDLE, in_thread["added"])
    rec.fact(names.THE_FIRST_PRODUCT_OF_A_SECOND_HANDLE_ADDS_MEMORY, in_thread["added"] > 0)
    rec.measure(names.ADDED_BY_A_DOT_PRODUCT_ON_A_THIRD_STREAM, dotted)
    rec.fact(names.A_DOT_PRODUCT_ON_A_THIRD_STREAM_ADDS_MEMORY, dotted > 0)


def workspace(rec):
    # ANCHOR: workspace
    _workspaces(rec, None)
    # ANCHOR_END: workspace


def workspace_one_combination(rec):
    # ANCHOR: workspace_one_combination
    _workspaces(rec, None, one_combination=True)
    # ANCHOR_END: workspace_one_combination


def workspace_none(rec):
    # ANCHOR: workspace_none
    _workspaces(rec, NO_WORKSPACE)
    # ANCHOR_END: workspace_none


# An image pipeline, the one seed 001 tells of: each step loads a batch of
# images onto the GPU and trains a small convolutional network on it.
LOADER_BATCH = 32  # images a batch
LOADER_SIDE = 512  # pixels a side: 96 MiB of float32 images a batch
LOADER_MORE = 64  # steps beyond the batches the GPU's memory holds
SMALL_SIDE = 128  # pixels a side of the small batches: 6 MiB a batch
TINY_SIDE = 48  # pixels a side of the tiny batches: 0.84 MiB a batch


def _network():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(32, 10),
    ).cuda()


# What the next run trains on: a batch copied from the host, as the
# pipeline's steps do, or the first image of the last batch the pipeline
# kept, already on the GPU, so that no batch is copied before the next
# run's first convolution (its model's parameters are still made first).
FROM_THE_HOST = "from the host"
ALREADY_ON_THE_GPU = "already on the GPU"


def _pipeline(rec, keep, grow=False, next_run_on=FROM_THE_HOST, side=LOADER_SIDE):
    """As many steps as the GPU's memory holds batches, and LOADER_MORE
    more, each copying the next batch from the host and training on it.
    `keep`: the pipeline keeps a reference to every batch it loaded (the
    bug). `grow`: each batch's images are a pixel larger than the last (a
    new shape each step, as in a pipeline of images of every size). `side`:
    the images' pixels a side, which sets how much a batch holds. The
    steps are not recorded one by one: the loop is one call, and its error,
    if any, the one that ended it."""
    model = _network()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    labels = torch.zeros(LOADER_BATCH, dtype=torch.long, device="cuda")
    _, total = torch.cuda.mem_get_info()
    count = total // (LOADER_BATCH * 3 * side * side * 4) + LOADER_MORE
    largest = side + (count if grow else 0)
    host = torch.rand(LOADER_BATCH * 3 * largest * largest).pin_memory()
    loaded, done = [], [0]

    def steps():
        for step in range(count):
            grown = side + (step if grow else 0)
            shape = (LOADER_BATCH, 3, grown, grown)
            images = host[: math.prod(shape)].view(shape).to("cuda")  # the next batch
            if keep:
                loaded.append(images)  # BUG: the batch is never let go
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            done[0] += 1
        torch.cuda.synchronize()

    ran = rec.attempt("load a batch, train on it: more batches than the GPU holds", steps)
    rec.measure(names.STEPS_COMPLETED, done[0])
    rec.measure(names.STEPS_PLANNED, count)
    rec.measure(names.BATCHES_HELD, len(loaded))
    rec.measure(names.BYTES_HELD_BY_LOADED_BATCHES, sum(b.nbytes for b in loaded))
    _ran_out(rec, ran)
    rec.check(names.EVERY_STEP_RUNS, ran.ok and done[0] == count)
    if next_run_on == ALREADY_ON_THE_GPU and loaded:
        _next_run(rec, loaded[-1][:1], labels[:1], side)
    else:
        _next_run(rec, host[: LOADER_BATCH * 3 * side * side], labels, side)
    del loaded[:]


def _next_run(rec, images, labels, side):
    """What comes after the pipeline, in the same process, the batches it
    kept (if any) still held: a new model trained one step on a batch, in a
    thread of its own, as a next run or an evaluation would be. PyTorch
    gives each thread its own cuDNN handle, so this is cuDNN's first call in
    that thread. Its error, if any, is raised here."""
    error = {}

    def one_step():
        try:
            model = _network()
            batch = images.view(-1, 3, side, side).to("cuda")
            torch.nn.functional.cross_entropy(model(batch), labels).backward()
            torch.cuda.synchronize()
        except Exception as e:  # the step's error, whatever it is
            error["raised"] = e

    def next_run():
        worker = threading.Thread(target=one_step)
        worker.start()
        worker.join()
        if "raised" in error:
            raise error["raised"]

    # Tolerated: what the next run meets is read by the facts below, not a symptom.
    ran = rec.attempt(
        "the next run: a new model, one step, in a new thread", next_run, tolerated=True
    )
    rec.fact(names.THE_NEXT_RUN_ENDS_ON_AN_ERROR, not ran.ok)
    rec.fact(names.THE_NEXT_RUN_S_ERROR_NAMES_CUDNN, "cudnn" in (ran.message or "").lower())


def _ran_out(rec, ran):
    """What the claim about exhaustion and cuDNN reads: whether the call
    ended on an error, and whether that error names cuDNN."""
    rec.fact(names.IT_ENDS_ON_AN_ERROR, not ran.ok)
    rec.fact(names.THE_ERROR_THAT_ENDS_IT_NAMES_CUDNN, "cudnn" in (ran.message or "").lower())


def leaky_loader(rec):
    # ANCHOR: leaky_loader
    _pipeline(rec, keep=True)
    # ANCHOR_END: leaky_loader


def leaky_loader_small_batches(rec):
    # ANCHOR: leaky_loader_small_batches
    _pipeline(rec, keep=True, side=SMALL_SIDE)
    # ANCHOR_END: leaky_loader_small_batches


def leaky_loader_small_next_on_the_gpu(rec):
    # ANCHOR: leaky_loader_small_next_on_the_gpu
    _pipeline(rec, keep=True, side=SMALL_SIDE, next_run_on=ALREADY_ON_THE_GPU)
    # ANCHOR_END: leaky_loader_small_next_on_the_gpu


def leaky_loader_tiny_next_on_the_gpu(rec):
    # ANCHOR: leaky_loader_tiny_next_on_the_gpu
    _pipeline(rec, keep=True, side=TINY_SIDE, next_run_on=ALREADY_ON_THE_GPU)
    # ANCHOR_END: leaky_loader_tiny_next_on_the_gpu


def released_loader_tiny_next_on_the_gpu(rec):
    # ANCHOR: released_loader_tiny_next_on_the_gpu
    _pipeline(rec, keep=False, side=TINY_SIDE, next_run_on=ALREADY_ON_THE_GPU)
    # ANCHOR_END: released_loader_tiny_next_on_the_gpu


def leaky_loader_next_on_the_gpu(rec):
    # ANCHOR: leaky_loader_next_on_the_gpu
    _pipeline(rec, keep=True, next_run_on=ALREADY_ON_THE_GPU)
    # ANCHOR_END: leaky_loader_next_on_the_gpu


def leaky_loader_sizes(rec):
    # ANCHOR: leaky_loader_sizes
    _pipeline(rec, keep=True, grow=True)
    # ANCHOR_END: leaky_loader_sizes


def released_loader(rec):
    # ANCHOR: released_loader
    _pipeline(rec, keep=False)
    # ANCHOR_END: released_loader


# Seed 004: a library's temporaries fragmenting memory the user cannot see.
# cuBLAS's workspace comes from the pool PyTorch keeps the user's tensors in.
BLOCK = 4 << 30  # the user's tensor, freed and asked for again
ROOM = BLOCK + (2 << 30)  # what the cache of data leaves free: not two blocks


def _library_temporary(rec, product_first):
    """The user frees a 4 GiB tensor (its block stays in PyTorch's cache) and
    asks for one of the same size again; in between, a matrix product runs,
    the first on its handle and stream, and cuBLAS takes its workspace from
    the same pool. `product_first`: a product ran before the data filled the
    GPU, so the workspace already has its own place."""
    a = torch.ones(256, 256, device="cuda")
    out = torch.empty_like(a)
    if product_first:
        torch.mm(a, a, out=out)
    cache = fill_device(leave=ROOM)
    block = torch.empty(BLOCK, dtype=torch.uint8, device="cuda")
    del block  # a free 4 GiB block in PyTorch's cache
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.mm(a, a, out=out)  # the library's temporary comes from the same pool
    torch.cuda.synchronize()
    taken = torch.cuda.memory_allocated() - before
    again = rec.attempt(
        "torch.empty(4 GiB) again, the size just freed",
        lambda: torch.empty(BLOCK, dtype=torch.uint8, device="cuda").numel(),
    )
    unallocated = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    rec.measure(names.TAKEN_BY_THE_PRODUCT_FROM_THE_POOL, taken)
    rec.measure(names.RESERVED_BUT_UNALLOCATED_AFTER_IT, unallocated)
    rec.fact(names.THE_PRODUCT_TAKES_MEMORY_FROM_THE_USER_S_POOL, taken > 0)
    rec.fact(names.THE_FREED_SIZE_IS_SERVED_AGAIN, again.ok)
    unusable = not again.ok and unallocated >= BLOCK - taken
    rec.fact(names.A_FREED_BLOCK_S_WORTH_IS_LEFT_UNUSABLE, unusable)
    rec.check(names.THE_SAME_SIZE_IS_SERVED_AGAIN, again.ok)
    del cache


def workspace_splits(rec):
    # ANCHOR: workspace_splits
    _library_temporary(rec, product_first=False)
    # ANCHOR_END: workspace_splits


def workspace_first(rec):
    # ANCHOR: workspace_first
    _library_temporary(rec, product_first=True)
    # ANCHOR_END: workspace_first
