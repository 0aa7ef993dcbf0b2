"""A ViT for image classification with Hugging Face's ViTForImageClassification
parameter names and arithmetic (Conv2d patch embedding, CLS token, learned
positions, pre-LN blocks with exact GELU, a final LayerNorm, a linear
classifier on the CLS row), so that its weights load as a "vit" model folder
in attnplay and in transformers alike.

What it is not: the data (shapes.py) or the training loop (train_shapes_vit.py).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int, inner: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.layernorm_before = nn.LayerNorm(d, eps=eps)
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.layernorm_after = nn.LayerNorm(d, eps=eps)
        self.intermediate = nn.Linear(d, inner)
        self.output = nn.Linear(inner, d)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, d = h.shape
        x = self.layernorm_before(h)
        split = lambda t: t.view(B, T, self.heads, d // self.heads).transpose(1, 2)  # [B, H, T, d_k]
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        weights = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)  # [B, H, T, T]
        h = h + self.out((weights @ v).transpose(1, 2).reshape(B, T, d))
        h = h + self.output(F.gelu(self.intermediate(self.layernorm_after(h))))
        return h, weights


class ViT(nn.Module):
    def __init__(self, image: int, patch: int, d: int, layers: int, heads: int, inner: int, labels: int,
                 eps: float = 1e-12) -> None:
        super().__init__()
        self.projection = nn.Conv2d(3, d, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.position_embeddings = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, heads, inner, eps) for _ in range(layers))
        self.layernorm = nn.LayerNorm(d, eps=eps)
        self.classifier = nn.Linear(d, labels)

    def forward(self, pixels: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """pixels [B, 3, H, W] -> logits [B, labels] and each layer's attention [B, H, T, T]."""
        patches = self.projection(pixels).flatten(2).transpose(1, 2)  # [B, N, d]
        h = torch.cat([self.cls_token.expand(len(pixels), -1, -1), patches], dim=1) + self.position_embeddings
        attentions = []
        for block in self.blocks:
            h, weights = block(h)
            attentions.append(weights)
        return self.classifier(self.layernorm(h)[:, 0]), attentions

    def hugging_face_tensors(self) -> dict[str, torch.Tensor]:
        """The parameters under ViTForImageClassification's names."""
        t = {"vit.embeddings.cls_token": self.cls_token, "vit.embeddings.position_embeddings": self.position_embeddings,
             "vit.embeddings.patch_embeddings.projection.weight": self.projection.weight,
             "vit.embeddings.patch_embeddings.projection.bias": self.projection.bias,
             "vit.layernorm.weight": self.layernorm.weight, "vit.layernorm.bias": self.layernorm.bias,
             "classifier.weight": self.classifier.weight, "classifier.bias": self.classifier.bias}
        for i, b in enumerate(self.blocks):
            p = f"vit.encoder.layer.{i}."
            for ours, theirs in (("layernorm_before", "layernorm_before"), ("query", "attention.attention.query"),
                                 ("key", "attention.attention.key"), ("value", "attention.attention.value"),
                                 ("out", "attention.output.dense"), ("layernorm_after", "layernorm_after"),
                                 ("intermediate", "intermediate.dense"), ("output", "output.dense")):
                module = getattr(b, ours)
                t[p + theirs + ".weight"] = module.weight
                t[p + theirs + ".bias"] = module.bias
        return t
