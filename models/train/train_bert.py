"""Trains `austen-bert`, the BERT-architecture model attnplay ships.

Reproducible (seeded, fixed step count) masked-language-model training with
sentence pairs (token type ids) on the first 95% of a corpus (default
../shared/corpus/austen-paragraphs.txt, one paragraph per line), validation on
the last 5%, with a WordPiece vocabulary made by attnplay's own trainer
(`attnplay train-tokenizer --model wordpiece`) on the training split. Each
example is one sentence ([CLS] A [SEP]) or, half of the time, a sentence and
the next one ([CLS] A [SEP] B [SEP], B with type id 1). A share of the other
tokens (--mask-rate, 30% by default; the evaluation always 15%) is chosen for
prediction: 80% become [MASK], 10% a random token, 10% stay. --group batches
examples of similar length together (less padding); matrix products run in
bfloat16 unless --float32 (as versions 1 and 2 did). Writes the Hugging Face
layout (config.json, model.safetensors in F16, tokenizer.json),
training-log.json, and the fidelity golden tests/golden/models/austen-bert.*.

bfloat16 autocast is fast on CPUs with AVX-512 BF16, like the machine the
shipped model was trained on; elsewhere it can be slower than float32, and on
other hardware or PyTorch versions the run will not match the shipped one bit
for bit.

Usage (after `npm run build:native`; the model card gives the shipped model's command):
    /usr/bin/python3 models/train/train_bert.py --steps 10 --out /tmp/bert-smoke --golden /tmp/bert-smoke   # smoke run
"""
from __future__ import annotations

import bisect
import json
import math
import random
import re
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bert import Bert, BertConfig  # noqa: E402
from common import (Stopwatch, machine_description, optimise, run_cli, seed_everything, split_corpus, tokenize,  # noqa: E402
                    training_arguments, write_safetensors, write_stopped_log)
from fidelity import FIDELITY_SENTENCES, write_fidelity_golden  # noqa: E402

SEED = 4321
VOCAB_SIZE = 4096
MAX_LENGTH = 128
BATCH = 32
MASK_FRACTION = 0.15
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4  # the trainer's special tokens, in this order
SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)]*\s+")


def sentences_of(text: str) -> list[str]:
    """Sentences of the corpus: paragraphs split after . ! ? Paragraphs are the lines of
    austen-paragraphs.txt, or blank-line separated blocks of a hard-wrapped text like
    austen.txt (versions 1 and 2), their lines joined."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text) if "\n\n" in text else text.split("\n"):
        paragraph = " ".join(paragraph.split())
        out += [s for s in SENTENCE_END.split(paragraph) if len(s) > 1]
    return out


def tokenized_sentences(tokenizer: Path, sentences: list[str], work: Path) -> list[list[int]]:
    """Token ids of each sentence, by one call of our tokenizer on all of them."""
    joined = "\n".join(sentences)
    ids, offsets = tokenize(tokenizer, joined, work)
    starts, position = [], 0
    for s in sentences:  # byte offset of each sentence in the joined text
        starts.append(position)
        position += len(s.encode("utf-8")) + 1
    out = [[] for _ in sentences]
    for token_id, (begin, _end) in zip(ids, offsets):
        out[bisect.bisect_right(starts, begin) - 1].append(token_id)
    return out


def example(sentences: list[list[int]], index: int, with_pair: bool) -> tuple[list[int], list[int]]:
    """[CLS] A [SEP] (B [SEP]) truncated to MAX_LENGTH -> (ids, type_ids)."""
    a = sentences[index]
    b = sentences[index + 1] if with_pair and index + 1 < len(sentences) else None
    budget = MAX_LENGTH - (3 if b is not None else 2)
    if b is None:
        a = a[:budget]
    else:
        a = a[:max(budget // 2, budget - len(b))]
        b = b[:budget - len(a)]
    ids = [CLS] + a + [SEP]
    types = [0] * len(ids)
    if b is not None:
        ids += b + [SEP]
        types += [1] * (len(b) + 1)
    return ids, types


def mask_tokens(ids: list[int], rng: random.Random, fraction: float = MASK_FRACTION) -> tuple[list[int], list[int]]:
    """-> (inputs, labels) with labels -100 where nothing is predicted (BERT's 80/10/10)."""
    inputs, labels = list(ids), [-100] * len(ids)
    candidates = [i for i, t in enumerate(ids) if t > MASK]
    for i in rng.sample(candidates, max(1, round(fraction * len(candidates)))) if candidates else []:
        labels[i] = ids[i]
        r = rng.random()
        inputs[i] = MASK if r < 0.8 else (rng.randrange(MASK + 1, VOCAB_SIZE) if r < 0.9 else ids[i])
    return inputs, labels


def collate(rows: list[tuple[list[int], list[int], list[int]]]) -> tuple[torch.Tensor, ...]:
    """Pads (inputs, types, labels) rows to the longest -> ids, type_ids, mask, labels [B, T]."""
    t = max(len(r[0]) for r in rows)
    pad = lambda seq, value: seq + [value] * (t - len(seq))
    ids = torch.tensor([pad(r[0], PAD) for r in rows])
    types = torch.tensor([pad(r[1], 0) for r in rows])
    mask = torch.tensor([[1] * len(r[0]) + [0] * (t - len(r[0])) for r in rows])
    labels = torch.tensor([pad(r[2], -100) for r in rows])
    return ids, types, mask, labels


def batches(sentences: list[list[int]], rng: random.Random, mask_fraction: float, group: int):
    """Endless training batches of BATCH random examples, masked. With group > 1,
    group * BATCH examples are drawn at once, sorted by length and cut into
    `group` batches served in random order (Hugging Face's group_by_length): the
    rows of a batch have similar lengths, so little work goes to padding (with
    random batches two thirds of the positions are padding). group = 1 draws
    the batches of versions 1 and 2."""
    while True:
        rows = []
        for _ in range(BATCH * group):
            ids, types = example(sentences, rng.randrange(len(sentences) - 1), rng.random() < 0.5)
            inputs, labels = mask_tokens(ids, rng, mask_fraction)
            rows.append((inputs, types, labels))
        if group > 1:
            rows.sort(key=lambda row: len(row[0]))
        chunks = [rows[i:i + BATCH] for i in range(0, len(rows), BATCH)]
        rng.shuffle(chunks)
        yield from (collate(chunk) for chunk in chunks)


def evaluation_rows(sentences: list[list[int]]) -> list[tuple[list[int], list[int], list[int]]]:
    """(inputs, type ids, labels) of the evaluation: every sentence once as A, with
    the next one as B for even indices, 15% masked with a fixed seed."""
    rng = random.Random(SEED + 1)
    rows = []
    for i in range(len(sentences) - 1):
        ids, types = example(sentences, i, i % 2 == 0)
        inputs, labels = mask_tokens(ids, rng)
        rows.append((inputs, types, labels))
    return rows


@torch.no_grad()
def evaluate(model: Bert, sentences: list[list[int]]) -> tuple[float, float]:
    """MLM loss (nats) and accuracy on evaluation_rows(sentences)."""
    model.eval()
    total, correct, count = 0.0, 0, 0
    rows = evaluation_rows(sentences)
    for start in range(0, len(rows), BATCH):
        ids, types, mask, labels = collate(rows[start:start + BATCH])
        chosen = labels != -100  # [B, T]
        logits, _ = model(ids, types, mask, predict_at=chosen)  # [N, V]
        total += F.cross_entropy(logits, labels[chosen], reduction="sum").item()
        correct += (logits.argmax(-1) == labels[chosen]).sum().item()
        count += chosen.sum().item()
    model.train()
    return total / count, correct / count


@torch.no_grad()
def fill_masks(model: Bert, tokenizer: Path, text: str, work: Path) -> str:
    """The text with each [MASK] replaced by the model's top prediction."""
    vocab = {i: piece for piece, i in json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"].items()}
    out = json.loads(run_cli("tokenize", "--tokenizer", tokenizer, "--text", text))
    ids = torch.tensor([out["ids"]])
    model.eval()
    logits, _ = model(ids, torch.zeros_like(ids), torch.ones_like(ids))
    model.train()
    words = [vocab[int(logits[0, i].argmax())] if t == MASK else vocab[t] for i, t in enumerate(out["ids"]) if t not in (CLS, SEP)]
    return " ".join(words).replace(" ##", "")


def main() -> None:
    def more(parser) -> None:
        parser.add_argument("--float32", action="store_true", help="matrix products in float32 (version 2) instead of bfloat16")
        parser.add_argument("--mask-rate", type=float, default=0.3,
                            help="share of tokens predicted in training (evaluation always uses 15%%)")
        parser.add_argument("--group", type=int, default=16,
                            help="draw this many batches at once and group them by length (1: random batches, version 2)")
    args = training_arguments(__doc__, "austen-bert", steps=4200, lr=1e-3, warmup=150, more=more)
    seed_everything(SEED)
    clock = Stopwatch()
    work = args.out / ".work"

    train_text, val_text = split_corpus(args.corpus)
    (work / "train.txt").write_text(train_text, encoding="utf-8")
    tokenizer = args.out / "tokenizer.json"
    run_cli("train-tokenizer", "--corpus", work / "train.txt", "--vocab-size", VOCAB_SIZE, "--model", "wordpiece", "--out", tokenizer)
    specials = [t["content"] for t in json.loads(tokenizer.read_text(encoding="utf-8"))["added_tokens"]]
    assert specials == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], specials
    train = [s for s in tokenized_sentences(tokenizer, sentences_of(train_text), work) if s]
    val = [s for s in tokenized_sentences(tokenizer, sentences_of(val_text), work) if s]
    print(f"sentences: train {len(train):,}, validation {len(val):,} ({clock.minutes():.1f} min)", flush=True)

    cfg = BertConfig(vocab_size=VOCAB_SIZE, hidden_size=192, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=768, max_position_embeddings=MAX_LENGTH)
    model = Bert(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.98))
    stream = batches(train, random.Random(SEED), args.mask_rate, args.group)

    def loss_at(_step: int) -> torch.Tensor:
        ids, types, mask, labels = next(stream)
        chosen = labels != -100  # [B, T]
        # bfloat16 matrix products (AVX-512 BF16) unless --float32: faster steps on
        # this CPU (model card). Weights, optimizer, evaluation and goldens stay float32.
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not args.float32):
            logits, _ = model(ids, types, mask, predict_at=chosen)  # [N, V]
        return F.cross_entropy(logits.float(), labels[chosen])

    log = {"machine": machine_description(), "matrix_products": "float32" if args.float32 else "bfloat16",
           "train_mask_rate": args.mask_rate, "length_group": args.group}
    log["steps"], log["checkpoint"] = optimise(model, optimizer, args.steps, args.lr, args.warmup, loss_at, clock,
                                               args.checkpoint, lambda: evaluate(model, val)[0], args.stop_after)
    if args.stop_after is not None:
        write_stopped_log(args, log, log.pop("steps"), log.pop("checkpoint"), clock, sys.argv)
        return
    train_loss, train_accuracy = evaluate(model, train[-len(val):])
    val_loss, val_accuracy = evaluate(model, val)
    write_safetensors(args.out / "model.safetensors", model.hf_state_dict(), torch.float16)
    (args.out / "config.json").write_text(json.dumps(cfg.hf_config(), indent=2) + "\n")
    fills = [{"text": t, "filled": fill_masks(model, tokenizer, t, work)} for t in (
        "It is a truth universally acknowledged, that a single man in possession of a good [MASK], must be in want of a wife.",
        "Elizabeth walked to the [MASK] with her sister.",
        "\"You must allow me to tell you how ardently I [MASK] and love you.\"",
    )]
    write_fidelity_golden(args.golden, "austen-bert", lambda ids, types: model(torch.tensor([ids]), torch.tensor([types]), torch.ones(1, len(ids)), want_weights=True),
                          tokenizer, FIDELITY_SENTENCES["bert"])
    log.update({
        "config": cfg.hf_config(), "parameters": sum(p.numel() for p in model.parameters()),
        "train_sentences": len(train), "validation_sentences": len(val), "examples_seen": args.steps * BATCH,
        "final_train_mlm_loss": train_loss, "final_train_mlm_accuracy": train_accuracy,
        "validation_mlm_loss": val_loss, "validation_perplexity": math.exp(val_loss), "validation_mlm_accuracy": val_accuracy,
        "minutes": clock.minutes(), "mask_fills": fills, "seed": SEED, "command": " ".join(sys.argv),
        "corpus": args.corpus.name,
    })
    (args.out / "training-log.json").write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n")
    print(f"validation MLM loss {val_loss:.4f} (perplexity {math.exp(val_loss):.1f}), accuracy {val_accuracy:.3f}, {clock.minutes():.1f} min")


if __name__ == "__main__":
    main()
