#!/usr/bin/python3
"""Builds the small random encoder-decoder checkpoints of tests/golden/models/
(Marian, BART and T5, F32/F16/BF16) and their golden outputs, computed by an
independent float64 PyTorch implementation of the published architectures:
Marian as Hugging Face's MarianMTModel runs it (token embeddings scaled by
sqrt(d_model), fixed sinusoidal positions with the sines in the first half of
each vector and the cosines in the second, post-layer-norm blocks, SiLU,
final_logits_bias, the output layer tied to the decoder's embeddings) and BART
(Lewis et al. 2019 in Hugging Face's layout: learned positions read at
position + 2, layernorm_embedding, GELU) and T5 (Raffel et al. 2020, as
transformers' T5ForConditionalGeneration runs it: no absolute positions, each
side's block-0 relative_attention_bias added to every layer's unscaled q·k
through transformers' bucket function (computed in float32 as it does),
pre-RMS-norm sub-layers without biases, a final norm per side, ReLU or gated
feed-forward, the tied output read through d_model^-0.5 or an untied
lm_head), on the exact values stored in the file (F16/BF16 weights are
rounded first). It shares no code with attnplay's
C++ runtime, nor with the training code in models/train/.

Run with Debian's PyTorch: /usr/bin/python3 tests/golden/make_seq2seq_goldens.py

Each folder holds config.json, model.safetensors, tokenizer.json (GPT-2's
byte-level alphabet without merges: one token per byte, so ids are computable
by hand) and golden.json: for each case the source ids and decoder ids, the
encoder self-attention [L_enc][H][S][S], decoder self-attention
[L_dec][H][T][T], cross-attention [L_dec][H][T][S] and logits [T][V]; and the
greedy and beam-search translations of each source (search written here from
Hugging Face's rules: the pad token never generated, log-probabilities summed,
beam hypotheses ranked by sum / length^length_penalty). T5's first case also
holds each side's bias by distance key - query = -150..150
({encoder,decoder}_position_bias: span, buckets, bias [H][301]).
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


# ---------------------------------------------------------------- T5

def t5_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """transformers' T5Attention._relative_position_bucket, on a long tensor of key - query."""
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, relative_position, large)


def t5_position_bias(w, cfg, side, queries, keys):
    """[H, T, S] the bias of side's block 0 for queries 0..T-1 and keys 0..S-1."""
    table = w[f"{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]  # [buckets, H]
    relative = torch.arange(keys)[None, :] - torch.arange(queries)[:, None]
    bucket = t5_bucket(relative, side == "encoder", cfg["relative_attention_num_buckets"],
                       cfg["relative_attention_max_distance"])
    return table[bucket].permute(2, 0, 1)


def t5_rms(x, w, name, eps):
    return w[name] * (x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps))


def rewrite_heads(part, layer, z):
    """The concatenated head outputs z [T, H·d_kv] before the output projection (make_ablation_goldens.py replaces this)."""
    return z


def t5_attention(x, memory, w, base, cfg, bias, causal, part, layer):
    """T5Attention: q·k unscaled (+ bias [H, T, S]) -> (out [T, d], weights [H, T, S])."""
    T, S, H, dkv = x.shape[0], memory.shape[0], cfg["num_heads"], cfg["d_kv"]
    q = (x @ w[base + ".q.weight"].T).reshape(T, H, dkv).transpose(0, 1)
    k = (memory @ w[base + ".k.weight"].T).reshape(S, H, dkv).transpose(0, 1)
    v = (memory @ w[base + ".v.weight"].T).reshape(S, H, dkv).transpose(0, 1)
    scores = q @ k.transpose(1, 2)
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = scores.masked_fill(torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    z = rewrite_heads(part, layer, (weights @ v).transpose(0, 1).reshape(T, H * dkv))
    return z @ w[base + ".o.weight"].T, weights


def t5_feed_forward(x, w, base, cfg):
    proj = cfg["feed_forward_proj"]
    name = "gelu_new" if proj == "gated-gelu" else proj.split("-")[-1]
    f = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
         "gelu_new": lambda t: torch.nn.functional.gelu(t, approximate="tanh")}[name]
    if proj.startswith("gated-"):
        inner = f(x @ w[base + ".wi_0.weight"].T) * (x @ w[base + ".wi_1.weight"].T)
    else:
        inner = f(x @ w[base + ".wi.weight"].T)
    return inner @ w[base + ".wo.weight"].T


def t5_encode(w, cfg, src):
    eps = cfg["layer_norm_epsilon"]
    x = w["shared.weight"][torch.tensor(src)]
    bias = t5_position_bias(w, cfg, "encoder", len(src), len(src))
    attentions = []
    for l in range(cfg["num_layers"]):
        p = f"encoder.block.{l}.layer."
        a, weights = t5_attention(t5_rms(x, w, p + "0.layer_norm.weight", eps), t5_rms(x, w, p + "0.layer_norm.weight", eps),
                                  w, p + "0.SelfAttention", cfg, bias, False, "encoder", l)
        x = x + a
        x = x + t5_feed_forward(t5_rms(x, w, p + "1.layer_norm.weight", eps), w, p + "1.DenseReluDense", cfg)
        attentions.append(weights)
    return t5_rms(x, w, "encoder.final_layer_norm.weight", eps), attentions


def t5_decode(w, cfg, memory, dec):
    eps = cfg["layer_norm_epsilon"]
    x = w["shared.weight"][torch.tensor(dec)]
    bias = t5_position_bias(w, cfg, "decoder", len(dec), len(dec))
    selfs, crosses, hidden = [], [], [x]
    for l in range(cfg["num_decoder_layers"]):
        p = f"decoder.block.{l}.layer."
        h = t5_rms(x, w, p + "0.layer_norm.weight", eps)
        a, self_w = t5_attention(h, h, w, p + "0.SelfAttention", cfg, bias, True, "decoder", l)
        x = x + a
        a, cross_w = t5_attention(t5_rms(x, w, p + "1.layer_norm.weight", eps), memory, w, p + "1.EncDecAttention", cfg,
                                  None, False, "cross", l)
        x = x + a
        x = x + t5_feed_forward(t5_rms(x, w, p + "2.layer_norm.weight", eps), w, p + "2.DenseReluDense", cfg)
        selfs.append(self_w)
        crosses.append(cross_w)
        hidden.append(x)
    x = t5_rms(x, w, "decoder.final_layer_norm.weight", eps)
    hidden[-1] = x  # as transformers' decoder_hidden_states: the last one after the final norm
    return t5_output_logits(w, cfg, x), selfs, crosses, hidden


def t5_output_logits(w, cfg, x, final_norm_applied=True):
    if not final_norm_applied:
        x = t5_rms(x, w, "decoder.final_layer_norm.weight", cfg["layer_norm_epsilon"])
    if cfg["tie_word_embeddings"]:
        return (x * cfg["d_model"] ** -0.5) @ w["shared.weight"].T
    return x @ w["lm_head.weight"].T


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
    if cfg["model_type"] in ("t5", "mt5"):
        return t5_encode(w, cfg, src)
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
    if cfg["model_type"] in ("t5", "mt5"):
        return t5_decode(w, cfg, memory, dec)
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


def part_shapes(cfg):
    """(part, layers, heads) of the encoder, the decoder's self-attention and its cross-attention."""
    if cfg["model_type"] in ("t5", "mt5"):
        Le, Ld, He, Hd = cfg["num_layers"], cfg["num_decoder_layers"], cfg["num_heads"], cfg["num_heads"]
    else:
        Le, Ld = cfg["encoder_layers"], cfg["decoder_layers"]
        He, Hd = cfg["encoder_attention_heads"], cfg["decoder_attention_heads"]
    return [("encoder", Le, He), ("decoder", Ld, Hd), ("cross", Ld, Hd)]


def output_logits(w, cfg, x):
    """The output layer: x [T, d] through the decoder's (tied) embeddings, or lm_head when tie_word_embeddings
    is false, plus final_logits_bias -> [T, V]."""
    table = w["model.shared.weight"] if cfg.get("share_encoder_decoder_embeddings", True) else w["model.decoder.embed_tokens.weight"]
    if not cfg.get("tie_word_embeddings", True):
        table = w["lm_head.weight"]
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


def golden_cases(ck, cfg, pairs, encode_text, eos, pad):
    """Each (source, target): its ids (the source with eos, the target after the start token pad), the three
    attentions, the logits, and the greedy and 3-beam translations of the source."""
    cases = []
    for source, target in pairs:
        src = encode_text(source) + [eos]
        dec = [pad] + encode_text(target)
        memory, enc_attn = encode(ck.w, cfg, src)
        logits, selfs, crosses, _ = decode(ck.w, cfg, memory, dec)
        cases.append({"source": source, "target": target, "ids": src, "decoder_ids": dec,
                      "encoder_attentions": [rounded(a) for a in enc_attn],
                      "decoder_attentions": [rounded(a) for a in selfs],
                      "cross_attentions": [rounded(a) for a in crosses], "logits": rounded(logits),
                      "greedy": greedy(ck.w, cfg, src, 6), "beam3": beam_search(ck.w, cfg, src, 3, 6)})
    return cases


def build(name, family, dtype, Le, Ld, He, Hd, d, ffn, P, seed, stored_positions=False, shared=True, scale=None,
          untied=False):
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
    if untied:
        # lm_head its own; fairseq's keys set as if the model were pre-LN with extra norms: BartModel reads none of them
        cfg.update({"tie_word_embeddings": False, "normalize_before": True, "add_final_layer_norm": True,
                    "add_bias_logits": True, "normalize_embedding": not bart})
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
    if untied:
        ck.normal("lm_head.weight", (V, d), 1.0)
    return cfg, ck, tokenizer, golden_cases(ck, cfg, zip(SOURCES, TARGETS), encode_text, eos, pad)


def build_t5(name, model_type, dtype, Le, Ld, H, d, dkv, ffn, buckets, max_distance, proj, tied, seed):
    tokenizer, V, encode_text = gpt2_tokenizer()
    eos, pad = 0, V - 1
    cfg = {"model_type": model_type, "architectures": ["MT5ForConditionalGeneration" if model_type == "mt5" else "T5ForConditionalGeneration"],
           "vocab_size": V, "d_model": d, "d_kv": dkv, "d_ff": ffn, "num_layers": Le, "num_decoder_layers": Ld,
           "num_heads": H, "relative_attention_num_buckets": buckets, "relative_attention_max_distance": max_distance,
           "layer_norm_epsilon": 1e-6, "feed_forward_proj": proj, "tie_word_embeddings": tied, "dropout_rate": 0.1,
           "initializer_factor": 1.0, "is_encoder_decoder": True, "use_cache": True, "n_positions": 512,
           "pad_token_id": pad, "eos_token_id": eos, "decoder_start_token_id": pad, "num_beams": 3, "length_penalty": 1.0}
    ck = Checkpoint(seed, dtype)
    ck.normal("shared.weight", (V, d), 1.0)
    inner = H * dkv
    for side, layers in (("encoder", Le), ("decoder", Ld)):
        for l in range(layers):
            p = f"{side}.block.{l}.layer."
            attentions = ("0.SelfAttention", "1.EncDecAttention") if side == "decoder" else ("0.SelfAttention",)
            for a in attentions:
                for proj_name in ("q", "k", "v"):
                    ck.normal(f"{p}{a}.{proj_name}.weight", (inner, d), 1.0 / math.sqrt(d))
                ck.normal(f"{p}{a}.o.weight", (d, inner), 1.0 / math.sqrt(inner))
                if l == 0 and a == "0.SelfAttention":
                    ck.normal(f"{p}{a}.relative_attention_bias.weight", (buckets, H), 1.0)
            for i in range(len(attentions) + 1):
                ck.normal(f"{p}{i}.layer_norm.weight", (d,), 0.2, mean=1.0)
            ff = f"{p}{len(attentions)}.DenseReluDense."
            for wi in (("wi_0", "wi_1") if proj.startswith("gated-") else ("wi",)):
                ck.normal(ff + wi + ".weight", (ffn, d), 1.0 / math.sqrt(d))
            ck.normal(ff + "wo.weight", (d, ffn), 1.0 / math.sqrt(ffn))
        ck.normal(f"{side}.final_layer_norm.weight", (d,), 0.2, mean=1.0)
    if not tied:
        ck.normal("lm_head.weight", (V, d), 1.0 / math.sqrt(d))
    cases = golden_cases(ck, cfg, zip(SOURCES + T5_SOURCES, TARGETS + T5_TARGETS), encode_text, eos, pad)
    # Each side's bias by distance key - query = -span..span (transformers' buckets, as position_bias_by_distance).
    span = 150
    relative = torch.arange(-span, span + 1)
    for side in ("encoder", "decoder"):
        table = ck.w[f"{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]  # [buckets, H]
        bucket = t5_bucket(relative, side == "encoder", buckets, max_distance)
        cases[0][f"{side}_position_bias"] = {"span": span, "buckets": bucket.tolist(), "bias": rounded(table[bucket].T)}
    return cfg, ck, tokenizer, cases


# A longer source and target for T5: distances past every bucket boundary (16, 32, 64) and beyond the
# smaller configs' max_distance, in the encoder and in the decoder.
T5_SOURCES = ["It is a truth universally acknowledged, that a single man in possession"]
T5_TARGETS = ["C'est une vérité universellement reconnue"]

T5_CASES = [
    # name, model_type, dtype, L_enc, L_dec, H, d_model, d_kv, d_ff, buckets, max_distance, feed_forward_proj, tied
    ("t5-l2-h4-relu-tied-f32", "t5", "F32", 2, 2, 4, 32, 8, 64, 32, 128, "relu", True),
    ("t5-gated-gelu-dkv12-untied-bf16", "t5", "BF16", 2, 3, 3, 32, 12, 48, 8, 20, "gated-gelu", False),
    ("mt5-gated-silu-l1-f16", "mt5", "F16", 1, 2, 2, 24, 16, 40, 16, 40, "gated-silu", False),
]

CASES = [
    ("marian-l2-h4-f32", "marian", "F32", 2, 2, 4, 4, 32, 64, 40, {}),
    ("marian-stored-positions-unshared-f16", "marian", "F16", 1, 2, 2, 4, 24, 48, 40, {"stored_positions": True, "shared": False}),
    ("bart-l2-h4-bf16", "bart", "BF16", 2, 2, 4, 4, 32, 64, 40, {}),
    ("bart-scaled-l1-l3-f32", "bart", "F32", 1, 3, 2, 2, 16, 32, 40, {"scale": True}),
    ("bart-untied-legacy-keys-f32", "bart", "F32", 1, 2, 2, 2, 16, 32, 40, {"untied": True}),
]


def main():
    """Every checkpoint, or only those named on the command line."""
    chosen = sys.argv[1:]
    torch.manual_seed(0)
    for seed, (name, family, dtype, Le, Ld, He, Hd, d, ffn, P, extra) in enumerate(CASES):
        if chosen and name not in chosen:
            continue
        cfg, ck, tokenizer, cases = build(name, family, dtype, Le, Ld, He, Hd, d, ffn, P, 500 + seed, **extra)
        write_folder(name, cfg, ck, tokenizer, cases)
        print(f"{name}: greedy {[c['greedy'] for c in cases]}, beam {[c['beam3'] for c in cases]}")
    for seed, case in enumerate(T5_CASES):
        if chosen and case[0] not in chosen:
            continue
        cfg, ck, tokenizer, cases = build_t5(*case, seed=600 + seed)
        write_folder(case[0], cfg, ck, tokenizer, cases)
        print(f"{case[0]}: greedy {[c['greedy'] for c in cases]}, beam {[c['beam3'] for c in cases]}")


if __name__ == "__main__":
    main()
