#!/usr/bin/python3
"""Builds the small random encoder-decoder checkpoints of tests/golden/models/
(Marian and BART, F32/F16/BF16) and their golden outputs, computed by an
independent float64 PyTorch implementation of the published architectures:
Marian as Hugging Face's MarianMTModel runs it (token embeddings scaled by
sqrt(d_model), fixed sinusoidal positions with the sines in the first half of
each vector and the cosines in the second, post-layer-norm blocks, SiLU,
final_logits_bias, the output layer tied to the decoder's embeddings) and BART
(Lewis et al. 2019 in Hugging Face's layout: learned positions read at
position + 2, layernorm_embedding, GELU), on the exact values stored in the
file (F16/BF16 weights are rounded first). It shares no code with attnplay's
C++ runtime, nor with the training code in models/train/.

Run with Debian's PyTorch: /usr/bin/python3 tests/golden/make_seq2seq_goldens.py

Each folder holds config.json, model.safetensors, tokenizer.json (GPT-2's
byte-level alphabet without merges: one token per byte, so ids are computable
by hand) and golden.json: for each case the source ids and decoder ids, the
encoder self-attention [L_enc][H][S][S], decoder self-attention
[L_dec][H][T][T], cross-attention [L_dec][H][T][S] and logits [T][V]; and the
greedy and beam-search translations of each source (search written here from
Hugging Face's rules: the pad token never generated, log-probabilities summed,
beam hypotheses ranked by sum / length^length_penalty).
CI does not run this script; it only uses its committed output.
"""
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model_goldens import Checkpoint, gpt2_tokenizer, rounded, write_folder  # noqa: E402

SOURCES = ["The cat sat.", "attention is all you need", "Zoë, 42?"]
TARGETS = ["Le chat", "", "ok!"]  # decoder input after the start token


def marian_positions(P, d):
    """Hugging Face's MarianSinusoidalPositionalEmbedding, float64 then float32 as it stores them."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / d) for j in range(d)] for pos in range(P)])
    out = np.zeros((P, d))
    half = d // 2 if d % 2 == 0 else d // 2 + 1
    out[:, :half] = np.sin(enc[:, 0::2])
    out[:, half:] = np.cos(enc[:, 1::2])
    return torch.tensor(out.astype(np.float32)).to(torch.float64)


def layer_norm(x, w, base, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w[base + ".weight"] + w[base + ".bias"]


def linear(x, w, base):
    return x @ w[base + ".weight"].T + w[base + ".bias"]


def mha(x, memory, w, base, heads, causal):
    """Queries from x [T, d], keys/values from memory [S, d] -> (out [T, d], weights [H, T, S])."""
    T, d = x.shape
    S = memory.shape[0]
    dk = d // heads
    q = (linear(x, w, base + ".q_proj") * dk ** -0.5).reshape(T, heads, dk).transpose(0, 1)  # [H, T, dk]
    k = linear(memory, w, base + ".k_proj").reshape(S, heads, dk).transpose(0, 1)
    v = linear(memory, w, base + ".v_proj").reshape(S, heads, dk).transpose(0, 1)
    scores = q @ k.transpose(1, 2)  # [H, T, S]
    if causal:
        scores = scores.masked_fill(torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = (weights @ v).transpose(0, 1).reshape(T, d)
    return linear(out, w, base + ".out_proj"), weights


def act(cfg, x):
    return torch.nn.functional.silu(x) if cfg["activation_function"] == "swish" else torch.nn.functional.gelu(x)


def embed(w, cfg, ids, side):
    d = cfg["d_model"]
    bart = cfg["model_type"] == "bart"
    table = w["model.shared.weight"] if cfg.get("share_encoder_decoder_embeddings", True) else w[f"model.{side}.embed_tokens.weight"]
    scale = math.sqrt(d) if cfg["scale_embedding"] else 1.0
    name = f"model.{side}.embed_positions.weight"
    positions = w[name] if name in w else marian_positions(cfg["max_position_embeddings"], d)
    offset = 2 if bart else 0
    x = table[ids] * scale + positions[torch.arange(len(ids)) + offset]
    return layer_norm(x, w, f"model.{side}.layernorm_embedding") if bart else x


def encode(w, cfg, src):
    x = embed(w, cfg, torch.tensor(src), "encoder")
    attentions = []
    for l in range(cfg["encoder_layers"]):
        p = f"model.encoder.layers.{l}."
        a, weights = mha(x, x, w, p + "self_attn", cfg["encoder_attention_heads"], False)
        x = layer_norm(x + a, w, p + "self_attn_layer_norm")
        x = layer_norm(x + linear(act(cfg, linear(x, w, p + "fc1")), w, p + "fc2"), w, p + "final_layer_norm")
        attentions.append(weights)
    return x, attentions


def decode(w, cfg, memory, dec):
    """logits [T, V], self- and cross-attention per layer, and the hidden states (the embeddings, then each layer's output)."""
    x = embed(w, cfg, torch.tensor(dec), "decoder")
    selfs, crosses, hidden = [], [], [x]
    for l in range(cfg["decoder_layers"]):
        p = f"model.decoder.layers.{l}."
        a, self_w = mha(x, x, w, p + "self_attn", cfg["decoder_attention_heads"], True)
        x = layer_norm(x + a, w, p + "self_attn_layer_norm")
        a, cross_w = mha(x, memory, w, p + "encoder_attn", cfg["decoder_attention_heads"], False)
        x = layer_norm(x + a, w, p + "encoder_attn_layer_norm")
        x = layer_norm(x + linear(act(cfg, linear(x, w, p + "fc1")), w, p + "fc2"), w, p + "final_layer_norm")
        selfs.append(self_w)
        crosses.append(cross_w)
        hidden.append(x)
    return output_logits(w, cfg, x), selfs, crosses, hidden


def output_logits(w, cfg, x):
    """The output layer: x [T, d] through the decoder's (tied) embeddings plus final_logits_bias -> [T, V]."""
    table = w["model.shared.weight"] if cfg.get("share_encoder_decoder_embeddings", True) else w["model.decoder.embed_tokens.weight"]
    return x @ table.T + w["final_logits_bias"][0]


def next_log_probs(cfg, logits, first):
    logits = logits.clone()
    logits[cfg["pad_token_id"]] = float("-inf")
    if first and cfg.get("forced_bos_token_id") is not None:
        keep = logits[cfg["forced_bos_token_id"]].clone()
        logits[:] = float("-inf")
        logits[cfg["forced_bos_token_id"]] = keep
    return torch.log_softmax(logits, -1)


def greedy(w, cfg, src, max_new):
    memory, _ = encode(w, cfg, src)
    ids = [cfg["decoder_start_token_id"]]
    for step in range(max_new):
        lp = next_log_probs(cfg, decode(w, cfg, memory, ids)[0][-1], step == 0)
        ids.append(int(torch.argmax(lp)))
        if ids[-1] == cfg["eos_token_id"]:
            break
    return ids


def beam_search(w, cfg, src, beams, max_new):
    memory, _ = encode(w, cfg, src)
    alpha = cfg.get("length_penalty", 1.0)
    norm = lambda ids, lp: lp / max(len(ids) - 1, 1) ** alpha
    running, finished = [([cfg["decoder_start_token_id"]], 0.0)], []
    for step in range(max_new):
        candidates = []
        for b, (ids, lp_sum) in enumerate(running):
            lp = next_log_probs(cfg, decode(w, cfg, memory, ids)[0][-1], step == 0)
            candidates += [(lp_sum + float(lp[t]), b, t) for t in range(len(lp)) if math.isfinite(float(lp[t]))]
        candidates.sort(key=lambda c: (-c[0], c[2]))
        nxt = []
        for rank, (score, b, t) in enumerate(candidates[:2 * beams]):
            if len(nxt) == beams:
                break
            ids = running[b][0] + [t]
            if t == cfg["eos_token_id"]:
                if rank < beams:
                    finished.append((norm(ids, score), ids))
            else:
                nxt.append((ids, score))
        finished = sorted(finished, key=lambda f: -f[0])[:beams]
        running = nxt
        if len(finished) == beams and running and norm(*running[0]) <= finished[-1][0]:
            running = []
        if not running:
            break
    finished = sorted(finished + [(norm(ids, lp), ids) for ids, lp in running], key=lambda f: -f[0])
    return finished[0][1]


def build(name, family, dtype, Le, Ld, He, Hd, d, ffn, P, seed, stored_positions=False, shared=True, scale=None):
    tokenizer, V, encode_text = gpt2_tokenizer()
    eos, pad = 0, V - 1  # '!' ends a sentence here; <|endoftext|> pads and starts the decoder
    bart = family == "bart"
    cfg = {"model_type": family, "architectures": ["BartForConditionalGeneration" if bart else "MarianMTModel"],
           "vocab_size": V, "d_model": d, "encoder_layers": Le, "decoder_layers": Ld,
           "encoder_attention_heads": He, "decoder_attention_heads": Hd, "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn,
           "max_position_embeddings": P, "activation_function": "gelu" if bart else "swish",
           "scale_embedding": (not bart) if scale is None else scale, "normalize_before": False,
           "normalize_embedding": bart, "static_position_embeddings": not bart, "share_encoder_decoder_embeddings": shared,
           "pad_token_id": pad, "eos_token_id": eos, "decoder_start_token_id": pad, "is_encoder_decoder": True,
           "length_penalty": 1.0, "num_beams": 3}
    ck = Checkpoint(seed, dtype)
    if shared:
        ck.normal("model.shared.weight", (V, d), 1.0 / math.sqrt(d) if cfg["scale_embedding"] else 1.0)
    else:
        ck.normal("model.encoder.embed_tokens.weight", (V, d), 1.0 / math.sqrt(d))
        ck.normal("model.decoder.embed_tokens.weight", (V, d), 1.0 / math.sqrt(d))
    for side, layers, heads in (("encoder", Le, He), ("decoder", Ld, Hd)):
        if bart:
            ck.normal(f"model.{side}.embed_positions.weight", (P + 2, d), 0.5)
            ck.layer_norm(f"model.{side}.layernorm_embedding", d)
        elif stored_positions:
            ck.add(f"model.{side}.embed_positions.weight", marian_positions(P, d).numpy(), "F32")
        for l in range(layers):
            p = f"model.{side}.layers.{l}."
            for attn in ("self_attn", "encoder_attn") if side == "decoder" else ("self_attn",):
                for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    ck.normal(f"{p}{attn}.{proj}.weight", (d, d), 2.0 / math.sqrt(d))
                    ck.normal(f"{p}{attn}.{proj}.bias", (d,), 0.1)
                ck.layer_norm(f"{p}{attn}_layer_norm", d)
            ck.normal(p + "fc1.weight", (ffn, d), 1 / math.sqrt(d))
            ck.normal(p + "fc1.bias", (ffn,), 0.1)
            ck.normal(p + "fc2.weight", (d, ffn), 1 / math.sqrt(ffn))
            ck.normal(p + "fc2.bias", (d,), 0.1)
            ck.layer_norm(p + "final_layer_norm", d)
    ck.normal("final_logits_bias", (1, V), 0.5)
    cases = []
    for source, target in zip(SOURCES, TARGETS):
        src = encode_text(source) + [eos]
        dec = [pad] + encode_text(target)
        memory, enc_attn = encode(ck.w, cfg, src)
        logits, selfs, crosses, _ = decode(ck.w, cfg, memory, dec)
        cases.append({"source": source, "target": target, "ids": src, "decoder_ids": dec,
                      "encoder_attentions": [rounded(a) for a in enc_attn],
                      "decoder_attentions": [rounded(a) for a in selfs],
                      "cross_attentions": [rounded(a) for a in crosses], "logits": rounded(logits),
                      "greedy": greedy(ck.w, cfg, src, 6), "beam3": beam_search(ck.w, cfg, src, 3, 6)})
    return cfg, ck, tokenizer, cases


CASES = [
    ("marian-l2-h4-f32", "marian", "F32", 2, 2, 4, 4, 32, 64, 40, {}),
    ("marian-stored-positions-unshared-f16", "marian", "F16", 1, 2, 2, 4, 24, 48, 40, {"stored_positions": True, "shared": False}),
    ("bart-l2-h4-bf16", "bart", "BF16", 2, 2, 4, 4, 32, 64, 40, {}),
    ("bart-scaled-l1-l3-f32", "bart", "F32", 1, 3, 2, 2, 16, 32, 40, {"scale": True}),
]


def main():
    torch.manual_seed(0)
    for seed, (name, family, dtype, Le, Ld, He, Hd, d, ffn, P, extra) in enumerate(CASES):
        cfg, ck, tokenizer, cases = build(name, family, dtype, Le, Ld, He, Hd, d, ffn, P, 500 + seed, **extra)
        write_folder(name, cfg, ck, tokenizer, cases)
        print(f"{name}: greedy {[c['greedy'] for c in cases]}, beam {[c['beam3'] for c in cases]}")


if __name__ == "__main__":
    main()
