"""The shapes pictures the shipped vision model (shapes-vit) learns from: a
48×48 RGB picture of one filled shape (circle, square, triangle, plus, ring)
in a random colour, size and place, on a background of two random colours in
a gradient with pixel noise; its label is the shape. Each picture comes with
the shape's coverage of every pixel, so that how much of the CLS token's
attention falls on the shape's patches can be measured against the shape's
share of the picture.

What it is not: the model (vit.py) or its training (train_shapes_vit.py).
Everything here is numpy, seeded: a seed gives the same pictures on every machine.
"""
from __future__ import annotations

import numpy as np

SIZE = 48        # pixels a side
SUPERSAMPLE = 4  # shapes are drawn at 4× and averaged: smooth edges
LABELS = ["circle", "square", "triangle", "plus", "ring"]


def shape_mask(label: int, cx: float, cy: float, r: float, rng: np.random.Generator) -> np.ndarray:
    """Coverage [SIZE, SIZE] in 0..1 of shape `label` centred at (cx, cy) with half-size r (pixels)."""
    n = SIZE * SUPERSAMPLE
    y, x = (np.mgrid[0:n, 0:n] + 0.5) / SUPERSAMPLE
    dx, dy = x - cx, y - cy
    name = LABELS[label]
    if name == "circle":
        inside = dx * dx + dy * dy <= r * r
    elif name == "square":
        inside = (np.abs(dx) <= r * 0.85) & (np.abs(dy) <= r * 0.85)
    elif name == "triangle":  # pointing up
        inside = (dy >= -r) & (dy <= r * 0.8) & (np.abs(dx) <= (dy + r) * 0.6)
    elif name == "plus":
        arm = r / 3
        inside = ((np.abs(dx) <= arm) & (np.abs(dy) <= r)) | ((np.abs(dy) <= arm) & (np.abs(dx) <= r))
    else:  # ring
        d2 = dx * dx + dy * dy
        inside = (d2 <= r * r) & (d2 >= (r * 0.55) ** 2)
    return inside.reshape(SIZE, SUPERSAMPLE, SIZE, SUPERSAMPLE).mean(axis=(1, 3))


def picture(rng: np.random.Generator) -> tuple[np.ndarray, int, np.ndarray]:
    """One picture [SIZE, SIZE, 3] uint8, its label and the shape's coverage [SIZE, SIZE]."""
    label = int(rng.integers(len(LABELS)))
    r = rng.uniform(6.0, 13.0)
    cx, cy = rng.uniform(r + 1, SIZE - r - 1, size=2)
    coverage = shape_mask(label, cx, cy, r, rng)
    a, b = rng.uniform(0, 255, size=(2, 3))
    angle = rng.uniform(0, 2 * np.pi)
    y, x = np.mgrid[0:SIZE, 0:SIZE] / (SIZE - 1)
    t = (np.cos(angle) * x + np.sin(angle) * y + 1) / 2  # 0..1 across the picture
    background = a + (b - a) * t[..., None]
    colour = rng.uniform(0, 255, size=3)
    while np.abs(colour - background.mean(axis=(0, 1))).max() < 80:  # keep the shape visible
        colour = rng.uniform(0, 255, size=3)
    image = background * (1 - coverage[..., None]) + colour * coverage[..., None]
    image += rng.normal(0, 6, size=image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8), label, coverage


def batch(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n pictures [n, SIZE, SIZE, 3] uint8, labels [n], coverages [n, SIZE, SIZE]."""
    pictures, labels, coverages = zip(*(picture(rng) for _ in range(n)))
    return np.stack(pictures), np.array(labels), np.stack(coverages)
