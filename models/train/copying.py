"""Measures whether a trained `austen-gpt` copies: its next-token loss on the
first and on the second copy of a sequence repeated twice, for random tokens
(only copying can predict their second copy) and for passages of the
validation text. The model card quotes these figures.

What it is not: the head scores (those come from attnplay's own analysis,
`attnplay heads`), or a test.

Usage (after `npm run build:native`):
    /usr/bin/python3 models/train/copying.py models/austen-gpt
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import split_corpus, tokenize  # noqa: E402
from gpt import GPT, load_gpt  # noqa: E402

ROWS = 8
PERIOD = 40  # as in the head analysis's induction score


@torch.no_grad()
def copy_losses(model: GPT, halves: torch.Tensor) -> tuple[float, float]:
    """halves [ROWS, PERIOD] -> mean loss (nats) on the first copy's and on the second copy's tokens."""
    ids = torch.cat([halves, halves], 1)  # [ROWS, 2 * PERIOD]
    logits, _ = model(ids)
    loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")  # [ROWS, 2 * PERIOD - 1]
    return loss[:, :PERIOD - 1].mean().item(), loss[:, PERIOD:].mean().item()


def main() -> None:
    folder = Path(sys.argv[1])
    model = load_gpt(folder)
    tokenizer = folder / "tokenizer.json"
    specials = {t["id"] for t in json.loads(tokenizer.read_text(encoding="utf-8"))["added_tokens"]}
    generator = torch.Generator().manual_seed(0)
    random_ids = torch.randint(0, model.cfg.vocab_size, (ROWS * PERIOD * 2,), generator=generator)
    random_ids = random_ids[[int(i) not in specials for i in random_ids]][:ROWS * PERIOD].view(ROWS, PERIOD)
    text_ids = torch.tensor(tokenize(tokenizer, split_corpus()[1], folder / ".work")[0][:ROWS * PERIOD]).view(ROWS, PERIOD)
    for what, halves in (("random tokens", random_ids), ("validation text", text_ids)):
        first, second = copy_losses(model, halves)
        print(f"{what}, {ROWS} sequences of {PERIOD} tokens repeated twice: loss {first:.2f} nats on the first copy, {second:.2f} on the second")


if __name__ == "__main__":
    main()
