"""BERT architecture in PyTorch with Hugging Face's parameter names.

What it is: the model trained as `austen-bert` (Devlin et al. 2019: learned
positions, token type embeddings, post-layer-norm blocks, exact GELU,
bidirectional attention with a padding mask, masked-language-model head with
the decoder tied to the token embeddings), written from the published
architecture. state_dict() names match BertForMaskedLM (`bert.embeddings...`,
`bert.encoder.layer.N.attention.self.query`, `cls.predictions...`), so the
saved model.safetensors loads in Hugging Face and in attnplay's runtime.
What it is not: a next-sentence-prediction model (no pooler, no NSP head).
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
class BertConfig:
    vocab_size: int
    hidden_size: int = 192
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 768
    max_position_embeddings: int = 128
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0

    def hf_config(self) -> dict:
        return {
            "architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size, "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads, "intermediate_size": self.intermediate_size,
            "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
            "max_position_embeddings": self.max_position_embeddings, "type_vocab_size": self.type_vocab_size,
            "initializer_range": 0.02, "layer_norm_eps": self.layer_norm_eps, "pad_token_id": self.pad_token_id,
            "position_embedding_type": "absolute", "tie_word_embeddings": True, "torch_dtype": "float16",
        }


class SelfAttention(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.heads = cfg.num_attention_heads
        self.query = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.key = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.value = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, x: torch.Tensor, key_bias: torch.Tensor):
        b, t, d = x.shape
        split = lambda m: m.view(b, t, self.heads, d // self.heads).transpose(1, 2)  # [B, H, T, d_k]
        q, k, v = split(self.query(x) / math.sqrt(d // self.heads)), split(self.key(x)), split(self.value(x))
        weights = (q @ k.transpose(-1, -2) + key_bias).softmax(dim=-1)  # [B, H, T, T]
        return (weights @ v).transpose(1, 2).reshape(b, t, d), weights


class Layer(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        eps = cfg.layer_norm_eps
        self.attention = nn.ModuleDict({
            "self": SelfAttention(cfg),
            "output": nn.ModuleDict({"dense": nn.Linear(cfg.hidden_size, cfg.hidden_size), "LayerNorm": nn.LayerNorm(cfg.hidden_size, eps=eps)}),
        })
        self.intermediate = nn.ModuleDict({"dense": nn.Linear(cfg.hidden_size, cfg.intermediate_size)})
        self.output = nn.ModuleDict({"dense": nn.Linear(cfg.intermediate_size, cfg.hidden_size), "LayerNorm": nn.LayerNorm(cfg.hidden_size, eps=eps)})

    def forward(self, x: torch.Tensor, key_bias: torch.Tensor):
        a, weights = self.attention["self"](x, key_bias)
        x = self.attention["output"]["LayerNorm"](x + self.attention["output"]["dense"](a))
        h = F.gelu(self.intermediate["dense"](x))
        return self.output["LayerNorm"](x + self.output["dense"](h)), weights


class Bert(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.hidden_size
        self.bert = nn.ModuleDict({
            "embeddings": nn.ModuleDict({
                "word_embeddings": nn.Embedding(cfg.vocab_size, d),
                "position_embeddings": nn.Embedding(cfg.max_position_embeddings, d),
                "token_type_embeddings": nn.Embedding(cfg.type_vocab_size, d),
                "LayerNorm": nn.LayerNorm(d, eps=cfg.layer_norm_eps),
            }),
            "encoder": nn.ModuleDict({"layer": nn.ModuleList(Layer(cfg) for _ in range(cfg.num_hidden_layers))}),
        })
        self.cls = nn.ModuleDict({"predictions": nn.ModuleDict({
            "transform": nn.ModuleDict({"dense": nn.Linear(d, d), "LayerNorm": nn.LayerNorm(d, eps=cfg.layer_norm_eps)}),
        })})
        self.decoder_bias = nn.Parameter(torch.zeros(cfg.vocab_size))  # saved as cls.predictions.bias
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    def forward(self, ids: torch.Tensor, type_ids: torch.Tensor, mask: torch.Tensor, want_weights: bool = False,
                predict_at: torch.Tensor | None = None):
        """ids, type_ids, mask [B, T] (mask 1 = real token) -> MLM logits [B, T, V], attention per layer [B, H, T, T].

        With predict_at (bool [B, T]) the MLM head runs only at those positions and
        the logits are [N, V], N = predict_at.sum(): training needs no others."""
        e = self.bert["embeddings"]
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = e["LayerNorm"](e["word_embeddings"](ids) + e["position_embeddings"](positions) + e["token_type_embeddings"](type_ids))
        key_bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # [B, 1, 1, T]
        all_weights = []
        for layer in self.bert["encoder"]["layer"]:
            x, weights = layer(x, key_bias)
            all_weights.append(weights if want_weights else None)
        if predict_at is not None:
            x = x[predict_at]  # [N, d]
        t = self.cls["predictions"]["transform"]
        h = t["LayerNorm"](F.gelu(t["dense"](x)).float())  # float32 input under bfloat16 autocast (a no-op otherwise)
        return h @ e["word_embeddings"].weight.T + self.decoder_bias, all_weights

    def hf_state_dict(self) -> dict[str, torch.Tensor]:
        """Parameters under Hugging Face BertForMaskedLM names (decoder tied, so not stored)."""
        out = {name: p for name, p in self.named_parameters() if name != "decoder_bias"}
        out["cls.predictions.bias"] = self.decoder_bias
        return out


def load_bert(folder: Path) -> Bert:
    """The config.json and F16 model.safetensors of a folder train_bert.py wrote, as a float32 Bert (eval mode)."""
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    model = Bert(BertConfig(vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"], num_hidden_layers=cfg["num_hidden_layers"],
                            num_attention_heads=cfg["num_attention_heads"], intermediate_size=cfg["intermediate_size"],
                            max_position_embeddings=cfg["max_position_embeddings"], type_vocab_size=cfg["type_vocab_size"],
                            layer_norm_eps=cfg["layer_norm_eps"], pad_token_id=cfg["pad_token_id"]))
    tensors = read_safetensors(folder / "model.safetensors")
    tensors["decoder_bias"] = tensors.pop("cls.predictions.bias")
    model.load_state_dict(tensors)
    return model.eval()
