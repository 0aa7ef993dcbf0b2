#!/usr/bin/python3
"""Golden outputs of head ablation (tests/golden/models/<name>/ablation.json)
for random checkpoints of GPT-2, BERT, Llama (grouped-query attention), Qwen3
and GPT-NeoX, computed in float64 by an independent PyTorch implementation.

Run with Debian's PyTorch (python3-torch, plus libopenblas0-pthread):
    /usr/bin/python3 tests/golden/make_ablation_goldens.py [NAME ...]
(encoder-decoder checkpoint names as arguments rebuild only their ablation.json)

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

Encoder-decoders (Marian, BART; the checkpoints make_seq2seq_goldens.py
wrote, read back from their model.safetensors): make_seq2seq_goldens.py's
float64 forward pass with its attention function wrapped the same way, the
part and layer read from the attention's weight names (encoder self_attn,
decoder self_attn, decoder encoder_attn = cross). Each case records the
top-5 next tokens at every decoder position, the last row's distribution, the
teacher-forced loss of each target token ([T - 1]: position i predicting
decoder_ids[i + 1]) and the greedy translation of the source with the heads
knocked out in every pass (make_seq2seq_goldens.py's search); "ranking" holds
every head's mean loss when zero-ablated alone.
CI does not run this script; it only uses its committed output.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model_goldens as mmg  # noqa: E402  (the reference forwards and checkpoints)
import make_lens_goldens as lens  # noqa: E402  (reading a checkpoint folder in float64)
import make_seq2seq_goldens as seq2seq  # noqa: E402  (the encoder-decoder reference)

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


class Seq2SeqAblationHook:
    """Replaces seq2seq.mha: the same attention, with the ablated heads' columns of the concatenated head outputs
    rewritten before out_proj. The part and layer come from the weights' name
    (model.encoder.layers.L.self_attn, model.decoder.layers.L.self_attn or .encoder_attn)."""

    def __init__(self):
        self.heads, self.mode = [], "zero"
        seq2seq.mha = self.mha
        seq2seq.rewrite_heads = self.rewrite_heads  # T5's attention calls it with its part and layer

    def rewrite_heads(self, part, layer, z):
        """z [T, H·d_kv] with the ablated heads of this part and layer zeroed or replaced by their mean over T."""
        z = z.clone()
        for p, l, h in self.heads:
            if (p, l) == (part, layer):
                width = self.cfg["d_kv"]
                cols = slice(h * width, (h + 1) * width)
                z[:, cols] = 0 if self.mode == "zero" else z[:, cols].mean(dim=0, keepdim=True)
        return z

    def mha(self, x, memory, w, base, heads, causal):
        side, _, layer, kind = base.split(".")[1:5]
        part = "encoder" if side == "encoder" else "cross" if kind == "encoder_attn" else "decoder"
        T, d = x.shape
        S = memory.shape[0]
        dk = d // heads
        q = (seq2seq.linear(x, w, base + ".q_proj") * dk ** -0.5).reshape(T, heads, dk).transpose(0, 1)  # [H, T, dk]
        k = seq2seq.linear(memory, w, base + ".k_proj").reshape(S, heads, dk).transpose(0, 1)
        v = seq2seq.linear(memory, w, base + ".v_proj").reshape(S, heads, dk).transpose(0, 1)
        scores = q @ k.transpose(1, 2)  # [H, T, S]
        if causal:
            scores = scores.masked_fill(torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        z = weights @ v  # [H, T, dk]
        for p, l, h in self.heads:
            if (p, l) == (part, int(layer)):
                z[h] = 0 if self.mode == "zero" else z[h].mean(dim=0, keepdim=True)
        return seq2seq.linear(z.transpose(0, 1).reshape(T, d), w, base + ".out_proj"), weights


SEQ2SEQ = ["marian-l2-h4-f32", "marian-stored-positions-unshared-f16", "bart-l2-h4-bf16",
           "bart-scaled-l1-l3-f32", "t5-l2-h4-relu-tied-f32", "t5-gated-gelu-dkv12-untied-bf16", "mt5-gated-silu-l1-f16"]
SEQ2SEQ_ABLATIONS = both_modes([("encoder", 0, 1)], [("decoder", 1, 1)], [("cross", 0, 1)],
                               [("encoder", 0, 0), ("cross", 1, 1), ("decoder", 0, 1)])


def seq2seq_ablation(hook, name):
    cfg, golden, w = lens.read_folder(name)
    hook.cfg = cfg
    case = golden["cases"][0]
    src, dec = case["ids"], case["decoder_ids"]

    def losses(heads, mode):
        hook.heads, hook.mode = heads, mode
        memory, _ = seq2seq.encode(w, cfg, src)
        logits = seq2seq.decode(w, cfg, memory, dec)[0]
        log_p = torch.log_softmax(logits, dim=-1)  # [T, V]
        return log_p, -log_p[torch.arange(len(dec) - 1), torch.tensor(dec[1:])]  # [T - 1]

    cases = []
    for heads, mode in SEQ2SEQ_ABLATIONS:
        log_p, loss = losses(heads, mode)
        greedy = seq2seq.greedy(w, cfg, src, 6)  # the hook still holds these heads
        cases.append({"ablate": [list(h) for h in heads], "mode": mode, "top_k": top_k(log_p.exp()),
                      "last_row_probabilities": mmg.rounded(log_p[-1].exp()), "token_loss": mmg.rounded(loss),
                      "greedy": greedy})
    ranking = []
    for part, layers, heads in seq2seq.part_shapes(cfg):
        for layer in range(layers):
            for head in range(heads):
                ranking.append({"part": part, "layer": layer, "head": head,
                                "loss": float(losses([(part, layer, head)], "zero")[1].mean())})
    hook.heads = []
    with open(os.path.join(lens.MODELS, name, "ablation.json"), "w") as f:
        json.dump({"model": name, "source": case["source"], "ids": src, "decoder_ids": dec,
                   "base_loss": float(losses([], "zero")[1].mean()), "cases": cases, "ranking": ranking},
                  f, separators=(",", ":"))
    print(f"{name}: {len(cases)} ablation case(s), {len(ranking)} heads ranked")


def main():
    if sys.argv[1:]:  # encoder-decoder names: only those
        hook = Seq2SeqAblationHook()
        for name in sys.argv[1:]:
            seq2seq_ablation(hook, name)
        return
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

    seq2seq_hook = Seq2SeqAblationHook()
    for name in SEQ2SEQ:
        seq2seq_ablation(seq2seq_hook, name)


if __name__ == "__main__":
    main()
