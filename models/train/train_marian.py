"""Trains `gettext-en-fr`, the Marian-layout English->French model attnplay ships.

Data: ../shared/corpus/gettext-en-fr.tsv (English<TAB>French message pairs
from Debian's translation catalogs); a seeded random 5% of the pairs is held
out for validation. Vocabulary: one SentencePiece unigram model shared by both
languages, trained by Google's `spm_train` on the training pairs (identity
normalisation, so that the Hugging Face tokenizer.json written from it --
Metaspace pre-tokenizer, Unigram model, `</s>` appended -- encodes exactly
as sentencepiece does; tests/node/gettext-en-fr.test.mjs checks that).
Model: marian.py (MarianMTModel names, F16). Training: AdamW with label
smoothing 0.1 on length-bucketed batches, a linear warm-up then a cosine decay
over a wall-clock budget (--minutes): the run ends when the budget is spent,
so the step count depends on the machine (the log records it).

Evaluation (written to training-log.json, which the model card quotes):
validation loss (teacher-forced cross-entropy, no smoothing), greedy
translations of every validation pair scored with chrF and BLEU (both
implemented below, documented at their functions), example translations, and
the cross-attention alignment matrices of sentences whose word order flips.
Also writes the fidelity golden tests/golden/models/gettext-en-fr.{json,bin}:
PyTorch's encoder, decoder and cross attentions and logits on fixed pairs, which
the runtime tests reproduce.

Writes the model folder (config.json, model.safetensors, tokenizer.json, and
Marian's own source.spm / target.spm / vocab.json), training-log.json, and the
goldens (fidelity, and sentencepiece's ids of validation sentences).

Usage:
    nohup /usr/bin/python3 models/train/train_marian.py --minutes 45 --threads 1 > train.log 2>&1 &   # shipped
    /usr/bin/python3 models/train/train_marian.py --minutes 1 --out /tmp/mt-smoke --golden /tmp/mt-smoke --eval-pairs 50  # smoke
    /usr/bin/python3 models/train/train_marian.py --fidelity-only   # the fidelity golden again, from models/gettext-en-fr
"""
from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, machine_description, read_safetensors, write_safetensors  # noqa: E402
from marian import Marian, MarianConfig  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "gettext-en-fr.tsv"
GOLDEN_DIR = REPO / "tests" / "golden" / "models"
SEED = 1234
VALIDATION_FRACTION = 0.05
EOS, UNK, PAD = 0, 1, 2  # SentencePiece ids: </s>, <unk>, <pad> (Marian's decoder start token)
MAX_TOKENS = 64  # longer pairs (either side) are left out of training
TOKENS_PER_BATCH = 3000  # source + target tokens per step, padding included
LABEL_SMOOTHING = 0.1
# Sentences whose word order flips between English and French (adjective-noun):
# their alignment matrices go in the log and the card.
FLIPS = ["incorrect binary data format", "invalid regular expression", "unknown file type", "missing closing bracket"]
EXAMPLES = ["File not found", "Cannot open the file %s", "Do you want to save the changes?",
            "The network connection was lost.", "Select a folder", "Print the current working directory"]
FIDELITY = [("incorrect binary data format", "format de données binaires incorrect"),
            ("Cannot open file %s: permission denied", "Impossible d'ouvrir le fichier %s : permission refusée"),
            ("Save changes to the document before closing?", None)]


def read_pairs(path: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(train, validation): every line `english<TAB>french`; a seeded random 5% for validation."""
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        en, fr = line.split("\t")
        pairs.append((en, fr))
    order = list(range(len(pairs)))
    random.Random(SEED).shuffle(order)
    held = set(order[: round(len(pairs) * VALIDATION_FRACTION)])
    return [p for i, p in enumerate(pairs) if i not in held], [p for i, p in enumerate(pairs) if i in held]


def train_sentencepiece(train: list[tuple[str, str]], vocab_size: int, work: Path) -> Path:
    """spm_train (unigram) on both sides of the training pairs -> work/spm.model."""
    text = work / "spm-train.txt"
    text.write_text("".join(f"{en}\n{fr}\n" for en, fr in train), encoding="utf-8")
    subprocess.run(["spm_train", f"--input={text}", f"--model_prefix={work / 'spm'}", f"--vocab_size={vocab_size}",
                    "--model_type=unigram", "--character_coverage=1.0", "--normalization_rule_name=identity",
                    "--remove_extra_whitespaces=false", "--split_digits=false", f"--eos_id={EOS}", f"--unk_id={UNK}",
                    f"--pad_id={PAD}", "--bos_id=-1", "--eos_piece=</s>", "--unk_piece=<unk>", "--pad_piece=<pad>",
                    "--num_threads=1", f"--random_seed={SEED}"], check=True, capture_output=True)
    return work / "spm.model"


def tokenizer_json(processor) -> dict:
    """The Hugging Face tokenizer.json equivalent of the SentencePiece model: Unigram with
    its pieces and scores, Metaspace (a ▁ before every word, one prepended), no
    normalisation (the model was trained with identity), `</s>` appended."""
    vocab = [[processor.id_to_piece(i), processor.get_score(i)] for i in range(processor.get_piece_size())]
    for special in (EOS, PAD):
        vocab[special][1] = 0.0
    specials = [{"id": i, "content": processor.id_to_piece(i), "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True} for i in (EOS, UNK, PAD)]
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": specials, "normalizer": None,
        "pre_tokenizer": metaspace,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [EOS], "tokens": ["</s>"]}}},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": UNK, "vocab": vocab, "byte_fallback": False},
    }


def write_sentencepiece_golden(golden: Path, processor, val: list[tuple[str, str]]) -> None:
    """<golden>/gettext-en-fr-spm.json: Google sentencepiece's ids of the first 400
    validation pairs (both sides, with </s> as the tokenizer.json appends it), for
    the test that our reading of tokenizer.json encodes the same."""
    texts = [text for pair in val[:400] for text in pair]
    cases = [{"text": text, "ids": processor.encode(text) + [EOS]} for text in texts]
    golden.mkdir(parents=True, exist_ok=True)
    (golden / "gettext-en-fr-spm.json").write_text(json.dumps({"source": "python3-sentencepiece on models/gettext-en-fr/source.spm",
                                                              "cases": cases}, ensure_ascii=False) + "\n", encoding="utf-8")


def batches(pairs: list[tuple[list[int], list[int]]], rng: random.Random):
    """Endless batches of similar-length pairs: (src [B, S], decoder inputs [B, T], labels [B, T]);
    decoder inputs are <pad> (the start token) + target, labels are target + </s>."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]) + len(pairs[i][1]), rng.random()))
    groups, group, longest = [], [], 0
    for i in order:
        longest = max(longest, len(pairs[i][0]) + 1, len(pairs[i][1]) + 1)
        if group and (len(group) + 1) * longest * 2 > TOKENS_PER_BATCH:
            groups.append(group)
            group, longest = [], max(len(pairs[i][0]) + 1, len(pairs[i][1]) + 1)
        group.append(i)
    groups.append(group)
    while True:
        rng.shuffle(groups)
        for group in groups:
            yield padded([pairs[i] for i in group])


@torch.no_grad()
def validation_loss(model: Marian, pairs: list[tuple[list[int], list[int]]]) -> float:
    """Mean cross-entropy (nats) of the reference target tokens and </s>, teacher-forced."""
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(pairs), 64):
        chunk = pairs[start:start + 64]
        src, dec, labels = padded(chunk)
        logits, *_ = model(src, dec)
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100, reduction="sum").item()
        count += int((labels != -100).sum())
    model.train()
    return total / count


def padded(chunk: list[tuple[list[int], list[int]]]):
    """One batch of pairs in the layout of batches()."""
    src = [x + [EOS] for x, _ in chunk]
    s, t = max(map(len, src)), max(len(y) for _, y in chunk) + 1
    return (torch.tensor([x + [PAD] * (s - len(x)) for x in src]),
            torch.tensor([[PAD] + y + [PAD] * (t - 1 - len(y)) for _, y in chunk]),
            torch.tensor([y + [EOS] + [-100] * (t - 1 - len(y)) for _, y in chunk]))


@torch.no_grad()
def greedy(model: Marian, sources: list[list[int]]) -> list[list[int]]:
    """Greedy decoding of a batch of sources (token ids without </s>) -> target ids without </s>,
    at most twice the longest source plus 10 tokens."""
    model.eval()
    max_new = 2 * max(map(len, sources)) + 10
    src = torch.tensor([x + [EOS] + [PAD] * (max(map(len, sources)) - len(x)) for x in sources])
    memory, _ = model.encode(src)
    out = torch.full((len(sources), 1), PAD)
    done = torch.zeros(len(sources), dtype=torch.bool)
    for _ in range(max_new):
        logits, _, _ = model.decode(memory, src, out)
        logits[:, -1, PAD] = float("-inf")  # the start token is never generated
        step = logits[:, -1].argmax(-1)
        step[done] = PAD
        out = torch.cat([out, step[:, None]], 1)
        done |= step == EOS
        if done.all():
            break
    model.train()
    rows = [row[1:].tolist() + [EOS] for row in out]
    return [row[: row.index(EOS)] for row in rows]


def char_ngrams(text: str, n: int) -> Counter:
    text = "".join(text.split())  # chrF ignores whitespace
    return Counter(text[i:i + n] for i in range(len(text) - n + 1))


def chrf(hypotheses: list[str], references: list[str], order: int = 6, beta: float = 2.0) -> float:
    """Corpus chrF (Popović 2015, as sacrebleu computes it by default: character
    n-grams of orders 1-6 with whitespace removed, n-gram matches summed over the
    corpus per order, precision and recall averaged over the orders, then
    F_beta with beta = 2, recall weighted twice). In 0-100."""
    match, hyp, ref = [0] * order, [0] * order, [0] * order
    for h, r in zip(hypotheses, references):
        for n in range(1, order + 1):
            hc, rc = char_ngrams(h, n), char_ngrams(r, n)
            match[n - 1] += sum((hc & rc).values())
            hyp[n - 1] += sum(hc.values())
            ref[n - 1] += sum(rc.values())
    precisions = [m / h if h else 0.0 for m, h in zip(match, hyp)]
    recalls = [m / r if r else 0.0 for m, r in zip(match, ref)]
    p, r = sum(precisions) / order, sum(recalls) / order
    return 0.0 if p + r == 0 else 100 * (1 + beta ** 2) * p * r / (beta ** 2 * p + r)


def bleu_tokens(text: str) -> list[str]:
    """Words and punctuation as separate tokens (like sacrebleu's 13a: punctuation
    split off, except inside numbers; apostrophes kept on the word before them)."""
    out, word = [], ""
    for ch in text:
        if ch.isalnum() or ch in "'’" or (ch in ".," and word[-1:].isdigit()):
            word += ch
        else:
            if word:
                out.append(word)
            word = ""
            if not ch.isspace():
                out.append(ch)
    if word:
        out.append(word)
    return out


def bleu(hypotheses: list[str], references: list[str], order: int = 4) -> float:
    """Corpus BLEU (Papineni et al. 2002): clipped n-gram matches of orders 1-4
    summed over the corpus, geometric mean of the four precisions, times the
    brevity penalty exp(1 - ref/hyp) when the hypotheses are shorter; one
    reference per sentence, tokenised by bleu_tokens, case-sensitive. In 0-100."""
    match, total, hyp_len, ref_len = [0] * order, [0] * order, 0, 0
    for h, r in zip(hypotheses, references):
        ht, rt = bleu_tokens(h), bleu_tokens(r)
        hyp_len += len(ht)
        ref_len += len(rt)
        for n in range(1, order + 1):
            hc = Counter(tuple(ht[i:i + n]) for i in range(len(ht) - n + 1))
            rc = Counter(tuple(rt[i:i + n]) for i in range(len(rt) - n + 1))
            match[n - 1] += sum((hc & rc).values())
            total[n - 1] += max(0, len(ht) - n + 1)
    if min(match) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(match, total)) / order
    brevity = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100 * brevity * math.exp(log_precision)


def alignment(model: Marian, processor, english: str) -> dict:
    """Greedy translation of `english` and its last-layer cross-attention averaged
    over heads: row i is the step that produced target token i, [T, S]."""
    src_ids = processor.encode(english)
    out = greedy(model, [src_ids])[0] + [EOS]
    src = torch.tensor([src_ids + [EOS]])
    dec = torch.tensor([[PAD] + out[:-1]])
    model.eval()
    with torch.no_grad():
        _, _, _, crosses = model(src, dec, want_weights=True)
    model.train()
    matrix = crosses[-1][0].mean(0)  # [T, S]
    return {"source": english, "translation": processor.decode(out[:-1]),
            "source_tokens": [processor.id_to_piece(i) for i in src_ids + [EOS]],
            "target_tokens": [processor.id_to_piece(i) for i in out],
            "cross_attention": [[round(v, 3) for v in row] for row in matrix.tolist()]}


def write_fidelity_golden(golden: Path, model: Marian, processor) -> None:
    """<golden>/gettext-en-fr.json + .bin: for each FIDELITY pair, source ids (with
    </s>), decoder ids (start token + reference target, or the greedy translation)
    and PyTorch's encoder [L, H, S, S], decoder [L, H, T, T] and cross [L, H, T, S]
    attentions and logits [T, V], little-endian float32."""
    golden.mkdir(parents=True, exist_ok=True)
    cases, chunks, offset = [], [], 0
    model.eval()
    for english, french in FIDELITY:
        src_ids = processor.encode(english) + [EOS]
        target = processor.encode(french) if french else greedy(model, [src_ids[:-1]])[0]
        dec_ids = [PAD] + target
        model.eval()  # greedy() leaves the model in training mode (dropout)
        with torch.no_grad():
            logits, enc, dec, cross = model(torch.tensor([src_ids]), torch.tensor([dec_ids]), want_weights=True)
        case = {"source": english, "target": french or processor.decode(target), "ids": src_ids, "decoder_ids": dec_ids}
        arrays = {"encoder_attentions": torch.stack([a[0] for a in enc]), "decoder_attentions": torch.stack([a[0] for a in dec]),
                  "cross_attentions": torch.stack([a[0] for a in cross]), "logits": logits[0]}
        for key, tensor in arrays.items():
            array = tensor.numpy().astype("<f4")
            case[key] = {"shape": list(array.shape), "offset": offset}
            chunks.append(array.tobytes())
            offset += array.nbytes
        cases.append(case)
    model.train()
    (golden / "gettext-en-fr.bin").write_bytes(b"".join(chunks))
    manifest = {"model": "gettext-en-fr", "source": "models/train/train_marian.py (PyTorch, F16-rounded weights evaluated in float32)",
                "data": "gettext-en-fr.bin", "cases": cases}
    (golden / "gettext-en-fr.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=45, help="wall-clock budget of the optimisation loop")
    parser.add_argument("--lr", type=float, default=1.5e-3, help="peak learning rate")
    parser.add_argument("--warmup", type=int, default=300, help="steps of linear warm-up")
    parser.add_argument("--vocab-size", type=int, default=6000)
    parser.add_argument("--d-model", type=int, default=192)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=768)
    parser.add_argument("--eval-pairs", type=int, default=0, help="score only this many validation pairs (smoke runs); 0 = all")
    parser.add_argument("--fidelity-only", action="store_true",
                        help="only rewrite the fidelity golden from the model folder --out (no training)")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=REPO / "models" / "gettext-en-fr")
    parser.add_argument("--golden", type=Path, default=GOLDEN_DIR, help="folder for the fidelity golden files")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    random.seed(SEED)
    torch.manual_seed(SEED)
    import sentencepiece  # Debian's python3-sentencepiece
    start = time.time()
    work = args.out / ".work"
    work.mkdir(parents=True, exist_ok=True)

    if args.fidelity_only:
        processor = sentencepiece.SentencePieceProcessor(model_file=str(args.out / "source.spm"))
        saved = json.loads((args.out / "config.json").read_text())
        model = Marian(MarianConfig(vocab_size=saved["vocab_size"], pad_token_id=PAD, eos_token_id=EOS, d_model=saved["d_model"],
                                    layers=saved["encoder_layers"], heads=saved["encoder_attention_heads"],
                                    ffn_dim=saved["encoder_ffn_dim"], max_positions=saved["max_position_embeddings"]))
        model.load_hf_state_dict(read_safetensors(args.out / "model.safetensors"))
        write_fidelity_golden(args.golden, model.eval(), processor)
        return

    train, val = read_pairs(args.corpus)
    processor = sentencepiece.SentencePieceProcessor(model_file=str(train_sentencepiece(train, args.vocab_size, work)))
    (args.out / "tokenizer.json").write_text(json.dumps(tokenizer_json(processor), ensure_ascii=False) + "\n", encoding="utf-8")
    for name in ("source.spm", "target.spm"):  # Marian's own layout: one SentencePiece model per side (here the same)
        shutil.copyfile(work / "spm.model", args.out / name)
    vocab = {processor.id_to_piece(i): i for i in range(processor.get_piece_size())}
    (args.out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False) + "\n", encoding="utf-8")
    write_sentencepiece_golden(args.golden, processor, val)
    encode = lambda pairs: [(processor.encode(en), processor.encode(fr)) for en, fr in pairs]
    train_ids = [p for p in encode(train) if len(p[0]) < MAX_TOKENS and len(p[1]) < MAX_TOKENS]
    val_ids = encode(val)
    print(f"pairs: train {len(train_ids):,} of {len(train):,}, validation {len(val):,}; "
          f"{sum(len(a) + len(b) for a, b in train_ids):,} training tokens ({(time.time() - start) / 60:.1f} min)", flush=True)

    cfg = MarianConfig(vocab_size=processor.get_piece_size(), pad_token_id=PAD, eos_token_id=EOS, d_model=args.d_model,
                       layers=args.layers, heads=args.heads, ffn_dim=args.ffn)
    model = Marian(cfg)
    decayed = [p for n, p in model.named_parameters() if p.dim() >= 2 and n != "shared.weight"]
    other = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and n != "shared.weight")]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.01}, {"params": other, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    stream = batches(train_ids, random.Random(SEED))
    loop_start, step, log = time.time(), 0, []
    budget = args.minutes * 60
    while True:
        elapsed = time.time() - loop_start
        if elapsed >= budget:
            break
        progress = elapsed / budget
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        src, dec, labels = next(stream)
        # bfloat16 matrix products (AVX-512 BF16): 1.7x faster steps on this CPU
        # (measured at this size); weights, evaluation and goldens stay float32.
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, *_ = model(src, dec)
        logits = logits.float()
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), labels.reshape(-1), ignore_index=-100,
                               label_smoothing=LABEL_SMOOTHING)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 100 == 0:
            log.append({"step": step, "train_loss": round(loss.item(), 4), "minutes": round(elapsed / 60, 2), "lr": lr})
            print(f"step {step:6d}  loss {loss.item():.3f}  lr {lr:.2e}  {elapsed / 60:.1f} min", flush=True)
        step += 1
    train_minutes = (time.time() - loop_start) / 60
    with torch.no_grad():  # what ships (F16) is what is evaluated
        for p in model.parameters():
            p.copy_(p.half().float())
    model.eval()

    if args.eval_pairs:
        val, val_ids = val[: args.eval_pairs], val_ids[: args.eval_pairs]
    val_loss = validation_loss(model, val_ids)
    by_length = sorted(range(len(val_ids)), key=lambda i: len(val_ids[i][0]))  # batches of similar lengths
    hypotheses = [""] * len(val_ids)
    for start_i in range(0, len(by_length), 64):
        chunk = by_length[start_i:start_i + 64]
        for i, ids in zip(chunk, greedy(model, [val_ids[i][0][:MAX_TOKENS * 2] for i in chunk])):
            hypotheses[i] = processor.decode(ids)
    references = [fr for _, fr in val]
    (args.out / ".work" / "validation-translations.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    scores = {"chrF": chrf(hypotheses, references), "BLEU": bleu(hypotheses, references)}
    print(f"validation loss {val_loss:.4f}, chrF {scores['chrF']:.1f}, BLEU {scores['BLEU']:.1f}", flush=True)

    write_safetensors(args.out / "model.safetensors", model.hf_state_dict(), torch.float16)
    (args.out / "config.json").write_text(json.dumps(cfg.hf_config(), indent=2) + "\n")
    write_fidelity_golden(args.golden, model, processor)
    examples = [{"source": en, "translation": processor.decode(greedy(model, [processor.encode(en)])[0])} for en in EXAMPLES]
    samples = [{"source": en, "reference": fr, "translation": h} for (en, fr), h in list(zip(val, hypotheses))[:12]]
    log = {
        "machine": machine_description(), "command": " ".join(sys.argv), "seed": SEED,
        "config": cfg.hf_config(), "parameters": sum(p.numel() for p in model.parameters()),
        "train_pairs": len(train_ids), "train_pairs_before_length_filter": len(train), "validation_pairs": len(val),
        "train_tokens_per_epoch": sum(len(a) + len(b) + 2 for a, b in train_ids), "steps": step,
        "tokens_per_batch": TOKENS_PER_BATCH, "training_minutes": round(train_minutes, 1),
        "total_minutes": round((time.time() - start) / 60, 1), "validation_loss": val_loss, "scores": scores,
        "loss_log": log, "examples": examples, "validation_samples": samples,
        "alignments": [alignment(model, processor, en) for en in FLIPS],
    }
    (args.out / "training-log.json").write_text(json.dumps(log, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"done in {(time.time() - start) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
