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
from train_gpt import COPY_ROWS, POSITION_LR_SCALE, REPEAT_FRACTION  # noqa: E402
from train_bert import MASK_FRACTION  # noqa: E402

SCORES = [("previous_token", "previous-token"), ("next_token", "next-token"), ("induction", "induction"), ("sink", "sink"),
          ("self", "self"), ("local", "local"), ("broad", "broad")]
NOVELS = ("the six novels (Sense and Sensibility, Pride and Prejudice, Mansfield Park, Emma,\n"
          "Northanger Abbey, Persuasion) as plain text, 4.0 MB, from Debian's r-cran-janeaustenr")


def head_table(heads: list[dict]) -> str:
    rows = ["| head | " + " | ".join(label for _, label in SCORES) + " | labels |", "|---|" + "---:|" * len(SCORES) + "---|"]
    for h in heads:
        rows.append(f"| {h['layer'] + 1}.{h['head'] + 1} | " + " | ".join(f"{h[key]:.2f}" for key, _ in SCORES) + f" | {', '.join(h['labels']) or '–'} |")
    return "\n".join(rows)


def clear_heads(heads: list[dict]) -> str:
    lines = []
    for key, label in SCORES:
        best = max(heads, key=lambda h: h[key])
        if best[key] == 0:  # next-token under a causal mask
            continue
        lines.append(f"- strongest {label} head: {best['layer'] + 1}.{best['head'] + 1} ({best[key]:.2f})")
    return "\n".join(lines)


def reproduction(log: dict) -> list[str]:
    """The card's sentence on the re-run check (check_reproduction.py), if one was made."""
    if "reproduction" not in log:
        return []
    r = log["reproduction"]
    if r.get("kind") == "checkpoint":
        return [f"Reproducibility, checked at a checkpoint: `{r['command']}` (the shipped command stopped after step {r['step']:,},",
                f"`models/train/check_reproduction.py`) gave a validation loss of {r['validation_loss']:.6f} at step {r['step']:,} against the shipped run's",
                f"{r['shipped_validation_loss']:.6f} there: {100 * r['relative_difference']:.4f}% apart ({r['minutes']:.0f} minutes{r.get('conditions', '')}); "
                + ("the SHA-256 of its float32 weights at that step equals the shipped run's, so the run is bit-identical up to there."
                   if r["weights_identical"] else "its float32 weights at that step differ from the shipped run's (SHA-256).")
                + f" The steps after {r['step']:,} were not re-run."]
    return [f"Reproducibility: re-running `{r['command']}` gave a validation loss of {r['validation_loss']:.4f} against the shipped",
            f"{r['shipped_validation_loss']:.4f}: {100 * r['relative_difference']:.3f}% apart ({r['minutes']:.0f} minutes{r.get('conditions', '')})"
            + ("; its model.safetensors is bit-identical to the shipped one." if r.get("weights_identical") else ".")]


def measurements(log: dict) -> list[str]:
    """The card's lines on what measure_gpt.py measured (↵ predictions, the opening sentence), if it ran."""
    if "measurements" not in log:
        return []
    now, before = log["measurements"], log.get("measurements_previous")
    columns = [(log["previous_version"], before), ("this version", now)] if before else [("", now)]
    pct = lambda value: f"{100 * value:.1f}%"
    rows = [("↵ as the top prediction, validation split", lambda m: pct(m["validation"]["newline_top1_rate"])),
            (f"↵ as the top prediction, held-out sample (validation paragraphs {now['sample']['paragraphs']}, {now['sample']['tokens']:,} tokens)",
             lambda m: pct(m["sample"]["newline_top1_rate"])),
            ("↵ as the true next token, validation split", lambda m: pct(m["validation"]["newline_true_rate"])),
            ("loss on the paragraphs' validation split (nats/token)", lambda m: f"{m['validation']['loss']:.3f}"),
            ("rank of \" wife\" after the opening sentence", lambda m: f"{m['wife_rank']} (p = {m['wife_probability']:.3f})")]
    lines = ["What a reader meets first (`models/train/measure_gpt.py models/austen-gpt" + (f" --previous <{log['previous_version']} folder>" if before else "") + "`),",
             "in non-overlapping windows of 256 tokens as the page runs a long text:", "",
             "| | " + " | ".join(name for name, _ in columns) + " |", "|---|" + "---:|" * len(columns)]
    lines += [f"| {label} | " + " | ".join(value(m) for _, m in columns) + " |" for label, value in rows]
    top5 = ", ".join(f"\"{t['token']}\" {t['probability']:.2f}" for t in now["prompt_top5"])
    lines += ["", f"After \"{now['prompt']}\" its top 5 are: {top5}.", ""]
    return lines


def ablation(log: dict) -> list[str]:
    """The card's lines on what knocking heads out does to copying (ablation_effect.py --log), if it ran."""
    if "ablation" not in log:
        return []
    runs = log["ablation"]
    first = next(iter(runs.values()))
    lines = ["## Head ablation", "",
             f"What the heads do, not only where they look: the next-token loss (nats) on {first['rows']} sequences of",
             f"{first['period']} random tokens repeated twice, on the first copy (nothing can be known there) and on the",
             "second (only copying predicts it), with heads knocked out by attnplay's runtime (zero: the head's output",
             "before the output projection set to 0; mean: set to its mean over the text's positions;",
             "`python3 models/train/ablation_effect.py models/austen-gpt --ablation zero|mean --log`).", "",
             "| heads knocked out | " + " | ".join(f"{mode}: first / second copy" for mode in runs) + " |",
             "|---|" + "---:|" * len(runs)]
    cell = lambda f, s, base: f"{f:.2f} / {s:.2f} ({s - base:+.2f})"
    lines.append("| none | " + " | ".join(f"{r['intact'][0]:.2f} / {r['intact'][1]:.2f}" for r in runs.values()) + " |")
    for i, group in enumerate(first["groups"]):
        heads = ", ".join(f"{l}:{h}" for l, h in group["heads"])
        lines.append(f"| {group['name']} ({heads}, layer:head from 0) | "
                     + " | ".join(cell(r["groups"][i]["first"], r["groups"][i]["second"], r["intact"][1]) for r in runs.values()) + " |")
    if "others" in first:
        lines.append(f"| any other head alone ({first['others']['count']} heads): largest rise on the second copy | "
                     + " | ".join(f"{r['others']['max_delta']:+.2f} (head {r['others']['max_head'][0]}:{r['others']['max_head'][1]}; mean {r['others']['mean_delta']:+.2f})"
                                  for r in runs.values()) + " |")
    lines += ["", "Knocking out the induction heads (or the previous-token head they read from) stops the copying;",
              "any other single head barely matters to it. The page's Ablation tab shows the same live.", ""]
    return lines


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
    best_induction = max(h["induction"] for h in heads)

    text = [f"# {name}", ""]
    if gpt:
        text += ["A small GPT-2-architecture language model trained on Jane Austen's novels. It is the default model of",
                 "attnplay's playground: its next-token predictions are shown beside the attention views.", ""]
    else:
        text += ["A small BERT-architecture masked language model trained on Jane Austen's novels, with sentence pairs",
                 "(token type ids). attnplay's playground shows its [MASK] fills beside the attention views.", ""]
    text += ["## Data", ""]
    split = (f"The first {100 * (1 - VALIDATION_FRACTION):.0f}% (cut at a line break) is the training split, the last "
             f"{100 * VALIDATION_FRACTION:.0f}% the validation split (the end of Persuasion).")
    if log.get("corpus") == "austen-paragraphs.txt":
        text += [f"`../shared/corpus/austen-paragraphs.txt`: {NOVELS},",
                 "one paragraph per line: the text of `austen.txt` without its hard wrap every ~70 characters.", split]
        if gpt:
            text += ["The model reads the file as it is: paragraph after paragraph, each ending in one line break, so ↵",
                     "marks the end of a paragraph and nothing else."]
        else:
            text += ["The text is cut into sentences after . ! ? (whitespace and line breaks are only separators to BERT's",
                     "pre-tokenizer)."]
        if log.get("init"):
            text += [log["lineage"]]  # which earlier versions this one continues (see Training)
    else:
        text += [f"`../shared/corpus/austen.txt`: {NOVELS}. The first", split[len("The first "):]]
    text += ["The text is public domain.", "", "## Tokenizer", ""]
    if gpt:
        text += [f"Byte-level BPE with GPT-2's pre-tokenization pattern, {config['vocab_size']:,} tokens (256 bytes, merges, `<|endoftext|>`),",
                 "trained by attnplay's own trainer (`attnplay train-tokenizer`) on the training split"
                 + (" of `austen.txt` (version 4's, kept so that its weights carry over)." if log.get("init") else "."),
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
        "```sh", "npm run build:native",
        *([f"/usr/bin/python3 {command}   # {comment}" for command, comment in log["init_commands"]]
          + [f"/usr/bin/python3 {log['command']}   # this version, from {log['previous_version']}"]
          if log.get("init") else [f"/usr/bin/python3 {log['command']}"]),
        "```", "",
        ("(the script's defaults are version 4's settings but for the corpus; `--threads` only changes the speed)" if log.get("init")
         else "(the script's defaults are the shipped model's " + ("other " if "--corpus" in log["command"] else "")
         + "settings; `--threads` only changes the speed)"), "",
        f"Seed {log['seed']}, {log['steps'][-1]['step'] + 1} steps of AdamW with warm-up and cosine decay, run with Debian's PyTorch",
        f"on {log['machine']}: {log['minutes']:.0f} minutes of wall-clock time.",
        *([log["notes"]] if "notes" in log else []),
        *reproduction(log),
        *([] if "reproduction" in log or not log.get("reproduction_pending") else [log["reproduction_pending"]]),
    ]
    copy_rows = log.get("copy_rows", COPY_ROWS)
    if gpt:
        text += [f"{log['tokens_seen']:,} token positions seen{' in this continuation' if log.get('init') else ''}: 32 rows of 128 tokens per step, every 4th step 16 rows of 256 so",
                 f"that all positions learn. {100 * (1 - copy_rows):.0f}% of the rows are windows of the text, {100 * REPEAT_FRACTION:.0f}% of those with the second",
                 f"half repeating the first. The other {100 * copy_rows:.0f}% are copy rows: random tokens repeated with a random period",
                 "of 8 to half the row, scored only on the repeats, which only copying can predict. They teach the",
                 "induction mechanism (look up the earlier occurrence of the current token, predict what followed it),",
                 "which text alone did not teach a model of this size within the time budget (see the history below).",
                 "The position embeddings start from the sinusoids of Vaswani et al. (2017), scaled by 0.05 to the size",
                 f"of the token embeddings, and learn at {POSITION_LR_SCALE:g}x the peak rate; they are ordinary learned GPT-2 positions",
                 "from then on. Matrix products run in bfloat16 (PyTorch autocast; this CPU has AVX-512 BF16), weights,",
                 "optimizer and evaluation in float32. Weight decay 0.1 on the weight matrices of the blocks; none on",
                 "the token and position embeddings, biases and layer norms.", "",
                 "History. Version 1: 900 steps, 10% repeated windows, weight decay also on the embeddings: validation",
                 "loss 4.148, every head diffuse (best previous-token score 0.26, induction 0.02). Version 2: 1,400 steps,",
                 "30% repeated windows, no decay on the embeddings: validation loss 4.010, still diffuse (0.33 and 0.02),",
                 "and no copying: on a passage of validation text repeated twice its loss on the second copy was that",
                 "of the first (4.09 against 4.12 nats). Version 3: 1/8 copy rows: validation loss 4.009, still no",
                 "copying (8.32 nats on the second copy of random tokens, the uniform guess over 4,096 tokens).",
                 "",
                 "Version 4 came from about 100 short runs of this script's model and data on a GPU (1,400",
                 "to 5,600 steps each, head scores measured every ~200 steps); what they showed:",
                 "- Copy rows alone, without text, teach nothing within 2,800 steps: the loss stays at the uniform guess.",
                 "  Text is what trains the previous-token heads that induction is built on; the copy rows then make",
                 "  the induction step pay. (A 2-layer check in version 3 had seemed to copy, but with a fixed period,",
                 "  which attention by position alone solves.)",
                 "- With GPT-2's random start the best previous-token score stayed at 0.2-0.4 in every run. Starting the",
                 "  positions from sinusoids and letting them learn faster raised it to 0.5-0.9.",
                 "- Induction appears as a sudden phase change once a previous-token head reaches about 0.4-0.5. In",
                 "  float32 it came in 4 of 13 runs with 35-40% copy rows by 1,600-2,400 steps, depending on the seed.",
                 "  In bfloat16, with these settings and 2,400 steps, it came in all 8 seeds tried (induction 0.87-0.97),",
                 "  with a previous-token head above 0.8 in 7 of them. Why bfloat16 helps is not established.",
                 "- With 20-30% copy rows it came in none of about 20 runs by 2,400 steps (twice by 2,800); 45-50% were",
                 "  too many (the text heads then formed too slowly). Twice the steps with half the rows each did no",
                 "  better at equal cost.",
                 "",
                 "Version 4's own run shows the same phase change: the training loss fell from 5.1 to 3.2 between",
                 "steps 1,350 and 1,850, as the copy rows became predictable. It pays for them with 1% on text",
                 "(validation loss 4.054 against version 3's 4.009). It copies: on 8 sequences of 40 random tokens",
                 "repeated twice, its loss is 0.23 nats on the second copy (13.44 on the first, where nothing can be",
                 "known; copy rows never score their first period, so it is over-confident there), and on passages",
                 "of the validation text repeated twice 4.07 against 4.34 (`models/train/copying.py models/austen-gpt`).",
                 "", *([log["notes_version"], ""] if "notes_version" in log else [])]
    else:
        mask_rate = log.get("train_mask_rate", MASK_FRACTION)
        bf16 = log.get("matrix_products") == "bfloat16"
        text += [f"{log['examples_seen']:,} examples seen, 32 per step: a sentence ([CLS] A [SEP]) or, half of the time, a",
                 f"sentence and the next one ([CLS] A [SEP] B [SEP], B with type id 1); {100 * mask_rate:.0f}% of the other tokens are",
                 "predicted (80% replaced by [MASK], 10% by a random token, 10% kept)"
                 + (f"; the evaluation predicts {100 * MASK_FRACTION:.0f}%, as BERT does." if mask_rate != MASK_FRACTION else ".")
                 + " No next-sentence objective.",
                 *(["Matrix products run in bfloat16 (PyTorch autocast; this CPU has AVX-512 BF16), weights, optimizer and",
                    "evaluation in float32."] if bf16 else []),
                 *([log["notes_trials"]] if "notes_trials" in log else []), ""]
    text += ["## Results", "", "Measured on the F16 weights that ship:", ""]
    if gpt:
        text += ["| | loss (nats/token) | perplexity |", "|---|---:|---:|",
                 f"| training split (last {log['validation_tokens']:,} tokens) | {log['final_train_loss']:.3f} | {2.718281828 ** log['final_train_loss']:.1f} |",
                 f"| validation split | {log['validation_loss']:.3f} | {log['validation_perplexity']:.1f} |", "",
                 *measurements(log),
                 "Samples (temperature 0.8, top-40, seeded):", ""]
        for s in log["samples"]:
            text += [f"> {s['text']}".replace("\n", "\n> "), ""]
    else:
        text += ["| | MLM loss (nats) | perplexity | MLM accuracy |", "|---|---:|---:|---:|",
                 f"| training split (sample) | {log['final_train_mlm_loss']:.3f} | {2.718281828 ** log['final_train_mlm_loss']:.1f} | {100 * log['final_train_mlm_accuracy']:.1f}% |",
                 f"| validation split | {log['validation_mlm_loss']:.3f} | {log['validation_perplexity']:.1f} | {100 * log['validation_mlm_accuracy']:.1f}% |", "",
                 "Accuracy: share of the predicted tokens whose top prediction is right (masks drawn with a fixed seed).", "",
                 f"{log['examples_seen']:,} examples are {log['examples_seen'] / log['train_sentences']:.2f} passes over the {log['train_sentences']:,} training sentences.",
                 *([log["notes_results"], ""] if "notes_results" in log else [""]),
                 "Mask fills (top prediction):", ""]
        for f in log["mask_fills"]:
            text += [f"- {f['text']}", f"  → {f['filled']}"]
        text += [""]
    text += [
        "## Heads", "",
        "Scores from attnplay's head analysis (`build/native/attnplay heads --model models/" + name + "`, also shown in the",
        "page's model view): previous-token = mean weight on the token before; next-token = on the token after",
        "(0 under GPT's causal mask); induction = on random tokens repeated twice, mean weight from each token of the",
        "second copy to the token after its first occurrence; sink = mean weight on the first token and separators",
        "([CLS], [SEP]); self = on the token itself; local = on tokens 1-3 away; broad = entropy of each row relative",
        "to uniform attention over the tokens the query may see (1 = uniform). All but induction are averaged over",
        "four fixed English sentences. Labels mark scores above the thresholds of `cpp/analysis/head_patterns.h`",
        "(previous-token, next-token 0.5; induction 0.3; sink 0.6; self 0.5; local 0.7; broad 0.9).", "",
        clear_heads(heads), "",
        head_table(heads), "",
    ]
    if gpt:
        verdict = []
        verdict.append(f"Previous-token head above 0.8: {'yes' if best_prev > 0.8 else 'no'} (best {best_prev:.2f}).")
        verdict.append(f"Induction head above 0.5: {'yes' if best_induction > 0.5 else 'no'} (best {best_induction:.2f}).")
        text += [" ".join(verdict), ""]
        if best_prev <= 0.8 or best_induction <= 0.5:
            text += ["Why not: see the history under Training: what was tried, and what the model does instead.", ""]
        text += ablation(log)
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
