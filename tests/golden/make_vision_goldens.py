#!/usr/bin/python3
"""Builds the small random vision transformers of tests/golden/models/ (ViT with
a classifier on a non-square grid, a bare ViTModel with its pooler and
non-square patches, DeiT with its distillation token and teacher heads,
DINOv2 with positions learned at 518 pixels read at 224, DINOv2 with
registers and the SwiGLU MLP), each with a picture and its golden outputs,
and the malformed pictures of tests/golden/pictures/.

Run with Debian's PyTorch and Pillow (python3-torch, libopenblas0-pthread,
python3-pil):
    /usr/bin/python3 tests/golden/make_vision_goldens.py

Each folder holds what a Hugging Face model folder holds (config.json,
preprocessor_config.json, model.safetensors) plus:
- picture.png: a generated picture (gradients, shapes and noise);
- seen.png: that picture as the model sees it, made the way transformers'
  image processors make it (Pillow's Image.resize with the processor's
  resampling, transformers' center crop with zero padding);
- golden.json: the pixel values of seen.png's first row (rescaled and
  normalised as numpy does it in transformers), every hidden state's first and
  last rows, the logits and top-5 labels of a classifier;
- attentions.npy: every layer's and head's attention [L, H, T, T], float32.
tests/golden/pictures/ also holds good.png resized by Pillow with each of its
six filters, down and up (resized-FILTER-WxH.png).
The forward pass is written from the published architectures and
transformers' code (ViT: Dosovitskiy et al. 2021, pre-LN blocks, a Conv2d
patch embedding, CLS; DeiT: Touvron et al. 2021, the distillation token and
the mean of two classifiers; DINOv2: Oquab et al. 2023, layer scale, the
SwiGLU MLP of Dinov2SwiGLUFFN, the classifier over [CLS, mean of the
patches], the position table resized by torch's bicubic interpolation;
registers: Darcet et al. 2023, tokens after CLS without positions, the
antialiased interpolation), in float64 on the exact values stored in the file
(F16/BF16 weights rounded first). It shares no code with attnplay's runtime.
CI does not run this script; it only uses its committed output.
"""
import json
import math
import os
import struct
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image, ImageDraw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model_goldens import Checkpoint, attention, rounded  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "models")
PICTURES = os.path.join(HERE, "pictures")

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]

# ---------------------------------------------------------------- pictures


def generated_picture(width, height, seed):
    """An RGB picture with structure at every scale: two gradients, a few filled shapes, pixel noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([255 * x / max(width - 1, 1), 255 * y / max(height - 1, 1),
                     127 + 127 * np.sin((x + 2 * y) / 5.0)], axis=-1)
    image = Image.fromarray(base.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(4):
        x0, y0 = rng.integers(0, width), rng.integers(0, height)
        x1, y1 = x0 + rng.integers(2, max(3, width // 2)), y0 + rng.integers(2, max(3, height // 2))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)([x0, y0, x1, y1], fill=colour)
    noisy = np.asarray(image).astype(np.int16) + rng.integers(-12, 13, size=(height, width, 3))
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8), "RGB")


# ---------------------------------------------------------------- preprocessing, as transformers does it


def resize_size(image, proc):
    """(height, width) of transformers' resize: size {height, width}, or the shortest edge with the longer
    side in proportion, rounded down (get_resize_output_image_size with default_to_square=False)."""
    if "shortest_edge" in proc["size"]:
        short_target = proc["size"]["shortest_edge"]
        w, h = image.size
        short, long = (w, h) if w <= h else (h, w)
        new_long = int(short_target * long / short)
        return (new_long, short_target) if w <= h else (short_target, new_long)
    return proc["size"]["height"], proc["size"]["width"]


def center_crop(array, crop_h, crop_w):
    """transformers' center_crop of an [H, W, C] array, padding with zeros where the crop is larger."""
    h, w = array.shape[:2]
    top, left = (h - crop_h) // 2, (w - crop_w) // 2
    if top >= 0 and left >= 0 and top + crop_h <= h and left + crop_w <= w:
        return array[top:top + crop_h, left:left + crop_w]
    new_h, new_w = max(crop_h, h), max(crop_w, w)
    padded = np.zeros((new_h, new_w) + array.shape[2:], dtype=array.dtype)
    top_pad, left_pad = math.ceil((new_h - h) / 2), math.ceil((new_w - w) / 2)
    padded[top_pad:top_pad + h, left_pad:left_pad + w] = array
    top, left = top + top_pad, left + left_pad
    return padded[max(0, top):min(new_h, top + crop_h), max(0, left):min(new_w, left + crop_w)]


def preprocess(image, proc):
    """seen [H, W, 3] uint8 (resized and cropped) and pixel values [3, H, W] float32."""
    image = image.convert("RGB")
    if proc.get("do_resize", True):
        h, w = resize_size(image, proc)
        image = image.resize((w, h), resample=proc["resample"], reducing_gap=None)
    seen = np.asarray(image)
    if proc.get("do_center_crop", False):
        seen = center_crop(seen, proc["crop_size"]["height"], proc["crop_size"]["width"])
    pixels = (seen.astype(np.float64) * proc.get("rescale_factor", 1 / 255)).astype(np.float32)
    mean = np.array(proc["image_mean"], dtype=np.float32)
    std = np.array(proc["image_std"], dtype=np.float32)
    pixels = (pixels - mean) / std
    return seen, pixels.transpose(2, 0, 1)


# ---------------------------------------------------------------- the reference forward pass


def layer_norm(x, w, prefix, eps):
    return F.layer_norm(x, x.shape[-1:], w[prefix + ".weight"], w[prefix + ".bias"], eps)


def linear(x, w, prefix, bias=True):
    y = x @ w[prefix + ".weight"].T
    return y + w[prefix + ".bias"] if bias else y


def resized_positions(table, lead, grid_h, grid_w, antialias):
    """The table's patch rows as a square grid, resized to grid_h × grid_w as transformers' DINOv2 does (in
    float32, torch's bicubic interpolation), the lead rows (CLS) unchanged."""
    n = table.shape[0] - lead
    side = int(math.sqrt(n))
    if side * side == n and side == grid_h == grid_w:
        return table
    grid = table[lead:].reshape(1, side, side, -1).permute(0, 3, 1, 2).to(torch.float32)
    grid = F.interpolate(grid, size=(grid_h, grid_w), mode="bicubic", align_corners=False, antialias=antialias)
    return torch.cat([table[:lead], grid.to(torch.float64).permute(0, 2, 3, 1).reshape(grid_h * grid_w, -1)])


def vision_forward(w, cfg, spec, pixels):
    """Hidden states (embeddings, then each layer's output), attentions [L, H, T, T], logits or None."""
    p = spec["prefix"]
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    patch = cfg["patch_size"] if isinstance(cfg["patch_size"], list) else [cfg["patch_size"]] * 2
    x = torch.tensor(pixels, dtype=torch.float64)[None]
    kernel = w[p + "embeddings.patch_embeddings.projection.weight"]
    patches = F.conv2d(x, kernel, w[p + "embeddings.patch_embeddings.projection.bias"], stride=patch)
    grid_h, grid_w = patches.shape[2:]
    patches = patches.flatten(2).transpose(1, 2)[0]  # [N, d]
    lead = [w[p + "embeddings.cls_token"].reshape(1, d)]
    if spec["kind"] == "deit":
        lead.append(w[p + "embeddings.distillation_token"].reshape(1, d))
    h = torch.cat(lead + [patches])
    table = w[p + "embeddings.position_embeddings"][0]
    if spec["kind"].startswith("dinov2"):
        table = resized_positions(table, 1, grid_h, grid_w, antialias=spec["kind"] == "dinov2_with_registers")
    h = h + table
    if spec["kind"] == "dinov2_with_registers":
        h = torch.cat([h[:1], w[p + "embeddings.register_tokens"][0], h[1:]])
    eps = cfg["layer_norm_eps"]
    dinov2 = spec["kind"].startswith("dinov2")
    hidden, weights = [h], []
    for l in range(cfg["num_hidden_layers"]):
        b = f"{p}encoder.layer.{l}."
        x = layer_norm(h, w, b + ("norm1" if dinov2 else "layernorm_before"), eps)
        qkv = []
        for name in ("query", "key", "value"):
            bias = w.get(b + f"attention.attention.{name}.bias", torch.zeros(d, dtype=torch.float64))
            qkv += [w[b + f"attention.attention.{name}.weight"].T, bias]
        out, a, _ = attention(x, *qkv, heads=H, causal=False)
        out = linear(out, w, b + "attention.output.dense")
        if dinov2:
            out = out * w[b + "layer_scale1.lambda1"]
        h = h + out
        weights.append(a)
        x = layer_norm(h, w, b + ("norm2" if dinov2 else "layernorm_after"), eps)
        if dinov2 and cfg.get("use_swiglu_ffn"):
            x1, x2 = linear(x, w, b + "mlp.weights_in").chunk(2, dim=-1)
            m = linear(F.silu(x1) * x2, w, b + "mlp.weights_out")
        elif dinov2:
            m = linear(F.gelu(linear(x, w, b + "mlp.fc1")), w, b + "mlp.fc2")
        else:
            m = linear(F.gelu(linear(x, w, b + "intermediate.dense")), w, b + "output.dense")
        if dinov2:
            m = m * w[b + "layer_scale2.lambda1"]
        h = h + m
        hidden.append(h)
    final = layer_norm(h, w, p + "layernorm", eps)
    logits = None
    if "cls_classifier.weight" in w:
        logits = (linear(final[:1], w, "cls_classifier") + linear(final[1:2], w, "distillation_classifier")) / 2
    elif "classifier.weight" in w and dinov2:
        registers = cfg.get("num_register_tokens", 0) if spec["kind"] == "dinov2_with_registers" else 0
        pooled = torch.cat([final[0], final[1 + registers:].mean(dim=0)])[None]
        logits = linear(pooled, w, "classifier")
    elif "classifier.weight" in w:
        logits = linear(final[:1], w, "classifier")
    return hidden, torch.stack(weights), logits, (grid_h, grid_w)


# ---------------------------------------------------------------- checkpoints


def vision_weights(ck, cfg, spec):
    p = spec["prefix"]
    d = cfg["hidden_size"]
    C = cfg.get("num_channels", 3)
    patch = cfg["patch_size"] if isinstance(cfg["patch_size"], list) else [cfg["patch_size"]] * 2
    image = cfg["image_size"] if isinstance(cfg["image_size"], list) else [cfg["image_size"]] * 2
    grid = (image[0] // patch[0]) * (image[1] // patch[1])
    kind = spec["kind"]
    dinov2 = kind.startswith("dinov2")
    ck.normal(p + "embeddings.cls_token", (1, 1, d), 0.5)
    if kind == "deit":
        ck.normal(p + "embeddings.distillation_token", (1, 1, d), 0.5)
    if dinov2:
        ck.normal(p + "embeddings.mask_token", (1, d), 0.5)  # in every DINOv2 checkpoint, unused by inference
    if kind == "dinov2_with_registers":
        ck.normal(p + "embeddings.register_tokens", (1, cfg["num_register_tokens"], d), 0.5)
    lead = 2 if kind == "deit" else 1
    ck.normal(p + "embeddings.position_embeddings", (1, lead + grid, d), 0.5)
    ck.normal(p + "embeddings.patch_embeddings.projection.weight", (d, C, patch[0], patch[1]), 1.0 / math.sqrt(C * patch[0] * patch[1]))
    ck.normal(p + "embeddings.patch_embeddings.projection.bias", (d,), 0.1)
    if dinov2:
        hidden = int(d * cfg.get("mlp_ratio", 4))
        inner = (int(hidden * 2 / 3) + 7) // 8 * 8 if cfg.get("use_swiglu_ffn") else hidden
    else:
        inner = cfg["intermediate_size"]
    for l in range(cfg["num_hidden_layers"]):
        b = f"{p}encoder.layer.{l}."
        ck.layer_norm(b + ("norm1" if dinov2 else "layernorm_before"), d)
        for name in ("query", "key", "value"):
            ck.normal(b + f"attention.attention.{name}.weight", (d, d), 1.0 / math.sqrt(d))
            if cfg.get("qkv_bias", True):
                ck.normal(b + f"attention.attention.{name}.bias", (d,), 0.1)
        ck.normal(b + "attention.output.dense.weight", (d, d), 1.0 / math.sqrt(d))
        ck.normal(b + "attention.output.dense.bias", (d,), 0.1)
        ck.layer_norm(b + ("norm2" if dinov2 else "layernorm_after"), d)
        if dinov2 and cfg.get("use_swiglu_ffn"):
            ck.normal(b + "mlp.weights_in.weight", (2 * inner, d), 1.0 / math.sqrt(d))
            ck.normal(b + "mlp.weights_in.bias", (2 * inner,), 0.1)
            ck.normal(b + "mlp.weights_out.weight", (d, inner), 1.0 / math.sqrt(inner))
            ck.normal(b + "mlp.weights_out.bias", (d,), 0.1)
        else:
            up, down = ("mlp.fc1", "mlp.fc2") if dinov2 else ("intermediate.dense", "output.dense")
            ck.normal(b + up + ".weight", (inner, d), 1.0 / math.sqrt(d))
            ck.normal(b + up + ".bias", (inner,), 0.1)
            ck.normal(b + down + ".weight", (d, inner), 1.0 / math.sqrt(inner))
            ck.normal(b + down + ".bias", (d,), 0.1)
        if dinov2:
            ck.normal(b + "layer_scale1.lambda1", (d,), 0.3, 1.0)
            ck.normal(b + "layer_scale2.lambda1", (d,), 0.3, 1.0)
    ck.layer_norm(p + "layernorm", d)
    if spec.get("pooler"):
        ck.normal(p + "pooler.dense.weight", (d, d), 1.0 / math.sqrt(d))
        ck.normal(p + "pooler.dense.bias", (d,), 0.1)
    labels = len(cfg.get("id2label", {}))
    if spec.get("head") == "teacher":
        for name in ("cls_classifier", "distillation_classifier"):
            ck.normal(name + ".weight", (labels, d), 1.0)
            ck.normal(name + ".bias", (labels,), 0.5)
    elif spec.get("head") == "classifier":
        width = 2 * d if dinov2 else d
        ck.normal("classifier.weight", (labels, width), 1.0)
        ck.normal("classifier.bias", (labels,), 0.5)


def labels(names):
    return {str(i): name for i, name in enumerate(names)}


CASES = [
    {"name": "vit-classifier-nonsquare-f32", "kind": "vit", "prefix": "vit.", "dtype": "F32", "head": "classifier",
     "config": {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": 24,
                "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 48, "image_size": [32, 48],
                "patch_size": 8, "layer_norm_eps": 1e-12, "hidden_act": "gelu", "qkv_bias": True,
                "id2label": labels(["tench", "goldfish", "great white shark", "tiger shark", "hammerhead",
                                    "electric ray", "stingray"])},
     "processor": {"image_processor_type": "ViTImageProcessor", "do_resize": True, "size": {"height": 32, "width": 48},
                   "resample": 2, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
                   "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
     "picture": (75, 50)},
    {"name": "vit-bare-pooler-f16", "kind": "vit", "prefix": "", "dtype": "F16", "pooler": True,
     "config": {"model_type": "vit", "architectures": ["ViTModel"], "hidden_size": 16, "num_hidden_layers": 2,
                "num_attention_heads": 2, "intermediate_size": 32, "image_size": [16, 32], "patch_size": [4, 8],
                "layer_norm_eps": 1e-12, "hidden_act": "gelu", "qkv_bias": False},
     # The older feature extractor's spelling; the picture is upscaled.
     "processor": {"feature_extractor_type": "ViTFeatureExtractor", "do_resize": True, "size": [16, 32],
                   "resample": 3, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
     "picture": (13, 9)},
    {"name": "deit-distilled-teacher-bf16", "kind": "deit", "prefix": "deit.", "dtype": "BF16", "head": "teacher",
     "config": {"model_type": "deit", "architectures": ["DeiTForImageClassificationWithTeacher"], "hidden_size": 16,
                "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32, "image_size": 32,
                "patch_size": 8, "layer_norm_eps": 1e-12, "hidden_act": "gelu", "qkv_bias": True,
                "id2label": labels(["circle", "square", "triangle", "star", "cross", "ring"])},
     "processor": {"image_processor_type": "DeiTImageProcessor", "do_resize": True, "size": 40, "resample": 3,
                   "do_center_crop": True, "crop_size": 32, "do_normalize": True, "image_mean": IMAGENET_MEAN,
                   "image_std": IMAGENET_STD},
     "picture": (64, 80)},
    {"name": "dinov2-518-to-224-f32", "kind": "dinov2", "prefix": "dinov2.", "dtype": "F32", "head": "classifier",
     "config": {"model_type": "dinov2", "architectures": ["Dinov2ForImageClassification"], "hidden_size": 16,
                "num_hidden_layers": 1, "num_attention_heads": 2, "mlp_ratio": 4, "image_size": 518,
                "patch_size": 14, "layer_norm_eps": 1e-6, "hidden_act": "gelu", "layerscale_value": 1.0,
                "use_swiglu_ffn": False, "id2label": labels(["red", "green", "blue"])},
     "processor": {"image_processor_type": "BitImageProcessor", "do_convert_rgb": True, "do_resize": True,
                   "size": {"shortest_edge": 256}, "resample": 3, "do_center_crop": True,
                   "crop_size": {"height": 224, "width": 224}, "do_rescale": True,
                   "rescale_factor": 0.00392156862745098, "do_normalize": True, "image_mean": IMAGENET_MEAN,
                   "image_std": IMAGENET_STD},
     "picture": (150, 125)},
    {"name": "dinov2-registers-swiglu-bf16", "kind": "dinov2_with_registers", "prefix": "", "dtype": "BF16",
     "config": {"model_type": "dinov2_with_registers", "architectures": ["Dinov2WithRegistersModel"],
                "hidden_size": 24, "num_hidden_layers": 2, "num_attention_heads": 3, "mlp_ratio": 4,
                "image_size": 518, "patch_size": 14, "layer_norm_eps": 1e-6, "hidden_act": "gelu",
                "use_swiglu_ffn": True, "num_register_tokens": 4},
     "processor": {"image_processor_type": "BitImageProcessor", "do_resize": True, "size": {"shortest_edge": 64},
                   "resample": 3, "do_center_crop": True, "crop_size": {"height": 56, "width": 56},
                   "do_normalize": True, "image_mean": IMAGENET_MEAN, "image_std": IMAGENET_STD},
     "picture": (40, 70)},
]


def processor_for_reference(proc):
    """The processor's keys as the class reads them (an integer size: a square for ViT and DeiT, [h, w] a pair)."""
    out = dict(proc)
    size = proc["size"]
    if isinstance(size, int):
        out["size"] = {"height": size, "width": size}
    elif isinstance(size, list):
        out["size"] = {"height": size[0], "width": size[1]}
    crop = proc.get("crop_size")
    if isinstance(crop, int):
        out["crop_size"] = {"height": crop, "width": crop}
    return out


def build(case, seed):
    folder = os.path.join(OUT, case["name"])
    os.makedirs(folder, exist_ok=True)
    cfg = case["config"]
    ck = Checkpoint(seed, case["dtype"])
    vision_weights(ck, cfg, case)
    picture = generated_picture(*case["picture"], seed=seed)
    seen, pixels = preprocess(picture, processor_for_reference(case["processor"]))
    hidden, weights, logits, grid = vision_forward(ck.w, cfg, case, pixels)
    golden = {"model": case["name"], "grid": list(grid), "tokens": int(weights.shape[-1]),
              "pixels_first_row": rounded(torch.tensor(pixels[:, 0, :], dtype=torch.float64)),
              "hidden_first_rows": [rounded(h[0]) for h in hidden],
              "hidden_last_rows": [rounded(h[-1]) for h in hidden]}
    if logits is not None:
        golden["logits"] = rounded(logits[0])
        golden["top5"] = [int(i) for i in torch.argsort(logits[0], descending=True, stable=True)[:5]]
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(case["processor"], f, indent=2)
    ck.write(folder)
    picture.save(os.path.join(folder, "picture.png"))
    Image.fromarray(seen, "RGB").save(os.path.join(folder, "seen.png"))
    np.save(os.path.join(folder, "attentions.npy"), weights.numpy().astype("<f4"))
    with open(os.path.join(folder, "golden.json"), "w") as f:
        json.dump(golden, f, separators=(",", ":"))


# ---------------------------------------------------------------- malformed pictures


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_header_only(width, height):
    """A PNG signature and IHDR for width × height RGB, then an IDAT of a few rows only and IEND."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\0" + b"\0" * 3 * min(width, 4))
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", rows) + png_chunk(b"IEND", b"")


def malformed_pictures():
    os.makedirs(PICTURES, exist_ok=True)
    good = generated_picture(40, 30, seed=7)
    good.save(os.path.join(PICTURES, "good.png"))
    whole = open(os.path.join(PICTURES, "good.png"), "rb").read()
    with open(os.path.join(PICTURES, "truncated.png"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    with open(os.path.join(PICTURES, "zero-by-zero.png"), "wb") as f:
        f.write(png_header_only(0, 0))
    with open(os.path.join(PICTURES, "20000-by-20000.png"), "wb") as f:
        f.write(png_header_only(20000, 20000))
    good.convert("CMYK").save(os.path.join(PICTURES, "cmyk.jpg"), quality=95)
    frames = [Image.new("RGB", (16, 12), colour) for colour in ((200, 30, 40), (20, 40, 210))]
    frames[0].save(os.path.join(PICTURES, "animated.gif"), save_all=True, append_images=frames[1:], duration=100, loop=0)
    for name, resample in (("nearest", Image.NEAREST), ("lanczos", Image.LANCZOS), ("bilinear", Image.BILINEAR),
                           ("bicubic", Image.BICUBIC), ("box", Image.BOX), ("hamming", Image.HAMMING)):
        for size in ((17, 11), (40, 61), (40, 13), (25, 30), (90, 70)):
            resized = good.resize(size, resample=resample, reducing_gap=None)
            resized.save(os.path.join(PICTURES, f"resized-{name}-{size[0]}x{size[1]}.png"))
    with open(os.path.join(PICTURES, "not-a-picture.png"), "wb") as f:
        f.write(b"<html>this is a web page, not a picture</html>")


def main():
    torch.manual_seed(0)
    for seed, case in enumerate(CASES):
        build(case, seed=600 + seed)
    malformed_pictures()


if __name__ == "__main__":
    main()
