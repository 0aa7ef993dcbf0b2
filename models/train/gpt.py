"""GPT-2 architecture in PyTorch with Hugging Face's parameter names.

What it is: the model trained as `austen-gpt` (Radford et al. 2019: pre-layer-
norm blocks, learned positions, GELU tanh approximation, causal attention, LM
head tied to the token embeddings), written from the published architecture.
Its state_dict() uses the `transformer.h.N.attn.c_attn` Conv1D layout ([in,
out] weights), so the saved model.safetensors loads in Hugging Face and in
attnplay's runtime alike; load_gpt() reads such a folder back (for evaluation
or to continue training). What it is not: a loader of other checkpoints.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from common import read_safetensors


@dataclass
class GPTConfig:
    vocab_size: int
    n_positions: int = 256
    n_embd: int = 192
    n_layer: int = 4
    n_head: int = 8
    dropout: float = 0.1
    layer_norm_epsilon: float = 1e-5

    def hf_config(self, bos: int, eos: int) -> dict:
        return {
            "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": self.vocab_size,
            "n_positions": self.n_positions, "n_ctx": self.n_positions, "n_embd": self.n_embd,
            "n_layer": self.n_layer, "n_head": self.n_head, "n_inner": None,
            "activation_function": "gelu_new", "layer_norm_epsilon": self.layer_norm_epsilon,
            "resid_pdrop": self.dropout, "embd_pdrop": self.dropout, "attn_pdrop": self.dropout,
            "initializer_range": 0.02, "bos_token_id": bos, "eos_token_id": eos,
            "tie_word_embeddings": True, "torch_dtype": "float16",
        }


def sinusoids(positions: int, width: int) -> torch.Tensor:
    """The fixed position encodings of Vaswani et al. (2017), [positions, width]:
    sin/cos pairs whose phase turns by a fixed angle per position, so that one
    linear map can send every position's code to its neighbour's. `austen-gpt`
    starts its learned position embeddings from them (scaled to the token
    embeddings' size): from GPT-2's random start, previous-token heads stayed
    diffuse within the training budget (model card, versions 1-3)."""
    position = torch.arange(positions, dtype=torch.float32)[:, None]
    angle = position / 10000 ** (torch.arange(0, width, 2, dtype=torch.float32)[None] / width)  # [positions, width/2]
    table = torch.zeros(positions, width)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table


class Conv1D(nn.Module):
    """y = x·W + b with W stored [in, out] (GPT-2's layout)."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).reshape(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = Conv1D(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = Conv1D(cfg.n_embd, cfg.n_embd)
        self.attn_dropout = nn.Dropout(cfg.dropout)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, want_weights: bool = False):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)  # each [B, T, d]
        heads = lambda m: m.view(b, t, self.n_head, d // self.n_head).transpose(1, 2)  # [B, H, T, d_k]
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # [B, H, T, T]
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)  # [B, H, T, T]
        out = (self.attn_dropout(weights) @ v).transpose(1, 2).reshape(b, t, d)  # [B, T, d]
        return self.resid_dropout(self.c_proj(out)), (weights if want_weights else None)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.mlp = nn.ModuleDict({"c_fc": Conv1D(cfg.n_embd, 4 * cfg.n_embd), "c_proj": Conv1D(4 * cfg.n_embd, cfg.n_embd)})
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, want_weights: bool = False):
        a, weights = self.attn(self.ln_1(x), want_weights)
        x = x + a
        h = F.gelu(self.mlp["c_fc"](self.ln_2(x)), approximate="tanh")
        return x + self.dropout(self.mlp["c_proj"](h)), weights


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.transformer = nn.ModuleDict({
            "wte": nn.Embedding(cfg.vocab_size, cfg.n_embd),
            "wpe": nn.Embedding(cfg.n_positions, cfg.n_embd),
            "drop": nn.Dropout(cfg.dropout),
            "h": nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer)),
            "ln_f": nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon),
        })
        nn.init.normal_(self.transformer["wte"].weight, std=0.02)
        with torch.no_grad():  # still learned; see sinusoids()
            self.transformer["wpe"].weight.copy_(sinusoids(cfg.n_positions, cfg.n_embd) * 0.05)
        for block in self.transformer["h"]:  # GPT-2's scaled init of residual projections
            for proj in (block.attn.c_proj, block.mlp["c_proj"]):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

    def forward(self, ids: torch.Tensor, want_weights: bool = False):
        """ids [B, T] -> logits [B, T, V] and, on request, attention weights per layer [B, H, T, T]."""
        t = ids.shape[1]
        tr = self.transformer
        x = tr["drop"](tr["wte"](ids) + tr["wpe"](torch.arange(t, device=ids.device)))  # [B, T, d]
        all_weights = []
        for block in tr["h"]:
            x, weights = block(x, want_weights)
            all_weights.append(weights)
        logits = tr["ln_f"](x) @ tr["wte"].weight.T  # tied LM head, [B, T, V]
        return logits, all_weights

    def hf_state_dict(self) -> dict[str, torch.Tensor]:
        """Parameters under Hugging Face GPT2LMHeadModel names (lm_head tied, so not stored)."""
        return {name: p for name, p in self.named_parameters()}


def load_gpt(folder: Path) -> GPT:
    """The config.json and F16 model.safetensors of a folder this code wrote, as a float32 GPT (eval mode)."""
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    model = GPT(GPTConfig(vocab_size=cfg["vocab_size"], n_positions=cfg["n_positions"], n_embd=cfg["n_embd"],
                          n_layer=cfg["n_layer"], n_head=cfg["n_head"], dropout=0.0))
    model.load_state_dict(read_safetensors(folder / "model.safetensors"))
    return model.eval()
