#!/usr/bin/python3
"""The golden outputs of the shipped shapes-vit that the runtime must
reproduce: for each of its sample pictures, every layer's and head's attention
and the logits of the PyTorch model of vit.py (the shipped F16 weights,
computed in float32), written as tests/golden/models/shapes-vit.json (shapes,
offsets) plus shapes-vit.bin (little-endian float32), as fidelity.py writes
the text models'.

    /usr/bin/python3 models/train/fidelity_shapes_vit.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import GOLDEN_DIR, REPO, read_safetensors  # noqa: E402
from train_shapes_vit import HEADS, INNER, LAYERS, PATCH, WIDTH, pixel_values  # noqa: E402
import shapes  # noqa: E402
from vit import ViT  # noqa: E402

NAME = "shapes-vit"


def main() -> None:
    folder = REPO / "models" / NAME
    model = ViT(shapes.SIZE, PATCH, WIDTH, LAYERS, HEADS, INNER, len(shapes.LABELS))
    stored = read_safetensors(folder / "model.safetensors")
    with torch.no_grad():
        for name, parameter in model.hugging_face_tensors().items():
            parameter.copy_(stored[name])
    model.eval()
    catalog = json.loads((REPO / "models" / "catalog.json").read_text())
    samples = next(m for m in catalog if m["name"] == NAME)["samples"]
    cases, chunks, offset = [], [], 0
    for sample in samples:
        picture = np.array(Image.open(folder / sample).convert("RGB"))  # a writable copy, as torch.from_numpy wants
        with torch.no_grad():
            logits, attentions = model(pixel_values(picture[None]))
        case = {"picture": sample}
        for key, array in (("attentions", torch.stack(attentions)[:, 0].numpy()), ("logits", logits.numpy())):
            array = np.ascontiguousarray(array, dtype="<f4")
            case[key] = {"shape": list(array.shape), "offset": offset}
            chunks.append(array.tobytes())
            offset += array.nbytes
        cases.append(case)
    (GOLDEN_DIR / f"{NAME}.bin").write_bytes(b"".join(chunks))
    (GOLDEN_DIR / f"{NAME}.json").write_text(json.dumps(
        {"model": NAME, "source": "models/train (PyTorch, F16-rounded weights evaluated in float32)", "data": f"{NAME}.bin",
         "cases": cases}, indent=1) + "\n")
    print(f"wrote {GOLDEN_DIR / NAME}.json and .bin: {len(cases)} pictures")


if __name__ == "__main__":
    main()
