#!/usr/bin/python3
"""Trains shapes-vit, the vision transformer the page ships: a ViT (Hugging
Face's ViTForImageClassification layout, vit.py) that names the shape in a
48×48 picture (shapes.py: circle, square, triangle, plus, ring on a gradient
background), and writes the model folder: config.json,
preprocessor_config.json, model.safetensors (F16), training-log.json, the
sample pictures the page offers (samples/), and the model card (README.md)
with its held-out accuracy and how much of its CLS attention falls on the
shape.

Every training batch is drawn fresh from a generator seeded by its step; the
held-out pictures come from another seed, so no held-out picture was trained on.

    /usr/bin/python3 models/train/train_shapes_vit.py            # ~10 minutes on 2 cores
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, Stopwatch, machine_description, optimise, seed_everything, write_safetensors  # noqa: E402
import shapes  # noqa: E402
from vit import ViT  # noqa: E402

PATCH, WIDTH, LAYERS, HEADS, INNER = 8, 64, 4, 4, 128
HELD_OUT_SEED, HELD_OUT = 12345, 2000


def pixel_values(pictures: np.ndarray) -> torch.Tensor:
    """[n, 48, 48, 3] uint8 -> [n, 3, 48, 48] as the ViTImageProcessor of preprocessor_config.json makes them
    (no resize at 48 pixels; rescale by 1/255, normalise with mean and std 0.5)."""
    x = torch.from_numpy(pictures).float().permute(0, 3, 1, 2) / 255
    return (x - 0.5) / 0.5


def object_patches(coverages: np.ndarray) -> np.ndarray:
    """[n, 36] bool: the patches (8×8 pixels, row by row) the shape covers at least half of."""
    n = len(coverages)
    grid = shapes.SIZE // PATCH
    per_patch = coverages.reshape(n, grid, PATCH, grid, PATCH).mean(axis=(2, 4)).reshape(n, grid * grid)
    return per_patch >= 0.5


@torch.no_grad()
def evaluate(model: ViT) -> dict:
    """Held-out accuracy (per shape too) and, per layer, the share of the CLS token's attention to patches
    that goes to the shape's patches, beside the shape's share of the patches."""
    pictures, labels, coverages = shapes.batch(np.random.default_rng(HELD_OUT_SEED), HELD_OUT)
    logits, attentions = model(pixel_values(pictures))
    predicted = logits.argmax(dim=-1).numpy()
    on_object = object_patches(coverages)  # [n, 36]
    per_shape = {name: float((predicted[labels == i] == i).mean()) for i, name in enumerate(shapes.LABELS)}
    layers = []
    for layer, weights in enumerate(attentions):  # [n, H, T, T]
        to_patches = weights[:, :, 0, 1:].numpy()  # [n, H, 36]: CLS's attention to each patch
        share = (to_patches * on_object[:, None, :]).sum(-1) / to_patches.sum(-1)  # [n, H]
        layers.append({"layer": layer, "cls_share_on_shape": float(share.mean()),
                       "per_head": [float(s) for s in share.mean(axis=0)]})
    return {"pictures": HELD_OUT, "accuracy": float((predicted == labels).mean()), "per_shape_accuracy": per_shape,
            "shape_share_of_patches": float(on_object.mean()), "layers": layers}


def write_card(out: Path, log: dict) -> None:
    e = log["evaluation"]
    rows = "\n".join(f"| {l['layer'] + 1} | {100 * l['cls_share_on_shape']:.1f}% | "
                     + " · ".join(f"{100 * s:.0f}%" for s in l["per_head"]) + " |" for l in e["layers"])
    shapes_row = ", ".join(f"{name} {100 * a:.1f}%" for name, a in e["per_shape_accuracy"].items())
    (out / "README.md").write_text(f"""# shapes-vit

A vision transformer small enough to ship with the page (F16 weights,
{log['parameters']:,} parameters, {log['file_bytes'] / 1024:.0f} KB) that names the shape in a
48×48 picture: **{', '.join(shapes.LABELS)}**. It exists so that the playground
has a vision model that works offline on first open, and whose attention has
an answer to check: the shape is the only thing in the picture that decides
the label.

- **Architecture**: ViT (Hugging Face `ViTForImageClassification`, `model_type`
  `vit`): {PATCH}×{PATCH}-pixel patches (a 6×6 grid, 37 tokens with CLS),
  {LAYERS} layers × {HEADS} heads, width {WIDTH}, MLP {INNER}, exact GELU, pre-LN,
  a linear classifier on the final CLS row. `preprocessor_config.json`:
  `ViTImageProcessor`, 48×48 bilinear, rescale 1/255, mean and std 0.5.
- **Data** (`models/train/shapes.py`, made by the script, no download): one
  filled shape of random colour, size (half-size 6–13 pixels) and place on a
  two-colour gradient with pixel noise. Every training batch is drawn fresh
  from a generator seeded by its step ({log['steps']} steps of {log['batch']}: {log['steps'] * log['batch']:,}
  pictures); the {e['pictures']:,} held-out pictures come from seed {HELD_OUT_SEED}.
- **Training**: `/usr/bin/python3 models/train/train_shapes_vit.py` (AdamW,
  peak learning rate {log['lr']}, cosine schedule, {log['minutes']:.1f} minutes on {log['machine']},
  with other work sharing the machine).
  The shipped weights are the F16-rounded ones, and every figure below is theirs.
- **Fidelity**: `models/train/fidelity_shapes_vit.py` writes this PyTorch
  model's attention and logits on the samples to
  `tests/golden/models/shapes-vit.json`; the runtime reproduces them natively
  and in WASM (`tests/native/shipped_models_test.cpp`,
  `tests/node/shipped-models.test.mjs`).

## Held-out accuracy

**{100 * e['accuracy']:.1f}%** of {e['pictures']:,} held-out pictures ({shapes_row}).

## Where the CLS token looks

For each held-out picture, the share of the CLS token's attention to the 36
patches that goes to the shape's patches (those the shape covers at least
half of), averaged over pictures; the shape's patches are
**{100 * e['shape_share_of_patches']:.1f}%** of all patches on average, which is what
attention spread evenly would give: from layer 2 on, the CLS token puts about
{min(l['cls_share_on_shape'] for l in e['layers'][1:]) / e['shape_share_of_patches']:.1f}–{max(l['cls_share_on_shape'] for l in e['layers'][1:]) / e['shape_share_of_patches']:.1f} times that on the shape.

| layer | CLS attention on the shape (mean of heads) | per head |
|---|---:|---|
{rows}

Measured by `train_shapes_vit.py` after training (`training-log.json`,
"evaluation"). The page's samples (`samples/`) are the first held-out
picture of each shape.

## Licence

The weights, the data generator and the sample pictures are made by this
project's scripts and carry the project's licence.
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "models" / "shapes-vit")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seed_everything(0)
    clock = Stopwatch()
    model = ViT(shapes.SIZE, PATCH, WIDTH, LAYERS, HEADS, INNER, len(shapes.LABELS))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)

    def loss_at(step: int) -> torch.Tensor:
        pictures, labels, _ = shapes.batch(np.random.default_rng(step), args.batch)
        logits, _ = model(pixel_values(pictures))
        return F.cross_entropy(logits, torch.from_numpy(labels))

    model.train()
    steps_log, _ = optimise(model, optimizer, args.steps, args.lr, args.warmup, loss_at, clock, checkpoint=0,
                            validation_loss=lambda: 0.0)
    model.eval()
    evaluation = evaluate(model)
    print(json.dumps(evaluation, indent=1))

    out = args.out
    (out / "samples").mkdir(parents=True, exist_ok=True)
    config = {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": WIDTH,
              "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "intermediate_size": INNER,
              "hidden_act": "gelu", "layer_norm_eps": 1e-12, "image_size": shapes.SIZE, "patch_size": PATCH,
              "num_channels": 3, "qkv_bias": True,
              "id2label": {str(i): name for i, name in enumerate(shapes.LABELS)},
              "label2id": {name: i for i, name in enumerate(shapes.LABELS)}}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    processor = {"image_processor_type": "ViTImageProcessor", "do_resize": True,
                 "size": {"height": shapes.SIZE, "width": shapes.SIZE}, "resample": 2, "do_rescale": True,
                 "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
                 "image_std": [0.5, 0.5, 0.5]}
    (out / "preprocessor_config.json").write_text(json.dumps(processor, indent=2) + "\n")
    write_safetensors(out / "model.safetensors", model.hugging_face_tensors())
    pictures, labels, _ = shapes.batch(np.random.default_rng(HELD_OUT_SEED), 60)
    for i, name in enumerate(shapes.LABELS):  # the first held-out picture of each shape
        first = int(np.flatnonzero(labels == i)[0])
        Image.fromarray(pictures[first]).save(out / "samples" / f"{name}.png")
    log = {"steps": args.steps, "batch": args.batch, "lr": args.lr, "warmup": args.warmup,
           "parameters": sum(p.numel() for p in model.parameters()),
           "file_bytes": (out / "model.safetensors").stat().st_size, "machine": machine_description(),
           "minutes": clock.minutes(), "evaluation": evaluation, "loss": steps_log,
           "command": " ".join(sys.argv)}
    (out / "training-log.json").write_text(json.dumps(log, indent=2) + "\n")
    write_card(out, log)
    print(f"wrote {out} in {clock.minutes():.1f} min")


if __name__ == "__main__":
    main()
