"""Fidelity golden files: PyTorch's own attention weights and logits of a
trained model on fixed sentences, for the runtime tests (native and WASM) to
reproduce. Written as <golden>/<name>.json (ids, shapes, offsets) plus
<name>.bin (little-endian float32 data); golden is tests/golden/models for the
shipped models. What it is not: a model runner.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import torch

from common import run_cli

FIDELITY_SENTENCES = {
    "gpt": [
        {"text": "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."},
        {"text": "Elizabeth looked at Mr. Darcy, and Mr. Darcy looked at Elizabeth."},
        {"text": "\u201cMy dear Miss Woodhouse!\u201d \u2014 caf\u00e9, 1811; \u00e7a va? \U0001F600"},
    ],
    "bert": [
        {"text": "Emma was handsome, clever, and rich.", "text_b": "She had lived nearly twenty-one years in the world."},
        {"text": "The [MASK] was fine, and they walked to the village."},
        {"text": "Captain Wentworth wrote the letter.", "text_b": "Anne read it twice."},
    ],
}


def write_fidelity_golden(golden: Path, name: str, forward: Callable, tokenizer: Path, sentences: list[dict]) -> None:
    """forward(ids, type_ids) -> (logits [1, T, V], [attention [1, H, T, T] per layer])."""
    golden.mkdir(parents=True, exist_ok=True)
    cases, chunks, offset = [], [], 0
    for sentence in sentences:
        encoded = json.loads(_encode(tokenizer, sentence))
        with torch.no_grad():
            logits, attentions = forward(encoded["ids"], encoded["type_ids"])
        attn = torch.stack([a[0] for a in attentions]).numpy().astype("<f4")  # [L, H, T, T]
        logit = logits[0].numpy().astype("<f4")  # [T, V]
        case = {**sentence, "ids": encoded["ids"], "type_ids": encoded["type_ids"]}
        for key, array in (("attentions", attn), ("logits", logit)):
            case[key] = {"shape": list(array.shape), "offset": offset}
            chunks.append(array.tobytes())
            offset += array.nbytes
        cases.append(case)
    (golden / f"{name}.bin").write_bytes(b"".join(chunks))
    manifest = {"model": name, "source": "models/train (PyTorch, F16-rounded weights evaluated in float32)",
                "data": f"{name}.bin", "cases": cases}
    (golden / f"{name}.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


def _encode(tokenizer: Path, sentence: dict) -> str:
    args = ["tokenize", "--tokenizer", tokenizer, "--text", sentence["text"]]
    if "text_b" in sentence:
        args += ["--pair", sentence["text_b"]]
    return run_cli(*args)
