"""Checks that a training command reproduces a shipped model, and records the
result in the shipped models/<name>/training-log.json, where the model card
(model_card.py) reports it. Two kinds of re-run:

- full: the shipped command run again (with --out and --golden pointing
  elsewhere). Compares the final validation loss and whether model.safetensors
  is bit-identical.
- checkpoint: the shipped command with `--stop-after N`, N the step of the
  checkpoint the shipped run recorded (training-log.json "checkpoint", default
  step 200): the same data, schedule and seed, stopped early. Compares the
  validation loss at that step and the SHA-256 of the float32 weights there.
  It checks that the recipe is deterministic and the command is the one that
  ran, at a fraction of the cost; it does not re-run the steps after N.

Exits with status 1 when the losses differ by more than 1%.
What it is not: the re-run itself.

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


def command_of(log: dict) -> str:
    """The run's command with the script named by its path in the repository."""
    words = log["command"].split()
    return " ".join([f"models/train/{Path(words[0]).name}", *words[1:]])


def main() -> None:
    name, rerun = sys.argv[1], Path(sys.argv[2])
    conditions = sys.argv[3] if len(sys.argv) > 3 else ""
    shipped_path = REPO / "models" / name / "training-log.json"
    shipped = json.loads(shipped_path.read_text(encoding="utf-8"))
    again = json.loads((rerun / "training-log.json").read_text(encoding="utf-8"))
    record = {"command": command_of(again), "minutes": again["minutes"], "conditions": f", {conditions}" if conditions else ""}
    if again.get("stopped_after") is not None:
        ours, theirs = again["checkpoint"], shipped.get("checkpoint")
        if ours is None:
            raise SystemExit(f"the re-run stopped after {again['stopped_after']} steps, before its checkpoint: stop it at the checkpoint's step")
        if not theirs or theirs["step"] != ours["step"]:
            raise SystemExit(f"the shipped run recorded no checkpoint at step {ours['step']}: re-run with --stop-after {theirs['step'] if theirs else '?'}")
        again_loss, shipped_loss = ours["validation_loss"], theirs["validation_loss"]
        record.update({"kind": "checkpoint", "step": ours["step"],
                       "weights_identical": ours["weights_sha256"] == theirs["weights_sha256"]})
    else:
        key = KEYS[name]
        again_loss, shipped_loss = again[key], shipped[key]
        record.update({"kind": "full", "weights_identical":
                       (rerun / "model.safetensors").read_bytes() == (REPO / "models" / name / "model.safetensors").read_bytes()})
    difference = abs(again_loss - shipped_loss) / shipped_loss
    record.update({"validation_loss": again_loss, "shipped_validation_loss": shipped_loss, "relative_difference": difference})
    shipped["reproduction"] = record
    shipped.pop("reproduction_pending", None)
    shipped_path.write_text(json.dumps(shipped, indent=2, ensure_ascii=False) + "\n")
    where = f" at step {record['step']}" if record["kind"] == "checkpoint" else ""
    print(f"{name}: re-run {again_loss:.6f}, shipped {shipped_loss:.6f}{where}, {100 * difference:.4f}% apart, "
          f"weights {'bit-identical' if record['weights_identical'] else 'differ'}")
    sys.exit(0 if difference <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
