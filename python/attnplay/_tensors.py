"""Attention as people have it, read into one shape: a ``Grid``.

A ``Grid`` holds float32 values in C order and their shape. It is backed by
numpy when numpy can be imported (always the case when the caller passed
numpy arrays or torch tensors), else by ``array.array('f')`` from nested
Python lists, so that the package needs nothing beyond the standard library.

Read here: torch tensors (any device, float32/float16/bfloat16), numpy arrays,
other arrays by their tolist() (jax, mlx), nested lists, and sequences of any of them (a tuple per layer, as Hugging Face
returns ``outputs.attentions``); a TransformerLens ``ActivationCache`` (its
``blocks.{l}.attn.hook_pattern`` entries). Not here: what the views do with
the values (``_views.py``), how they are written into the page (``_encoding.py``).
"""
from array import array
from numbers import Real

EAGER_FIX = (
    'a Hugging Face model running SDPA or flash attention returns no attention weights: '
    'load it with attn_implementation="eager" (e.g. AutoModel.from_pretrained(name, attn_implementation="eager")) '
    'and call it with output_attentions=True'
)


class AttentionInputError(ValueError):
    """Attention or tokens that the views cannot draw, with what was expected and what arrived."""


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def shape_text(shape):
    """A shape as the messages write it: [2, 3, 4]."""
    return '[' + ', '.join(str(n) for n in shape) + ']'


class Grid:
    """float32 values in C order with their shape (numpy-backed when numpy exists), and the precision they
    were computed in when it was lower ('bfloat16' or 'float16'; None: float32 or better)."""

    def __init__(self, values, shape, precision=None):
        self.values = values  # numpy 1-D float32 array or array('f')
        self.shape = tuple(shape)
        self.precision = precision

    @property
    def count(self):
        return _product(self.shape)

    @property
    def np(self):
        """numpy when the values are a numpy array, else None (plain Python's array('f'))."""
        np = _numpy()
        return np if np is not None and isinstance(self.values, np.ndarray) else None

    def _block(self):
        return self.count // self.shape[0] if self.shape[0] else 0

    def take(self, indices):
        """The entries ``indices`` of the first axis, in that order."""
        block = self._block()
        parts = [self.values[i * block:(i + 1) * block] for i in indices]
        return Grid(_join(parts, self.np), (len(parts),) + self.shape[1:], self.precision)

    def take_inner(self, axis, indices):
        """The entries ``indices`` of axis ``axis``."""
        outer = _product(self.shape[:axis])
        inner = self.count // (outer * self.shape[axis]) if self.count else 0
        parts = []
        for o in range(outer):
            base = o * self.shape[axis] * inner
            parts.extend(self.values[base + i * inner:base + (i + 1) * inner] for i in indices)
        shape = self.shape[:axis] + (len(indices),) + self.shape[axis + 1:]
        return Grid(_join(parts, self.np), shape, self.precision)

    def reshape(self, shape):
        return Grid(self.values, shape, self.precision)

    def tolist(self):
        """Nested lists (for small tests and messages)."""
        flat = list(self.values)

        def nest(offset, dims):
            if not dims:
                return float(flat[offset])
            step = _product(dims[1:])
            return [nest(offset + i * step, dims[1:]) for i in range(dims[0])]
        return nest(0, list(self.shape))


def _product(dims):
    total = 1
    for n in dims:
        total *= n
    return total


def _join(parts, np):
    """The parts (slices of one Grid's values) as one flat sequence of the same kind: numpy's when np is given."""
    if np is not None:
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)
    joined = array('f')
    for part in parts:
        joined.extend(part)
    return joined


def _from_nested(value, where):
    """Nested lists of numbers -> Grid, every sub-list checked to have its siblings' length."""
    shape = []
    probe = value
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat = array('f')

    def walk(node, depth, path):
        if depth == len(shape):
            if isinstance(node, bool) or not isinstance(node, Real):
                raise AttentionInputError(f'{where}{path} is {node!r}, not a number')
            flat.append(float(node))
            return
        if not isinstance(node, (list, tuple)) or len(node) != shape[depth]:
            got = f'{len(node)} entries' if isinstance(node, (list, tuple)) else 'a single value'
            raise AttentionInputError(f'shapes disagree: {where}{path} has {got} where {where}{"[0]" * depth} has {shape[depth]}')
        for i, child in enumerate(node):
            walk(child, depth + 1, f'{path}[{i}]')
    walk(value, 0, '')
    np = _numpy()
    if np is not None:
        return Grid(np.frombuffer(flat.tobytes(), dtype=np.float32).copy(), shape)
    return Grid(flat, shape)


def _is_torch(value):
    """Whether value is a torch tensor (without importing torch)."""
    return type(value).__module__.startswith('torch') and hasattr(value, 'detach')


LOW_PRECISION = {'torch.bfloat16': 'bfloat16', 'torch.float16': 'float16', 'float16': 'float16'}


def _leaf(value, where):
    """A torch tensor, numpy array or other array type (jax, mlx: by its tolist()) as a Grid; None for anything else."""
    precision = None
    if _is_torch(value):
        precision = LOW_PRECISION.get(str(value.dtype))
        value = value.detach().float().cpu().numpy()  # any device; float16/bfloat16 widened exactly
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        if value.dtype.kind not in 'fiu':
            raise AttentionInputError(f'an array of {value.dtype} is not attention: give numbers')
        precision = precision or LOW_PRECISION.get(str(value.dtype))
        values = np.ascontiguousarray(value, dtype=np.float32).reshape(-1)
        return Grid(values, value.shape, precision)
    if hasattr(value, 'tolist') and not isinstance(value, (list, tuple, str, bytes)):
        return _from_nested(value.tolist(), where)  # e.g. a jax or mlx array
    return None


def to_grid(value, where):
    """Any accepted form -> Grid. A sequence of tensors/arrays (one per layer) is stacked on a new first axis."""
    if value is None:
        raise AttentionInputError(f'{where} is None: {EAGER_FIX}')
    if isinstance(value, Grid):
        return value
    leaf = _leaf(value, where)
    if leaf is not None:
        return leaf
    if isinstance(value, (list, tuple)):
        if any(item is None for item in value):
            raise AttentionInputError(f'{where} holds None: {EAGER_FIX}')
        first = _leaf(value[0], f'{where}[0]') if value else None
        if first is not None:
            grids = [first] + [to_grid(item, f'{where}[{i}]') for i, item in enumerate(value[1:], 1)]
            for i, grid in enumerate(grids):
                if grid.shape != grids[0].shape:
                    raise AttentionInputError(
                        f'shapes disagree: {where}[{i}] is {shape_text(grid.shape)} but {where}[0] is {shape_text(grids[0].shape)}')
            precision = next((p for p in ('bfloat16', 'float16') if any(g.precision == p for g in grids)), None)
            return Grid(_join([g.values for g in grids], grids[0].np), (len(grids),) + grids[0].shape, precision)
        return _from_nested(value, where)
    raise AttentionInputError(f'{where} is a {type(value).__name__}: give a tensor, an array or nested lists of numbers')


def transformer_lens_patterns(cache):
    """A TransformerLens ActivationCache's attention patterns, one per layer in order, or None when ``cache`` is not one."""
    keys = getattr(cache, 'keys', None)
    if keys is None or not callable(keys) or isinstance(cache, dict) and 'blocks.0.attn.hook_pattern' not in cache:
        return None
    names = [k for k in keys() if isinstance(k, str) and k.startswith('blocks.') and k.endswith('.attn.hook_pattern')]
    if not names:
        return None
    by_layer = sorted(names, key=lambda k: int(k.split('.')[1]))
    return [cache[k] for k in by_layer]


def layer_head_grid(value, where, cross=False):
    """Attention as [layers, heads, queries, keys].

    Accepts a sequence per layer of [batch=1, heads, T, T] (Hugging Face) or
    [heads, T, T]; one tensor [layers, heads, T, T] or [layers, 1, heads, T, T];
    [heads, T, T] (CircuitsVis, one layer); [T, T] (one head); a TransformerLens
    ActivationCache. A batch larger than 1 is refused with the fix.
    """
    patterns = transformer_lens_patterns(value)
    if patterns is not None:
        value = patterns
    grid = to_grid(value, where)
    expected = 'a tuple per layer of [batch=1, heads, queries, keys] (Hugging Face), [layers, heads, queries, keys], [heads, queries, keys] or [queries, keys]'
    if len(grid.shape) == 2:
        grid = grid.reshape((1, 1) + grid.shape)
    elif len(grid.shape) == 3:
        grid = grid.reshape((1,) + grid.shape)
    elif len(grid.shape) == 5:
        if grid.shape[1] != 1:
            raise AttentionInputError(
                f'{where} has a batch of {grid.shape[1]} (shape {shape_text(grid.shape)}); the views draw one example: '
                f'pass [a[i:i + 1] for a in {where}] for example i')
        grid = grid.reshape((grid.shape[0],) + grid.shape[2:])
    elif len(grid.shape) != 4:
        raise AttentionInputError(f'{where} has shape {shape_text(grid.shape)}; expected {expected}')
    if 0 in grid.shape:
        raise AttentionInputError(f'{where} is empty (shape {shape_text(grid.shape)})')
    if not cross and grid.shape[2] != grid.shape[3]:
        raise AttentionInputError(
            f'{where} has shape {shape_text(grid.shape)}: self-attention has as many keys as queries ({expected})')
    return grid


def vector_grid(value, where, layers, heads, tokens):
    """Queries or keys as [layers, heads, tokens, d] (a per-layer sequence of [batch=1, heads, T, d], or one layer's
    [heads, T, d], too). layers and heads None: as the value has them."""
    grid = to_grid(value, where)
    if len(grid.shape) == 5 and grid.shape[1] == 1:
        grid = grid.reshape((grid.shape[0],) + grid.shape[2:])
    if len(grid.shape) == 3 and layers in (None, 1):
        grid = grid.reshape((1,) + grid.shape)
    if len(grid.shape) == 4:
        layers = grid.shape[0] if layers is None else layers
        heads = grid.shape[1] if heads is None else heads
    if len(grid.shape) != 4 or grid.shape[:3] != (layers, heads, tokens):
        raise AttentionInputError(
            f'{where} has shape {shape_text(grid.shape)}; with {layers} layers, {heads} heads and {tokens} tokens '
            f'it must be [{layers}, {heads}, {tokens}, d] (or a tuple per layer of [1, {heads}, {tokens}, d])')
    return grid


def token_list(tokens, where):
    """Tokens as a list of strings (a tensor of strings or TransformerLens's nested list for one text too)."""
    if tokens is None:
        raise AttentionInputError(f"'{where}' is required")
    if isinstance(tokens, str):
        raise AttentionInputError(f'{where} is one string; give the list of token strings (e.g. tokenizer.convert_ids_to_tokens(ids))')
    tokens = list(tokens)
    if len(tokens) == 1 and isinstance(tokens[0], (list, tuple)):
        tokens = list(tokens[0])  # model.to_str_tokens([text]) gives one list per text
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            raise AttentionInputError(f'{where}[{i}] is {type(token).__name__} {token!r}, not a string')
    return tokens
