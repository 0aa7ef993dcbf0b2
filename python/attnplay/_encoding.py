"""Attention written compactly into the page, in the widget's base64 tensor forms.

Two encodings, chosen by size (``encode``):
- ``float16`` (IEEE half, little-endian) up to ``FLOAT16_LIMIT`` values:
  a weight in [0, 1] is off by at most 2**-12 (half a unit in the last place
  of a half in [0.5, 1]; less for smaller weights, relative error <= 2**-11).
- ``uint8`` beyond it: each row of the last axis stores round(w / s) with
  s = (the row's largest weight) / 255, so a weight is off by at most s / 2,
  i.e. 1/510 of its row's largest weight; the row scales travel as float32.
Causal attention (every value above the diagonal 0) is written as the lower
triangle of each matrix only ("triangle": "lower"), which halves it. The
widget decodes all of these (web/attention/attention-data-source.js). Queries
and keys (the neuron view) are always float16.
Not here: reading the caller's arrays (_tensors.py).
"""
import base64
import math
import struct
from array import array

FLOAT16_LIMIT = 2 ** 21  # values; 4 MB of float16, ~5.6 MB of base64
UINT8_MAX = 255


def lower_triangular(grid):
    """True when the grid's last two axes are square and every value above their diagonal is 0 (causal attention)."""
    if len(grid.shape) < 2 or grid.shape[-1] != grid.shape[-2]:
        return False
    t = grid.shape[-1]
    np = grid.np
    if np is not None:
        upper = np.triu_indices(t, 1)
        return not grid.values.reshape(-1, t, t)[:, upper[0], upper[1]].any()
    return all(grid.values[(m * t + q) * t + k] == 0 for m in range(grid.count // (t * t)) for q in range(t) for k in range(q + 1, t))


def _rows(grid, triangle):
    """The rows of the last axis as (start, length) in the flat values: whole rows, or each row up to the diagonal."""
    width = grid.shape[-1]
    for row in range(grid.count // width if width else 0):
        yield row * width, (row % width) + 1 if triangle else width


def _packed(grid, triangle, values=None):
    """What is written of `values` (the grid's own by default; else a numpy array of its shape, e.g. codes):
    all of them, or the lower triangle of each matrix, row by row."""
    values = grid.values if values is None else values
    if not triangle:
        return values
    t = grid.shape[-1]
    np = grid.np
    if np is not None:
        return values.reshape(-1, t, t)[:, np.tril(np.ones((t, t), dtype=bool))]
    packed = array('f')
    for start, length in _rows(grid, True):
        packed.extend(values[start:start + length])
    return packed


def float16(grid, triangle=False):
    """{"dtype": "float16", "shape", "base64"} (of the lower triangles when ``triangle``)."""
    np = grid.np
    values = _packed(grid, triangle)
    if np is not None:
        raw = np.clip(values, -65504, 65504).astype('<f2').tobytes()  # beyond a half's range: its largest, as the plain path
    else:
        raw = struct.pack(f'<{len(values)}e', *(min(max(v, -65504.0), 65504.0) if math.isfinite(v) else v for v in values))
    return {'dtype': 'float16', 'shape': list(grid.shape), 'base64': base64.b64encode(raw).decode('ascii')}


def uint8_rows(grid, triangle=False):
    """{"dtype": "uint8", "shape", "base64", "scales"}: each row's weights over its largest / 255 (of the lower triangles when ``triangle``)."""
    width = grid.shape[-1]
    rows = grid.count // width
    np = grid.np
    if np is not None:
        matrix = grid.values.reshape(rows, width)
        scales = (matrix.max(axis=1) / UINT8_MAX).astype(np.float32)
        safe = np.where(scales > 0, scales, 1).astype(np.float32)
        codes = np.clip(np.rint(matrix / safe[:, None]), 0, UINT8_MAX).astype(np.uint8)
        raw, scale_bytes = _packed(grid, triangle, codes).tobytes(), scales.astype('<f4').tobytes()
    else:
        codes = bytearray()
        scales = array('f')
        for start, length in _rows(grid, triangle):
            row = grid.values[start:start + width]
            scale = array('f', [max(row) / UINT8_MAX])[0]  # rounded to float32, as the widget reads it
            scales.append(scale)
            codes.extend(min(UINT8_MAX, max(0, round(w / scale))) if scale > 0 else 0 for w in row[:length])
        raw, scale_bytes = bytes(codes), scales.tobytes()  # array('f') is native order: little-endian on every supported host
    return {'dtype': 'uint8', 'shape': list(grid.shape), 'base64': base64.b64encode(raw).decode('ascii'),
            'scales': base64.b64encode(scale_bytes).decode('ascii')}


def encode(grid, encoding='auto', attention=True):
    """The widget's tensor form of a grid: float16 when small (or asked), else uint8 per row; causal attention
    as its lower triangles (attention=False: never, e.g. for queries and keys);
    with "precision" when the values were computed in bfloat16 or float16 (the widget then allows their
    rows' sums that much more room before it warns)."""
    if encoding == 'auto':
        encoding = 'float16' if grid.count <= FLOAT16_LIMIT else 'uint8'
    if encoding not in ('float16', 'uint8'):
        raise ValueError(f"encoding must be 'auto', 'float16' or 'uint8', not {encoding!r}")
    triangle = attention and lower_triangular(grid)
    tensor = float16(grid, triangle) if encoding == 'float16' else uint8_rows(grid, triangle)
    if triangle:
        tensor['triangle'] = 'lower'
    if grid.precision:
        tensor['precision'] = grid.precision
    return tensor
