// Random GPT-2 checkpoints for benchmarks, written in the Hugging Face layout
// (config.json + model.safetensors, F16) without any library, plus a
// byte-level tokenizer.json without merges (one token per byte), so that a
// text of N ASCII characters is exactly N tokens.
// Used by runtime-bench.mjs (GPT-2-small shape) and page.mjs (512 tokens).
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
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
  const header = {};
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F16', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const headerBytes = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length));
  const fd = openSync(join(dir, 'model.safetensors'), 'w');
  writeSync(fd, length);
  writeSync(fd, headerBytes);
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
  return 8 + headerBytes.length + offset;
}

/** GPT-2's byte-level alphabet: printable bytes stand for themselves, the others map to 256+. */
function byteAlphabet() {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let shift = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : 256 + shift++));
}

/** Writes a byte-level BPE tokenizer.json with the 256 byte tokens and <|endoftext|> (id 256), no merges. */
export function writeByteTokenizer(dir) {
  const vocab = Object.fromEntries(byteAlphabet().map((symbol, id) => [symbol, id]));
  vocab['<|endoftext|>'] = 256;
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
