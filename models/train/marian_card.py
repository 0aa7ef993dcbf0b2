"""Writes models/gettext-en-fr/README.md, the model card, from the
training-log.json that train_marian.py wrote: data and licences, tokenizer,
architecture, command, time and machine load, validation loss, chrF and BLEU,
example translations and the cross-attention alignment matrices of sentences
whose word order flips. What it is not: an evaluation (the numbers are the
training script's).

Usage: /usr/bin/python3 models/train/marian_card.py [--load FILE] [--notes TEXT]
  --load: lines "HH:MM load1 load5 load15" sampled during training (the card
  reports their range as the machine's load).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "models" / "gettext-en-fr"


def table(alignment: dict) -> str:
    """The alignment matrix as a Markdown table: a row per target token, a column per source token."""
    source = [t.replace("|", "\\|") for t in alignment["source_tokens"]]
    lines = ["| | " + " | ".join(f"`{t}`" for t in source) + " |", "|---|" + "---:|" * len(source)]
    for token, row in zip(alignment["target_tokens"], alignment["cross_attention"]):
        best = max(range(len(row)), key=row.__getitem__)
        cells = [f"**{v:.2f}**" if i == best else f"{v:.2f}" for i, v in enumerate(row)]
        lines.append(f"| `{token.replace('|', chr(92) + '|')}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", type=Path, help="load-average samples taken during training")
    parser.add_argument("--notes", default="", help="a paragraph on the run (what else ran on the machine)")
    args = parser.parse_args()
    log = json.loads((FOLDER / "training-log.json").read_text(encoding="utf-8"))
    cfg = log["config"]
    size = sum((FOLDER / name).stat().st_size for name in ("config.json", "model.safetensors", "tokenizer.json"))
    marian_files = sum((FOLDER / name).stat().st_size for name in ("source.spm", "target.spm", "vocab.json"))
    load = ""
    if args.load and args.load.exists():
        samples = [float(line.split()[1]) for line in args.load.read_text().splitlines() if line.strip()]
        if samples:
            load = (f" The machine (2 cores) was shared with other jobs: the 1-minute load average, sampled "
                    f"every minute, ranged from {min(samples):.1f} to {max(samples):.1f} (median "
                    f"{sorted(samples)[len(samples) // 2]:.1f}), so this run had well under one core most of the time.")
    scores = log["scores"]
    out = [
        "# gettext-en-fr",
        "",
        "A small English→French translation model in the Marian (opus-mt) layout, trained from scratch on the",
        "messages of Debian's translation catalogs. attnplay's playground shows its encoder, decoder and",
        "cross-attention; the cross-attention is the alignment matrix of the translation tutorials.",
        "",
        "## Data and licences",
        "",
        "`../shared/corpus/gettext-en-fr.tsv`: 47,485 English→French message pairs (`msgid`/`msgstr`) from the gettext",
        "catalogs of 80 Debian packages (coreutils, apt, dpkg, git, binutils, glib, gnupg, ...; the list with package",
        "versions is `../shared/corpus/gettext-en-fr.sources.txt`). The catalogs are distributed under their packages'",
        "licences, mostly the GPL and the LGPL; this model is trained on them, so treat it as derived from",
        "GPL/LGPL-licensed material.",
        "",
        f"A seeded random 5% of the pairs ({log['validation_pairs']:,}) is the validation split"
        f" (`models/train/train_marian.py`, seed {log['seed']}); of the other {log['train_pairs_before_length_filter']:,},"
        f" the {log['train_pairs']:,} whose sides have fewer than 64 tokens each are the training pairs"
        f" ({log['train_tokens_per_epoch']:,} tokens a pass, both sides, with `</s>`).",
        "",
        "## Tokenizer",
        "",
        f"One SentencePiece unigram model of {cfg['vocab_size']:,} pieces for both languages, trained by Google's `spm_train`",
        "on both sides of the training pairs (identity normalisation, whitespace kept as it is, every character",
        "covered; `</s>` = 0, `<unk>` = 1, `<pad>` = 2, the decoder's start token as in opus-mt). It ships twice:",
        "as `tokenizer.json` (Hugging Face: Unigram with the same pieces and scores, Metaspace, `</s>` appended to",
        "the source), which attnplay reads, and as Marian's own `source.spm`, `target.spm` (the same model) and",
        "`vocab.json`. `npm test` checks that our reading of `tokenizer.json` gives sentencepiece's ids on 800",
        "validation sentences of both languages.",
        "",
        "## Architecture",
        "",
        f"Marian layout (Hugging Face `MarianMTModel` names; loads in `transformers` and in attnplay): {cfg['encoder_layers']}"
        f" encoder and {cfg['decoder_layers']} decoder layers, {cfg['encoder_attention_heads']} heads of"
        f" {cfg['d_model'] // cfg['encoder_attention_heads']}, width {cfg['d_model']}, feed-forward {cfg['encoder_ffn_dim']}"
        f" (SiLU), post-LN, sinusoidal positions (up to {cfg['max_position_embeddings']}), embeddings × √{cfg['d_model']}"
        " shared by encoder, decoder and output layer, `final_logits_bias`.",
        f"{log['parameters']:,} parameters, stored in F16: {size / 1e6:.1f} MB for config.json + model.safetensors +",
        f"tokenizer.json ({marian_files / 1e6:.1f} MB more for source.spm, target.spm and vocab.json).",
        "",
        "## Training",
        "",
        "```sh",
        f"/usr/bin/python3 models/train/train_marian.py {' '.join(log['command'].split()[1:])}",
        "/usr/bin/python3 models/train/marian_card.py --load models/gettext-en-fr/.work/load.log   # this card",
        "```",
        "",
        f"AdamW (β = 0.9, 0.98), label smoothing 0.1, batches of about {log['tokens_per_batch']:,} tokens (padding",
        "included) of similar-length pairs, matrix products in bfloat16 (autocast), a linear warm-up then a cosine",
        "decay over a wall-clock budget: the run stops when the budget is spent, so its step count depends on the",
        f"machine. This run: {log['steps']:,} steps in {log['training_minutes']} minutes of training,"
        f" {log['total_minutes']} minutes in all with the evaluation, one PyTorch thread ({log['machine']}).{load}",
        args.notes,
        "",
        "## Results",
        "",
        "Measured on the F16 weights that ship, on the validation pairs:",
        "",
        "| | |",
        "|---|---:|",
        f"| validation loss (nats per target token, `</s>` included, teacher-forced) | {log['validation_loss']:.3f} |",
        f"| chrF (greedy translations) | {scores['chrF']:.1f} |",
        f"| BLEU (greedy translations) | {scores['BLEU']:.1f} |",
        "",
        "Both metrics are implemented in `train_marian.py` and documented there: chrF as sacrebleu computes it by",
        "default (character 1- to 6-grams, whitespace removed, statistics summed over the corpus, β = 2); BLEU as",
        "corpus BLEU with 1- to 4-grams, the brevity penalty, one reference, punctuation split off the words.",
        "The split is random over pairs, and the catalogs repeat many messages with small variations across",
        "packages (\"cannot open %s\", \"invalid option\"), so the validation pairs are close to training pairs",
        "more often than new text would be: read the scores as in-domain, not as general English→French quality.",
        "",
        "Example translations (greedy):",
        "",
    ]
    out += [f"- {e['source']} → {e['translation']}" for e in log["examples"]]
    out += ["", "Validation pairs (source → reference / ours):", ""]
    out += [f"- {s['source']} → {s['reference']} / **{s['translation']}**" for s in log["validation_samples"][:8]]
    out += ["", "## Alignment: where the word order flips", "",
            "The cross-attention of the last decoder layer, averaged over its heads, while the model translates",
            "greedily: row i is the step that produced target token i, each row sums to 1 over the source tokens",
            "(the largest in bold). `attnplay translate --model models/gettext-en-fr --text \"...\"` prints these.", ""]
    for a in log["alignments"]:
        out += [f"**{a['source']}** → {a['translation']}", "", table(a), ""]
    (FOLDER / "README.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {FOLDER / 'README.md'}")


if __name__ == "__main__":
    main()
