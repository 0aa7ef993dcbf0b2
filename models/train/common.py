"""Shared pieces of the training pipeline for attnplay's shipped models.

What it is: data preparation (Austen corpus, one paragraph per line, split
95/5, tokenized by attnplay's own C++ tokenizer through the `attnplay` CLI), a
safetensors writer and reader (the format our runtime parses), seeding,
learning-rate schedule and run bookkeeping.
Also the command-line arguments and the optimisation loop both training
scripts share. What it is not: the model definitions (gpt.py, bert.py) or
what each model learns from (train_gpt.py, train_bert.py).

Run with Debian's PyTorch: /usr/bin/python3 (libopenblas0-pthread installed).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import struct
import subprocess
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "austen-paragraphs.txt"  # one paragraph per line
CLI = REPO / "build" / "native" / "attnplay"
VALIDATION_FRACTION = 0.05
GOLDEN_DIR = REPO / "tests" / "golden" / "models"


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def split_corpus(path: Path = CORPUS) -> tuple[str, str]:
    """First 95% of the corpus for training, the last 5% for validation, cut at a
    line break: whole paragraphs, each ending in one newline."""
    text = path.read_text(encoding="utf-8")
    cut = text.rfind("\n", 0, int(len(text) * (1 - VALIDATION_FRACTION))) + 1
    return text[:cut], text[cut:]


def run_cli(*args: str) -> str:
    if not CLI.exists():
        raise SystemExit(f"{CLI} is missing: build it first with `npm run build:native`")
    return subprocess.run([str(CLI), *map(str, args)], check=True, capture_output=True, text=True).stdout


def tokenize(tokenizer: Path, text: str, workdir: Path) -> tuple[list[int], list[list[int]]]:
    """Token ids and byte offsets of `text` by attnplay's own tokenizer (the code the page runs).

    Special tokens a post-processor adds ([CLS], [SEP]) are removed: the training
    loops add their own."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "text.txt"
    path.write_text(text, encoding="utf-8")
    out = json.loads(run_cli("tokenize", "--tokenizer", tokenizer, "--file", path))
    specials = {t["id"] for t in json.loads(Path(tokenizer).read_text(encoding="utf-8")).get("added_tokens", []) if t.get("special")}
    keep = [i for i, token_id in enumerate(out["ids"]) if token_id not in specials]
    return [out["ids"][i] for i in keep], [out["offsets"][i] for i in keep]


def write_safetensors(path: Path, tensors: dict[str, torch.Tensor], dtype: torch.dtype = torch.float16) -> None:
    """Writes tensors in the safetensors layout: u64 header size, JSON header, raw little-endian data."""
    names = {torch.float16: "F16", torch.float32: "F32"}
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        data = tensors[name].detach().to("cpu", dtype).contiguous().numpy().tobytes()
        header[name] = {"dtype": names[dtype], "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)  # align the data to 8 bytes
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        for chunk in chunks:
            out.write(chunk)


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a file write_safetensors wrote (F16 or F32), as float32."""
    dtypes = {"F16": np.float16, "F32": np.float32}
    raw = Path(path).read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    tensors = {}
    for name, entry in json.loads(raw[8:8 + size]).items():
        if name == "__metadata__":
            continue
        begin, end = (8 + size + offset for offset in entry["data_offsets"])
        values = np.frombuffer(raw[begin:end], dtype=dtypes[entry["dtype"]]).astype(np.float32)
        tensors[name] = torch.from_numpy(values.reshape(entry["shape"]))
    return tensors


def cosine_lr(step: int, total: int, peak: float, warmup: int) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.time()

    def minutes(self) -> float:
        return (time.time() - self.start) / 60


def machine_description() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), torch {torch.__version__}, {torch.get_num_threads()} threads"


def training_arguments(doc: str, model: str, steps: int, lr: float, warmup: int,
                       more: Callable[[argparse.ArgumentParser], None] = lambda _parser: None) -> argparse.Namespace:
    """The options every training command takes (defaults: what the shipped model used),
    plus those `more` adds. Sets PyTorch's thread count and creates the output folder
    and its .work/ scratch folder."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    parser.add_argument("--warmup", type=int, default=warmup, help="steps of linear learning-rate warm-up")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="training text (its last 5%% is the validation split)")
    parser.add_argument("--threads", type=int, default=2, help="PyTorch CPU threads")
    parser.add_argument("--out", type=Path, default=REPO / "models" / model, help="model folder to write")
    parser.add_argument("--golden", type=Path, default=GOLDEN_DIR,
                        help="folder for the fidelity golden files (move it off tests/ for trial runs)")
    parser.add_argument("--checkpoint", type=int, default=200,
                        help="after this many steps, record the validation loss and a digest of the weights in training-log.json")
    parser.add_argument("--stop-after", type=int, default=None,
                        help="stop after this many steps of the same schedule (the reproduction check's short re-run of "
                             "the checkpoint): writes training-log.json only")
    more(parser)
    args = parser.parse_args()
    if args.stop_after is not None and not 0 < args.stop_after <= args.steps:
        parser.error("--stop-after must be between 1 and --steps")
    torch.set_num_threads(args.threads)
    (args.out / ".work").mkdir(parents=True, exist_ok=True)
    return args


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of every parameter's float32 bytes, in parameter order: equal digests, bit-identical weights."""
    digest = hashlib.sha256()
    for name, p in model.named_parameters():
        digest.update(name.encode("utf-8"))
        digest.update(p.detach().to(torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def optimise(model: torch.nn.Module, optimizer: torch.optim.Optimizer, steps: int, peak_lr: float, warmup: int,
             loss_at: Callable[[int], torch.Tensor], clock: Stopwatch, checkpoint: int,
             validation_loss: Callable[[], float], stop_after: int | None = None) -> tuple[list[dict], dict | None]:
    """Runs `steps` AdamW steps on loss_at(step) (cosine schedule, gradients clipped
    to norm 1), then rounds the weights to F16 and back: what ships is evaluated.
    A parameter group's optional "lr_scale" multiplies its learning rate.
    After `checkpoint` steps it records validation_loss() and weights_digest():
    the figures a short re-run (stop_after = checkpoint) must reproduce. With
    stop_after it returns after that many steps, weights not rounded.
    Returns the loss log (every 50th step and the last) and the checkpoint record
    (None if the run ended before it)."""
    log, record = [], None
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(step, steps, peak_lr, warmup) * group.get("lr_scale", 1.0)
        loss = loss_at(step)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 50 == 0 or step == steps - 1:
            log.append({"step": step, "train_loss": loss.item(), "minutes": clock.minutes()})
            print(f"step {step:5d}  loss {loss.item():.3f}  {clock.minutes():.1f} min", flush=True)
        if step + 1 == checkpoint:
            record = {"step": checkpoint, "validation_loss": validation_loss(), "weights_sha256": weights_digest(model),
                      "minutes": clock.minutes()}
            print(f"checkpoint after {checkpoint} steps: validation loss {record['validation_loss']:.6f}, "
                  f"weights {record['weights_sha256'][:16]}", flush=True)
        if stop_after is not None and step + 1 == stop_after:
            return log, record
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    return log, record


def write_stopped_log(args: argparse.Namespace, log: dict, steps_log: list[dict], record: dict | None, clock: Stopwatch,
                      command: list[str]) -> None:
    """training-log.json of a run stopped by --stop-after: its command, losses and checkpoint."""
    log.update({"steps": steps_log, "checkpoint": record, "stopped_after": args.stop_after,
                "command": " ".join(command), "minutes": clock.minutes()})
    (args.out / "training-log.json").write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n")
    print(f"stopped after {args.stop_after} steps, {clock.minutes():.1f} min")
