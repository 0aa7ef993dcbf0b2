#!/usr/bin/python3
"""Golden outputs of head ablation (tests/golden/models/<name>/ablation.json)
for random checkpoints of GPT-2, BERT, Llama (grouped-query attention), Qwen3
and GPT-NeoX, computed in float64 by an independent PyTorch implementation.

Run with Debian's PyTorch (python3-torch, plus libopenblas0-pthread):
    /usr/bin/python3 tests/golden/make_ablation_goldens.py

The checkpoints are the random ones make_model_goldens.py writes (its
build_* functions, with the same seeds; this script writes them again, so
running it alone leaves every folder consistent). Its reference forward
passes are run with a hook, as a PyTorch forward hook would be attached to a
module: every call of its attention functions returns the concatenated head
outputs z [T, H·d_k] (head h in columns h·d_k..(h+1)·d_k), and the hook
rewrites the ablated heads' columns before the output projection sees them:
    zero: z_h = 0
    mean: every row of z_h = (1/T)·Σ_t z_h[t], the mean over the text's T positions.
With grouped-query attention the ablated head is a query head; its shared
key/value head keeps serving the others. Nothing here shares code with
attnplay's C++ runtime.

Each case records: the heads and mode; the top-5 predictions (ids and
probabilities) at every position (causal) or mask position (BERT); the whole
distribution [V] of the last of those rows; the per-token loss -log p(true
token) (causal: [T - 1], position i predicting ids[i + 1]; BERT: [M] against
mask_labels); and the last layer's attention of the last position [H, T]
(which shows a first-layer ablation reaching later layers).
CI does not run this script; it only uses its committed output.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model_goldens as mmg  # noqa: E402  (the reference forwards and checkpoints)

TOP_K = 5


class AblationHook:
    """Wraps mmg.attention and mmg.grouped_attention: counts layers within one forward pass and
    rewrites the ablated heads' columns of the concatenated output."""

    def __init__(self):
        self.heads, self.mode, self.layer = [], "zero", 0
        self.original = {"attention": mmg.attention, "grouped_attention": mmg.grouped_attention}
        for name, fn in self.original.items():
            setattr(mmg, name, self.wrap(fn))

    def wrap(self, fn):
        def hooked(*args, **kwargs):
            out, weights, trace = fn(*args, **kwargs)  # out [T, H·d_k], weights [H, T, T]
            H = weights.shape[0]
            dk = out.shape[1] // H
            out = out.clone()
            for layer, head in self.heads:
                if layer != self.layer:
                    continue
                z = out[:, head * dk:(head + 1) * dk]  # [T, d_k], a view
                z[:] = 0 if self.mode == "zero" else z.mean(dim=0, keepdim=True)
            self.layer += 1
            return out, weights, trace
        return hooked

    def run(self, heads, mode, forward):
        self.heads, self.mode, self.layer = heads, mode, 0
        return forward()


def top_k(probabilities):
    values, ids = torch.topk(probabilities, TOP_K, dim=-1)
    return [{"ids": i.tolist(), "probabilities": mmg.rounded(v)} for i, v in zip(ids, values)]


def case_json(heads, mode, attentions, probabilities, loss):
    """probabilities [rows, V], loss [rows or rows - 1], attentions L x [H, T, T]."""
    return {"ablate": [list(h) for h in heads], "mode": mode, "top_k": top_k(probabilities),
            "last_row_probabilities": mmg.rounded(probabilities[-1]), "token_loss": mmg.rounded(loss),
            "last_layer_last_row_attention": mmg.rounded(attentions[-1][:, -1, :])}


def causal_cases(hook, forward, ids, ablations):
    ids_t = torch.tensor(ids)
    cases = []
    for heads, mode in ablations:
        attentions, _, _, logits = hook.run(heads, mode, lambda: forward(ids_t))
        log_p = torch.log_softmax(logits, dim=-1)  # [T, V]
        loss = -log_p[torch.arange(len(ids) - 1), ids_t[1:]]  # [T - 1]
        cases.append(case_json(heads, mode, attentions, log_p.exp(), loss))
    return cases


def bert_cases(hook, forward, ids, type_ids, labels, mask_positions, ablations):
    cases = []
    for heads, mode in ablations:
        attentions, _, _, logits = hook.run(heads, mode, lambda: forward(torch.tensor(ids), torch.tensor(type_ids)))
        log_p = torch.log_softmax(logits[mask_positions], dim=-1)  # [M, V]
        loss = -log_p[torch.arange(len(labels)), torch.tensor(labels)]  # [M]
        cases.append(case_json(heads, mode, attentions, log_p.exp(), loss))
    return cases


def both_modes(*head_sets):
    """[] (intact) and every head set under zero and mean ablation."""
    return [([], "zero")] + [(heads, mode) for heads in head_sets for mode in ("zero", "mean")]


def write(name, cfg, ck, tokenizer, model_cases, record):
    mmg.write_folder(name, cfg, ck, tokenizer, model_cases)  # the checkpoint and its golden.json, as before
    with open(os.path.join(mmg.OUT, name, "ablation.json"), "w") as f:
        json.dump(dict(record, model=name), f, separators=(",", ":"))
    print(f"{name}: {len(record['cases'])} ablation case(s)")


def main():
    torch.manual_seed(0)
    hook = AblationHook()
    _, _, encode_bytes = mmg.gpt2_tokenizer()

    # GPT-2, 2 layers x 12 heads (F16): a first-layer and a last-layer head.
    case = mmg.GPT2_CASES[0]
    cfg, ck, tok, cases = mmg.build_gpt2(*case, seed=100)
    ids = encode_bytes("The cat sat. The cat sat.")
    forward = lambda t: mmg.gpt2_forward(ck.w, cfg, t, case[7])
    write(case[0], cfg, ck, tok, cases, {"ids": ids, "cases": causal_cases(
        hook, forward, ids, both_modes([(0, 3)], [(0, 0), (0, 7), (1, 11)]))})

    # BERT, 2 layers x 2 heads with the MLM head (F32): two mask positions.
    case = mmg.BERT_CASES[0]
    cfg, ck, tok, cases = mmg.build_bert(*case, seed=200)
    _, _, encode_words = mmg.bert_tokenizer()
    ids, type_ids = encode_words("The [MASK] sat on the [MASK].")
    vocab = tok["model"]["vocab"]
    mask_positions = [i for i, t in enumerate(ids) if t == vocab["[MASK]"]]
    labels = [vocab["cat"], vocab["mat"]]
    forward = lambda t, tt: mmg.bert_forward(ck.w, cfg, t, tt, case[7], case[9])
    write(case[0], cfg, ck, tok, cases, {
        "ids": ids, "type_ids": type_ids, "mask_positions": mask_positions, "mask_labels": labels,
        "cases": bert_cases(hook, forward, ids, type_ids, labels, mask_positions,
                            both_modes([(0, 1)], [(0, 0), (1, 1)]))})

    # Llama with GQA (4 query heads over 2 key/value heads, BF16): query head 1
    # alone (its key/value head 0 still serves head 0), then heads of both layers.
    text = "Llama 3. Llama 3. Llama 3."
    for index in (0, 4):  # llama-gqa-llama3-bf16, qwen3-qknorm-bf16
        case = mmg.LLAMA_CASES[index]
        cfg, ck, tok, cases = mmg.build_llama(*case, seed=300 + index)
        ids = encode_bytes(text)
        forward = lambda t: mmg.llama_forward(ck.w, cfg, t)
        write(case[0], cfg, ck, tok, cases, {"ids": ids, "cases": causal_cases(
            hook, forward, ids, both_modes([(0, 1)], [(0, 2), (1, 0), (1, 3)]))})

    # GPT-NeoX with the parallel residual (F16).
    case = mmg.NEOX_CASES[0]
    cfg, ck, tok, cases = mmg.build_neox(*case, seed=400)
    ids = encode_bytes("Pythia. Pythia.")
    forward = lambda t: mmg.gpt_neox_forward(ck.w, cfg, t)
    write(case[0], cfg, ck, tok, cases, {"ids": ids, "cases": causal_cases(
        hook, forward, ids, both_modes([(0, 1)], [(0, 0), (1, 1)]))})


if __name__ == "__main__":
    main()
