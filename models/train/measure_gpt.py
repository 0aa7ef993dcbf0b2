"""Measures what a new reader of austen-gpt meets first, on its F16 weights:
how often its top prediction is a line break (↵) on held-out paragraphs, and
what it predicts after the opening of Pride and Prejudice. Also its validation
loss on the paragraph corpus, so that versions trained on other text compare.

Writes the results into <folder>/training-log.json ("measurements"), where the
model card (model_card.py) reports them, and, for the shipped model, the
held-out sample with PyTorch's figures to tests/golden/models/austen-gpt-heldout.json,
which tests/node/shipped-behaviour.test.mjs checks attnplay's WASM runtime against.
What it is not: training, or the head analysis (`attnplay heads`).

Usage: /usr/bin/python3 models/train/measure_gpt.py models/austen-gpt [--golden tests/golden/models]
       /usr/bin/python3 models/train/measure_gpt.py /tmp/other-run --no-log   (print only)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import split_corpus, tokenize  # noqa: E402
from gpt import GPT, load_gpt  # noqa: E402

PROMPT = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a"
SAMPLE = slice(200, 240)  # validation paragraphs in the held-out sample (dialogue and narration, end of Persuasion)


@torch.no_grad()
def window_pass(model: GPT, ids: list[int]) -> tuple[torch.Tensor, float]:
    """Top next-token id at every position [len(ids)] and the mean loss (nats) on
    the known next tokens, in non-overlapping windows of the model's context
    (as the page runs a long text, and as training's evaluation does)."""
    context = model.cfg.n_positions
    top, loss_sum = [], 0.0
    for start in range(0, len(ids), context):
        window = torch.tensor(ids[start:start + context + 1])
        logits, _ = model(window[None, :context])
        top.append(logits[0].argmax(-1))
        if len(window) > 1:
            loss_sum += F.cross_entropy(logits[0, :len(window) - 1], window[1:], reduction="sum").item()
    return torch.cat(top), loss_sum / (len(ids) - 1)


def newline_rates(model: GPT, ids: list[int], newline: int) -> dict:
    """Share of positions whose top prediction is ↵ and whose true next token is ↵; the loss."""
    top, loss = window_pass(model, ids)
    return {"tokens": len(ids), "newline_top1_rate": (top == newline).float().mean().item(),
            "newline_true_rate": sum(1 for t in ids[1:] if t == newline) / (len(ids) - 1), "loss": loss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--golden", type=Path, default=None, help="write the held-out sample golden here (the shipped model)")
    parser.add_argument("--no-log", action="store_true", help="print only; leave training-log.json alone")
    parser.add_argument("--previous", type=Path, help="also measure this earlier version (logged as measurements_previous)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = measure(args.folder)
    golden = result.pop("golden")
    print(json.dumps(result, indent=1, ensure_ascii=False))
    if args.golden:
        (args.golden / "austen-gpt-heldout.json").write_text(json.dumps(golden, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.no_log:
        path = args.folder / "training-log.json"
        log = json.loads(path.read_text(encoding="utf-8"))
        log["measurements"] = result
        if args.previous:
            previous = measure(args.previous)
            previous.pop("golden")
            print("previous:", json.dumps(previous, indent=1, ensure_ascii=False))
            log["measurements_previous"] = previous
        path.write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def measure(folder: Path) -> dict:
    """The figures of the module docstring for the model in `folder`, plus the held-out golden ("golden")."""
    model = load_gpt(folder)
    tokenizer = folder / "tokenizer.json"
    work = Path("/tmp") / f"measure-gpt-{folder.resolve().name}"
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    pieces = {i: p for p, i in vocab.items()}
    newline = vocab["\u010a"]  # byte-level BPE's ↵

    validation = split_corpus()[1]
    sample_text = "\n".join(validation.split("\n")[SAMPLE]) + "\n"
    val_ids = tokenize(tokenizer, validation, work)[0]
    sample_ids = tokenize(tokenizer, sample_text, work)[0]
    prompt_ids = tokenize(tokenizer, PROMPT, work)[0]

    with torch.no_grad():
        logits, _ = model(torch.tensor([prompt_ids]))
        probs = logits[0, -1].softmax(-1)
        ranked = probs.argsort(descending=True).tolist()
    wife = vocab["\u0120wife"]
    result = {
        "validation": newline_rates(model, val_ids, newline),
        "sample": {**newline_rates(model, sample_ids, newline), "paragraphs": f"{SAMPLE.start}-{SAMPLE.stop - 1}"},
        "prompt": PROMPT,
        "prompt_top5": [{"token": pieces[i].replace("\u0120", " ").replace("\u010a", "↵"), "probability": probs[i].item()} for i in ranked[:5]],
        "wife_rank": ranked.index(wife) + 1, "wife_probability": probs[wife].item(),
    }
    result["golden"] = {"text": sample_text, "ids": sample_ids, "newline_id": newline,
                        "newline_top1_rate": result["sample"]["newline_top1_rate"],
                        "prompt": PROMPT, "prompt_top5_ids": ranked[:5], "wife_id": wife}
    return result


if __name__ == "__main__":
    main()
