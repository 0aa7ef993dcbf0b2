"""Marian (opus-mt) encoder-decoder in PyTorch with Hugging Face's parameter names.

What it is: the model trained as `gettext-en-fr` (Vaswani et al. 2017 as
Marian NMT and Hugging Face's MarianMTModel run it: token embeddings shared by
encoder, decoder and the output layer, scaled by sqrt(d_model); fixed
sinusoidal positions, sines in the first half of each vector and cosines in
the second; post-layer-norm blocks; SiLU ("swish") feed-forward; a decoder
with causal self-attention then cross-attention over the encoder's output;
logits plus `final_logits_bias`), written from the published architecture.
Its hf_state_dict() uses the `model.encoder.layers.N.self_attn.q_proj` names
of MarianMTModel, so the saved model.safetensors loads in Hugging Face and in
attnplay's runtime alike. What it is not: a loader of other checkpoints, or a
translation search (train_marian.py decodes greedily for its metrics).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class MarianConfig:
    vocab_size: int
    pad_token_id: int
    eos_token_id: int
    d_model: int = 192
    layers: int = 3  # encoder and decoder each
    heads: int = 4
    ffn_dim: int = 768
    max_positions: int = 256
    dropout: float = 0.1

    def hf_config(self) -> dict:
        return {
            "architectures": ["MarianMTModel"], "model_type": "marian", "vocab_size": self.vocab_size,
            "d_model": self.d_model, "encoder_layers": self.layers, "decoder_layers": self.layers,
            "encoder_attention_heads": self.heads, "decoder_attention_heads": self.heads,
            "encoder_ffn_dim": self.ffn_dim, "decoder_ffn_dim": self.ffn_dim, "activation_function": "swish",
            "max_position_embeddings": self.max_positions, "scale_embedding": True, "static_position_embeddings": True,
            "normalize_before": False, "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True,
            "pad_token_id": self.pad_token_id, "eos_token_id": self.eos_token_id,
            "decoder_start_token_id": self.pad_token_id, "forced_eos_token_id": self.eos_token_id,
            "dropout": self.dropout, "attention_dropout": 0.0, "activation_dropout": 0.0,
            "is_encoder_decoder": True, "torch_dtype": "float16",
        }


def marian_sinusoids(positions: int, width: int) -> torch.Tensor:
    """Marian's fixed positions [positions, width]: angle(p, j) = p / 10000^(2*floor(j/2)/width);
    sin of the even-j angles fill the first half, cos of the odd-j angles the second."""
    p = torch.arange(positions, dtype=torch.float64)[:, None]
    j = torch.arange(width, dtype=torch.float64)[None]
    angle = p / torch.pow(10000.0, 2 * torch.div(j, 2, rounding_mode="floor") / width)  # [positions, width]
    half = width // 2
    table = torch.zeros(positions, width, dtype=torch.float64)
    table[:, :half] = torch.sin(angle[:, 0::2])
    table[:, half:] = torch.cos(angle[:, 1::2])
    return table.float()


class Attention(nn.Module):
    def __init__(self, cfg: MarianConfig) -> None:
        super().__init__()
        self.heads = cfg.heads
        d = cfg.d_model
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None, want_weights: bool):
        """x [B, T, d] queries, memory [B, S, d] keys/values (x itself for self-attention),
        mask broadcastable to [B, H, T, S] (True = may attend) -> ([B, T, d], weights [B, H, T, S] or None)."""
        b, t, d = x.shape
        s = memory.shape[1]
        dk = d // self.heads
        q = self.q_proj(x).view(b, t, self.heads, dk).transpose(1, 2) * dk ** -0.5  # [B, H, T, dk]
        k = self.k_proj(memory).view(b, s, self.heads, dk).transpose(1, 2)  # [B, H, S, dk]
        v = self.v_proj(memory).view(b, s, self.heads, dk).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)  # [B, H, T, S]
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.out_proj(out), (weights if want_weights else None)


class EncoderLayer(nn.Module):
    def __init__(self, cfg: MarianConfig) -> None:
        super().__init__()
        self.self_attn = Attention(cfg)
        self.self_attn_layer_norm = nn.LayerNorm(cfg.d_model)
        self.fc1 = nn.Linear(cfg.d_model, cfg.ffn_dim)
        self.fc2 = nn.Linear(cfg.ffn_dim, cfg.d_model)
        self.final_layer_norm = nn.LayerNorm(cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x, mask, want_weights):
        a, w = self.self_attn(x, x, mask, want_weights)
        x = self.self_attn_layer_norm(x + self.dropout(a))  # post-LN
        x = self.final_layer_norm(x + self.dropout(self.fc2(F.silu(self.fc1(x)))))
        return x, w


class DecoderLayer(nn.Module):
    def __init__(self, cfg: MarianConfig) -> None:
        super().__init__()
        self.self_attn = Attention(cfg)
        self.self_attn_layer_norm = nn.LayerNorm(cfg.d_model)
        self.encoder_attn = Attention(cfg)
        self.encoder_attn_layer_norm = nn.LayerNorm(cfg.d_model)
        self.fc1 = nn.Linear(cfg.d_model, cfg.ffn_dim)
        self.fc2 = nn.Linear(cfg.ffn_dim, cfg.d_model)
        self.final_layer_norm = nn.LayerNorm(cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x, memory, causal, memory_mask, want_weights):
        a, w_self = self.self_attn(x, x, causal, want_weights)
        x = self.self_attn_layer_norm(x + self.dropout(a))
        a, w_cross = self.encoder_attn(x, memory, memory_mask, want_weights)
        x = self.encoder_attn_layer_norm(x + self.dropout(a))
        x = self.final_layer_norm(x + self.dropout(self.fc2(F.silu(self.fc1(x)))))
        return x, w_self, w_cross


class Marian(nn.Module):
    def __init__(self, cfg: MarianConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.shared = nn.Embedding(cfg.vocab_size, cfg.d_model)
        nn.init.normal_(self.shared.weight, std=cfg.d_model ** -0.5)  # x sqrt(d) -> unit-size inputs
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.layers))
        self.final_logits_bias = nn.Parameter(torch.zeros(1, cfg.vocab_size))
        self.register_buffer("positions", marian_sinusoids(cfg.max_positions, cfg.d_model), persistent=False)
        self.dropout = nn.Dropout(cfg.dropout)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.shared(ids) * math.sqrt(self.cfg.d_model) + self.positions[: ids.shape[1]])  # [B, T, d]

    def encode(self, src: torch.Tensor, want_weights: bool = False):
        """src [B, S] -> (memory [B, S, d], [weights [B, H, S, S] per layer]). Pads are never attended to."""
        mask = (src != self.cfg.pad_token_id)[:, None, None, :]  # [B, 1, 1, S]
        x, weights = self.embed(src), []
        for layer in self.encoder_layers:
            x, w = layer(x, mask, want_weights)
            weights.append(w)
        return x, weights

    def decode(self, memory: torch.Tensor, src: torch.Tensor, tgt: torch.Tensor, want_weights: bool = False):
        """tgt [B, T] decoder inputs -> (logits [B, T, V], [self [B, H, T, T]], [cross [B, H, T, S]])."""
        t = tgt.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=tgt.device).tril()[None, None]  # [1, 1, T, T]
        memory_mask = (src != self.cfg.pad_token_id)[:, None, None, :]
        x, selfs, crosses = self.embed(tgt), [], []
        for layer in self.decoder_layers:
            x, w_self, w_cross = layer(x, memory, causal, memory_mask, want_weights)
            selfs.append(w_self)
            crosses.append(w_cross)
        logits = x @ self.shared.weight.T + self.final_logits_bias  # tied output layer, [B, T, V]
        return logits, selfs, crosses

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, want_weights: bool = False):
        memory, enc = self.encode(src, want_weights)
        logits, selfs, crosses = self.decode(memory, src, tgt, want_weights)
        return logits, enc, selfs, crosses

    def hf_state_dict(self) -> dict[str, torch.Tensor]:
        """Parameters under MarianMTModel's names. The shared embedding is stored
        once as model.shared.weight (encoder/decoder embed_tokens and lm_head are
        tied to it); positions are not stored (static sinusoids)."""
        out = {"model.shared.weight": self.shared.weight, "final_logits_bias": self.final_logits_bias}
        for side, layers in (("encoder", self.encoder_layers), ("decoder", self.decoder_layers)):
            for i, layer in enumerate(layers):
                for name, p in layer.named_parameters():
                    out[f"model.{side}.layers.{i}.{name}"] = p
        return out

    def load_hf_state_dict(self, tensors: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for name, p in self.hf_state_dict().items():
                p.copy_(tensors[name])
