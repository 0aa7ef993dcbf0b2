"""Measures what knocking out heads does to a causal model's copying, with
attnplay's own runtime (the CLI's `attention --ablate ... --token-loss`): the
next-token loss on the first and on the second copy of random token
sequences repeated twice (only copying can predict the second copy), intact,
with the heads heads.json labels "induction" ablated, with its
"previous-token" heads ablated, and with every other head ablated alone.
The model card quotes these figures; tests/node/ablation.test.mjs checks
the relation they show on the shipped austen-gpt.

What it is not: a test, or the head scores (`attnplay heads` writes heads.json).

Usage (after `bash scripts/build.sh native`):
    python3 models/train/ablation_effect.py models/austen-gpt [--ablation zero|mean] [--log]
(--log also stores the figures in the folder's training-log.json for the card)
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

ROWS = 8
PERIOD = 40  # as in copying.py and the head analysis's induction score
CLI = Path(__file__).resolve().parents[2] / "build" / "native" / "attnplay"


def copy_losses(folder: Path, rows: list[list[int]], heads: list[tuple[int, int]], mode: str) -> tuple[float, float]:
    """Mean next-token loss (nats) on the first copy's and on the second copy's tokens, over the rows."""
    first, second = [], []
    for half in rows:
        args = [str(CLI), "attention", "--model", str(folder), "--ids", ",".join(map(str, half + half)), "--token-loss"]
        if heads:
            args += ["--ablate", ",".join(f"{l}:{h}" for l, h in heads), "--ablation", mode]
        loss = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["token_loss"]
        first += loss[:PERIOD - 1]   # positions 0..P-2 predict tokens 1..P-1
        second += loss[PERIOD:]      # positions P..2P-2 predict tokens P+1..2P-1 (copies of earlier ones)
    return sum(first) / len(first), sum(second) / len(second)


def measure(folder: Path, mode: str) -> dict:
    """The figures, printed as they come: intact, the labelled heads ablated together, every other head alone."""
    config = json.loads((folder / "config.json").read_text())
    specials = {t["id"] for t in json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["added_tokens"]}
    reports = json.loads((folder / "heads.json").read_text())
    labelled = lambda label: [(r["layer"], r["head"]) for r in reports if label in r["labels"]]
    induction, previous = labelled("induction"), labelled("previous-token")
    generator = random.Random(0)
    pool = [i for i in range(config["vocab_size"]) if i not in specials]
    rows = [[generator.choice(pool) for _ in range(PERIOD)] for _ in range(ROWS)]

    print(f"{folder.name}, {ROWS} random sequences of {PERIOD} tokens repeated twice, {mode} ablation;")
    print("next-token loss in nats on the first copy / on the second copy:")
    intact = copy_losses(folder, rows, [], mode)
    print(f"  intact: {intact[0]:.2f} / {intact[1]:.2f}")
    figures = {"rows": ROWS, "period": PERIOD, "intact": list(intact), "groups": []}
    for name, heads in (("induction heads", induction), ("previous-token heads", previous)):
        if heads:
            f, s = copy_losses(folder, rows, heads, mode)
            listed = ", ".join(f"{l}:{h}" for l, h in heads)
            print(f"  {name} ({listed}) ablated: {f:.2f} / {s:.2f} (second copy {s - intact[1]:+.2f})")
            figures["groups"].append({"name": name, "heads": [list(h) for h in heads], "first": f, "second": s})
    others = [(r["layer"], r["head"]) for r in reports if (r["layer"], r["head"]) not in induction + previous]
    deltas = []
    for head in others:
        f, s = copy_losses(folder, rows, [head], mode)
        deltas.append((s - intact[1], head))
        print(f"  head {head[0]}:{head[1]} alone ablated: {f:.2f} / {s:.2f} (second copy {s - intact[1]:+.2f})")
    if deltas:
        largest, at = max(deltas)
        mean = sum(d for d, _ in deltas) / len(deltas)
        print(f"  other heads alone: second copy {mean:+.2f} on average, at most {largest:+.2f}")
        figures["others"] = {"count": len(deltas), "mean_delta": mean, "max_delta": largest, "max_head": list(at)}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--ablation", choices=("zero", "mean"), default="zero")
    parser.add_argument("--log", action="store_true",
                        help="also write the figures into <folder>/training-log.json (\"ablation\"), where model_card.py reports them")
    args = parser.parse_args()
    figures = measure(args.folder, args.ablation)
    if args.log:
        path = args.folder / "training-log.json"
        log = json.loads(path.read_text())
        log.setdefault("ablation", {})[args.ablation] = figures
        path.write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
