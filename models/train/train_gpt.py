"""Trains `austen-gpt`, the GPT-2-architecture model attnplay ships.

Reproducible (seeded, fixed step count) training on the first 95% of a corpus
(default ../shared/corpus/austen-paragraphs.txt, one paragraph per line, read
as it is: paragraphs separated by one line break), validation on the last 5%,
with a byte-level BPE vocabulary made by attnplay's own trainer (`attnplay
train-tokenizer`), or, with --init, continuing a model folder this script
wrote, with its tokenizer. Writes the Hugging Face layout (config.json,
model.safetensors in F16, tokenizer.json) plus training-log.json (losses,
timing, samples) and the fidelity golden file tests/golden/models/austen-gpt.*
(PyTorch's own attention weights and logits on fixed sentences, which the
runtime tests must reproduce).

Matrix products run in bfloat16 (autocast): fast on CPUs with AVX-512 BF16,
like the machine the shipped model was trained on; elsewhere they can be
slower than float32, and on other hardware or PyTorch versions the run will not
match the shipped one bit for bit.

Usage (after `npm run build:native`; the model card gives the shipped model's commands):
    /usr/bin/python3 models/train/train_gpt.py --corpus ../shared/corpus/austen.txt --out /tmp/v4   # version 4, ~40 min on 2 cores
    /usr/bin/python3 models/train/train_gpt.py --init /tmp/v4 --steps 300 --warmup 30 --lr 5e-4     # continued on the paragraphs
    /usr/bin/python3 models/train/train_gpt.py --steps 20 --out /tmp/gpt-smoke --golden /tmp/gpt-smoke   # smoke run
"""
from __future__ import annotations

import json
import math
import random
import shutil
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (Stopwatch, machine_description, optimise, run_cli, seed_everything, split_corpus,  # noqa: E402
                    tokenize, training_arguments, write_safetensors, write_stopped_log)
from fidelity import FIDELITY_SENTENCES, write_fidelity_golden  # noqa: E402
from gpt import GPT, GPTConfig, load_gpt  # noqa: E402

SEED = 1234
VOCAB_SIZE = 4096
CONTEXT = 256  # positions of the model
TOKENS_PER_STEP = 4096  # 32 windows of 128 tokens; every 4th step 16 windows of 256
REPEAT_FRACTION = 0.1  # share of text windows whose second half repeats the first
COPY_ROWS = 0.35  # share of rows that are random tokens repeated with a random period (see below and the model card)
POSITION_LR_SCALE = 2.0  # the position embeddings learn at twice the peak rate: sharper previous-token heads
IGNORE = -100  # target id that the loss skips


def window_length(step: int) -> int:
    """Mostly 128-token windows (attention costs grow with T²); every 4th step
    uses the full 256 so that all position embeddings are trained."""
    return CONTEXT if step % 4 == 3 else CONTEXT // 2


def copy_row(rng: random.Random, length: int, eos: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens (any but <|endoftext|>) repeated with a random period P:
    only the repeats are predictable, so only they are scored (the first P
    targets are IGNORE). Text alone did not teach a 4-layer model to copy
    within the budget (first two versions, see the model card); these rows
    teach the induction mechanism: attend to the token after the current
    token's earlier occurrence. Alone they teach nothing (the model never
    finds the previous-token step); mixed with text, whose bigrams train
    previous-token heads, they do. -> (inputs [length], targets [length])."""
    period = rng.randint(8, length // 2)
    block = [rng.randrange(VOCAB_SIZE - 1) for _ in range(period)]
    block = [t if t < eos else t + 1 for t in block]  # skip the eos id
    row = torch.tensor((block * (length // period + 2))[:length + 1])
    targets = row[1:].clone()
    targets[:period] = IGNORE
    return row[:-1], targets


def batch(ids: torch.Tensor, rng: random.Random, length: int, eos: int, copy_rows: float) -> tuple[torch.Tensor, torch.Tensor]:
    """-> (inputs, targets) [B, length]: random text windows, REPEAT_FRACTION of
    them with the second half repeating the first, and a share copy_rows of
    random repeated tokens (copy_row)."""
    count = TOKENS_PER_STEP // length
    copies = round(count * copy_rows)
    inputs, targets = [], []
    for _ in range(count - copies):
        start = rng.randrange(0, len(ids) - length - 1)
        row = ids[start:start + length + 1].clone()
        if rng.random() < REPEAT_FRACTION:
            half = (length + 1) // 2
            row[half:2 * half] = row[:half]
        inputs.append(row[:-1])
        targets.append(row[1:])
    for _ in range(copies):
        row, target = copy_row(rng, length, eos)
        inputs.append(row)
        targets.append(target)
    return torch.stack(inputs), torch.stack(targets)


@torch.no_grad()
def evaluate(model: GPT, ids: torch.Tensor) -> float:
    """Mean next-token cross-entropy (nats) over the whole sequence in non-overlapping windows."""
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(ids) - 1, CONTEXT):
        window = ids[start:start + CONTEXT + 1]
        if len(window) < 2:
            break
        logits, _ = model(window[None, :-1])
        total += F.cross_entropy(logits[0], window[1:], reduction="sum").item()
        count += len(window) - 1
    model.train()
    return total / count


@torch.no_grad()
def sample(model: GPT, prompt_ids: list[int], n: int, rng: torch.Generator, temperature: float = 0.8, top_k: int = 40) -> list[int]:
    model.eval()
    ids = list(prompt_ids)
    for _ in range(n):
        logits, _ = model(torch.tensor([ids[-CONTEXT:]]))
        logits = logits[0, -1] / temperature
        top = torch.topk(logits, top_k)
        probs = top.values.softmax(-1)
        ids.append(int(top.indices[torch.multinomial(probs, 1, generator=rng)]))
    model.train()
    return ids


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet (Radford et al.): printable bytes stand for
    themselves, the others are shifted to code points 256+ in byte order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, shift = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + shift)] = b
            shift += 1
    return chars


def decode(tokenizer: Path, ids: list[int]) -> str:
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    pieces = {i: piece for piece, i in vocab.items()}
    to_byte = byte_decoder()
    return bytes(to_byte[ch] for i in ids for ch in pieces[i]).decode("utf-8", errors="replace")


def main() -> None:
    def more(parser) -> None:
        parser.add_argument("--init", type=Path, help="continue training this model folder (its weights and tokenizer) instead of starting afresh")
        parser.add_argument("--copy-rows", type=float, default=COPY_ROWS,
                            help="share of the rows that are copy rows (copy_row); the rest are text windows")
    args = training_arguments(__doc__, "austen-gpt", steps=2400, lr=2e-3, warmup=100, more=more)
    seed_everything(SEED)
    clock = Stopwatch()
    work = args.out / ".work"

    train_text, val_text = split_corpus(args.corpus)
    (work / "train.txt").write_text(train_text, encoding="utf-8")
    tokenizer = args.out / "tokenizer.json"
    if args.init:
        shutil.copyfile(args.init / "tokenizer.json", tokenizer)
    else:
        run_cli("train-tokenizer", "--corpus", work / "train.txt", "--vocab-size", VOCAB_SIZE, "--out", tokenizer)
    train_ids = torch.tensor(tokenize(tokenizer, train_text, work)[0])
    val_ids = torch.tensor(tokenize(tokenizer, val_text, work)[0])
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))
    eos = next(t["id"] for t in vocab["added_tokens"] if t["content"] == "<|endoftext|>")
    print(f"tokens: train {len(train_ids):,}, validation {len(val_ids):,} ({clock.minutes():.1f} min)", flush=True)

    if args.init:
        model = load_gpt(args.init).train()
        cfg = model.cfg
    else:
        cfg = GPTConfig(vocab_size=VOCAB_SIZE, n_positions=CONTEXT, n_embd=192, n_layer=4, n_head=4, dropout=0.0)
        model = GPT(cfg)
    # Weight decay on the weight matrices only: decaying the token and position
    # embeddings kept positions too weak for previous-token heads to form.
    decayed = lambda name, p: p.dim() >= 2 and not name.startswith(("transformer.wte", "transformer.wpe"))
    positions = model.transformer["wpe"].weight
    decay = [p for n, p in model.named_parameters() if decayed(n, p)]
    no_decay = [p for n, p in model.named_parameters() if not decayed(n, p) and p is not positions]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0},
                                   {"params": [positions], "weight_decay": 0.0, "lr_scale": POSITION_LR_SCALE}],
                                  lr=args.lr, betas=(0.9, 0.95))
    rng = random.Random(SEED)

    def loss_at(step: int) -> torch.Tensor:
        inputs, targets = batch(train_ids, rng, window_length(step), eos, args.copy_rows)
        # bfloat16 matrix products (AVX-512 BF16): 1.9x faster steps on this CPU,
        # and the induction heads formed more reliably than in float32 across
        # seeds (model card). Weights, evaluation and goldens stay float32.
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, _ = model(inputs)
        return F.cross_entropy(logits.float().reshape(-1, cfg.vocab_size), targets.reshape(-1), ignore_index=IGNORE)

    log = {"machine": machine_description(), "copy_rows": args.copy_rows}
    log["steps"], log["checkpoint"] = optimise(model, optimizer, args.steps, args.lr, args.warmup, loss_at, clock,
                                               args.checkpoint, lambda: evaluate(model, val_ids), args.stop_after)
    if args.stop_after is not None:
        write_stopped_log(args, log, log.pop("steps"), log.pop("checkpoint"), clock, sys.argv)
        return
    train_loss = evaluate(model, train_ids[-len(val_ids):])  # same-size tail of the training split
    val_loss = evaluate(model, val_ids)
    write_safetensors(args.out / "model.safetensors", model.hf_state_dict(), torch.float16)
    (args.out / "config.json").write_text(json.dumps(cfg.hf_config(bos=eos, eos=eos), indent=2) + "\n")

    generator = torch.Generator().manual_seed(SEED)
    prompts = ["It is a truth universally acknowledged", "Mr. Darcy", "\"My dear Miss"]
    samples = []
    for prompt in prompts:
        prompt_ids = tokenize(tokenizer, prompt, work)[0]
        samples.append({"prompt": prompt, "text": decode(tokenizer, sample(model, prompt_ids, 60, generator))})
    write_fidelity_golden(args.golden, "austen-gpt", lambda ids, _types: model(torch.tensor([ids]), want_weights=True),
                          tokenizer, FIDELITY_SENTENCES["gpt"])
    log.update({
        "config": cfg.hf_config(bos=eos, eos=eos), "parameters": sum(p.numel() for p in model.parameters()),
        "train_tokens": len(train_ids), "validation_tokens": len(val_ids), "tokens_seen": args.steps * TOKENS_PER_STEP,
        "final_train_loss": train_loss, "validation_loss": val_loss, "validation_perplexity": math.exp(val_loss),
        "minutes": clock.minutes(), "samples": samples, "seed": SEED, "command": " ".join(sys.argv),
        "corpus": args.corpus.name, "init": str(args.init) if args.init else None,
    })
    (args.out / "training-log.json").write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n")
    print(f"validation loss {val_loss:.4f} (perplexity {math.exp(val_loss):.1f}), {clock.minutes():.1f} min")


if __name__ == "__main__":
    main()
