#!/usr/bin/python3
"""Builds the small random checkpoints of tests/golden/models/ (GPT-2, BERT,
DistilBERT, ELECTRA, RoBERTa, XLM-R, OPT, Gemma 1/2/3, OLMo 2, SmolLM3, Phi-3, Llama, Mistral, Qwen2, Qwen3, GPT-NeoX) and their golden outputs, computed by
an independent PyTorch implementation.

Run with Debian's PyTorch (python3-torch, plus libopenblas0-pthread):
    /usr/bin/python3 tests/golden/make_model_goldens.py

Each checkpoint folder holds what a Hugging Face model folder holds
(config.json, model.safetensors, tokenizer.json) plus golden.json: for each
input text, the token ids (computable here by hand because the tokenizers are
tiny: GPT-2 byte-level BPE with the 256 byte symbols and no merges, RoBERTa's
the same behind its specials, a BERT WordPiece vocabulary of whole lowercase words), the attention weights of every
layer and head, one head's q, k, v and raw scores (RoPE families: also its q
and k before the rotation and the inverse frequencies), every hidden state and
the logits. The forward passes below are written from the published architectures
(GPT-2: Radford et al. 2019 and the Hugging Face weight layout; BERT: Devlin et
al. 2019; DistilBERT: Sanh et al. 2019, BERT's post-LN encoder without token
types, every LayerNorm at eps 1e-12 as transformers' DistilBERT builds them;
ELECTRA: Clark et al. 2020, BERT's encoder over embeddings embedding_size wide
projected to the hidden width, the generator's masked-LM head with GELU
whatever hidden_act is; RoBERTa: Liu et al. 2019, BERT's encoder with
transformers' padding-aware positions from pad_token_id + 1 and one token type; OPT: Zhang et al. 2022,
positions offset by 2, pre- or post-LN, project_in/project_out; Gemma: the Gemma Team's reports of 2024 and
2025 and transformers' code (scaled embeddings, (1 + w) RMSNorm, softcapping, sliding and global layers); OLMo 2:
Team OLMo 2024 (q/k norm across heads, norms after each sub-layer); SmolLM3's layers without RoPE; Phi-3: Abdin
et al. 2024 (fused qkv and gate_up, partial rotary); Llama: Touvron et al. 2023, RoPE as Su et al. 2021 in Hugging Face's
half-split rotate_half form, Llama 3's frequency scaling, grouped-query
attention as Ainslie et al. 2023; Mistral's sliding window; Qwen2's q/k/v
biases; Qwen3's per-head q/k RMSNorm; GPT-NeoX: Black et al. 2022, fused
per-head query_key_value, partial rotary, parallel residual), in float64, on the exact values stored in the file (F16/BF16
weights are rounded first). They share no code with attnplay's C++ runtime.
CI does not run this script; it only uses its committed output.
"""
import json
import math
import os
import re
import struct

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")

# ---------------------------------------------------------------- safetensors

DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2}


def stored_values(array, dtype):
    """float64 tensor of the values as the file stores them, and their bytes."""
    t32 = torch.tensor(np.asarray(array, dtype=np.float32))
    if dtype == "F32":
        stored = t32
        raw = t32.numpy().astype("<f4").tobytes()
    elif dtype == "F16":
        stored = t32.to(torch.float16)
        raw = stored.numpy().astype("<f2").tobytes()
    elif dtype == "BF16":
        stored = t32.to(torch.bfloat16)
        raw = stored.view(torch.int16).numpy().astype("<i2").tobytes()
    else:
        raise ValueError(dtype)
    return stored.to(torch.float64), raw


def write_safetensors(path, tensors):
    """tensors: list of (name, raw bytes, dtype, shape), in file order."""
    header, offset = {}, 0
    for name, raw, dtype, shape in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as Hugging Face writes it
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, raw, _, _ in tensors:
            f.write(raw)


class Checkpoint:
    """Random weights, stored in the file's dtype; .w[name] = the stored values (float64)."""

    def __init__(self, seed, dtype):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.w = {}
        self.entries = []

    def add(self, name, array, dtype=None):
        dtype = dtype or self.dtype
        values, raw = stored_values(array, dtype)
        self.w[name] = values
        self.entries.append((name, raw, dtype, array.shape))

    def normal(self, name, shape, std, mean=0.0):
        self.add(name, self.rng.normal(mean, std, size=shape))

    def layer_norm(self, base, d, old_names=False):
        self.normal(base + (".gamma" if old_names else ".weight"), (d,), 0.1, 1.0)
        self.normal(base + (".beta" if old_names else ".bias"), (d,), 0.1)

    def write(self, folder):
        write_safetensors(os.path.join(folder, "model.safetensors"), self.entries)


# ---------------------------------------------------------------- tokenizers


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character table, in vocabulary order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [(b, chr(c)) for b, c in zip(bs, cs)]


def gpt2_tokenizer():
    """Byte-level BPE without merges: every byte is one token."""
    table = bytes_to_unicode()
    vocab = {ch: i for i, (_, ch) in enumerate(table)}
    byte_id = {b: i for i, (b, _) in enumerate(table)}
    eos = len(vocab)
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eos, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "vocab": dict(vocab, **{"<|endoftext|>": eos}), "merges": []},
    }
    encode = lambda text: [byte_id[b] for b in text.encode("utf-8")]
    return tokenizer, eos + 1, encode


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "in", "park", "what", "does", "it", "see",
              "attention", "is", "all", "you", "need", ".", ",", "?", "!"]


def bert_tokenizer():
    """WordPiece over whole lowercase words: each word or punctuation mark is one token."""
    vocab = {tok: i for i, tok in enumerate(BERT_SPECIALS + BERT_WORDS)}
    special = lambda tok, type_id: {"SpecialToken": {"id": tok, "type_id": type_id}}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in BERT_SPECIALS],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]", 0),
                     {"Sequence": {"id": "B", "type_id": 1}}, special("[SEP]", 1)],
            "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }

    def words(text):
        return [w if w == "[MASK]" else w.lower() for w in re.findall(r"\[MASK\]|\w+|[^\w\s]", text)]

    def encode(text, pair=None):
        ids = [vocab["[CLS]"]] + [vocab[w] for w in words(text)] + [vocab["[SEP]"]]
        type_ids = [0] * len(ids)
        if pair is not None:
            second = [vocab[w] for w in words(pair)] + [vocab["[SEP]"]]
            ids += second
            type_ids += [1] * len(second)
        return ids, type_ids

    return tokenizer, len(vocab), encode


ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]


def roberta_tokenizer(specials=ROBERTA_SPECIALS):
    """RoBERTa's shape: byte-level BPE without merges (every byte one token) after the four specials in the
    given order, <mask> last (lstrip: it takes the spaces before it), RobertaProcessing: <s> A </s>
    (</s> B </s>). The ids of the specials follow their order, so that pad_token_id can vary."""
    table = bytes_to_unicode()
    vocab = {tok: i for i, tok in enumerate(specials)}
    for b, ch in table:
        vocab[ch] = len(vocab)
    byte_id = {b: len(specials) + i for i, (b, _) in enumerate(table)}
    vocab["<mask>"] = len(vocab)
    added = lambda tok, lstrip=False: {"id": vocab[tok], "content": tok, "single_word": False, "lstrip": lstrip,
                                       "rstrip": False, "normalized": False, "special": True}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(t) for t in specials] + [added("<mask>", lstrip=True)],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", vocab["</s>"]], "cls": ["<s>", vocab["<s>"]],
                           "trim_offsets": True, "add_prefix_space": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": []},
    }
    pattern = re.compile(r"\s*<mask>|" + "|".join(re.escape(t) for t in specials))

    def pieces(text):
        ids, at = [], 0
        for m in pattern.finditer(text):
            ids += [byte_id[b] for b in text[at:m.start()].encode("utf-8")]
            ids.append(vocab[m.group().strip()])
            at = m.end()
        return ids + [byte_id[b] for b in text[at:].encode("utf-8")]

    def encode(text, pair=None):
        ids = [vocab["<s>"]] + pieces(text) + [vocab["</s>"]]
        if pair is not None:
            ids += [vocab["</s>"]] + pieces(pair) + [vocab["</s>"]]
        return ids, [0] * len(ids)

    return tokenizer, len(vocab), encode, vocab["<pad>"]


def opt_tokenizer():
    """OPT's shape: RoBERTa's vocabulary (byte-level, <s> <pad> </s> <unk> first) behind a template that starts
    every text with </s>, as OPT's tokenizer adds its bos_token "</s>"."""
    tokenizer, V, encode, _ = roberta_tokenizer()
    bos = {"SpecialToken": {"id": "</s>", "type_id": 0}}
    tokenizer["post_processor"] = {
        "type": "TemplateProcessing", "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}},
    }
    return tokenizer, V, lambda text: [2] + encode(text)[0][1:-1]


# ---------------------------------------------------------------- reference forward passes


def attention(x, wq, bq, wk, bk, wv, bv, heads, causal, divisor=None):
    """Multi-head self-attention of x [T, d] with projections x·W + b ([d, d] each); scores divided by
    √d_k, or by `divisor` when given. Returns concat output [T, d], weights [H, T, T], and q, k, v
    [H, T, d_k], raw scores [H, T, T]."""
    T, d = x.shape
    dk = d // heads
    split = lambda m: m.reshape(T, heads, dk).transpose(0, 1)  # [H, T, d_k]
    q, k, v = split(x @ wq + bq), split(x @ wk + bk), split(x @ wv + bv)
    scores = q @ k.transpose(1, 2)  # [H, T, T]
    scaled = scores / (math.sqrt(dk) if divisor is None else divisor)
    if causal:
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scaled = scaled.masked_fill(future, float("-inf"))
    weights = torch.softmax(scaled, dim=-1)
    out = (weights @ v).transpose(0, 1).reshape(T, d)
    return out, weights, (q, k, v, scores)


def gpt2_forward(w, cfg, ids, prefix):
    """GPT-2 (transformers' modeling_gpt2, the eager attention that returns its weights): scores divided by
    √d_k unless scale_attn_weights is false, and by layer + 1 with scale_attn_by_inverse_layer_idx; the
    cross-attention layers of add_cross_attention run only with an encoder's states, so not here."""
    p = lambda name: w[prefix + name]
    d, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    ln = lambda x, base: F.layer_norm(x, (d,), p(base + ".weight"), p(base + ".bias"), eps)
    T = len(ids)
    x = p("wte.weight")[ids] + p("wpe.weight")[:T]
    hidden, attentions, traces = [x], [], []
    for l in range(cfg["n_layer"]):
        h = f"h.{l}."
        a = ln(x, h + "ln_1")
        wqkv, bqkv = p(h + "attn.c_attn.weight"), p(h + "attn.c_attn.bias")  # Conv1D: [d, 3d]
        divisor = (math.sqrt(d // H) if cfg.get("scale_attn_weights", True) else 1.0) * \
            (l + 1 if cfg.get("scale_attn_by_inverse_layer_idx", False) else 1)
        out, weights, trace = attention(a, wqkv[:, :d], bqkv[:d], wqkv[:, d:2 * d], bqkv[d:2 * d],
                                        wqkv[:, 2 * d:], bqkv[2 * d:], H, causal=True, divisor=divisor)
        x = x + out @ p(h + "attn.c_proj.weight") + p(h + "attn.c_proj.bias")
        m = ln(x, h + "ln_2")
        f = F.gelu(m @ p(h + "mlp.c_fc.weight") + p(h + "mlp.c_fc.bias"), approximate="tanh")
        x = x + f @ p(h + "mlp.c_proj.weight") + p(h + "mlp.c_proj.bias")
        attentions.append(weights)
        traces.append(trace)
        hidden.append(x)
    x = ln(x, "ln_f")
    hidden[-1] = x  # Hugging Face reports the last hidden state after ln_f
    unembedding = w["lm_head.weight"] if "lm_head.weight" in w else p("wte.weight")
    return attentions, traces, hidden, x @ unembedding.T


def bert_encoder(x, p, ln, lin, act, L, H):
    """BERT's post-LN encoder layers (ELECTRA's are the same modules) over x [T, d]: LN(x + attn(x)),
    LN(x + out(act(in(x)))). p(name): a weight; ln(x, base), lin(x, base): LayerNorm and nn.Linear by name.
    Returns the output, the hidden states (x first), every layer's weights [H, T, T] and traces."""
    hidden, attentions, traces = [x], [], []
    for l in range(L):
        s = f"encoder.layer.{l}.attention.self."
        t = lambda name: p(s + name).T
        out, weights, trace = attention(x, t("query.weight"), p(s + "query.bias"), t("key.weight"), p(s + "key.bias"),
                                        t("value.weight"), p(s + "value.bias"), H, causal=False)
        e = f"encoder.layer.{l}."
        x = ln(x + lin(out, e + "attention.output.dense"), e + "attention.output.LayerNorm")
        x = ln(x + lin(act(lin(x, e + "intermediate.dense")), e + "output.dense"), e + "output.LayerNorm")
        attentions.append(weights)
        traces.append(trace)
        hidden.append(x)
    return x, hidden, attentions, traces


def bert_forward(w, cfg, ids, type_ids, prefix, old_names):
    p = lambda name: w[prefix + name]
    d, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    g, b = (".gamma", ".beta") if old_names else (".weight", ".bias")
    ln = lambda x, base, pre=prefix: F.layer_norm(x, (d,), w[pre + base + g], w[pre + base + b], eps)
    lin = lambda x, base, pre=prefix: x @ w[pre + base + ".weight"].T + w[pre + base + ".bias"]  # nn.Linear [out, in]
    T = len(ids)
    x = p("embeddings.word_embeddings.weight")[ids] + p("embeddings.position_embeddings.weight")[:T] + \
        p("embeddings.token_type_embeddings.weight")[type_ids]
    x = ln(x, "embeddings.LayerNorm")
    x, hidden, attentions, traces = bert_encoder(x, p, ln, lin, F.gelu, cfg["num_hidden_layers"], H)
    logits = None
    if "cls.predictions.transform.dense.weight" in w:
        t = F.gelu(lin(x, "cls.predictions.transform.dense", pre=""))
        t = ln(t, "cls.predictions.transform.LayerNorm", pre="")
        decoder = w.get("cls.predictions.decoder.weight", p("embeddings.word_embeddings.weight"))
        logits = t @ decoder.T + w["cls.predictions.bias"]
    return attentions, traces, hidden, logits


def distilbert_forward(w, cfg, ids, prefix):
    """DistilBERT: word + position embeddings, LayerNorm, post-LN blocks (sa_layer_norm(x + attn(x)),
    output_layer_norm(x + ffn(x))), the masked-LM head vocab_transform, activation, vocab_layer_norm,
    vocab_projector (tied to the word embeddings unless stored). LayerNorm eps 1e-12 throughout."""
    p = lambda name: w[prefix + name]
    d, H, eps = cfg["dim"], cfg["n_heads"], 1e-12
    ln = lambda x, base, pre=prefix: F.layer_norm(x, (d,), w[pre + base + ".weight"], w[pre + base + ".bias"], eps)
    lin = lambda x, base, pre=prefix: x @ w[pre + base + ".weight"].T + w[pre + base + ".bias"]  # nn.Linear [out, in]
    T = len(ids)
    x = p("embeddings.word_embeddings.weight")[ids] + p("embeddings.position_embeddings.weight")[:T]
    x = ln(x, "embeddings.LayerNorm")
    hidden, attentions, traces = [x], [], []
    for l in range(cfg["n_layers"]):
        a = f"transformer.layer.{l}.attention."
        t = lambda name: p(a + name).T
        out, weights, trace = attention(x, t("q_lin.weight"), p(a + "q_lin.bias"), t("k_lin.weight"), p(a + "k_lin.bias"),
                                        t("v_lin.weight"), p(a + "v_lin.bias"), H, causal=False)
        e = f"transformer.layer.{l}."
        x = ln(x + lin(out, a + "out_lin"), e + "sa_layer_norm")
        f = F.gelu(lin(x, e + "ffn.lin1"))
        x = ln(x + lin(f, e + "ffn.lin2"), e + "output_layer_norm")
        attentions.append(weights)
        traces.append(trace)
        hidden.append(x)
    logits = None
    if "vocab_transform.weight" in w:
        t = ln(F.gelu(lin(x, "vocab_transform", pre="")), "vocab_layer_norm", pre="")
        projector = w.get("vocab_projector.weight", p("embeddings.word_embeddings.weight"))
        logits = t @ projector.T + w["vocab_projector.bias"]
    return attentions, traces, hidden, logits


def electra_forward(w, cfg, ids, type_ids, prefix):
    """ELECTRA: word + position + token type embeddings (embedding_size E wide), LayerNorm, embeddings_project
    [E -> d] when E != d, BERT's post-LN blocks with hidden_act, and for a generator its head
    generator_predictions.dense [d -> E], GELU (always), LayerNorm, generator_lm_head (tied unless stored)."""
    p = lambda name: w[prefix + name]
    d, H, eps, E = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"], cfg["embedding_size"]
    act = {"gelu": F.gelu, "gelu_new": lambda x: F.gelu(x, approximate="tanh")}[cfg["hidden_act"]]
    ln = lambda x, base, n, pre=prefix: F.layer_norm(x, (n,), w[pre + base + ".weight"], w[pre + base + ".bias"], eps)
    lin = lambda x, base, pre=prefix: x @ w[pre + base + ".weight"].T + w[pre + base + ".bias"]  # nn.Linear [out, in]
    T = len(ids)
    x = p("embeddings.word_embeddings.weight")[ids] + p("embeddings.position_embeddings.weight")[:T] + \
        p("embeddings.token_type_embeddings.weight")[type_ids]
    x = ln(x, "embeddings.LayerNorm", E)
    if E != d:
        x = lin(x, "embeddings_project")
    x, hidden, attentions, traces = bert_encoder(x, p, lambda x, base: ln(x, base, d), lin, act,
                                                 cfg["num_hidden_layers"], H)
    logits = None
    if "generator_predictions.dense.weight" in w:
        t = ln(F.gelu(lin(x, "generator_predictions.dense", pre="")), "generator_predictions.LayerNorm", E, pre="")
        head = w.get("generator_lm_head.weight", p("embeddings.word_embeddings.weight"))
        logits = t @ head.T + w["generator_lm_head.bias"]
    return attentions, traces, hidden, logits


def roberta_position_ids(ids, padding_idx):
    """transformers' create_position_ids_from_input_ids: the non-pad ids count from padding_idx + 1, a pad
    id takes padding_idx (and does not advance the count)."""
    mask = (ids != padding_idx).long()
    return torch.cumsum(mask, dim=0) * mask + padding_idx


def roberta_forward(w, cfg, ids, prefix):
    """RoBERTa / XLM-R: word + position (padding-aware, from padding_idx + 1) + token type 0 embeddings,
    LayerNorm, BERT's post-LN blocks, and for RobertaForMaskedLM its head lm_head.dense, GELU (always),
    lm_head.layer_norm, lm_head.decoder (tied unless stored) + lm_head.bias."""
    p = lambda name: w[prefix + name]
    d, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    ln = lambda x, base, pre=prefix: F.layer_norm(x, (d,), w[pre + base + ".weight"], w[pre + base + ".bias"], eps)
    lin = lambda x, base, pre=prefix: x @ w[pre + base + ".weight"].T + w[pre + base + ".bias"]  # nn.Linear [out, in]
    positions = roberta_position_ids(ids, cfg["pad_token_id"])
    x = p("embeddings.word_embeddings.weight")[ids] + p("embeddings.position_embeddings.weight")[positions] + \
        p("embeddings.token_type_embeddings.weight")[torch.zeros_like(ids)]
    x = ln(x, "embeddings.LayerNorm")
    act = {"gelu": F.gelu, "gelu_new": lambda x: F.gelu(x, approximate="tanh")}[cfg["hidden_act"]]
    x, hidden, attentions, traces = bert_encoder(x, p, ln, lin, act, cfg["num_hidden_layers"], H)
    logits = None
    if "lm_head.dense.weight" in w:
        t = ln(F.gelu(lin(x, "lm_head.dense", pre="")), "lm_head.layer_norm", pre="")
        decoder = w.get("lm_head.decoder.weight", p("embeddings.word_embeddings.weight"))
        logits = t @ decoder.T + w["lm_head.bias"]
    return attentions, traces, hidden, logits


def opt_forward(w, cfg, ids, prefix):
    """OPT (Zhang et al. 2022, transformers' modeling_opt): embed_tokens [V, E], project_in [E -> d] when E != d,
    learned positions read at t + 2, blocks pre-LN (x += attn(LN(x)), x += fc2(act(fc1(LN(x))))) or, with
    do_layer_norm_before false, post-LN (x = LN(x + attn(x)), ...), the final LayerNorm (pre-LN only),
    project_out [d -> E], the unembedding (embed_tokens when tied). LayerNorm eps 1e-5. The last hidden state
    is taken before project_out, as attnplay reports it (d wide like the others)."""
    p = lambda name: w[prefix + name]
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    E, before = cfg.get("word_embed_proj_dim", d), cfg.get("do_layer_norm_before", True)
    bias = cfg.get("enable_bias", True)
    act = {"relu": F.relu, "gelu": F.gelu}[cfg.get("activation_function", "relu")]
    affine = cfg.get("layer_norm_elementwise_affine", True)  # False: LayerNorms without gain and bias
    ln = lambda x, base: F.layer_norm(x, (d,), p(base + ".weight") if affine else None,
                                      p(base + ".bias") if affine else None, 1e-5)
    lin = lambda x, base: x @ p(base + ".weight").T + (p(base + ".bias") if bias else 0)  # nn.Linear [out, in]
    T = len(ids)
    x = p("embed_tokens.weight")[ids]
    if E != d:
        x = x @ p("project_in.weight").T
    x = x + p("embed_positions.weight")[torch.arange(T) + 2]  # every token kept: cumsum(mask) - 1, offset 2
    hidden, attentions, traces = [x], [], []
    zero = torch.zeros(d, dtype=x.dtype)
    for l in range(cfg["num_hidden_layers"]):
        s = f"layers.{l}."
        a = ln(x, s + "self_attn_layer_norm") if before else x
        t = lambda name: p(s + f"self_attn.{name}.weight").T
        b = lambda name: p(s + f"self_attn.{name}.bias") if bias else zero
        out, weights, trace = attention(a, t("q_proj"), b("q_proj"), t("k_proj"), b("k_proj"), t("v_proj"),
                                        b("v_proj"), H, causal=True)
        x = x + lin(out, s + "self_attn.out_proj")
        if not before:
            x = ln(x, s + "self_attn_layer_norm")
        m = ln(x, s + "final_layer_norm") if before else x
        x = x + lin(act(lin(m, s + "fc1")), s + "fc2")
        if not before:
            x = ln(x, s + "final_layer_norm")
        attentions.append(weights)
        traces.append(trace)
        hidden.append(x)
    if before and not cfg.get("_remove_final_layer_norm", False):  # OPTDecoder's final_layer_norm
        x = ln(x, "final_layer_norm")
        hidden[-1] = x
    if E != d:
        x = x @ p("project_out.weight").T
    unembedding = p("embed_tokens.weight") if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return attentions, traces, hidden, x @ unembedding.T


def rms_norm(x, weight, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * weight


def rope_inverse_frequencies(dim, theta, scaling, cfg=None, positions=0):
    """theta^(-2i/dim), i < dim/2, with rope_scaling applied as transformers' rope init functions
    (modeling_rope_utils) compute it: linear, dynamic (the default up to the original positions, all the runtime
    runs), llama3, yarn, longrope (its short factors, or the long ones when a pass reaches past the original
    positions); cfg: the whole config (max_position_embeddings, Phi-3's original_max_position_embeddings)."""
    inv = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    kind = None if scaling is None else scaling.get("rope_type", scaling.get("type"))
    if kind in (None, "default", "dynamic"):
        return inv
    if kind == "linear":
        return inv / scaling["factor"]
    if kind == "yarn":
        original, factor = yarn_original_and_factor(scaling, cfg)
        beta_fast, beta_slow = scaling.get("beta_fast") or 32, scaling.get("beta_slow") or 1
        correction = lambda rotations: dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))
        low, high = correction(beta_fast), correction(beta_slow)
        if scaling.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        keep = 1 - ramp  # 1: the original frequency (extrapolation); 0: divided by factor (interpolation)
        return inv / factor * (1 - keep) + inv * keep
    if kind == "longrope":
        original = scaling.get("original_max_position_embeddings") or cfg["original_max_position_embeddings"]
        chosen = scaling["long_factor"] if positions > original else scaling["short_factor"]
        return inv / torch.tensor(chosen, dtype=torch.float64)
    # llama3: long wavelengths slowed by `factor`, short ones kept, a smooth blend between.
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    wavelength = 2 * math.pi / inv
    scaled = torch.where(wavelength > old / low, inv / factor, inv)
    smooth = (old / wavelength - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelength >= old / high) & (wavelength <= old / low)
    return torch.where(medium, blended, scaled)


def yarn_original_and_factor(scaling, cfg):
    original = scaling.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    return original, scaling.get("factor") or cfg["max_position_embeddings"] / original


def rope_attention_factor(scaling, cfg):
    """The factor yarn and longrope scale cos and sin by (transformers' attention_scaling); 1 otherwise."""
    kind = None if scaling is None else scaling.get("rope_type", scaling.get("type"))
    if kind not in ("yarn", "longrope"):
        return 1.0
    if scaling.get("attention_factor"):
        return scaling["attention_factor"]
    if kind == "longrope":
        original = scaling.get("original_max_position_embeddings") or cfg["original_max_position_embeddings"]
        factor = scaling.get("factor") or cfg["max_position_embeddings"] / original
        return 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
    _, factor = yarn_original_and_factor(scaling, cfg)
    mscale = lambda m: 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0
    if scaling.get("mscale") and scaling.get("mscale_all_dim"):
        return mscale(scaling["mscale"]) / mscale(scaling["mscale_all_dim"])
    return mscale(1)


def rotate(x, inv_freq, factor=1.0):
    """RoPE on the first 2·len(inv_freq) dims of x [heads, T, d_k], half-split (rotate_half) form; cos and sin
    scaled by `factor` (yarn, longrope)."""
    rot = 2 * len(inv_freq)
    T = x.shape[1]
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)  # [T, rot/2]
    cos, sin = torch.cat([angles.cos()] * 2, -1) * factor, torch.cat([angles.sin()] * 2, -1) * factor  # [T, rot]
    r, rest = x[..., :rot], x[..., rot:]
    half = rot // 2
    rotated_half = torch.cat([-r[..., half:], r[..., :half]], -1)
    return torch.cat([r * cos + rotated_half * sin, rest], -1)


def grouped_attention(q, k, v, window=None):
    """Causal attention of q [H, T, d_k] over k, v [KV, T, d_k]: query head h reads kv head h // (H / KV);
    with a window, query i sees only keys j with i - j < window. Returns output [T, H·d_k], weights, trace."""
    H, T, dk = q.shape
    group = H // k.shape[0]
    k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)  # [H, T, d_k]
    scores = q @ k.transpose(1, 2)  # [H, T, T]
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    hidden = j > i
    if window is not None:
        hidden = hidden | (i - j >= window)
    weights = torch.softmax((scores / math.sqrt(dk)).masked_fill(hidden, float("-inf")), dim=-1)
    out = (weights @ v).transpose(0, 1).reshape(T, H * dk)
    return out, weights, (q, k, v, scores)


def before_rope(q, k, inv_freq):
    """The trace's RoPE part: q [H, T, d_k] and k [H, T, d_k] (each query head's key head) before the
    rotation, and the inverse frequencies [r/2]."""
    return (q, k.repeat_interleave(q.shape[0] // k.shape[0], 0), inv_freq)


def smollm3_rope_layers(cfg):
    """SmolLM3: 1 where a layer turns q and k (no_rope_layers, else all but every no_rope_layer_interval-th)."""
    if cfg.get("no_rope_layers") is not None:
        return cfg["no_rope_layers"]
    interval = cfg.get("no_rope_layer_interval", 4)
    return [int((l + 1) % interval != 0) for l in range(cfg["num_hidden_layers"])]


def llama_forward(w, cfg, ids):
    """Llama / Mistral / Qwen2 / Qwen3 / SmolLM3 (cfg["model_type"] picks the details)."""
    p = lambda name: w["model." + name]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dk = cfg.get("head_dim") or cfg["hidden_size"] // H
    eps = cfg["rms_norm_eps"]
    inv_freq = rope_inverse_frequencies(dk, cfg["rope_theta"], cfg.get("rope_scaling"), cfg, len(ids))
    scale = rope_attention_factor(cfg.get("rope_scaling"), cfg)
    window = cfg.get("sliding_window") if cfg["model_type"] == "mistral" else None
    # Qwen2's layer_types: with use_sliding_window, the layers from max_window_layers on slide (Qwen2Config).
    sliding = [cfg["model_type"] == "mistral" or (cfg.get("use_sliding_window", False) and cfg["model_type"] == "qwen2"
                                                 and l >= cfg.get("max_window_layers", 28))
               for l in range(cfg["num_hidden_layers"])]
    if cfg["model_type"] == "qwen2" and cfg.get("use_sliding_window", False):
        window = cfg.get("sliding_window", 4096)
    lin = lambda x, base: x @ p(base + ".weight").T + (p(base + ".bias") if "model." + base + ".bias" in w else 0)
    heads = lambda m, n: m.reshape(len(ids), n, dk).transpose(0, 1)  # [n, T, d_k]
    x = p("embed_tokens.weight")[ids]
    hidden, attentions, traces = [x], [], []
    rope = smollm3_rope_layers(cfg) if cfg["model_type"] == "smollm3" else [1] * cfg["num_hidden_layers"]
    for l in range(cfg["num_hidden_layers"]):
        s = f"layers.{l}."
        a = rms_norm(x, p(s + "input_layernorm.weight"), eps)
        q, k, v = heads(lin(a, s + "self_attn.q_proj"), H), heads(lin(a, s + "self_attn.k_proj"), KV), \
            heads(lin(a, s + "self_attn.v_proj"), KV)
        if cfg["model_type"] == "qwen3":
            q, k = rms_norm(q, p(s + "self_attn.q_norm.weight"), eps), rms_norm(k, p(s + "self_attn.k_norm.weight"), eps)
        if rope[l]:
            out, weights, trace = grouped_attention(rotate(q, inv_freq, scale), rotate(k, inv_freq, scale), v,
                                                    window if sliding[l] else None)
            trace = trace + before_rope(q, k, inv_freq)
        else:  # SmolLM3's layers without RoPE: no rotation, no rotary trace
            out, weights, trace = grouped_attention(q, k, v, window if sliding[l] else None)
        x = x + lin(out, s + "self_attn.o_proj")
        m = rms_norm(x, p(s + "post_attention_layernorm.weight"), eps)
        x = x + lin(F.silu(lin(m, s + "mlp.gate_proj")) * lin(m, s + "mlp.up_proj"), s + "mlp.down_proj")
        attentions.append(weights)
        traces.append(trace)
        hidden.append(x)
    x = rms_norm(x, p("norm.weight"), eps)
    hidden[-1] = x
    unembedding = p("embed_tokens.weight") if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return attentions, traces, hidden, x @ unembedding.T


def gemma_norm(x, weight, eps):
    """Gemma's RMSNorm: x / rms(x) · (1 + weight)."""
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * (1 + weight)


def gemma_layer_types(cfg):
    """Which layers slide: layer_types, else Gemma 2's even layers or Gemma 3's all but every
    sliding_window_pattern-th; Gemma 1 none."""
    L, kind = cfg["num_hidden_layers"], cfg["model_type"]
    if kind == "gemma":
        return ["full_attention"] * L
    if cfg.get("layer_types"):
        return cfg["layer_types"]
    if kind == "gemma2":
        return ["sliding_attention" if l % 2 == 0 else "full_attention" for l in range(L)]
    pattern = cfg.get("sliding_window_pattern", 6)
    return ["sliding_attention" if (l + 1) % pattern else "full_attention" for l in range(L)]


def gemma_forward(w, cfg, ids):
    """Gemma 1/2/3 (Gemma Team 2024, 2025; transformers' modeling_gemma, gemma2, gemma3): embeddings times √d,
    RMSNorm with (1 + weight), GQA with RoPE (Gemma 3: q/k norm first, its sliding layers at
    rope_local_base_freq, unscaled), scores over √query_pre_attn_scalar (Gemma 1: √head_dim), Gemma 2's
    cap·tanh(s / cap) before the mask, sliding windows on the sliding layers, GeGLU (tanh GELU), Gemma 1's
    pre-norm blocks or Gemma 2/3's x += post(sublayer(pre(x))), the final norm, tied or own lm_head, Gemma 2's
    final logit softcapping."""
    kind = cfg["model_type"]
    p = lambda name: w["model." + name]
    d, H, KV, dk = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps, T = cfg["rms_norm_eps"], len(ids)
    inv_global = rope_inverse_frequencies(dk, cfg["rope_theta"], cfg.get("rope_scaling"))
    inv_local = rope_inverse_frequencies(dk, cfg.get("rope_local_base_freq", 10000.0), None) \
        if kind == "gemma3_text" else inv_global
    divisor = math.sqrt(dk if kind == "gemma" else cfg["query_pre_attn_scalar"])
    cap, final_cap = cfg.get("attn_logit_softcapping"), cfg.get("final_logit_softcapping")
    lin = lambda x, base: x @ p(base + ".weight").T
    norm = lambda x, base: gemma_norm(x, p(base + ".weight"), eps)
    heads = lambda m, n: m.reshape(T, n, dk).transpose(0, 1)  # [n, T, d_k]
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    x = p("embed_tokens.weight")[ids] * math.sqrt(d)
    hidden, attentions, traces = [x], [], []
    for l, layer_type in enumerate(gemma_layer_types(cfg)):
        s = f"layers.{l}."
        a = norm(x, s + "input_layernorm")
        q, k, v = heads(lin(a, s + "self_attn.q_proj"), H), heads(lin(a, s + "self_attn.k_proj"), KV), \
            heads(lin(a, s + "self_attn.v_proj"), KV)
        if kind == "gemma3_text":
            q, k = norm(q, s + "self_attn.q_norm"), norm(k, s + "self_attn.k_norm")
        sliding = layer_type == "sliding_attention"
        inv = inv_local if sliding else inv_global
        qr = rotate(q, inv)
        kr, vr = rotate(k, inv).repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)  # [H, T, d_k]
        scores = qr @ kr.transpose(1, 2)  # [H, T, T]
        scaled = scores / divisor
        if cap:
            scaled = cap * torch.tanh(scaled / cap)
        masked = (j > i) | ((i - j >= cfg["sliding_window"]) if sliding else torch.zeros_like(j > i))
        weights = torch.softmax(scaled.masked_fill(masked, float("-inf")), dim=-1)
        out = lin((weights @ vr).transpose(0, 1).reshape(T, H * dk), s + "self_attn.o_proj")
        mlp = lambda m: lin(F.gelu(lin(m, s + "mlp.gate_proj"), approximate="tanh") * lin(m, s + "mlp.up_proj"),
                            s + "mlp.down_proj")
        if kind == "gemma":
            x = x + out
            x = x + mlp(norm(x, s + "post_attention_layernorm"))
        else:
            x = x + norm(out, s + "post_attention_layernorm")
            x = x + norm(mlp(norm(x, s + "pre_feedforward_layernorm")), s + "post_feedforward_layernorm")
        attentions.append(weights)
        traces.append((qr, kr, vr, scores) + before_rope(q, k, inv))
        hidden.append(x)
    x = norm(x, "norm")
    hidden[-1] = x
    unembedding = p("embed_tokens.weight") if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    logits = x @ unembedding.T
    if final_cap:
        logits = final_cap * torch.tanh(logits / final_cap)
    return attentions, traces, hidden, logits


def olmo2_forward(w, cfg, ids):
    """OLMo 2 (Team OLMo 2024; transformers' modeling_olmo2): q and k RMS-normed across all heads at once, then
    RoPE; no norm before a sub-layer, one on its output: x += post_attention_layernorm(attn(x)),
    x += post_feedforward_layernorm(swiglu(x)); the final norm and an untied lm_head."""
    p = lambda name: w["model." + name]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dk, eps, T = cfg["hidden_size"] // H, cfg["rms_norm_eps"], len(ids)
    inv_freq = rope_inverse_frequencies(dk, cfg["rope_theta"], cfg.get("rope_scaling"))
    lin = lambda x, base: x @ p(base + ".weight").T
    norm = lambda x, base: rms_norm(x, p(base + ".weight"), eps)
    heads = lambda m, n: m.reshape(T, n, dk).transpose(0, 1)  # [n, T, d_k]
    x = p("embed_tokens.weight")[ids]
    hidden, attentions, traces = [x], [], []
    for l in range(cfg["num_hidden_layers"]):
        s = f"layers.{l}."
        q = heads(norm(lin(x, s + "self_attn.q_proj"), s + "self_attn.q_norm"), H)
        k = heads(norm(lin(x, s + "self_attn.k_proj"), s + "self_attn.k_norm"), KV)
        v = heads(lin(x, s + "self_attn.v_proj"), KV)
        out, weights, trace = grouped_attention(rotate(q, inv_freq), rotate(k, inv_freq), v)
        x = x + norm(lin(out, s + "self_attn.o_proj"), s + "post_attention_layernorm")
        m = lin(F.silu(lin(x, s + "mlp.gate_proj")) * lin(x, s + "mlp.up_proj"), s + "mlp.down_proj")
        x = x + norm(m, s + "post_feedforward_layernorm")
        attentions.append(weights)
        traces.append(trace + before_rope(q, k, inv_freq))
        hidden.append(x)
    x = norm(x, "norm")
    hidden[-1] = x
    return attentions, traces, hidden, x @ w["lm_head.weight"].T


def phi3_forward(w, cfg, ids):
    """Phi-3 (Abdin et al. 2024; transformers' modeling_phi3): the Llama recipe with q | k | v from one qkv_proj
    and gate | up from one gate_up_proj, RoPE on the first int(head_dim · partial_rotary_factor) dims of each head,
    a sliding window on every layer where the config has one."""
    p = lambda name: w["model." + name]
    H, KV, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size"]
    dk, eps, T, I = d // H, cfg["rms_norm_eps"], len(ids), cfg["intermediate_size"]
    inv_freq = rope_inverse_frequencies(int(dk * cfg.get("partial_rotary_factor", 1.0)), cfg["rope_theta"],
                                        cfg.get("rope_scaling"), cfg, T)
    scale = rope_attention_factor(cfg.get("rope_scaling"), cfg)
    lin = lambda x, base: x @ p(base + ".weight").T
    heads = lambda m, n: m.reshape(T, n, dk).transpose(0, 1)  # [n, T, d_k]
    x = p("embed_tokens.weight")[ids]
    hidden, attentions, traces = [x], [], []
    for l in range(cfg["num_hidden_layers"]):
        s = f"layers.{l}."
        qkv = lin(rms_norm(x, p(s + "input_layernorm.weight"), eps), s + "self_attn.qkv_proj")
        q, k, v = heads(qkv[:, :H * dk], H), heads(qkv[:, H * dk:(H + KV) * dk], KV), heads(qkv[:, (H + KV) * dk:], KV)
        out, weights, trace = grouped_attention(rotate(q, inv_freq, scale), rotate(k, inv_freq, scale), v,
                                                cfg.get("sliding_window"))
        x = x + lin(out, s + "self_attn.o_proj")
        gate_up = lin(rms_norm(x, p(s + "post_attention_layernorm.weight"), eps), s + "mlp.gate_up_proj")
        x = x + lin(F.silu(gate_up[:, :I]) * gate_up[:, I:], s + "mlp.down_proj")
        attentions.append(weights)
        traces.append(trace + before_rope(q, k, inv_freq))
        hidden.append(x)
    x = rms_norm(x, p("norm.weight"), eps)
    hidden[-1] = x
    return attentions, traces, hidden, x @ w["lm_head.weight"].T


def gpt_neox_forward(w, cfg, ids):
    p = lambda name: w["gpt_neox." + name]
    d, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    dk = d // H
    inv_freq = rope_inverse_frequencies(int(dk * cfg["rotary_pct"]), cfg["rotary_emb_base"], None)
    ln = lambda x, base: F.layer_norm(x, (d,), p(base + ".weight"), p(base + ".bias"), eps)
    lin = lambda x, base: x @ p(base + ".weight").T + p(base + ".bias")
    x = p("embed_in.weight")[ids]
    T = len(ids)
    hidden, attentions, traces = [x], [], []
    for l in range(cfg["num_hidden_layers"]):
        s = f"layers.{l}."
        qkv = lin(ln(x, s + "input_layernorm"), s + "attention.query_key_value").reshape(T, H, 3 * dk).transpose(0, 1)
        q, k, v = qkv[..., :dk], qkv[..., dk:2 * dk], qkv[..., 2 * dk:]  # each head's block: q | k | v
        out, weights, trace = grouped_attention(rotate(q, inv_freq), rotate(k, inv_freq), v)
        trace = trace + before_rope(q, k, inv_freq)
        attn = lin(out, s + "attention.dense")
        mlp = lambda m: lin(F.gelu(lin(m, s + "mlp.dense_h_to_4h")), s + "mlp.dense_4h_to_h")
        if cfg["use_parallel_residual"]:
            x = x + attn + mlp(ln(x, s + "post_attention_layernorm"))
        else:
            x = x + attn
            x = x + mlp(ln(x, s + "post_attention_layernorm"))
        attentions.append(weights)
        traces.append(trace)
        hidden.append(x)
    x = ln(x, "final_layer_norm")
    hidden[-1] = x
    return attentions, traces, hidden, x @ w["embed_out.weight"].T


# ---------------------------------------------------------------- checkpoints

GPT2_CASES = [
    # name, layers, heads, head width, n_inner (None = 4d), positions, dtype, prefix, untied lm_head, texts
    ("gpt2-l2-h12-k8-f16", 2, 12, 8, 128, 32, "F16", "transformer.", False, ["Hello, café! Attention."]),
    ("gpt2-l1-h1-k64-f32", 1, 1, 64, 64, 16, "F32", "", True, ["sixteen bytes!!!"]),
    ("gpt2-l4-h4-k8-bf16", 4, 4, 8, None, 24, "BF16", "transformer.", False, ["The cat sat."]),
    # Stanford CRFM's GPT-2s' flags (with config beyond the defaults): q·k unscaled, then divided by layer + 1;
    # cross-attention layers stored but not run
    ("gpt2-unscaled-inverse-layer-f32", 3, 2, 8, None, 16, "F32", "transformer.", False, ["Layer by layer."],
     {"scale_attn_weights": False, "scale_attn_by_inverse_layer_idx": True, "reorder_and_upcast_attn": True,
      "add_cross_attention": True}),
]

BERT_CASES = [
    # name, layers, heads, head width, intermediate, positions, dtype, prefix, MLM head, gamma/beta names,
    # decoder weight stored, cases (text, pair)
    ("bert-l2-h2-k32-f32", 2, 2, 32, 128, 24, "F32", "bert.", True, False, False,
     [("The cat [MASK] on the mat.", None), ("What does it see?", "A dog ran in the park!")]),
    ("bert-l3-h6-k16-f16", 3, 6, 16, 96, 20, "F16", "", False, True, False,
     [("Attention is all you need.", None)]),
    ("bert-l1-h3-k8-bf16", 1, 3, 8, 48, 16, "BF16", "bert.", True, False, True,
     [("the dog sat in the park , a cat ran !", None)]),
]

DISTILBERT_CASES = [
    # name, layers, heads, head width, hidden_dim, positions, dtype, prefix, MLM head, projector weight stored,
    # cases (text, pair): a pair is [CLS] A [SEP] B [SEP] without token types
    ("distilbert-l2-h4-k8-f32", 2, 4, 8, 64, 24, "F32", "distilbert.", True, False,
     [("The cat [MASK] on the mat.", None), ("What does it see?", "A dog ran in the park!")]),
    ("distilbert-l1-h2-k16-bf16", 1, 2, 16, 48, 16, "BF16", "", False, False,
     [("Attention is all you need.", None)]),
]

ELECTRA_CASES = [
    # name, layers, heads, head width, intermediate, positions, embedding_size, hidden_act, dtype, prefix,
    # head ("generator": the masked-LM head; "discriminator": the replaced-token head, which attention does not use),
    # lm head weight stored, cases (text, pair)
    ("electra-generator-l2-h2-k16-e24-f32", 2, 2, 16, 64, 24, 24, "gelu_new", "F32", "electra.", "generator", False,
     [("The cat [MASK] on the mat.", None), ("What does it see?", "A dog ran in the park!")]),
    ("electra-discriminator-l1-h4-k8-bf16", 1, 4, 8, 48, 16, 32, "gelu", "BF16", "electra.", "discriminator", False,
     [("Attention is all you need.", None)]),
]

ROBERTA_CASES = [
    # name, model_type, layers, heads, head width, intermediate, max_position_embeddings, hidden_act, dtype,
    # prefix, MLM head, decoder weight stored, specials (their order sets pad_token_id), cases (text, pair):
    # "<pad>" written in a text is a pad id inside the ids, which takes position padding_idx
    ("roberta-l2-h2-k16-f32", "roberta", 2, 2, 16, 64, 40, "gelu", "F32", "roberta.", True, False, ROBERTA_SPECIALS,
     [("The cat <mask> on the mat.", None), ("What does it see?", "A dog ran!"),
      ("Pads<pad><pad> inside <mask>.", None)]),
    ("xlm-roberta-l1-h4-k8-bf16", "xlm-roberta", 1, 4, 8, 48, 36, "gelu_new", "BF16", "roberta.", True, True,
     ["<unk>", "<s>", "</s>", "<pad>"],
     [("Attention<pad> is all <mask>.", None)]),
    ("roberta-l1-h2-k8-f16", "roberta", 1, 2, 8, 32, 24, "gelu", "F16", "", False, False, ROBERTA_SPECIALS,
     [("No head here.", None)]),
]

OPT_CASES = [
    # name, dtype, prefix, config (beyond the defaults of build_opt), texts
    ("opt-l2-h4-k8-f32", "F32", "model.decoder.",
     {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 32, "ffn_dim": 64}, ["OPT reads </s> first."]),
    # OPT-350m's shape: post-LN blocks, no final LayerNorm, 24-wide embeddings projected in and out
    ("opt-post-ln-proj-f16", "F16", "decoder.",
     {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 32, "ffn_dim": 48,
      "do_layer_norm_before": False, "word_embed_proj_dim": 24}, ["Post-LN."]),
    ("opt-nobias-gelu-untied-bf16", "BF16", "model.decoder.",
     {"num_hidden_layers": 1, "num_attention_heads": 2, "hidden_size": 16, "ffn_dim": 32, "enable_bias": False,
      "activation_function": "gelu", "tie_word_embeddings": False}, ["No bias."]),
    # LayerNorms without gain and bias (elementwise_affine false), and no final LayerNorm (_remove_final_layer_norm)
    ("opt-bare-norms-no-final-f32", "F32", "model.decoder.",
     {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 16, "ffn_dim": 32,
      "layer_norm_elementwise_affine": False, "_remove_final_layer_norm": True}, ["Bare norms."]),
]

LLAMA_CASES = [
    # name, model_type, dtype, config (beyond the defaults of build_llama), texts
    ("llama-gqa-llama3-bf16", "llama", "BF16",
     {"num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32, "tie_word_embeddings": True,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 64}},
     ["Llama 3."]),
    ("llama-mqa-bias-linear-f32", "llama", "F32",
     {"num_attention_heads": 3, "num_key_value_heads": 1, "hidden_size": 24, "head_dim": 16,
      "attention_bias": True, "mlp_bias": True, "tie_word_embeddings": False, "rope_theta": 500.0,
      "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
     ["One kv."]),
    ("mistral-window3-f16", "mistral", "F16",
     {"num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32, "sliding_window": 3,
      "tie_word_embeddings": False},
     ["Windowed."]),
    ("qwen2-bias-f32", "qwen2", "F32",
     {"num_attention_heads": 4, "num_key_value_heads": 1, "hidden_size": 32, "tie_word_embeddings": True,
      "rope_theta": 1000000.0, "use_sliding_window": False, "sliding_window": 4},
     ["Qwen2!"]),
    ("qwen3-qknorm-bf16", "qwen3", "BF16",
     {"num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32, "head_dim": 16,
      "tie_word_embeddings": True, "rope_theta": 1000000.0},
     ["Qwen3 qk."]),
    # SmolLM3: the last layer without RoPE (no_rope_layers); appended last, so that the seeds above stay
    ("smollm3-norope-f32", "smollm3", "F32",
     {"num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32, "tie_word_embeddings": True,
      "rope_theta": 2000000.0, "no_rope_layers": [1, 0]},
     ["No RoPE at the end."]),
    # yarn (Qwen2.5's long-context setting): frequencies blended over the ramp between the dimensions that turn 32
    # and 1 times within 2,048 positions, cos and sin scaled by 0.1·ln 4 + 1
    ("qwen2-yarn-f32", "qwen2", "F32",
     {"num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 32, "tie_word_embeddings": True,
      "max_position_embeddings": 8192,
      "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}},
     ["Yarn spun long."]),
    # Qwen2 with use_sliding_window: the layers from max_window_layers on attend within a window shorter than the text
    ("qwen2-sliding-layers-f16", "qwen2", "F16",
     {"num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 16,
      "tie_word_embeddings": True, "use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1},
     ["Slides after the first layer."]),
]

GEMMA_CASES = [
    # name, model_type, dtype, config (beyond the defaults of build_gemma), texts
    ("gemma-mqa-hd16-bf16", "gemma", "BF16",
     {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1, "hidden_size": 24, "head_dim": 16},
     ["Gemma one."]),
    # Gemma 2: softcaps small enough to bite, a window shorter than the text on the even layers, a scalar ≠ head_dim
    ("gemma2-softcap-window-f32", "gemma2", "F32",
     {"num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32, "head_dim": 16,
      "query_pre_attn_scalar": 12, "attn_logit_softcapping": 2.0, "final_logit_softcapping": 3.0,
      "sliding_window": 3}, ["Softly capped."]),
    # Gemma 3: explicit layer_types, q/k norm, local and global RoPE bases (linear scaling on the global), untied
    ("gemma3-layer-types-f16", "gemma3_text", "F16",
     {"num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 32, "head_dim": 16,
      "query_pre_attn_scalar": 16, "sliding_window": 4, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 2.0}, "attn_logit_softcapping": None,
      "final_logit_softcapping": None, "tie_word_embeddings": False,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}, ["Gemma three looks."]),
]

OLMO2_CASES = [
    # name, dtype, config (beyond the defaults of build_olmo2), texts
    ("olmo2-gqa-f16", "F16", {"num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32,
                              "rope_theta": 500000.0}, ["OLMo two."]),
]

PHI3_CASES = [
    # name, dtype, config (beyond the defaults of build_phi3), texts
    ("phi3-partial-window-bf16", "BF16", {"num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32,
                                          "partial_rotary_factor": 0.5, "sliding_window": 4}, ["Phi-3 fuses."]),
    # Phi-4-mini's shape: longrope on 3/4 of each head, trained on 8 positions, stretched to 64: a 3-token text
    # reads the short factors, a 14-token one the long factors; cos and sin scaled by √(1 + ln 8 / ln 8)
    ("phi3-longrope-f16", "F16", {"num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 32,
                                  "partial_rotary_factor": 0.75, "original_max_position_embeddings": 8,
                                  "rope_scaling": {"type": "longrope",
                                                   "short_factor": [1.0, 1.05, 1.2, 1.6, 2.5, 4.0],
                                                   "long_factor": [1.0, 1.3, 2.0, 4.5, 9.0, 16.0]}},
     ["Hi.", "Long rope, long."]),
]

NEOX_CASES = [
    # name, dtype, heads, hidden size, rotary_pct, rotary_emb_base, parallel residual, texts
    ("pythia-parallel-f16", "F16", 2, 32, 0.25, 10000, True, ["Pythia."]),
    ("pythia-serial-f32", "F32", 2, 16, 0.5, 500, False, ["Serial."]),
]


def rounded(t):
    """Nested lists of a tensor, 9 significant digits (float32 needs 9 to round-trip)."""
    if t.dim() == 0:
        return float("%.9g" % t.item())
    return [rounded(s) for s in t]


def trace_json(traces, layer, head):
    """One head's q, k, v, raw scores; with RoPE also q and k before the rotation and the inverse frequencies."""
    q, k, v, scores = traces[layer][:4]
    out = {"layer": layer, "head": head, "q": rounded(q[head]), "k": rounded(k[head]), "v": rounded(v[head]),
           "scores": rounded(scores[head])}
    if len(traces[layer]) > 4:
        q_before, k_before, inv_freq = traces[layer][4:]
        out["rotary"] = {"q": rounded(q_before[head]), "k": rounded(k_before[head]),
                         "inverse_frequencies": rounded(inv_freq)}
    return out


def build_gpt2(name, L, H, dk, inner, P, dtype, prefix, untied, texts, options=None, seed=0):
    d = H * dk
    tokenizer, V, encode = gpt2_tokenizer()
    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": L, "n_head": H, "n_embd": d,
           "n_inner": inner, "n_positions": P, "n_ctx": P, "vocab_size": V, "layer_norm_epsilon": 1e-5,
           "activation_function": "gelu_new", "bos_token_id": V - 1, "eos_token_id": V - 1, **(options or {})}
    ff = inner or 4 * d
    ck = Checkpoint(seed, dtype)
    ck.normal(prefix + "wte.weight", (V, d), 1.0)
    ck.normal(prefix + "wpe.weight", (P, d), 0.5)
    for l in range(L):
        h = f"{prefix}h.{l}."
        ck.layer_norm(h + "ln_1", d)
        ck.normal(h + "attn.c_attn.weight", (d, 3 * d), 1 / math.sqrt(d))
        ck.normal(h + "attn.c_attn.bias", (3 * d,), 0.1)
        ck.normal(h + "attn.c_proj.weight", (d, d), 1 / math.sqrt(d))
        ck.normal(h + "attn.c_proj.bias", (d,), 0.1)
        ck.layer_norm(h + "ln_2", d)
        ck.normal(h + "mlp.c_fc.weight", (d, ff), 1 / math.sqrt(d))
        ck.normal(h + "mlp.c_fc.bias", (ff,), 0.1)
        ck.normal(h + "mlp.c_proj.weight", (ff, d), 1 / math.sqrt(ff))
        ck.normal(h + "mlp.c_proj.bias", (d,), 0.1)
        if prefix:  # the causal-mask buffer older exports carry
            ck.add(h + "attn.bias", np.tril(np.ones((1, 1, P, P))), "F32")
        if cfg.get("add_cross_attention"):  # GPT2Block's cross-attention, which nothing here runs
            ck.layer_norm(h + "ln_cross_attn", d)
            ck.normal(h + "crossattention.c_attn.weight", (d, 2 * d), 1 / math.sqrt(d))
            ck.normal(h + "crossattention.q_attn.weight", (d, d), 1 / math.sqrt(d))
            ck.normal(h + "crossattention.c_proj.weight", (d, d), 1 / math.sqrt(d))
    ck.layer_norm(prefix + "ln_f", d)
    if untied:
        ck.normal("lm_head.weight", (V, d), 1.0)
    cases = []
    for text in texts:
        ids = encode(text)
        attentions, traces, hidden, logits = gpt2_forward(ck.w, cfg, torch.tensor(ids), prefix)
        cases.append({"text": text, "ids": ids, "type_ids": [0] * len(ids),
                      "attentions": [rounded(a) for a in attentions], "trace": trace_json(traces, L - 1, H - 1),
                      "hidden_states": [rounded(h) for h in hidden], "logits": rounded(logits)})
    return cfg, ck, tokenizer, cases


def bert_model_weights(ck, prefix, V, P, types, L, d, inner, old_names=False):
    """BertModel's tensors under BERT's names (BERT, RoBERTa): embeddings, encoder layers, and in checkpoints
    with the prefix the pooler, which the runtime does not use."""
    ck.normal(prefix + "embeddings.word_embeddings.weight", (V, d), 1.0)
    ck.normal(prefix + "embeddings.position_embeddings.weight", (P, d), 0.5)
    ck.normal(prefix + "embeddings.token_type_embeddings.weight", (types, d), 0.5)
    ck.layer_norm(prefix + "embeddings.LayerNorm", d, old_names)
    bert_encoder_weights(ck, prefix, L, d, inner, old_names)
    if prefix:
        ck.normal(prefix + "pooler.dense.weight", (d, d), 1 / math.sqrt(d))
        ck.normal(prefix + "pooler.dense.bias", (d,), 0.1)


def masked_lm_head_weights(ck, dense, norm, bias, decoder, d, E, V):
    """A masked-LM head (BERT, DistilBERT, ELECTRA's generator, RoBERTa): dense [d -> E], its LayerNorm, the output bias, and the decoder weight [V, E] when
    decoder names it (else tied to the word embeddings)."""
    ck.normal(dense + ".weight", (E, d), 1 / math.sqrt(d))
    ck.normal(dense + ".bias", (E,), 0.1)
    ck.layer_norm(norm, E)
    ck.normal(bias, (V,), 0.1)
    if decoder:
        ck.normal(decoder, (V, E), 1.0)


def bert_encoder_weights(ck, prefix, L, d, inner, old_names=False):
    """Random encoder layers under BERT's names (BERT, ELECTRA, RoBERTa)."""
    for l in range(L):
        e = f"{prefix}encoder.layer.{l}."
        for part in ("query", "key", "value"):
            ck.normal(e + f"attention.self.{part}.weight", (d, d), 1 / math.sqrt(d))
            ck.normal(e + f"attention.self.{part}.bias", (d,), 0.1)
        ck.normal(e + "attention.output.dense.weight", (d, d), 1 / math.sqrt(d))
        ck.normal(e + "attention.output.dense.bias", (d,), 0.1)
        ck.layer_norm(e + "attention.output.LayerNorm", d, old_names)
        ck.normal(e + "intermediate.dense.weight", (inner, d), 1 / math.sqrt(d))
        ck.normal(e + "intermediate.dense.bias", (inner,), 0.1)
        ck.normal(e + "output.dense.weight", (d, inner), 1 / math.sqrt(inner))
        ck.normal(e + "output.dense.bias", (d,), 0.1)
        ck.layer_norm(e + "output.LayerNorm", d, old_names)


def encoder_cases(texts, encode, H, forward, segments=True):
    """golden.json's cases of an encoder (BERT, DistilBERT, ELECTRA, RoBERTa) over texts [(text, pair or None)]:
    forward(ids, type_ids) -> (attentions, traces, hidden, logits or None). Without segments (DistilBERT)
    the model reads no token types: the pair's separators alone tell the texts apart, and the type ids are 0."""
    cases = []
    for text, pair in texts:
        ids, type_ids = encode(text, pair)
        if not segments:
            type_ids = [0] * len(ids)
        attentions, traces, hidden, logits = forward(torch.tensor(ids), torch.tensor(type_ids))
        case = {"text": text, "ids": ids, "type_ids": type_ids,
                "attentions": [rounded(a) for a in attentions], "trace": trace_json(traces, 0, H - 1),
                "hidden_states": [rounded(h) for h in hidden]}
        if pair is not None:
            case["text_pair"] = pair
        if logits is not None:
            case["logits"] = rounded(logits)  # MLM logits at every position
        cases.append(case)
    return cases


def build_bert(name, L, H, dk, inner, P, dtype, prefix, mlm, old_names, decoder, texts, seed):
    d = H * dk
    tokenizer, V, encode = bert_tokenizer()
    cfg = {"model_type": "bert", "architectures": ["BertForMaskedLM" if mlm else "BertModel"],
           "num_hidden_layers": L, "num_attention_heads": H, "hidden_size": d, "intermediate_size": inner,
           "max_position_embeddings": P, "vocab_size": V, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
           "hidden_act": "gelu", "position_embedding_type": "absolute", "pad_token_id": 0}
    ck = Checkpoint(seed, dtype)
    bert_model_weights(ck, prefix, V, P, 2, L, d, inner, old_names)
    if mlm:
        masked_lm_head_weights(ck, "cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                               "cls.predictions.bias", decoder and "cls.predictions.decoder.weight", d, d, V)
    forward = lambda ids, type_ids: bert_forward(ck.w, cfg, ids, type_ids, prefix, old_names)
    return cfg, ck, tokenizer, encoder_cases(texts, encode, H, forward)


def build_distilbert(name, L, H, dk, inner, P, dtype, prefix, mlm, projector, texts, seed):
    d = H * dk
    tokenizer, V, encode = bert_tokenizer()
    cfg = {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM" if mlm else "DistilBertModel"],
           "n_layers": L, "n_heads": H, "dim": d, "hidden_dim": inner, "max_position_embeddings": P,
           "vocab_size": V, "activation": "gelu", "sinusoidal_pos_embds": False, "pad_token_id": 0,
           "tie_weights_": True}
    ck = Checkpoint(seed, dtype)
    ck.normal(prefix + "embeddings.word_embeddings.weight", (V, d), 1.0)
    ck.normal(prefix + "embeddings.position_embeddings.weight", (P, d), 0.5)
    ck.layer_norm(prefix + "embeddings.LayerNorm", d)
    for l in range(L):
        e = f"{prefix}transformer.layer.{l}."
        for part in ("q_lin", "k_lin", "v_lin", "out_lin"):
            ck.normal(e + f"attention.{part}.weight", (d, d), 1 / math.sqrt(d))
            ck.normal(e + f"attention.{part}.bias", (d,), 0.1)
        ck.layer_norm(e + "sa_layer_norm", d)
        ck.normal(e + "ffn.lin1.weight", (inner, d), 1 / math.sqrt(d))
        ck.normal(e + "ffn.lin1.bias", (inner,), 0.1)
        ck.normal(e + "ffn.lin2.weight", (d, inner), 1 / math.sqrt(inner))
        ck.normal(e + "ffn.lin2.bias", (d,), 0.1)
        ck.layer_norm(e + "output_layer_norm", d)
    if mlm:
        masked_lm_head_weights(ck, "vocab_transform", "vocab_layer_norm", "vocab_projector.bias",
                               projector and "vocab_projector.weight", d, d, V)
    forward = lambda ids, type_ids: distilbert_forward(ck.w, cfg, ids, prefix)
    return cfg, ck, tokenizer, encoder_cases(texts, encode, H, forward, segments=False)


def build_electra(name, L, H, dk, inner, P, E, act, dtype, prefix, head, lm_weight, texts, seed):
    d = H * dk
    tokenizer, V, encode = bert_tokenizer()
    cfg = {"model_type": "electra",
           "architectures": ["ElectraForMaskedLM" if head == "generator" else "ElectraForPreTraining"],
           "num_hidden_layers": L, "num_attention_heads": H, "hidden_size": d, "intermediate_size": inner,
           "embedding_size": E, "max_position_embeddings": P, "vocab_size": V, "type_vocab_size": 2,
           "layer_norm_eps": 1e-12, "hidden_act": act, "position_embedding_type": "absolute", "pad_token_id": 0}
    ck = Checkpoint(seed, dtype)
    ck.normal(prefix + "embeddings.word_embeddings.weight", (V, E), 1.0)
    ck.normal(prefix + "embeddings.position_embeddings.weight", (P, E), 0.5)
    ck.normal(prefix + "embeddings.token_type_embeddings.weight", (2, E), 0.5)
    ck.layer_norm(prefix + "embeddings.LayerNorm", E)
    if E != d:
        ck.normal(prefix + "embeddings_project.weight", (d, E), 1 / math.sqrt(E))
        ck.normal(prefix + "embeddings_project.bias", (d,), 0.1)
    bert_encoder_weights(ck, prefix, L, d, inner)
    if head == "generator":
        masked_lm_head_weights(ck, "generator_predictions.dense", "generator_predictions.LayerNorm",
                               "generator_lm_head.bias", lm_weight and "generator_lm_head.weight", d, E, V)
    else:
        ck.normal("discriminator_predictions.dense.weight", (d, d), 1 / math.sqrt(d))
        ck.normal("discriminator_predictions.dense.bias", (d,), 0.1)
        ck.normal("discriminator_predictions.dense_prediction.weight", (1, d), 1 / math.sqrt(d))
        ck.normal("discriminator_predictions.dense_prediction.bias", (1,), 0.1)
    forward = lambda ids, type_ids: electra_forward(ck.w, cfg, ids, type_ids, prefix)
    return cfg, ck, tokenizer, encoder_cases(texts, encode, H, forward)


def build_roberta(name, model_type, L, H, dk, inner, P, act, dtype, prefix, mlm, decoder, specials, texts, seed):
    d = H * dk
    tokenizer, V, encode, pad = roberta_tokenizer(specials)
    cfg = {"model_type": model_type,
           "architectures": ["RobertaForMaskedLM" if mlm else "RobertaModel"] if model_type == "roberta"
           else ["XLMRobertaForMaskedLM" if mlm else "XLMRobertaModel"],
           "num_hidden_layers": L, "num_attention_heads": H, "hidden_size": d, "intermediate_size": inner,
           "max_position_embeddings": P, "vocab_size": V, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
           "hidden_act": act, "position_embedding_type": "absolute", "pad_token_id": pad,
           "bos_token_id": encode("")[0][0], "eos_token_id": encode("")[0][-1]}
    ck = Checkpoint(seed, dtype)
    bert_model_weights(ck, prefix, V, P, 1, L, d, inner)
    if mlm:
        masked_lm_head_weights(ck, "lm_head.dense", "lm_head.layer_norm", "lm_head.bias",
                               decoder and "lm_head.decoder.weight", d, d, V)
    forward = lambda ids, type_ids: roberta_forward(ck.w, cfg, ids, prefix)
    return cfg, ck, tokenizer, encoder_cases(texts, encode, H, forward, segments=False)


def build_opt(name, dtype, prefix, options, texts, seed):
    tokenizer, V, encode = opt_tokenizer()
    cfg = {"model_type": "opt", "architectures": ["OPTForCausalLM"], "vocab_size": V, "max_position_embeddings": 32,
           "do_layer_norm_before": True, "word_embed_proj_dim": options["hidden_size"], "activation_function": "relu",
           "enable_bias": True, "layer_norm_elementwise_affine": True, "tie_word_embeddings": True,
           "pad_token_id": 1, "bos_token_id": 2, "eos_token_id": 2, "dropout": 0.1, **options}
    d, E, L, inner = cfg["hidden_size"], cfg["word_embed_proj_dim"], cfg["num_hidden_layers"], cfg["ffn_dim"]
    bias, affine = cfg["enable_bias"], cfg["layer_norm_elementwise_affine"]
    layer_norm = lambda base: affine and ck.layer_norm(base, d)
    ck = Checkpoint(seed, dtype)
    ck.normal(prefix + "embed_tokens.weight", (V, E), 1.0)
    ck.normal(prefix + "embed_positions.weight", (cfg["max_position_embeddings"] + 2, d), 0.5)
    if E != d:
        ck.normal(prefix + "project_in.weight", (d, E), 1 / math.sqrt(E))
        ck.normal(prefix + "project_out.weight", (E, d), 1 / math.sqrt(d))
    linear = lambda base, n_in, n_out: (ck.normal(base + ".weight", (n_out, n_in), 1 / math.sqrt(n_in)),
                                        bias and ck.normal(base + ".bias", (n_out,), 0.1))
    for l in range(L):
        s = f"{prefix}layers.{l}."
        for part in ("q_proj", "k_proj", "v_proj", "out_proj"):
            linear(s + "self_attn." + part, d, d)
        layer_norm(s + "self_attn_layer_norm")
        linear(s + "fc1", d, inner)
        linear(s + "fc2", inner, d)
        layer_norm(s + "final_layer_norm")
    if cfg["do_layer_norm_before"] and not cfg.get("_remove_final_layer_norm", False):
        layer_norm(prefix + "final_layer_norm")
    # OPTForCausalLM saves lm_head.weight even when tied; a tied copy is not read (here it differs, so the
    # goldens would show if it were).
    ck.normal("lm_head.weight", (V, E), 1.0)
    forward = lambda w, cfg, ids: opt_forward(w, cfg, ids, prefix)
    return cfg, ck, tokenizer, causal_cases(forward, ck.w, cfg, texts, cfg["num_attention_heads"], encode)


def causal_cases(forward, w, cfg, texts, H, encode):
    cases = []
    for text in texts:
        ids = encode(text)
        attentions, traces, hidden, logits = forward(w, cfg, torch.tensor(ids))
        L = len(attentions)
        cases.append({"text": text, "ids": ids, "type_ids": [0] * len(ids),
                      "attentions": [rounded(a) for a in attentions], "trace": trace_json(traces, L - 1, H - 1),
                      "hidden_states": [rounded(h) for h in hidden], "logits": rounded(logits)})
    return cases


def build_llama(name, model_type, dtype, options, texts, seed):
    tokenizer, V, encode = gpt2_tokenizer()
    cfg = {"model_type": model_type, "architectures": [{"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
                                                       "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
                                                       "smollm3": "SmolLM3ForCausalLM"}[model_type]],
           "num_hidden_layers": 2, "intermediate_size": 48, "max_position_embeddings": 64, "vocab_size": V,
           "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 10000.0, "bos_token_id": V - 1,
           "eos_token_id": V - 1}
    cfg.update(options)
    d, H, KV, I = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["intermediate_size"]
    dk = cfg.get("head_dim") or d // H
    qkv_bias = model_type == "qwen2" or cfg.get("attention_bias", False)
    o_bias = model_type != "qwen2" and cfg.get("attention_bias", False)
    mlp_bias = cfg.get("mlp_bias", False)
    ck = Checkpoint(seed, dtype)
    ck.normal("model.embed_tokens.weight", (V, d), 1.0)
    for l in range(cfg["num_hidden_layers"]):
        s = f"model.layers.{l}."
        ck.normal(s + "input_layernorm.weight", (d,), 0.1, 1.0)
        for part, rows in (("q_proj", H * dk), ("k_proj", KV * dk), ("v_proj", KV * dk)):
            ck.normal(s + f"self_attn.{part}.weight", (rows, d), 1 / math.sqrt(d))
            if qkv_bias:
                ck.normal(s + f"self_attn.{part}.bias", (rows,), 0.5)
        if model_type == "qwen3":
            ck.normal(s + "self_attn.q_norm.weight", (dk,), 0.2, 1.0)
            ck.normal(s + "self_attn.k_norm.weight", (dk,), 0.2, 1.0)
        ck.normal(s + "self_attn.o_proj.weight", (d, H * dk), 1 / math.sqrt(H * dk))
        if o_bias:
            ck.normal(s + "self_attn.o_proj.bias", (d,), 0.1)
        ck.normal(s + "post_attention_layernorm.weight", (d,), 0.1, 1.0)
        for part, shape in (("gate_proj", (I, d)), ("up_proj", (I, d)), ("down_proj", (d, I))):
            ck.normal(s + f"mlp.{part}.weight", shape, 1 / math.sqrt(shape[1]))
            if mlp_bias:
                ck.normal(s + f"mlp.{part}.bias", (shape[0],), 0.1)
    ck.normal("model.norm.weight", (d,), 0.1, 1.0)
    if not cfg["tie_word_embeddings"]:
        ck.normal("lm_head.weight", (V, d), 1.0)
    return cfg, ck, tokenizer, causal_cases(llama_forward, ck.w, cfg, texts, H, encode)


def build_gemma(name, model_type, dtype, options, texts, seed):
    tokenizer, V, encode = gpt2_tokenizer()
    cfg = {"model_type": model_type, "architectures": [{"gemma": "GemmaForCausalLM", "gemma2": "Gemma2ForCausalLM",
                                                       "gemma3_text": "Gemma3ForCausalLM"}[model_type]],
           "intermediate_size": 48, "max_position_embeddings": 64, "vocab_size": V, "rms_norm_eps": 1e-6,
           "hidden_activation": "gelu_pytorch_tanh", "rope_theta": 10000.0, "tie_word_embeddings": True,
           "attention_bias": False, "bos_token_id": V - 1, "eos_token_id": V - 1}
    cfg.update(options)
    d, H, KV, I, dk = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                       cfg["intermediate_size"], cfg["head_dim"])
    ck = Checkpoint(seed, dtype)
    ck.normal("model.embed_tokens.weight", (V, d), 0.3)
    norm = lambda name, n: ck.normal(name, (n,), 0.3)  # Gemma's norm weights sit around 0: the scale is 1 + w
    for l in range(cfg["num_hidden_layers"]):
        s = f"model.layers.{l}."
        norm(s + "input_layernorm.weight", d)
        for part, rows in (("q_proj", H * dk), ("k_proj", KV * dk), ("v_proj", KV * dk)):
            ck.normal(s + f"self_attn.{part}.weight", (rows, d), 2 / math.sqrt(d))
        if model_type == "gemma3_text":
            norm(s + "self_attn.q_norm.weight", dk)
            norm(s + "self_attn.k_norm.weight", dk)
        ck.normal(s + "self_attn.o_proj.weight", (d, H * dk), 1 / math.sqrt(H * dk))
        norm(s + "post_attention_layernorm.weight", d)
        if model_type != "gemma":
            norm(s + "pre_feedforward_layernorm.weight", d)
            norm(s + "post_feedforward_layernorm.weight", d)
        for part, shape in (("gate_proj", (I, d)), ("up_proj", (I, d)), ("down_proj", (d, I))):
            ck.normal(s + f"mlp.{part}.weight", shape, 1 / math.sqrt(shape[1]))
    norm("model.norm.weight", d)
    if not cfg["tie_word_embeddings"]:
        ck.normal("lm_head.weight", (V, d), 0.3)
    return cfg, ck, tokenizer, causal_cases(gemma_forward, ck.w, cfg, texts, H, encode)


def build_olmo2(name, dtype, options, texts, seed):
    tokenizer, V, encode = gpt2_tokenizer()
    cfg = {"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"], "num_hidden_layers": 2,
           "intermediate_size": 48, "max_position_embeddings": 64, "vocab_size": V, "rms_norm_eps": 1e-6,
           "hidden_act": "silu", "attention_bias": False, "tie_word_embeddings": False, "pad_token_id": 1,
           "bos_token_id": None, "eos_token_id": V - 1, **options}
    d, H, KV, I = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["intermediate_size"]
    dk = d // H
    ck = Checkpoint(seed, dtype)
    ck.normal("model.embed_tokens.weight", (V, d), 1.0)
    for l in range(cfg["num_hidden_layers"]):
        s = f"model.layers.{l}."
        for part, rows in (("q_proj", H * dk), ("k_proj", KV * dk), ("v_proj", KV * dk)):
            ck.normal(s + f"self_attn.{part}.weight", (rows, d), 1 / math.sqrt(d))
        ck.normal(s + "self_attn.q_norm.weight", (H * dk,), 0.2, 1.0)
        ck.normal(s + "self_attn.k_norm.weight", (KV * dk,), 0.2, 1.0)
        ck.normal(s + "self_attn.o_proj.weight", (d, H * dk), 1 / math.sqrt(H * dk))
        ck.normal(s + "post_attention_layernorm.weight", (d,), 0.1, 1.0)
        for part, shape in (("gate_proj", (I, d)), ("up_proj", (I, d)), ("down_proj", (d, I))):
            ck.normal(s + f"mlp.{part}.weight", shape, 1 / math.sqrt(shape[1]))
        ck.normal(s + "post_feedforward_layernorm.weight", (d,), 0.1, 1.0)
    ck.normal("model.norm.weight", (d,), 0.1, 1.0)
    ck.normal("lm_head.weight", (V, d), 1.0)
    return cfg, ck, tokenizer, causal_cases(olmo2_forward, ck.w, cfg, texts, H, encode)


def build_phi3(name, dtype, options, texts, seed):
    tokenizer, V, encode = gpt2_tokenizer()
    cfg = {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "num_hidden_layers": 2,
           "intermediate_size": 48, "max_position_embeddings": 64, "original_max_position_embeddings": 64,
           "vocab_size": V, "rms_norm_eps": 1e-5, "hidden_act": "silu", "rope_theta": 10000.0, "rope_scaling": None,
           "tie_word_embeddings": False, "bos_token_id": V - 1, "eos_token_id": V - 1, **options}
    d, H, KV, I = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["intermediate_size"]
    dk = d // H
    ck = Checkpoint(seed, dtype)
    ck.normal("model.embed_tokens.weight", (V, d), 1.0)
    for l in range(cfg["num_hidden_layers"]):
        s = f"model.layers.{l}."
        ck.normal(s + "input_layernorm.weight", (d,), 0.1, 1.0)
        ck.normal(s + "self_attn.qkv_proj.weight", ((H + 2 * KV) * dk, d), 1 / math.sqrt(d))
        ck.normal(s + "self_attn.o_proj.weight", (d, H * dk), 1 / math.sqrt(H * dk))
        ck.normal(s + "post_attention_layernorm.weight", (d,), 0.1, 1.0)
        ck.normal(s + "mlp.gate_up_proj.weight", (2 * I, d), 1 / math.sqrt(d))
        ck.normal(s + "mlp.down_proj.weight", (d, I), 1 / math.sqrt(I))
    ck.normal("model.norm.weight", (d,), 0.1, 1.0)
    ck.normal("lm_head.weight", (V, d), 1.0)
    return cfg, ck, tokenizer, causal_cases(phi3_forward, ck.w, cfg, texts, H, encode)


def build_neox(name, dtype, H, d, rotary_pct, base, parallel, texts, seed):
    tokenizer, V, encode = gpt2_tokenizer()
    cfg = {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "num_hidden_layers": 2,
           "num_attention_heads": H, "hidden_size": d, "intermediate_size": 4 * d, "max_position_embeddings": 64,
           "vocab_size": V, "layer_norm_eps": 1e-5, "hidden_act": "gelu", "rotary_pct": rotary_pct,
           "rotary_emb_base": base, "use_parallel_residual": parallel, "tie_word_embeddings": False,
           "bos_token_id": V - 1, "eos_token_id": V - 1}
    ck = Checkpoint(seed, dtype)
    ck.normal("gpt_neox.embed_in.weight", (V, d), 1.0)
    for l in range(cfg["num_hidden_layers"]):
        s = f"gpt_neox.layers.{l}."
        ck.layer_norm(s + "input_layernorm", d)
        ck.layer_norm(s + "post_attention_layernorm", d)
        ck.normal(s + "attention.query_key_value.weight", (3 * d, d), 1 / math.sqrt(d))
        ck.normal(s + "attention.query_key_value.bias", (3 * d,), 0.5)
        ck.normal(s + "attention.dense.weight", (d, d), 1 / math.sqrt(d))
        ck.normal(s + "attention.dense.bias", (d,), 0.1)
        ck.normal(s + "mlp.dense_h_to_4h.weight", (4 * d, d), 1 / math.sqrt(d))
        ck.normal(s + "mlp.dense_h_to_4h.bias", (4 * d,), 0.1)
        ck.normal(s + "mlp.dense_4h_to_h.weight", (d, 4 * d), 1 / math.sqrt(4 * d))
        ck.normal(s + "mlp.dense_4h_to_h.bias", (d,), 0.1)
    ck.layer_norm("gpt_neox.final_layer_norm", d)
    ck.normal("embed_out.weight", (V, d), 1.0)
    return cfg, ck, tokenizer, causal_cases(gpt_neox_forward, ck.w, cfg, texts, H, encode)


def save(name, cfg, ck, tokenizer, cases):
    write_folder(name, cfg, ck, tokenizer, cases)
    spread = [float(torch.tensor(c["attentions"]).max(dim=-1).values.mean()) for c in cases]
    print(f"{name}: {len(cases)} case(s), mean row max of attention {spread}")


def write_folder(name, cfg, ck, tokenizer, cases):
    """OUT/name/: config.json, tokenizer.json, model.safetensors and golden.json."""
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    ck.write(folder)
    with open(os.path.join(folder, "golden.json"), "w") as f:
        json.dump({"model": name, "cases": cases}, f, separators=(",", ":"))


def main():
    torch.manual_seed(0)
    for seed, case in enumerate(GPT2_CASES):
        save(case[0], *build_gpt2(*case, seed=100 + seed))
    for seed, case in enumerate(BERT_CASES):
        save(case[0], *build_bert(*case, seed=200 + seed))
    for seed, case in enumerate(DISTILBERT_CASES):
        save(case[0], *build_distilbert(*case, seed=250 + seed))
    for seed, case in enumerate(ELECTRA_CASES):
        save(case[0], *build_electra(*case, seed=270 + seed))
    for seed, case in enumerate(ROBERTA_CASES):
        save(case[0], *build_roberta(*case, seed=290 + seed))
    for seed, case in enumerate(OPT_CASES):
        save(case[0], *build_opt(*case, seed=350 + seed))
    for seed, case in enumerate(LLAMA_CASES):
        save(case[0], *build_llama(*case, seed=300 + seed))
    for seed, case in enumerate(GEMMA_CASES):
        save(case[0], *build_gemma(*case, seed=380 + seed))
    for seed, case in enumerate(OLMO2_CASES):
        save(case[0], *build_olmo2(*case, seed=390 + seed))
    for seed, case in enumerate(PHI3_CASES):
        save(case[0], *build_phi3(*case, seed=395 + seed))
    for seed, case in enumerate(NEOX_CASES):
        save(case[0], *build_neox(*case, seed=400 + seed))


if __name__ == "__main__":
    main()
