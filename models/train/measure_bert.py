"""Measures austen-bert's masked-token accuracy on its F16 weights: over the
whole validation split (the figure the issue's 35% target is about) and on a
fixed sample of it, which it writes, with PyTorch's top prediction at every
masked position, to tests/golden/models/austen-bert-heldout.json for
tests/node/shipped-behaviour.test.mjs to check attnplay's WASM runtime
against. The examples and their masks are those of training's evaluation
(train_bert.evaluation_rows: each validation sentence, with the next one for
even indices, 15% masked with a fixed seed).

Writes the results into <folder>/training-log.json ("measurements"), where the
model card (model_card.py) reports them.
What it is not: training, or the head analysis (`attnplay heads`).

Usage: /usr/bin/python3 models/train/measure_bert.py models/austen-bert [--golden tests/golden/models]
       /usr/bin/python3 models/train/measure_bert.py /tmp/other-run --no-log   (print only)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bert import load_bert  # noqa: E402
from common import split_corpus  # noqa: E402
from train_bert import evaluate, evaluation_rows, sentences_of, tokenized_sentences  # noqa: E402

SAMPLE_ROWS = 240  # the first evaluation examples (the start of the validation split, Persuasion)


@torch.no_grad()
def measure(folder: Path) -> dict:
    """Validation loss and accuracy, and the sample golden ("golden")."""
    model = load_bert(folder)
    work = Path("/tmp") / f"measure-bert-{folder.resolve().name}"
    validation = [s for s in tokenized_sentences(folder / "tokenizer.json", sentences_of(split_corpus()[1]), work) if s]
    loss, accuracy = evaluate(model, validation)
    model.eval()
    rows, correct, count = [], 0, 0
    for inputs, types, labels in evaluation_rows(validation)[:SAMPLE_ROWS]:
        positions = [i for i, label in enumerate(labels) if label != -100]
        logits, _ = model(torch.tensor([inputs]), torch.tensor([types]), torch.ones(1, len(inputs)))  # [1, T, V]
        predicted = logits[0, positions].argmax(-1).tolist()
        rows.append({"ids": inputs, "type_ids": types, "positions": positions,
                     "labels": [labels[i] for i in positions], "predicted": predicted})
        correct += sum(p == labels[i] for p, i in zip(predicted, positions))
        count += len(positions)
    return {"validation_examples": len(validation) - 1, "validation_mlm_loss": loss, "validation_mlm_accuracy": accuracy,
            "sample": {"examples": len(rows), "predictions": count, "accuracy": correct / count},
            "golden": {"rows": rows, "sample_accuracy": correct / count, "validation_mlm_accuracy": accuracy}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--golden", type=Path, default=None, help="write the sample golden here (the shipped model)")
    parser.add_argument("--no-log", action="store_true", help="print only; leave training-log.json alone")
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = measure(args.folder)
    golden = result.pop("golden")
    print(json.dumps(result, indent=1))
    if args.golden:
        (args.golden / "austen-bert-heldout.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n", encoding="utf-8")
    if not args.no_log:
        path = args.folder / "training-log.json"
        log = json.loads(path.read_text(encoding="utf-8"))
        log["measurements"] = result
        path.write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
