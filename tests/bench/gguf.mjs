// GGUF files for llama.cpp (through @wllama/wllama) made from the benchmarks'
// random safetensors checkpoints, so that both runtimes compute with the same
// weights: a GGUF v3 writer (metadata, tensor infos, 32-byte-aligned data)
// and the conversions of the Gemma 3 text model and of Llama as llama.cpp's
// convert_hf_to_gguf.py does them (its metadata keys and tensor names;
// Gemma's norm weights stored as 1 + w; Llama's q and k rows permuted for
// llama.cpp's rotation of adjacent pairs; the tokenizer as a SentencePiece
// vocabulary of byte pieces and unused ids). Used by gemma.mjs and decode.mjs.
// Not here: quantization (the weights stay F32, BF16 or F16), other architectures.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { convertBf16, readSafetensors } from './checkpoint.mjs';

const GGUF_VERSION = 3;
const ALIGNMENT = 32;
// gguf_type (ggml/include/gguf.h)
const VALUE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 };
// ggml_type (ggml/include/ggml.h)
const TENSOR = { F32: 0, F16: 1, BF16: 30 };
const BYTES = { F32: 4, F16: 2, BF16: 2 };

function stringBytes(text) {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(bytes.length));
  return [length, bytes];
}

function u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); return b; }
function i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); return b; }
function f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); return b; }
function u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return b; }

// One metadata value of `type` ('uint32', 'float32', 'string', 'bool', or
// ['array', elementType]) -> its bytes (a list of Buffers), type tag first.
function valueBytes(type, value) {
  if (Array.isArray(type)) {
    const [, element] = type;
    const parts = [u32(VALUE.array), u32(VALUE[element]), u64(value.length)];
    for (const item of value) {
      const [, ...bytes] = valueBytes(element, item);  // elements carry no tag
      for (const b of bytes) parts.push(b);
    }
    return parts;
  }
  const tag = u32(VALUE[type]);
  if (type === 'uint32') return [tag, u32(value)];
  if (type === 'int32') return [tag, i32(value)];
  if (type === 'float32') return [tag, f32(value)];
  if (type === 'bool') return [tag, Buffer.from([value ? 1 : 0])];
  if (type === 'string') return [tag, ...stringBytes(value)];
  throw new Error(`gguf: no writer for value type ${type}`);
}

/**
 * Writes a GGUF v3 file: metadata [[key, type, value]] and tensors [{ name,
 * shape (PyTorch order, outermost first), type: 'F32' | 'BF16', fill(target:
 * Uint8Array of the tensor's bytes) }], each written by its fill in order.
 * Returns the file's size.
 */
export function writeGguf(path, metadata, tensors) {
  const head = [Buffer.from('GGUF'), u32(GGUF_VERSION), u64(tensors.length), u64(metadata.length)];
  for (const [key, type, value] of metadata) {
    for (const b of [...stringBytes(key), ...valueBytes(type, value)]) head.push(b);
  }
  let offset = 0;
  const offsets = [];
  for (const t of tensors) {
    const dims = [...t.shape].reverse();  // ne[0] is the innermost (last PyTorch) dimension
    head.push(...stringBytes(t.name), u32(dims.length), ...dims.map(u64), u32(TENSOR[t.type]), u64(offset));
    offsets.push(offset);
    offset += Math.ceil(t.shape.reduce((a, b) => a * b, 1) * BYTES[t.type] / ALIGNMENT) * ALIGNMENT;
  }
  let header = Buffer.concat(head);
  header = Buffer.concat([header, Buffer.alloc((ALIGNMENT - (header.length % ALIGNMENT)) % ALIGNMENT)]);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, header);
    for (const [i, t] of tensors.entries()) {
      const size = t.shape.reduce((a, b) => a * b, 1) * BYTES[t.type];
      const next = i + 1 < tensors.length ? offsets[i + 1] : offset;
      const bytes = new Uint8Array(next - offsets[i]);  // the tensor, then its padding
      t.fill(bytes.subarray(0, size));
      writeSync(fd, bytes);
    }
  } finally {
    closeSync(fd);
  }
  return header.length + offset;
}

// A Gemma vocabulary of `size` pieces as llama.cpp's SentencePiece ("llama")
// tokenizer reads it: <pad> <eos> <bos> <unk>, the 256 byte pieces, then unused ones.
function gemmaVocabulary(size) {
  const tokens = ['<pad>', '<eos>', '<bos>', '<unk>'];
  const types = [3, 3, 3, 2];  // control, unknown
  for (let b = 0; b < 256; b += 1) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);  // byte
  }
  while (tokens.length < size) {
    tokens.push(`<unused${tokens.length}>`);
    types.push(1);  // normal
  }
  return { tokens, types, scores: new Array(size).fill(0) };
}

// The tokenizer metadata of a vocabulary of `size` byte pieces (gemmaVocabulary).
function byteTokenizerMetadata(size) {
  const vocabulary = gemmaVocabulary(size);
  return [
    ['tokenizer.ggml.model', 'string', 'llama'],
    ['tokenizer.ggml.pre', 'string', 'default'],
    ['tokenizer.ggml.tokens', ['array', 'string'], vocabulary.tokens],
    ['tokenizer.ggml.scores', ['array', 'float32'], vocabulary.scores],
    ['tokenizer.ggml.token_type', ['array', 'int32'], vocabulary.types],
    ['tokenizer.ggml.bos_token_id', 'uint32', 2],
    ['tokenizer.ggml.eos_token_id', 'uint32', 1],
    ['tokenizer.ggml.unknown_token_id', 'uint32', 3],
    ['tokenizer.ggml.padding_token_id', 'uint32', 0],
    ['tokenizer.ggml.add_bos_token', 'bool', false],
    ['tokenizer.ggml.add_space_prefix', 'bool', false],
  ];
}

// The BF16 tensors of a safetensors file -> [{ name, ggufName (by `names`), shape, source (Uint16Array) }].
function bf16Tensors(header, data, names) {
  return Object.entries(header).map(([name, info]) => {
    const rule = names.find(([pattern]) => pattern.test(name));
    if (!rule) throw new Error(`gguf: no llama.cpp name for ${name}`);
    if (info.dtype !== 'BF16') throw new Error(`gguf: ${name} is ${info.dtype}, expected BF16`);
    const [from, to] = info.data_offsets;
    return { name, ggufName: name.replace(rule[0], rule[1]), shape: info.shape, source: new Uint16Array(data.buffer.slice(data.byteOffset + from, data.byteOffset + to)) };
  });
}

// Hugging Face's Gemma 3 names (under "model.") -> llama.cpp's (gguf-py's tensor_mapping.py).
const GEMMA3_NAMES = [
  [/^model\.embed_tokens\.weight$/, 'token_embd.weight'],
  [/^model\.norm\.weight$/, 'output_norm.weight'],
  [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, 'blk.$1.attn_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.q_proj\.weight$/, 'blk.$1.attn_q.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.k_proj\.weight$/, 'blk.$1.attn_k.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.v_proj\.weight$/, 'blk.$1.attn_v.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, 'blk.$1.attn_output.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.q_norm\.weight$/, 'blk.$1.attn_q_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.k_norm\.weight$/, 'blk.$1.attn_k_norm.weight'],
  [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, 'blk.$1.post_attention_norm.weight'],
  [/^model\.layers\.(\d+)\.pre_feedforward_layernorm\.weight$/, 'blk.$1.ffn_norm.weight'],
  [/^model\.layers\.(\d+)\.post_feedforward_layernorm\.weight$/, 'blk.$1.post_ffw_norm.weight'],
  [/^model\.layers\.(\d+)\.mlp\.gate_proj\.weight$/, 'blk.$1.ffn_gate.weight'],
  [/^model\.layers\.(\d+)\.mlp\.up_proj\.weight$/, 'blk.$1.ffn_up.weight'],
  [/^model\.layers\.(\d+)\.mlp\.down_proj\.weight$/, 'blk.$1.ffn_down.weight'],
];

/**
 * Writes `out` (a GGUF) from the Gemma 3 text checkpoint in `dir`
 * (config.json, a BF16 model.safetensors with tied embeddings), the weights
 * in `type` ('BF16': the matrices as stored, what the converter's default
 * --outtype auto writes for BF16 tensors; 'F32': the same values widened,
 * llama.cpp's fastest exact form in WebAssembly; 'F16': rounded to half), as
 * convert_hf_to_gguf.py's Gemma3Model converts it: norms stored as 1 + w, in
 * F32. Returns the file's size.
 */
export function writeGemma3Gguf(dir, out, type) {
  const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  if (c.model_type !== 'gemma3_text' || c.tie_word_embeddings === false) throw new Error('gguf: a tied gemma3_text checkpoint only');
  const { header, data } = readSafetensors(join(dir, 'model.safetensors'));
  const metadata = [
    ['general.architecture', 'string', 'gemma3'],
    ['general.name', 'string', 'attnplay benchmark Gemma 3'],
    ['general.alignment', 'uint32', ALIGNMENT],
    ['gemma3.context_length', 'uint32', c.max_position_embeddings],
    ['gemma3.embedding_length', 'uint32', c.hidden_size],
    ['gemma3.block_count', 'uint32', c.num_hidden_layers],
    ['gemma3.feed_forward_length', 'uint32', c.intermediate_size],
    ['gemma3.attention.head_count', 'uint32', c.num_attention_heads],
    ['gemma3.attention.head_count_kv', 'uint32', c.num_key_value_heads],
    ['gemma3.attention.key_length', 'uint32', c.head_dim],
    ['gemma3.attention.value_length', 'uint32', c.head_dim],
    ['gemma3.attention.layer_norm_rms_epsilon', 'float32', c.rms_norm_eps],
    ['gemma3.rope.freq_base', 'float32', c.rope_theta],
    ['gemma3.rope.freq_base_swa', 'float32', c.rope_local_base_freq],
    ['gemma3.attention.sliding_window', 'uint32', c.sliding_window],
    ...byteTokenizerMetadata(c.vocab_size),
  ];
  const tensors = bf16Tensors(header, data, GEMMA3_NAMES).map(({ name, ggufName, shape, source }) => {
    const norm = name.endsWith('norm.weight');
    const stored = norm ? 'F32' : type;  // the converter keeps 1-D tensors and norms F32 (ggml adds no BF16 to F32)
    return { name: ggufName, shape, type: stored, fill: (target) => convertBf16(stored, source, target, norm) };
  });
  return writeGguf(out, metadata, tensors);
}

// Hugging Face's Llama names -> llama.cpp's.
const LLAMA_NAMES = [
  [/^model\.embed_tokens\.weight$/, 'token_embd.weight'],
  [/^model\.norm\.weight$/, 'output_norm.weight'],
  [/^lm_head\.weight$/, 'output.weight'],
  [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, 'blk.$1.attn_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.q_proj\.weight$/, 'blk.$1.attn_q.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.k_proj\.weight$/, 'blk.$1.attn_k.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.v_proj\.weight$/, 'blk.$1.attn_v.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, 'blk.$1.attn_output.weight'],
  [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, 'blk.$1.ffn_norm.weight'],
  [/^model\.layers\.(\d+)\.mlp\.gate_proj\.weight$/, 'blk.$1.ffn_gate.weight'],
  [/^model\.layers\.(\d+)\.mlp\.up_proj\.weight$/, 'blk.$1.ffn_up.weight'],
  [/^model\.layers\.(\d+)\.mlp\.down_proj\.weight$/, 'blk.$1.ffn_down.weight'],
];

// convert_hf_to_gguf.py's LlamaModel.permute: within each of `heads` heads,
// rows [first half; second half] become interleaved pairs (llama.cpp rotates
// adjacent pairs where Hugging Face rotates the two halves). source [rows, cols].
function permuteRotaryRows(source, rows, cols, heads) {
  const out = new Uint16Array(source.length);
  const headRows = rows / heads, half = headRows / 2;
  for (let h = 0; h < heads; h += 1) {
    for (let i = 0; i < half; i += 1) {
      for (let s = 0; s < 2; s += 1) {
        const from = (h * headRows + s * half + i) * cols, to = (h * headRows + 2 * i + s) * cols;
        out.set(source.subarray(from, from + cols), to);
      }
    }
  }
  return out;
}

/**
 * Writes `out` (a GGUF) from the Llama checkpoint in `dir` (config.json, a
 * BF16 model.safetensors), the matrices in `type` ('F32' | 'BF16' | 'F16', as
 * for writeGemma3Gguf; norms F32), as convert_hf_to_gguf.py's LlamaModel
 * converts it: q and k rows permuted, the tokenizer a SentencePiece
 * vocabulary of byte pieces (id 4 + byte). Returns the file's size.
 */
export function writeLlamaGguf(dir, out, type) {
  const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  if (c.model_type !== 'llama') throw new Error('gguf: a llama checkpoint only');
  const { header, data } = readSafetensors(join(dir, 'model.safetensors'));
  const headDim = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const metadata = [
    ['general.architecture', 'string', 'llama'],
    ['general.name', 'string', 'attnplay benchmark Llama'],
    ['general.alignment', 'uint32', ALIGNMENT],
    ['llama.context_length', 'uint32', c.max_position_embeddings],
    ['llama.embedding_length', 'uint32', c.hidden_size],
    ['llama.block_count', 'uint32', c.num_hidden_layers],
    ['llama.feed_forward_length', 'uint32', c.intermediate_size],
    ['llama.rope.dimension_count', 'uint32', headDim],
    ['llama.attention.head_count', 'uint32', c.num_attention_heads],
    ['llama.attention.head_count_kv', 'uint32', c.num_key_value_heads],
    ['llama.attention.layer_norm_rms_epsilon', 'float32', c.rms_norm_eps],
    ['llama.rope.freq_base', 'float32', c.rope_theta],
    ['llama.vocab_size', 'uint32', c.vocab_size],
    ...byteTokenizerMetadata(c.vocab_size),
  ];
  const tensors = bf16Tensors(header, data, LLAMA_NAMES).map(({ name, ggufName, shape, source }) => {
    if (/q_proj|k_proj/.test(name)) {
      const heads = name.includes('q_proj') ? c.num_attention_heads : c.num_key_value_heads;
      source = permuteRotaryRows(source, shape[0], shape[1], heads);
    }
    const stored = shape.length === 1 ? 'F32' : type;
    return { name: ggufName, shape, type: stored, fill: (target) => convertBf16(stored, source, target) };
  });
  return writeGguf(out, metadata, tensors);
}
