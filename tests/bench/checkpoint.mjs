// Random GPT-2 and Llama-family checkpoints for benchmarks, written in the
// Hugging Face layout (config.json + model.safetensors, F16 / BF16) without
// any library; the same checkpoint stored in another dtype (with the reading
// and the BF16 conversion that gguf.mjs shares); a byte-level tokenizer.json
// without merges (one token per byte), so that a text of N ASCII characters
// is exactly N tokens.
// Used by runtime-bench.mjs (GPT-2-small shape), page.mjs (512 tokens),
// llama.mjs (SmolLM2-135M and Qwen2.5-0.5B shapes), gemma.mjs (Gemma 3 270M)
// and decode.mjs (SmolLM2-135M in F32, BF16 and F16).
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes config.json and model.safetensors of a GPT-2 with random F16 weights
 * of magnitude 2^-8..2^-4 (layer-norm gains 1, biases 0) into `dir`.
 * cfg: { n_layer, n_head, n_embd, n_positions, vocab_size }. Returns the file size.
 */
export function writeGpt2Checkpoint(dir, cfg) {
  const config = { model_type: 'gpt2', layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', ...cfg };
  const d = config.n_embd;
  const tensors = [['wte.weight', [config.vocab_size, d]], ['wpe.weight', [config.n_positions, d]]];
  for (let l = 0; l < config.n_layer; l += 1) {
    const p = `h.${l}.`;
    tensors.push([`${p}ln_1.weight`, [d]], [`${p}ln_1.bias`, [d]], [`${p}attn.c_attn.weight`, [d, 3 * d]],
      [`${p}attn.c_attn.bias`, [3 * d]], [`${p}attn.c_proj.weight`, [d, d]], [`${p}attn.c_proj.bias`, [d]],
      [`${p}ln_2.weight`, [d]], [`${p}ln_2.bias`, [d]], [`${p}mlp.c_fc.weight`, [d, 4 * d]], [`${p}mlp.c_fc.bias`, [4 * d]],
      [`${p}mlp.c_proj.weight`, [4 * d, d]], [`${p}mlp.c_proj.bias`, [d]]);
  }
  tensors.push(['ln_f.weight', [d]], ['ln_f.bias', [d]]);
  const { fd, bytes } = openSafetensors(dir, tensors, 'F16');
  let state = 12345;
  for (const [name, shape] of tensors) {
    const values = new Uint16Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('ln_1.weight') || name.endsWith('ln_2.weight') || name === 'ln_f.weight') {
      values.fill(0x3c00); // 1.0
    } else if (!name.endsWith('.bias')) {
      for (let i = 0; i < values.length; i += 1) {
        state ^= state << 13; state ^= state >>> 17; state ^= state << 5; // xorshift32
        values[i] = (state & 0x83ff) | ((7 + ((state >>> 10) & 3)) << 10); // ±2^-8 .. 2^-4
      }
    }
    writeSync(fd, new Uint8Array(values.buffer));
  }
  closeSync(fd);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return bytes;
}

// Opens dir/model.safetensors and writes its header for `tensors` ([[name,
// shape]], 16-bit `dtype`, stored in this order) -> { fd, bytes: the size the
// file will have }; the caller writes the data and closes fd.
function openSafetensors(dir, tensors, dtype) {
  const header = {};
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const headerBytes = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length));
  const fd = openSync(join(dir, 'model.safetensors'), 'w');
  writeSync(fd, length);
  writeSync(fd, headerBytes);
  return { fd, bytes: 8 + headerBytes.length + offset };
}

/**
 * Writes config.json and model.safetensors of a Llama-family model (model_type
 * "llama", "qwen2": q/k/v biases, or "gemma3_text": q/k norms and the
 * feed-forward's pre and post norms) with random BF16 weights uniform in
 * ±0.05 (RMSNorm gains 1, Gemma's stored as 0 for its 1 + w; biases ±0.05) into `dir`. cfg: config.json's
 * fields (hidden_size, intermediate_size, num_hidden_layers,
 * num_attention_heads, num_key_value_heads, vocab_size, head_dim?,
 * tie_word_embeddings, ...). Returns { config, bytes: the file size,
 * tensors: [[name, shape]] in file order }.
 */
export function writeLlamaCheckpoint(dir, cfg) {
  const config = { model_type: 'llama', hidden_act: 'silu', rms_norm_eps: 1e-5, rope_theta: 100000,
    max_position_embeddings: 8192, tie_word_embeddings: true, ...cfg };
  const d = config.hidden_size;
  const gemma = config.model_type === 'gemma3_text';
  const headDim = config.head_dim ?? d / config.num_attention_heads;
  const q = config.num_attention_heads * headDim;
  const kv = config.num_key_value_heads * headDim;
  const inner = config.intermediate_size;
  const tensors = [['model.embed_tokens.weight', [config.vocab_size, d]]];
  for (let l = 0; l < config.num_hidden_layers; l += 1) {
    const p = `model.layers.${l}.`;
    tensors.push([`${p}input_layernorm.weight`, [d]], [`${p}self_attn.q_proj.weight`, [q, d]],
      [`${p}self_attn.k_proj.weight`, [kv, d]], [`${p}self_attn.v_proj.weight`, [kv, d]]);
    if (config.model_type === 'qwen2') {
      tensors.push([`${p}self_attn.q_proj.bias`, [q]], [`${p}self_attn.k_proj.bias`, [kv]], [`${p}self_attn.v_proj.bias`, [kv]]);
    }
    if (gemma) tensors.push([`${p}self_attn.q_norm.weight`, [headDim]], [`${p}self_attn.k_norm.weight`, [headDim]]);
    tensors.push([`${p}self_attn.o_proj.weight`, [d, q]], [`${p}post_attention_layernorm.weight`, [d]]);
    if (gemma) tensors.push([`${p}pre_feedforward_layernorm.weight`, [d]], [`${p}post_feedforward_layernorm.weight`, [d]]);
    tensors.push([`${p}mlp.gate_proj.weight`, [inner, d]], [`${p}mlp.up_proj.weight`, [inner, d]], [`${p}mlp.down_proj.weight`, [d, inner]]);
  }
  tensors.push(['model.norm.weight', [d]]);
  if (!config.tie_word_embeddings) tensors.push(['lm_head.weight', [config.vocab_size, d]]);
  const { fd, bytes } = openSafetensors(dir, tensors, 'BF16');
  let state = 2463534242;
  const chunk = new Uint16Array(1 << 20);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (const [name, shape] of tensors) {
    let left = shape.reduce((a, b) => a * b, 1);
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      if (name.endsWith('norm.weight')) {
        chunk.fill(gemma ? 0 : 0x3f80, 0, n); // a gain of 1.0
      } else {
        for (let i = 0; i < n; i += 1) {
          state ^= state << 13; state ^= state >>> 17; state ^= state << 5; // xorshift32
          f32[0] = ((state >>> 0) / 2 ** 32 - 0.5) * 0.1;
          chunk[i] = u32[0] >>> 16;
        }
      }
      writeSync(fd, new Uint8Array(chunk.buffer, 0, 2 * n));
      left -= n;
    }
  }
  closeSync(fd);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return { config, bytes, tensors };
}

// float32 bits -> IEEE half bits, rounded to nearest even (torch's .half()).
export function halfBits(bits) {
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  let mantissa = bits & 0x7fffff;
  if (((bits >>> 23) & 0xff) === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);  // inf, NaN
  if (exponent >= 0x1f) return sign | 0x7c00;  // too large: inf
  if (exponent <= 0) {  // a subnormal half, or zero
    if (exponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - exponent;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    let half = mantissa >>> shift;
    if (rest > halfway || (rest === halfway && (half & 1))) half += 1;
    return sign | half;
  }
  let half = (exponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;  // a carry into the exponent is right
  return sign | half;
}

// A safetensors file -> { header (name -> { dtype, shape, data_offsets }; no __metadata__), data (Buffer) }.
export function readSafetensors(path) {
  const bytes = readFileSync(path);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  delete header.__metadata__;
  return { header, data: bytes.subarray(8 + n) };
}

// Writes BF16 `source` (Uint16Array) into `target` (bytes, aligned for the
// type) as `type`: F32 widened exactly, plus 1 when `addOne`; F16 rounded to
// nearest even; BF16 as is.
export function convertBf16(type, source, target, addOne = false) {
  if (type === 'F32') {
    const out = new Float32Array(target.buffer, target.byteOffset, source.length);
    const bits = new Uint32Array(target.buffer, target.byteOffset, source.length);
    for (let i = 0; i < source.length; i += 1) bits[i] = source[i] << 16;
    if (addOne) for (let i = 0; i < out.length; i += 1) out[i] += 1;
  } else if (type === 'F16') {
    const halves = new Uint16Array(target.buffer, target.byteOffset, source.length);
    for (let i = 0; i < source.length; i += 1) halves[i] = halfBits(source[i] << 16);
  } else {
    target.set(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  }
}

/**
 * Writes config.json and model.safetensors into `outDir` with the BF16
 * checkpoint in `dir` stored as `dtype`: 'F32' (the same values, widened
 * exactly) or 'F16' (rounded to nearest even, as torch's .half()); 'BF16'
 * copies it. Returns the file size.
 */
export function writeConvertedCheckpoint(dir, outDir, dtype) {
  const { header, data } = readSafetensors(join(dir, 'model.safetensors'));
  const size = dtype === 'F32' ? 4 : 2;
  const out = {};
  let offset = 0;
  for (const [name, { dtype: stored, shape, data_offsets: [from, to] }] of Object.entries(header)) {
    if (stored !== 'BF16') throw new Error(`${name} is ${stored}, not BF16`);
    const length = size * ((to - from) / 2);
    out[name] = { dtype, shape, data_offsets: [offset, offset + length] };
    offset += length;
  }
  const json = JSON.stringify(out);
  const outHeader = Buffer.from(json.padEnd(Math.ceil((8 + json.length) / 8) * 8 - 8));  // data 8-byte aligned (spaces are allowed)
  const file = Buffer.alloc(8 + outHeader.length + offset);
  file.writeBigUInt64LE(BigInt(outHeader.length));
  outHeader.copy(file, 8);
  const base = 8 + outHeader.length;
  for (const [name, { data_offsets: [from, to] }] of Object.entries(header)) {
    const source = new Uint16Array(data.buffer.slice(data.byteOffset + from, data.byteOffset + to));
    const [begin, end] = out[name].data_offsets;
    convertBf16(dtype, source, file.subarray(base + begin, base + end));
  }
  writeFileSync(join(outDir, 'model.safetensors'), file);
  writeFileSync(join(outDir, 'config.json'), readFileSync(join(dir, 'config.json')));
  return file.length;
}

/** GPT-2's byte-level alphabet: printable bytes stand for themselves, the others map to 256+. */
function byteAlphabet() {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let shift = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : 256 + shift++));
}

/**
 * Writes a byte-level BPE tokenizer.json with the 256 byte tokens and
 * <|endoftext|> (id 256), no merges; with vocabSize > 257, the ids up to
 * vocabSize - 1 are named <unused-ID> (never produced by encoding, but every
 * id a model can predict has a name, as in a real tokenizer).
 */
export function writeByteTokenizer(dir, vocabSize = 257) {
  const vocab = Object.fromEntries(byteAlphabet().map((symbol, id) => [symbol, id]));
  vocab['<|endoftext|>'] = 256;
  for (let id = 257; id < vocabSize; id += 1) vocab[`<unused-${id}>`] = id;
  const tokenizer = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: [] },
  };
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
}
