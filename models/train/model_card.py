"""Writes models/<name>/README.md, the model card, from what training measured
(models/<name>/training-log.json), the config, and the head catalogue that
attnplay's own head analysis computes (`attnplay heads`).

Usage: /usr/bin/python3 models/train/model_card.py austen-gpt   (or austen-bert)
       /usr/bin/python3 models/train/model_card.py austen-gpt /tmp/some-run   (a folder elsewhere)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, VALIDATION_FRACTION, run_cli  # noqa: E402

SCORES = [("previous_token", "previous-token"), ("induction", "induction"), ("sink", "sink"), ("self", "self"), ("local", "local")]


def head_table(heads: list[dict]) -> str:
    rows = ["| head | " + " | ".join(label for _, label in SCORES) + " | labels |", "|---|" + "---:|" * len(SCORES) + "---|"]
    for h in heads:
        rows.append(f"| {h['layer'] + 1}.{h['head'] + 1} | " + " | ".join(f"{h[key]:.2f}" for key, _ in SCORES) + f" | {', '.join(h['labels']) or '–'} |")
    return "\n".join(rows)


def clear_heads(heads: list[dict]) -> str:
    lines = []
    for key, label in SCORES:
        best = max(heads, key=lambda h: h[key])
        lines.append(f"- strongest {label} head: {best['layer'] + 1}.{best['head'] + 1} ({best[key]:.2f})")
    return "\n".join(lines)


def main() -> None:
    name = sys.argv[1]
    folder = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "models" / name
    log = json.loads((folder / "training-log.json").read_text(encoding="utf-8"))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    heads = json.loads(run_cli("heads", "--model", folder))["heads"]
    (folder / "heads.json").write_text(json.dumps(heads, indent=1) + "\n")
    size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file() and f.name in ("config.json", "model.safetensors", "tokenizer.json"))
    gpt = config["model_type"] == "gpt2"
    layers = config["n_layer"] if gpt else config["num_hidden_layers"]
    n_heads = config["n_head"] if gpt else config["num_attention_heads"]
    width = config["n_embd"] if gpt else config["hidden_size"]
    positions = config["n_positions"] if gpt else config["max_position_embeddings"]
    best_prev = max(h["previous_token"] for h in heads)
    marks = log["steps"]  # every 50 steps: {step, minutes}
    fastest_step = min((b["minutes"] - a["minutes"]) * 60 / (b["step"] - a["step"]) for a, b in zip(marks, marks[1:]))
    idle_minutes = (marks[-1]["step"] + 1) * fastest_step / 60 + (log["minutes"] - marks[-1]["minutes"]) + marks[0]["minutes"]
    best_induction = max(h["induction"] for h in heads)

    text = [f"# {name}", ""]
    if gpt:
        text += ["A small GPT-2-architecture language model trained on Jane Austen's novels. It is the default model of",
                 "attnplay's playground: its next-token predictions are shown beside the attention views.", ""]
    else:
        text += ["A small BERT-architecture masked language model trained on Jane Austen's novels, with sentence pairs",
                 "(token type ids). attnplay's playground shows its [MASK] fills beside the attention views.", ""]
    text += [
        "## Data", "",
        "`../shared/corpus/austen.txt`: the six novels (Sense and Sensibility, Pride and Prejudice, Mansfield Park, Emma,",
        "Northanger Abbey, Persuasion) as plain text, 4.0 MB, from Debian's r-cran-janeaustenr. The first",
        f"{100 * (1 - VALIDATION_FRACTION):.0f}% (cut at a line break) is the training split, the last {100 * VALIDATION_FRACTION:.0f}% the validation split (the end of Persuasion).",
        "The text is public domain.", "",
        "## Tokenizer", "",
    ]
    if gpt:
        text += [f"Byte-level BPE with GPT-2's pre-tokenization pattern, {config['vocab_size']:,} tokens (256 bytes, merges, `<|endoftext|>`),",
                 "trained on the training split by attnplay's own trainer (`attnplay train-tokenizer`).",
                 f"Training split: {log['train_tokens']:,} tokens; validation split: {log['validation_tokens']:,} tokens.", ""]
    else:
        text += [f"WordPiece with BERT's normalizer (lowercase) and pre-tokenizer, {config['vocab_size']:,} tokens including",
                 "[PAD] [UNK] [CLS] [SEP] [MASK], trained on the training split by attnplay's own trainer",
                 "(`attnplay train-tokenizer --model wordpiece`: BPE merges with `##` continuations).",
                 f"Training split: {log['train_sentences']:,} sentences; validation split: {log['validation_sentences']:,} sentences.", ""]
    text += [
        "## Architecture", "",
        f"{'GPT-2' if gpt else 'BERT'} layout (Hugging Face `{config['architectures'][0]}` names, loads in `transformers` and in attnplay):",
        f"{layers} layers, {n_heads} heads of {width // n_heads}, width {width}, {positions} positions, vocabulary {config['vocab_size']:,};",
        f"{log['parameters']:,} parameters, stored in F16: {size / 1e6:.1f} MB for config.json + model.safetensors + tokenizer.json.", "",
        "## Training", "",
        "```sh", "npm run build:native", f"/usr/bin/python3 models/train/train_{'gpt' if gpt else 'bert'}.py", "```", "",
        f"Seed {log['seed']}, {log['steps'][-1]['step'] + 1} steps of AdamW with warm-up and cosine decay, run with Debian's PyTorch",
        f"on {log['machine']}: {log['minutes']:.0f} minutes of wall-clock time, on a machine shared with other work (builds,",
        f"tests, the other model's training) for most of the run. At the pace of its fastest 50 steps ({fastest_step:.2f} s a",
        f"step) the whole run takes about {idle_minutes:.0f} minutes on an otherwise idle machine.",
        *([log["notes"]] if "notes" in log else []),
    ]
    if gpt:
        text += [f"{log['tokens_seen']:,} tokens seen: 32 windows of 128 tokens per step, every 4th step 16 windows of 256 so that",
                 "all positions learn. In 10% of the windows the second half repeats the first, to reward induction heads",
                 "(copying what followed an earlier occurrence of the current token).", ""]
    else:
        text += [f"{log['examples_seen']:,} examples seen, 32 per step: a sentence ([CLS] A [SEP]) or, half of the time, a",
                 "sentence and the next one ([CLS] A [SEP] B [SEP], B with type id 1); 15% of the other tokens are",
                 "predicted (80% replaced by [MASK], 10% by a random token, 10% kept). No next-sentence objective.", ""]
    text += ["## Results", "", "Measured on the F16 weights that ship:", ""]
    if gpt:
        text += ["| | loss (nats/token) | perplexity |", "|---|---:|---:|",
                 f"| training split (last {log['validation_tokens']:,} tokens) | {log['final_train_loss']:.3f} | {2.718281828 ** log['final_train_loss']:.1f} |",
                 f"| validation split | {log['validation_loss']:.3f} | {log['validation_perplexity']:.1f} |", "",
                 "Samples (temperature 0.8, top-40, seeded):", ""]
        for s in log["samples"]:
            text += [f"> {s['text']}".replace("\n", "\n> "), ""]
    else:
        text += ["| | MLM loss (nats) | perplexity | MLM accuracy |", "|---|---:|---:|---:|",
                 f"| training split (sample) | {log['final_train_mlm_loss']:.3f} | {2.718281828 ** log['final_train_mlm_loss']:.1f} | {100 * log['final_train_mlm_accuracy']:.1f}% |",
                 f"| validation split | {log['validation_mlm_loss']:.3f} | {log['validation_perplexity']:.1f} | {100 * log['validation_mlm_accuracy']:.1f}% |", "",
                 "Accuracy: share of the predicted tokens whose top prediction is right (masks drawn with a fixed seed).", "",
                 f"The model is undertrained: {log['examples_seen']:,} examples are {log['examples_seen'] / log['train_sentences']:.2f} passes over the",
                 f"{log['train_sentences']:,} training sentences, and its top predictions are mostly frequent tokens (punctuation,",
                 "function words), as the fills below show. Its attention maps, pairs and token types are real and",
                 "reproduce PyTorch's; a longer run on an idle machine is the next step.", "",
                 "Mask fills (top prediction):", ""]
        for f in log["mask_fills"]:
            text += [f"- {f['text']}", f"  → {f['filled']}"]
        text += [""]
    text += [
        "## Heads", "",
        "Scores from attnplay's head analysis (`build/native/attnplay heads --model models/" + name + "`, also shown in the",
        "page's model view): previous-token = mean weight on the token before; induction = on random tokens repeated",
        "twice, mean weight from each token of the second copy to the token after its first occurrence; sink = mean",
        "weight on the first token and separators; self = on the token itself; local = on tokens 1-3 away. The first",
        "four are averaged over four fixed English sentences. Labels mark scores above the thresholds of",
        "`cpp/analysis/head_patterns.h`.", "",
        clear_heads(heads), "",
        head_table(heads), "",
    ]
    if gpt:
        verdict = []
        verdict.append(f"Previous-token head above 0.8: {'yes' if best_prev > 0.8 else 'no'} (best {best_prev:.2f}).")
        verdict.append(f"Induction head above 0.5: {'yes' if best_induction > 0.5 else 'no'} (best {best_induction:.2f}).")
        text += [" ".join(verdict), ""]
        if best_prev <= 0.8 or best_induction <= 0.5:
            text += ["Why not: this model's attention is diffuse. Its validation loss is reached mostly by averaging over",
                     "recent tokens (every head puts 0.3-0.5 of its weight within 3 tokens, none concentrates on one), and the",
                     "runtime reproduces PyTorch's own maps exactly (see Fidelity), so this is the trained model, not a",
                     "reading error. What was tried: 4 layers x 4 heads of 48, 900 steps (3.7M tokens, about 3.6 epochs), a 10%",
                     "share of windows whose second half repeats the first (to reward copying), AdamW with weight decay 0.1",
                     "on every matrix including the token and position embeddings. Next to try: a longer run (the loss was",
                     "still falling), no weight decay on the embeddings (it flattens the position embeddings a",
                     "previous-token head needs), and a larger share of repeated windows.", ""]
    text += [
        "## Fidelity", "",
        "The training script saves PyTorch's own attention weights and logits for fixed sentences",
        f"(`tests/golden/models/{name}.json` + `.bin`); `npm test` checks that attnplay's runtime, natively and in",
        "WebAssembly, reproduces them (attention within 1e-5, logits within 1e-4 relative) and tokenizes them to the same ids.", "",
        "## License", "",
        "The training text is in the public domain; the model weights and this card are released with attnplay under its license.", "",
    ]
    (folder / "README.md").write_text("\n".join(text), encoding="utf-8")
    print(f"wrote {folder / 'README.md'}")


if __name__ == "__main__":
    main()
