"""Attention written compactly into the page, in the widget's base64 tensor forms.

Two encodings, chosen by size (``encode``):
- ``float16`` (IEEE half, little-endian) up to ``FLOAT16_LIMIT`` values:
  a weight in [0, 1] is off by at most 2**-12 (half a unit in the last place
  of a half in [0.5, 1]; less for smaller weights, relative error <= 2**-11).
- ``uint8`` beyond it: each row of the last axis stores round(w / s) with
  s = (the row's largest weight) / 255, so a weight is off by at most s / 2,
  i.e. 1/510 of its row's largest weight; the row scales travel as float32.
The widget decodes both (web/attention/attention-data-source.js). Queries and
keys (the neuron view) are always float16.
Not here: reading the caller's arrays (_tensors.py).
"""
import base64
import math
import struct
from array import array

FLOAT16_LIMIT = 2 ** 21  # values; 4 MB of float16, ~5.6 MB of base64
UINT8_STEP = 255


def _numpy_values(grid):
    try:
        import numpy
    except ImportError:
        return None, None
    return (numpy, grid.values) if isinstance(grid.values, numpy.ndarray) else (None, None)


def float16(grid):
    """{"dtype": "float16", "shape", "base64"}."""
    np, values = _numpy_values(grid)
    if np is not None:
        raw = values.astype('<f2').tobytes()
    else:
        raw = struct.pack(f'<{grid.count}e', *(min(max(v, -65504.0), 65504.0) if math.isfinite(v) else v for v in grid.values))
    return {'dtype': 'float16', 'shape': list(grid.shape), 'base64': base64.b64encode(raw).decode('ascii')}


def uint8_rows(grid):
    """{"dtype": "uint8", "shape", "base64", "scales"}: each row's weights over its largest / 255."""
    width = grid.shape[-1]
    rows = grid.count // width
    np, values = _numpy_values(grid)
    if np is not None:
        matrix = values.reshape(rows, width)
        scales = (matrix.max(axis=1) / UINT8_STEP).astype(np.float32)
        safe = np.where(scales > 0, scales, 1).astype(np.float32)
        codes = np.clip(np.rint(matrix / safe[:, None]), 0, UINT8_STEP).astype(np.uint8)
        raw, scale_bytes = codes.tobytes(), scales.astype('<f4').tobytes()
    else:
        codes = bytearray(grid.count)
        scales = array('f')
        for row in range(rows):
            part = grid.values[row * width:(row + 1) * width]
            scale = array('f', [max(part) / UINT8_STEP])[0]  # rounded to float32, as the widget reads it
            scales.append(scale)
            for i, w in enumerate(part):
                codes[row * width + i] = min(UINT8_STEP, max(0, round(w / scale))) if scale > 0 else 0
        raw, scale_bytes = bytes(codes), scales.tobytes()  # array('f') is native order: little-endian on every supported host
    return {'dtype': 'uint8', 'shape': list(grid.shape), 'base64': base64.b64encode(raw).decode('ascii'),
            'scales': base64.b64encode(scale_bytes).decode('ascii')}


def encode(grid, encoding='auto'):
    """The widget's tensor form of an attention grid: float16 when small (or asked), else uint8 per row."""
    if encoding == 'auto':
        encoding = 'float16' if grid.count <= FLOAT16_LIMIT else 'uint8'
    if encoding == 'float16':
        return float16(grid)
    if encoding == 'uint8':
        return uint8_rows(grid)
    raise ValueError(f"encoding must be 'auto', 'float16' or 'uint8', not {encoding!r}")
