"""Checks that a training command reproduces a shipped model: compares the
validation loss of a re-run (its training-log.json) with the shipped one,
checks whether the weights are bit-identical, and records the result in the
shipped models/<name>/training-log.json, where the
model card (model_card.py) reports it. Exits with status 1 when they differ by
more than 1%. What it is not: the re-run itself (run the training command with
--out and --golden pointing elsewhere, so the shipped files stay).

Usage: /usr/bin/python3 models/train/check_reproduction.py austen-gpt /tmp/rerun-gpt ["while ..."]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO  # noqa: E402

TOLERANCE = 0.01
KEYS = {"austen-gpt": "validation_loss", "austen-bert": "validation_mlm_loss"}


def main() -> None:
    name, rerun = sys.argv[1], Path(sys.argv[2])
    conditions = sys.argv[3] if len(sys.argv) > 3 else ""
    shipped_path = REPO / "models" / name / "training-log.json"
    shipped = json.loads(shipped_path.read_text(encoding="utf-8"))
    again = json.loads((rerun / "training-log.json").read_text(encoding="utf-8"))
    key = KEYS[name]
    difference = abs(again[key] - shipped[key]) / shipped[key]
    shipped["reproduction"] = {
        "command": f"models/train/{Path(again['command'].split()[0]).name} {' '.join(again['command'].split()[1:])}".strip(),
        "validation_loss": again[key], "shipped_validation_loss": shipped[key], "relative_difference": difference,
        "minutes": again["minutes"], "conditions": f", {conditions}" if conditions else "",
        "weights_identical": (rerun / "model.safetensors").read_bytes() == (REPO / "models" / name / "model.safetensors").read_bytes(),
    }
    shipped_path.write_text(json.dumps(shipped, indent=2, ensure_ascii=False) + "\n")
    print(f"{name}: re-run {again[key]:.4f}, shipped {shipped[key]:.4f}, {100 * difference:.3f}% apart")
    sys.exit(0 if difference <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
