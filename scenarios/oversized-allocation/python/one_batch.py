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


# Seed 003's "large-scale image processing": one image, batch size 1, through
# a segmentation network of the usual shape (two convolutions a level, three
# levels down and back up, 64 to 256 channels), one training step.
IMAGE_SIDE = 8192  # pixels a side: a slide or satellite tile, 768 MiB as float32
TILE_SIDE = 2048  # the fix's tile: the same image in 16 parts


def _segmenter():
    torch.manual_seed(0)
    nn = torch.nn

    def block(c_in, c_out):
        return nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(c_out, c_out, 3, padding=1),
            nn.ReLU(),
        )

    class Segmenter(nn.Module):
        def __init__(self):
            super().__init__()
            self.down1, self.down2, self.down3 = block(3, 64), block(64, 128), block(128, 256)
            self.up2, self.up1 = block(256 + 128, 128), block(128 + 64, 64)
            self.head = nn.Conv2d(64, 2, 1)

        def forward(self, x):
            d1 = self.down1(x)
            d2 = self.down2(nn.functional.max_pool2d(d1, 2))
            d3 = self.down3(nn.functional.max_pool2d(d2, 2))
            u2 = self.up2(torch.cat([nn.functional.interpolate(d3, scale_factor=2), d2], 1))
            u1 = self.up1(torch.cat([nn.functional.interpolate(u2, scale_factor=2), d1], 1))
            return self.head(u1)

    return Segmenter().cuda()


def _one_image(rec, tile):
    """One training step on one IMAGE_SIDE² image (batch size 1), or, with
    `tile`, one step per tile² part of it, the gradients summed."""
    model = _segmenter()
    image = torch.rand(1, 3, IMAGE_SIDE, IMAGE_SIDE, device="cuda")
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()

    def step():
        parts = (
            [image]
            if tile is None
            else [
                image[:, :, y : y + tile, x : x + tile]
                for y in range(0, IMAGE_SIDE, tile)
                for x in range(0, IMAGE_SIDE, tile)
            ]
        )
        for part in parts:
            model(part).mean().backward()
        torch.cuda.synchronize()
        return len(parts)

    ran = rec.attempt("a training step on one image (batch size 1)", step)
    _, total = torch.cuda.mem_get_info()
    rec.fact(names.BATCH_SIZE, 1)
    rec.measure(names.IMAGE_BYTES, image.nbytes)
    rec.measure(names.WEIGHT_BYTES, weights)
    rec.measure(names.PEAK_ABOVE_WEIGHTS_AND_IMAGE, torch.cuda.max_memory_allocated() - before)
    rec.measure(names.DEVICE_TOTAL_BYTES, total)
    rec.fact(
        names.THE_STEP_RUNS_OUT_OF_MEMORY,
        not ran.ok and (ran.error or "").startswith("torch.OutOfMemoryError"),
    )
    rec.fact(names.THE_IMAGE_IS_UNDER_ONE_GIB, image.nbytes < 1 << 30)
    rec.check(names.THE_STEP_RUNS, ran.ok)


def large_image(rec):
    # ANCHOR: large_image
    _one_image(rec, tile=None)  # BUG: the whole image in one step
    # ANCHOR_END: large_image


def tiled_image(rec):
    # ANCHOR: tiled_image
    _one_image(rec, tile=TILE_SIDE)  # FIX: one step per tile, gradients summed
    # ANCHOR_END: tiled_image
