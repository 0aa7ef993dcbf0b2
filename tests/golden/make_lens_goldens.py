#!/usr/bin/python3
"""Builds the logit-lens goldens (lens.json) of the random checkpoints in
tests/golden/models/, by a direct float64 implementation of the definition.

Run with Debian's PyTorch (python3-torch, plus libopenblas0-pthread), after
make_model_goldens.py and make_seq2seq_goldens.py (model names as arguments
rebuild only those):
    /usr/bin/python3 tests/golden/make_lens_goldens.py [NAME ...]

The logit lens reads the residual stream after every layer (and the
embeddings) at every position through the model's output head: causal
families through the final norm (GPT-2 ln_f, Llama/Mistral/Qwen model.norm
RMSNorm, GPT-NeoX final_layer_norm) and the unembedding (lm_head/embed_out, or
the tied token embeddings); the last hidden state, which Hugging Face reports
after the final norm already, only through the unembedding. BERT through its
masked-LM head (dense, GELU, LayerNorm, decoder + bias) at every position,
DistilBERT through its own (vocab_transform, GELU, vocab_layer_norm,
vocab_projector), an ELECTRA generator through its generator head.
The hidden states are golden.json's (make_model_goldens.py's float64 PyTorch
forward passes); the weights are read from each model.safetensors by the
reader below. For every case, lens.json holds the top K ids and probabilities
(softmax in float64, best first, ties by lower id) of every layer × position;
the script checks that the last row equals the softmax of golden.json's
logits. Encoder-decoders (Marian, BART): the decoder's residual stream after
its embeddings and after each layer, from make_seq2seq_goldens.py's float64
forward pass on the stored weights, read through the output layer (the tied
decoder embeddings plus final_logits_bias; these decoders have no final norm),
for each case's source and decoder ids. It shares no code with attnplay's C++
runtime; CI only uses its committed output.
"""
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_seq2seq_goldens as seq2seq  # noqa: E402

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
K = 6  # the tests compare a top-5 and use the 6th to tell ties apart
# Checkpoints with an output head (bert-l3-h6-k16-f16, distilbert-l1-h2-k16-bf16,
# electra-discriminator-l1-h4-k8-bf16 and roberta-l1-h2-k8-f16 have no masked-LM head: the tests expect an error).
NAMES = ["gpt2-l2-h12-k8-f16", "gpt2-l1-h1-k64-f32", "gpt2-l4-h4-k8-bf16", "bert-l2-h2-k32-f32", "bert-l1-h3-k8-bf16",
         "distilbert-l2-h4-k8-f32", "electra-generator-l2-h2-k16-e24-f32", "roberta-l2-h2-k16-f32",
         "xlm-roberta-l1-h4-k8-bf16", "opt-l2-h4-k8-f32", "opt-post-ln-proj-f16", "opt-nobias-gelu-untied-bf16",
         "gemma-mqa-hd16-bf16", "gemma2-softcap-window-f32", "gemma3-layer-types-f16", "olmo2-gqa-f16",
         "smollm3-norope-f32", "phi3-partial-window-bf16",
         "llama-gqa-llama3-bf16", "llama-mqa-bias-linear-f32", "mistral-window3-f16", "qwen2-bias-f32",
         "qwen3-qknorm-bf16", "pythia-parallel-f16", "pythia-serial-f32", "qwen2-yarn-f32", "phi3-longrope-f16",
         "gpt2-unscaled-inverse-layer-f32", "opt-bare-norms-no-final-f32", "qwen2-sliding-layers-f16"]


def read_safetensors(path):
    """name -> float64 tensor of the stored values (F32, F16, BF16)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        if info["dtype"] == "F32":
            values = np.frombuffer(raw, "<f4").astype(np.float64)
        elif info["dtype"] == "F16":
            values = np.frombuffer(raw, "<f2").astype(np.float64)
        elif info["dtype"] == "BF16":
            values = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            raise ValueError(info["dtype"])
        out[name] = torch.tensor(values.reshape(info["shape"]))
    return out


def first(w, *names):
    for name in names:
        if name in w:
            return w[name]
    raise KeyError(names)


def output_head(cfg, w):
    """(read(h, last) -> logits [T, V]) for one checkpoint."""
    kind = cfg["model_type"]
    if kind == "bert":
        eps = cfg["layer_norm_eps"]
        ln_w = first(w, "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.gamma")
        ln_b = first(w, "cls.predictions.transform.LayerNorm.bias", "cls.predictions.transform.LayerNorm.beta")
        decoder = first(w, "cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight",
                        "embeddings.word_embeddings.weight")

        def read(h, last):
            t = F.gelu(h @ w["cls.predictions.transform.dense.weight"].T + w["cls.predictions.transform.dense.bias"])
            t = F.layer_norm(t, (t.shape[-1],), ln_w, ln_b, eps)
            return t @ decoder.T + w["cls.predictions.bias"]
        return read
    if kind == "distilbert":  # vocab_transform, GELU, vocab_layer_norm (eps 1e-12), vocab_projector (tied unless stored)
        projector = first(w, "vocab_projector.weight", "distilbert.embeddings.word_embeddings.weight",
                          "embeddings.word_embeddings.weight")

        def read(h, last):
            t = F.gelu(h @ w["vocab_transform.weight"].T + w["vocab_transform.bias"])
            t = F.layer_norm(t, (t.shape[-1],), w["vocab_layer_norm.weight"], w["vocab_layer_norm.bias"], 1e-12)
            return t @ projector.T + w["vocab_projector.bias"]
        return read
    if kind == "electra":  # the generator's head: dense [d -> E], GELU (always), LayerNorm, generator_lm_head
        projector = first(w, "generator_lm_head.weight", "electra.embeddings.word_embeddings.weight",
                          "embeddings.word_embeddings.weight")

        def read(h, last):
            t = F.gelu(h @ w["generator_predictions.dense.weight"].T + w["generator_predictions.dense.bias"])
            t = F.layer_norm(t, (t.shape[-1],), w["generator_predictions.LayerNorm.weight"],
                             w["generator_predictions.LayerNorm.bias"], cfg["layer_norm_eps"])
            return t @ projector.T + w["generator_lm_head.bias"]
        return read
    if kind in ("roberta", "xlm-roberta"):  # lm_head: dense, GELU (always), layer_norm, decoder (tied unless stored)
        decoder = first(w, "lm_head.decoder.weight", "roberta.embeddings.word_embeddings.weight",
                        "embeddings.word_embeddings.weight")

        def read(h, last):
            t = F.gelu(h @ w["lm_head.dense.weight"].T + w["lm_head.dense.bias"])
            t = F.layer_norm(t, (t.shape[-1],), w["lm_head.layer_norm.weight"], w["lm_head.layer_norm.bias"],
                             cfg["layer_norm_eps"])
            return t @ decoder.T + w["lm_head.bias"]
        return read
    if kind == "opt":  # final_layer_norm (pre-LN, unless removed), project_out where E != d, embed_tokens or lm_head
        prefix = "decoder." if "decoder.embed_tokens.weight" in w else "model.decoder."
        tied = cfg.get("tie_word_embeddings", True)
        unembedding = w[prefix + "embed_tokens.weight"] if tied else w["lm_head.weight"]
        project = w.get(prefix + "project_out.weight")
        final = cfg.get("do_layer_norm_before", True) and not cfg.get("_remove_final_layer_norm", False)
        affine = cfg.get("layer_norm_elementwise_affine", True)

        def read(h, last):
            if final and not last:
                h = F.layer_norm(h, (h.shape[-1],), w[prefix + "final_layer_norm.weight"] if affine else None,
                                 w[prefix + "final_layer_norm.bias"] if affine else None, 1e-5)
            if project is not None:
                h = h @ project.T
            return h @ unembedding.T
        return read
    if kind in ("gemma", "gemma2", "gemma3_text"):  # (1 + w) RMSNorm, the unembedding, Gemma 2's final softcap
        eps, g, cap = cfg["rms_norm_eps"], w["model.norm.weight"], cfg.get("final_logit_softcapping")
        unembedding = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]

        def read(h, last):
            if not last:
                h = h / torch.sqrt((h * h).mean(-1, keepdim=True) + eps) * (1 + g)
            logits = h @ unembedding.T
            return cap * torch.tanh(logits / cap) if cap else logits
        return read
    if kind == "gpt2":
        eps = cfg["layer_norm_epsilon"]
        g, b = first(w, "transformer.ln_f.weight", "ln_f.weight"), first(w, "transformer.ln_f.bias", "ln_f.bias")
        norm = lambda h: F.layer_norm(h, (h.shape[-1],), g, b, eps)
        unembedding = first(w, "lm_head.weight", "transformer.wte.weight", "wte.weight")
    elif kind == "gpt_neox":
        eps = cfg["layer_norm_eps"]
        g, b = w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"]
        norm = lambda h: F.layer_norm(h, (h.shape[-1],), g, b, eps)
        unembedding = w["embed_out.weight"]
    else:  # llama, mistral, qwen2, qwen3: RMSNorm
        eps = cfg["rms_norm_eps"]
        g = w["model.norm.weight"]
        norm = lambda h: h / torch.sqrt((h * h).mean(-1, keepdim=True) + eps) * g
        unembedding = first(w, "lm_head.weight", "model.embed_tokens.weight")

    def read(h, last):
        return (h if last else norm(h)) @ unembedding.T  # the last hidden state is after the final norm already
    return read


def top(probabilities, k):
    """ids and probabilities of the k largest, best first, ties by lower id."""
    order = sorted(range(len(probabilities)), key=lambda i: (-probabilities[i], i))[:k]
    return {"ids": order, "probabilities": [float("%.12g" % probabilities[i]) for i in order]}


def lens_rows(name, hidden, read, logits):
    """The lens rows (top K of every position) of hidden states [T, d] read by read(h, last) -> logits; checks that
    the last row is the softmax of the model's own logits."""
    rows = []
    for r, h in enumerate(hidden):
        p = torch.softmax(read(h, r == len(hidden) - 1), dim=-1)  # [T, V]
        rows.append([top(p[t].tolist(), K) for t in range(p.shape[0])])
    final = torch.softmax(torch.tensor(logits, dtype=torch.float64), dim=-1)
    assert torch.allclose(p, final, atol=1e-6), f"{name}: the last lens row is not the model's prediction"
    return rows


def write_lens(name, cases, hidden, what):
    with open(os.path.join(MODELS, name, "lens.json"), "w") as f:
        json.dump({"model": name, "k": K, "cases": cases}, f, separators=(",", ":"))
    print(f"{name}: {len(cases)} case(s), {len(hidden)} rows of {len(hidden[0])} {what}")


def read_folder(name):
    """(config, golden.json, weights) of a checkpoint folder."""
    folder = os.path.join(MODELS, name)
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(folder, "golden.json")) as f:
        golden = json.load(f)
    return cfg, golden, read_safetensors(os.path.join(folder, "model.safetensors"))


def build(name):
    cfg, golden, w = read_folder(name)
    read = output_head(cfg, w)
    cases = []
    for case in golden["cases"]:
        hidden = [torch.tensor(h, dtype=torch.float64) for h in case["hidden_states"]]  # L + 1 of [T, d]
        rows = lens_rows(name, hidden, read, case["logits"])
        cases.append({"text": case["text"], "ids": case["ids"], "type_ids": case["type_ids"], "layers": rows})
    write_lens(name, cases, hidden, "positions")


SEQ2SEQ = ["marian-l2-h4-f32", "marian-stored-positions-unshared-f16", "bart-l2-h4-bf16", "bart-scaled-l1-l3-f32",
           "t5-l2-h4-relu-tied-f32", "t5-gated-gelu-dkv12-untied-bf16", "mt5-gated-silu-l1-f16"]


def build_seq2seq(name):
    cfg, golden, w = read_folder(name)
    cases = []
    for case in golden["cases"]:
        memory, _ = seq2seq.encode(w, cfg, case["ids"])
        _, _, _, hidden = seq2seq.decode(w, cfg, memory, case["decoder_ids"])  # L_dec + 1 of [T, d]
        t5 = cfg["model_type"] in ("t5", "mt5")  # its final norm first, except on the last row, which has it
        read = (lambda h, last: seq2seq.t5_output_logits(w, cfg, h, last)) if t5 else (lambda h, last: seq2seq.output_logits(w, cfg, h))
        rows = lens_rows(name, hidden, read, case["logits"])
        cases.append({"source": case["source"], "ids": case["ids"], "decoder_ids": case["decoder_ids"], "layers": rows})
    write_lens(name, cases, hidden, "decoder positions")


def main():
    chosen = sys.argv[1:] or NAMES + SEQ2SEQ  # names on the command line: only those
    for name in chosen:
        (build_seq2seq if name in SEQ2SEQ else build)(name)


if __name__ == "__main__":
    main()
