"""The views a notebook calls: bertviz's ``head_view`` and ``model_view`` with
bertviz's arguments and meanings, CircuitsVis's ``attention_heads``,
``attention_patterns`` and ``attention_pattern``, and ``matrix_view``,
``rollout_view`` and ``neuron_view``. Each builds the widget's data-mode JSON
(web/attention/attention-data-source.js reads it) and its attributes, and
returns or shows an ``AttentionHTML``.
Not here: reading arrays (_tensors.py), their encoding (_encoding.py), the page (_page.py).
"""
import math
from dataclasses import dataclass
from numbers import Integral

from ._encoding import encode
from ._page import AttentionHTML
from ._tensors import EAGER_FIX, AttentionInputError, layer_head_grid, shape_text, token_list, vector_grid

# The most values one attention tensor may hold (the widget's MAX_VALUES, web/attention/attention-data-source.js).
MAX_VALUES = 2 ** 26

THEMES = (None, 'auto', 'light', 'dark')


def prettify(tokens):
    """bertviz's format_special_chars: 'Ġ' and '▁' become spaces, '</w>' is removed."""
    return [t.replace('Ġ', ' ').replace('▁', ' ').replace('</w>', '') for t in tokens]


def _index(value, count, name, noun):
    """An index from 0 (negative: from the end) checked against count; returned as 0..count-1."""
    if isinstance(value, bool) or not isinstance(value, Integral) or not -count <= value < count:
        raise AttentionInputError(f'{name}: {value!r} is not one of the {count} {noun} (indices from 0, negative ones from the end)')
    return int(value) % count


def _heads_attribute(heads, count):
    """The widget's heads attribute (a comma list) from head indices, each checked."""
    return ','.join(str(_index(h, count, 'heads', 'heads')) for h in heads)


def _check_size(grid, where, t=None):
    """Refuses attention the widget cannot draw (more than MAX_VALUES), before it is written into the notebook."""
    layers, heads = grid.shape[0], grid.shape[1]
    count = layers * heads * t * t if t else grid.count
    if count > MAX_VALUES:
        raise AttentionInputError(
            f'{where} is too large to draw: {count:,} values (shape {shape_text(grid.shape)}); the widget draws at most '
            f'{MAX_VALUES:,}. Keep fewer layers or heads (include_layers=, include_heads=) or fewer tokens.')


def check_weights(grid, where):
    """NaN, infinite or negative weights are refused with where the first one is."""
    np = grid.np
    if np is not None:
        bad = ~(np.isfinite(grid.values) & (grid.values >= 0))
        first = int(np.argmax(bad)) if bad.any() else -1
    else:
        first = next((i for i, w in enumerate(grid.values) if not (0 <= w < math.inf)), -1)
    if first < 0:
        return
    index, rest = [], first
    for n in reversed(grid.shape):
        index.append(rest % n)
        rest //= n
    layer, head, query, key = reversed(index)
    raise AttentionInputError(
        f'{where} has {float(grid.values[first])} at layer {layer}, head {head}, query {query}, key {key} '
        '(counting from 0): attention weights are probabilities (give the weights after the softmax)')


def _model_output(attention):
    """A Hugging Face model output given whole: its attention parts, else None. An output that holds none
    (a model running SDPA or flash attention) is refused with the fix."""
    if isinstance(attention, (list, tuple)) or not hasattr(attention, 'keys') or not hasattr(attention, 'to_tuple'):
        return None
    if hasattr(attention, 'encoder_attentions'):  # an encoder-decoder's output
        parts = {'encoder_attention': attention.encoder_attentions, 'decoder_attention': attention.decoder_attentions,
                 'cross_attention': attention.cross_attentions}
    elif hasattr(attention, 'attentions'):
        parts = {'attention': attention.attentions}
    else:
        return None
    if all(value is None for value in parts.values()):
        raise AttentionInputError(f'the model output holds no attention weights: {EAGER_FIX}')
    return parts


def _filter(grid, include_layers, include_heads, where):
    """bertviz's include_layers / include_heads (an empty list or None keeps all), with the model's numbering as head labels."""
    layers, heads = grid.shape[0], grid.shape[1]
    include_layers = list(include_layers) if include_layers is not None else []
    include_heads = list(include_heads) if include_heads is not None else []
    layer_list = [_index(i, layers, 'include_layers', f'layers of {where}') for i in include_layers] or list(range(layers))
    head_list = [_index(i, heads, 'include_heads', f'heads of {where}') for i in include_heads] or list(range(heads))
    if include_layers:
        grid = grid.take(layer_list)
    if include_heads:
        grid = grid.take_inner(1, head_list)
    labels = None
    if include_layers or include_heads:
        labels = [[f'model layer {l + 1}, head {h + 1}' for h in head_list] for l in layer_list]
    return grid, layer_list, labels


def _tokens_for(grid, tokens, where, tokens_name, sentence_b_start, prettify_tokens, axis):
    """The data's tokens for axis `axis` of grid: checked against its length, prettified, sentence B marked by type_id 1."""
    count = grid.shape[axis]
    if len(tokens) != count:
        raise AttentionInputError(
            f'{where} has {count} positions (shape {shape_text(grid.shape)}), while {tokens_name} has {len(tokens)} tokens: '
            + ' '.join(tokens)[:200])
    shown = prettify(tokens) if prettify_tokens else list(tokens)
    if sentence_b_start is None:
        return shown
    if isinstance(sentence_b_start, bool) or not isinstance(sentence_b_start, Integral) or not 0 < sentence_b_start < len(tokens):
        raise AttentionInputError(f'sentence_b_start is {sentence_b_start!r}; it must be the index of the first token of sentence B, between 1 and {len(tokens) - 1}')
    return [{'token': t, 'type_id': 0 if i < int(sentence_b_start) else 1} for i, t in enumerate(shown)]


@dataclass
class Shown:
    """What a view's data holds: the model's layer indices kept (in order), how many layers and heads are shown,
    and how many layers the attention had before include_layers."""
    kept: list
    layers: int
    heads: int
    total_layers: int


def _attention_data(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True,
                    encoder_attention=None, decoder_attention=None, cross_attention=None,
                    encoder_tokens=None, decoder_tokens=None, include_layers=None, include_heads=None,
                    encoding='auto'):
    """The widget's data-mode JSON for bertviz's arguments: returns (data, Shown)."""
    parts = _model_output(attention)
    if parts is not None:
        attention = parts.get('attention')
        encoder_attention = parts.get('encoder_attention', encoder_attention)
        decoder_attention = parts.get('decoder_attention', decoder_attention)
        cross_attention = parts.get('cross_attention', cross_attention)
    seq2seq = any(a is not None for a in (encoder_attention, decoder_attention, cross_attention, encoder_tokens, decoder_tokens))
    if attention is not None and seq2seq:
        raise AttentionInputError(
            "If you specify 'attention' you may not specify any encoder-decoder arguments. This argument is only for self-attention models.")
    data = {}
    if attention is not None or (parts is not None and 'attention' in parts):
        grid = layer_head_grid(attention, 'attention')
        total = grid.shape[0]
        tokens = token_list(tokens, 'tokens')
        data['tokens'] = _tokens_for(grid, tokens, 'attention', 'tokens', sentence_b_start, prettify_tokens, 2)
        grid, kept, labels = _filter(grid, include_layers, include_heads, 'attention')
        _check_size(grid, 'attention')
        check_weights(grid, 'attention')
        data['attentions'] = encode(grid, encoding)
        if labels:
            data['head_labels'] = labels
        return data, Shown(kept, grid.shape[0], grid.shape[1], total)
    if not seq2seq:
        raise AttentionInputError('You must specify at least one attention argument.')
    labels_by_part, kept, shape, total = {}, None, None, None
    for part, value, key, token_key in (('encoder', encoder_attention, 'encoder_attentions', 'encoder_tokens'),
                                        ('decoder', decoder_attention, 'decoder_attentions', 'decoder_tokens'),
                                        ('cross', cross_attention, 'cross_attentions', None)):
        if value is None:
            continue
        where = f'{part}_attention'
        given = {'encoder_tokens': encoder_tokens, 'decoder_tokens': decoder_tokens}
        for needed in ([token_key] if token_key else ['encoder_tokens', 'decoder_tokens']):
            if given[needed] is None:
                raise AttentionInputError(f"'{needed}' required if '{where}' is not None")
        grid = layer_head_grid(value, where, cross=part == 'cross')
        total = grid.shape[0]
        if part == 'cross':
            _tokens_for(grid, token_list(decoder_tokens, 'decoder_tokens'), where, 'decoder_tokens', None, False, 2)
            _tokens_for(grid, token_list(encoder_tokens, 'encoder_tokens'), where, 'encoder_tokens', None, False, 3)
        else:
            data[token_key] = _tokens_for(grid, token_list(encoder_tokens if part == 'encoder' else decoder_tokens, token_key),
                                          where, token_key, None, prettify_tokens, 2)
        grid, kept, labels = _filter(grid, include_layers, include_heads, where)
        _check_size(grid, where, grid.shape[2] + grid.shape[3] if part == 'cross' else None)  # cross: drawn over both token lists
        check_weights(grid, where)
        data[key] = encode(grid, encoding)
        shape = grid.shape
        if labels:
            labels_by_part[part] = labels
    if shape is None:
        raise AttentionInputError('You must specify at least one attention argument.')
    for name, given in (('encoder_tokens', encoder_tokens), ('decoder_tokens', decoder_tokens)):
        if given is not None and name not in data:
            data[name] = prettify(token_list(given, name)) if prettify_tokens else token_list(given, name)
    if labels_by_part:
        data['head_labels'] = labels_by_part
    return data, Shown(kept, shape[0], shape[1], total)


def _theme(display_mode):
    """The widget's theme attribute for bertviz's display_mode ('light', 'dark'; None or 'auto': the notebook's)."""
    if display_mode not in THEMES:
        raise ValueError(f"display_mode must be 'light', 'dark' or None (follow the notebook), not {display_mode!r}")
    return {} if display_mode in (None, 'auto') else {'theme': display_mode}


def check_action(html_action):
    """bertviz's html_action must be 'view' or 'return' (its message, verbatim)."""
    if html_action not in ('view', 'return'):
        raise ValueError("'html_action' parameter must be 'view' or 'return'")


def show(result, html_action):
    """bertviz's html_action: 'view' displays the result in the notebook (and returns None), 'return' returns it."""
    check_action(html_action)
    if html_action == 'return':
        return result
    try:
        from IPython.display import display
    except ImportError:
        raise RuntimeError("html_action='view' shows the view in a notebook (IPython); elsewhere use html_action='return' and .save_html(path)") from None
    display(result)
    return None


def _finish(view, title, data, attributes, height, html_action):
    """The view's HTML with the widget's view and controls, shown or returned as html_action says."""
    return show(AttentionHTML(title, {'view': view, 'controls': '', **attributes}, data, height), html_action)


def _token_count(data):
    """How many tokens the data's views list (for the cell's first height)."""
    tokens = data.get('tokens') or (data.get('encoder_tokens', []) + data.get('decoder_tokens', []))
    return len(tokens)


def head_view(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True, layer=None, heads=None,
              encoder_attention=None, decoder_attention=None, cross_attention=None, encoder_tokens=None,
              decoder_tokens=None, include_layers=None, html_action='view', *, display_mode=None, encoding='auto'):
    """bertviz's head view: lines from each token to the tokens it attends to, one colour per head, layer by layer."""
    data, shown = _attention_data(attention, tokens, sentence_b_start, prettify_tokens, encoder_attention, decoder_attention,
                                  cross_attention, encoder_tokens, decoder_tokens, include_layers, None, encoding)
    attributes = _theme(display_mode)
    if layer is not None:
        layer = _index(layer, shown.total_layers, 'layer', 'layers')
        if layer not in shown.kept:
            raise AttentionInputError(f'Layer {layer} is not in include_layers: {list(include_layers)}')
        attributes['layer'] = shown.kept.index(layer)
    if heads:
        attributes['heads'] = _heads_attribute(heads, shown.heads)
    return _finish('head', 'Head view', data, attributes, 190 + 22 * min(_token_count(data), 60), html_action)


def model_view(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True, display_mode=None,
               encoder_attention=None, decoder_attention=None, cross_attention=None, encoder_tokens=None,
               decoder_tokens=None, include_layers=None, include_heads=None, html_action='view', *, encoding='auto'):
    """bertviz's model view: every head of every layer as a thumbnail (click one to open it in the head view)."""
    data, shown = _attention_data(attention, tokens, sentence_b_start, prettify_tokens, encoder_attention, decoder_attention,
                                  cross_attention, encoder_tokens, decoder_tokens, include_layers, include_heads, encoding)
    rows = math.ceil(shown.layers * shown.heads / max(1, min(shown.heads, 12)))
    return _finish('model', 'Model view', data, _theme(display_mode), 160 + 130 * min(rows, 24), html_action)


def matrix_view(attention, tokens, layer=0, heads=None, prettify_tokens=True, display_mode=None, html_action='view', *, encoding='auto'):
    """Each head's attention as a matrix (queries down, keys across) with its numbers on hover."""
    data, shown = _attention_data(attention, tokens, prettify_tokens=prettify_tokens, encoding=encoding)
    attributes = {**_theme(display_mode), 'layer': _index(layer, shown.layers, 'layer', 'layers')}
    if heads:
        attributes['heads'] = _heads_attribute(heads, shown.heads)
    return _finish('matrix', 'Matrix view', data, attributes, 220 + 16 * min(len(data['tokens']), 64), html_action)


def rollout_view(attention, tokens, method='rollout', prettify_tokens=True, display_mode=None, html_action='view', *, encoding='auto'):
    """Attention rollout (Abnar & Zuidema, 2020) or attention flow (method='flow') through all layers."""
    if method not in ('rollout', 'flow'):
        raise ValueError(f"method must be 'rollout' or 'flow', not {method!r}")
    data, _ = _attention_data(attention, tokens, prettify_tokens=prettify_tokens, encoding=encoding)
    attributes = {**_theme(display_mode), 'rollout-method': method}
    return _finish('rollout', 'Attention rollout', data, attributes, 240 + 16 * min(len(data['tokens']), 64), html_action)


def _softmax_attention(queries, keys, causal):
    """softmax(q·k / √d) per layer and head, causal-masked when asked ([L, H, T, d] grids -> [L, H, T, T])."""
    layers, heads, count, d = queries.shape
    np = queries.np
    if np is not None:
        q = queries.values.reshape(queries.shape).astype(np.float64)
        k = np.asarray(keys.values, dtype=np.float64).reshape(keys.shape)
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)  # [L, H, T, T]
        if causal:
            upper = np.triu_indices(count, 1)
            scores[..., upper[0], upper[1]] = -np.inf
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (weights / weights.sum(axis=-1, keepdims=True)).astype(np.float32)
    q, k = queries.tolist(), keys.tolist()
    out = []
    for l in range(layers):
        out.append([])
        for h in range(heads):
            rows = []
            for i in range(count):
                last = i + 1 if causal else count
                scores = [sum(a * b for a, b in zip(q[l][h][i], k[l][h][j])) / math.sqrt(d) for j in range(last)]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = sum(weights)
                rows.append([w / total for w in weights] + [0.0] * (count - last))
            out[-1].append(rows)
    return out


def neuron_view(tokens, queries, keys, attention=None, causal=None, layer=0, head=0, query=None,
                prettify_tokens=True, display_mode=None, html_action='view'):
    """bertviz's neuron view from vectors the caller captured: for one query token and one head, q, each key k,
    q × k, q·k, q·k / √d and the softmax. queries, keys: [layers, heads, T, d] (or a tuple per layer of
    [1, heads, T, d]). attention: the weights the model computed, when captured; otherwise softmax(q·k / √d)
    (causal=True masks later keys)."""
    tokens = token_list(tokens, 'tokens')
    probe = vector_grid(queries, 'queries', None, None, len(tokens))
    layers, heads, count, _ = probe.shape
    key_grid = vector_grid(keys, 'keys', layers, heads, count)
    if key_grid.shape[3] != probe.shape[3]:
        raise AttentionInputError(f'queries have {probe.shape[3]} dimensions per head, keys {key_grid.shape[3]}')
    if attention is None:
        attention = _softmax_attention(probe, key_grid, bool(causal))
    data, shown = _attention_data(attention, tokens, prettify_tokens=prettify_tokens, encoding='float16')
    if (shown.layers, shown.heads) != (layers, heads):
        raise AttentionInputError(f'attention has {shown.layers} layers of {shown.heads} heads, the queries and keys {layers} of {heads}')
    data['queries'] = encode(probe, 'float16', attention=False)
    data['keys'] = encode(key_grid, 'float16', attention=False)
    if causal is not None:
        data['causal'] = bool(causal)
    attributes = {**_theme(display_mode), 'layer': _index(layer, layers, 'layer', 'layers'), 'heads': str(_index(head, heads, 'head', 'heads'))}
    if query is not None:
        attributes['token'] = _index(query, count, 'query', 'tokens')
    return _finish('neuron', 'Neuron view', data, attributes, 260 + 26 * min(count, 40), html_action)


def attention_heads(attention, tokens, attention_head_names=None, max_value=None, min_value=None,
                    negative_color=None, positive_color=None, mask_upper_tri=None):
    """CircuitsVis's attention_heads: the heads [heads, dest, src] of one layer, each as a pattern; returned (shown when last in a cell).
    The colour and range arguments are accepted and the widget's own scale is used."""
    grid = layer_head_grid(attention, 'attention')
    if grid.shape[0] != 1:
        raise AttentionInputError(f'attention has shape {shape_text(grid.shape)}; attention_heads draws the heads of one layer of one '
                                  'example, [heads, dest, src] (from a batch, pass attention[i])')
    data, shown = _attention_data(grid, tokens, prettify_tokens=False)
    heads = shown.heads
    if attention_head_names is not None:
        names = list(attention_head_names)
        if len(names) != heads:
            raise AttentionInputError(f'attention_head_names has {len(names)} names for {heads} heads')
        data['head_labels'] = [names]
    return _finish('model', 'Attention heads', data, {}, 160 + 130 * math.ceil(heads / 12), 'return')


def attention_patterns(tokens, attention):
    """CircuitsVis's attention_patterns (tokens first; [heads, dest, src])."""
    return attention_heads(attention, tokens)


def attention_pattern(tokens, attention, max_value=None, min_value=None, negative_color=None, show_axis_labels=None,
                      positive_color=None, mask_upper_tri=None):
    """CircuitsVis's attention_pattern: one head [dest, src] as a matrix."""
    data, _ = _attention_data(attention, tokens, prettify_tokens=False)
    return _finish('matrix', 'Attention pattern', data, {}, 220 + 16 * min(len(data['tokens']), 64), 'return')
