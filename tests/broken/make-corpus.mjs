// Generates a corpus of broken model folders from the golden checkpoints, each
// with the error message the runtime must give (CLI and WASM). Run by
// tests/node/broken.test.mjs; standalone: node tests/broken/make-corpus.mjs OUTDIR
// Each case: { name, files: { filename: Buffer }, ids, message: RegExp }.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const models = new URL('../golden/models/', import.meta.url);
const read = (model, file) => readFileSync(new URL(`${model}/${file}`, models));

// safetensors <-> { header (object), data (Buffer) }
function split(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')), data: bytes.subarray(8 + n) };
}
function join8(headerText, data) {
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(headerText)));
  return Buffer.concat([length, Buffer.from(headerText), data]);
}
const build = ({ header, data }) => join8(JSON.stringify(header), data);

const GPT2 = 'gpt2-l1-h1-k64-f32'; // 1 layer, 1 head, width 64, n_inner 64, 16 positions, vocabulary 257, F32
const BERT = 'bert-l2-h2-k32-f32';

function gpt2(changes = {}) {
  const files = { 'config.json': read(GPT2, 'config.json'), 'model.safetensors': read(GPT2, 'model.safetensors') };
  return { ...files, ...changes };
}
function config(change, model = GPT2) {
  const c = JSON.parse(read(model, 'config.json'));
  change(c);
  return Buffer.from(JSON.stringify(c));
}
// A folder of another family's golden checkpoint, with its config.json and/or weights changed.
function family(model, { configChange = () => {}, weightsChange = () => {} }) {
  return { 'config.json': config(configChange, model), 'model.safetensors': weights(weightsChange, model) };
}
const MARIAN = 'marian-l2-h4-f32'; // encoder-decoder: 2 + 2 layers, 4 heads, width 32, 40 positions, computed sinusoids
const BART = 'bart-l2-h4-bf16';     // learned positions [42, 32], layernorm_embedding
const LLAMA = 'llama-gqa-llama3-bf16'; // 4 heads, 2 kv heads, width 32, tied embeddings
const LLAMA_UNTIED = 'llama-mqa-bias-linear-f32';
function weights(change, model = GPT2) {
  const st = split(read(model, 'model.safetensors'));
  change(st);
  return build(st);
}

// GPT2's checkpoint as two shards and an index ({ index, shards: [{ header,
// data }] }, tensors dealt alternately), changed by `change`, as folder files.
const SHARD_NAMES = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
function sharded(change = () => {}) {
  const st = split(read(GPT2, 'model.safetensors'));
  const shards = SHARD_NAMES.map(() => ({ header: {}, data: Buffer.alloc(0) }));
  const index = { metadata: {}, weight_map: {} };
  Object.keys(st.header).filter((name) => name !== '__metadata__').sort().forEach((name, i) => {
    const shard = shards[i % 2];
    const [begin, end] = st.header[name].data_offsets;
    shard.header[name] = { ...st.header[name], data_offsets: [shard.data.length, shard.data.length + end - begin] };
    shard.data = Buffer.concat([shard.data, st.data.subarray(begin, end)]);
    index.weight_map[name] = SHARD_NAMES[i % 2];
  });
  const parts = { index, shards };
  change(parts);
  const files = { 'config.json': read(GPT2, 'config.json') };
  files['model.safetensors.index.json'] = typeof parts.index === 'string' ? Buffer.from(parts.index) : Buffer.from(JSON.stringify(parts.index));
  parts.shards.forEach((shard, i) => { if (shard) files[SHARD_NAMES[i]] = Buffer.isBuffer(shard) ? shard : build(shard); });
  return files;
}

const ZIP_MAGIC = Buffer.from('504b0304140000000800', 'hex'); // how torch.save files begin

export function brokenCases() {
  const good = read(GPT2, 'model.safetensors');
  const ids = [1, 2, 3];
  return [
    { name: 'truncated-file', files: gpt2({ 'model.safetensors': good.subarray(0, good.length - 1000) }),
      message: /safetensors: tensor '.*' has data_offsets .* beyond the \d+ bytes of data \(file truncated\?\)/ },
    { name: 'truncated-to-5-bytes', files: gpt2({ 'model.safetensors': good.subarray(0, 5) }),
      message: /safetensors: file is 5 bytes, too short for the 8-byte header length/ },
    { name: 'empty-weights', files: gpt2({ 'model.safetensors': Buffer.alloc(0) }), message: /file is 0 bytes, too short/ },
    { name: 'header-length-beyond-file', files: gpt2({ 'model.safetensors': (() => { const b = Buffer.from(good); b.writeBigUInt64LE(1000000000n); return b; })() }),
      message: /header length 1000000000 is beyond the file size/ },
    { name: 'header-invalid-json', files: gpt2({ 'model.safetensors': join8('{"wte.weight": {"dtype": "F32",, }', Buffer.alloc(16)) }),
      message: /safetensors: header is not valid JSON/ },
    { name: 'header-not-object', files: gpt2({ 'model.safetensors': join8('[1, 2, 3]', Buffer.alloc(0)) }), message: /header is not a JSON object/ },
    { name: 'offsets-out-of-range', files: gpt2({ 'model.safetensors': weights(({ header, data }) => { header['ln_f.bias'].data_offsets = [data.length - 4, data.length + 252]; }) }),
      message: /tensor 'ln_f.bias' has data_offsets \[\d+, \d+\] beyond the \d+ bytes of data/ },
    { name: 'offsets-reversed', files: gpt2({ 'model.safetensors': weights(({ header }) => { header['ln_f.bias'].data_offsets.reverse(); }) }),
      message: /tensor 'ln_f.bias' has data_offsets with begin after end/ },
    { name: 'offsets-overlapping', files: gpt2({ 'model.safetensors': weights(({ header }) => { header['ln_f.bias'].data_offsets = [...header['ln_f.weight'].data_offsets]; }) }),
      message: /tensors 'ln_f.(bias|weight)' and 'ln_f.(bias|weight)' overlap/ },
    { name: 'size-disagrees-with-shape', files: gpt2({ 'model.safetensors': weights(({ header }) => { header['ln_f.bias'].shape = [65]; }) }),
      message: /tensor 'ln_f.bias' occupies 256 bytes but its dtype F32 and shape need 260/ },
    { name: 'unknown-dtype', files: gpt2({ 'model.safetensors': weights(({ header }) => { header['wpe.weight'].dtype = 'F24'; }) }),
      message: /unknown dtype 'F24' for tensor 'wpe.weight'/ },
    { name: 'integer-weights', files: gpt2({ 'model.safetensors': weights(({ header }) => { header['wpe.weight'].dtype = 'I32'; }) }),
      message: /tensor 'wpe.weight' has dtype I32; only F32, F16 and BF16/ },
    { name: 'missing-tensor', files: gpt2({ 'model.safetensors': weights(({ header }) => { delete header['h.0.mlp.c_fc.bias']; }) }),
      message: /tensor 'h.0.mlp.c_fc.bias' is missing from model.safetensors/ },
    { name: 'missing-embedding', files: gpt2({ 'model.safetensors': weights(({ header }) => { delete header['wte.weight']; }) }),
      message: /'wte.weight' \(or 'transformer.wte.weight'\) is missing: not a GPT-2 checkpoint/ },
    { name: 'extra-tensor', files: gpt2({ 'model.safetensors': weights((st) => { st.header['h.0.attn.rotary.weight'] = { dtype: 'F32', shape: [2], data_offsets: [st.data.length, st.data.length + 8] }; st.data = Buffer.concat([st.data, Buffer.alloc(8)]); }) }),
      message: /1 unexpected tensor\(s\) for this architecture: 'h.0.attn.rotary.weight'/ },
    { name: 'missing-mlm-head-part', files: { 'config.json': read(BERT, 'config.json'), 'model.safetensors': weights(({ header }) => { delete header['cls.predictions.transform.LayerNorm.weight']; }, BERT) },
      message: /tensor 'cls.predictions.transform.LayerNorm.weight' is missing from model.safetensors/ },
    { name: 'shape-disagrees-with-config', files: gpt2({ 'config.json': config((c) => { c.n_inner = 96; }) }),
      message: /tensor 'h.0.mlp.c_fc.weight' has shape \[64, 64\] but config.json implies \[64, 96\]/ },
    { name: 'width-not-divisible-by-heads', files: gpt2({ 'config.json': config((c) => { c.n_head = 3; }) }),
      message: /config.json: the width \(64\) is not divisible by the number of heads \(3\)/ },
    { name: 'vocabulary-larger-than-embedding', files: gpt2({ 'config.json': config((c) => { c.vocab_size = 300; }) }),
      message: /the vocabulary \(vocab_size 300 in config.json\) is larger than the embedding matrix 'wte.weight' \(257 rows\)/ },
    { name: 'more-positions-than-embedding', files: gpt2({ 'config.json': config((c) => { c.n_positions = 32; }) }),
      message: /tensor 'wpe.weight' has shape \[16, 64\] but config.json implies \[32, 64\]/ },
    { name: 'more-tokens-than-positions', files: gpt2(), ids: Array.from({ length: 17 }, (_, i) => i),
      message: /17 tokens are more than the model's 16 positions/ },
    { name: 'config-invalid-json', files: gpt2({ 'config.json': Buffer.from('{"model_type": "gpt2", ') }), message: /config.json: not valid JSON/ },
    { name: 'config-unknown-model-type', files: gpt2({ 'config.json': config((c) => { c.model_type = 'mamba'; }) }),
      message: /model_type "mamba" is not supported \(supported: gpt2, bert, distilbert, electra, roberta, xlm-roberta, camembert, opt, llama, mistral, qwen2, qwen3, smollm3, gemma, gemma2, gemma3_text, olmo2, phi3, gpt_neox, vit, deit, dinov2, dinov2_with_registers; encoder-decoders: marian, bart, t5, mt5\)/ },
    { name: 'vision-patch-larger-than-picture', files: family('vit-classifier-nonsquare-f32', { configChange: (c) => { c.patch_size = 64; } }),
      message: /config.json: "image_size" \(48×32\) is smaller than "patch_size" \(64×64\)/ },
    { name: 'vision-image-size-not-pixels', files: family('dinov2-518-to-224-f32', { configChange: (c) => { c.image_size = [518]; } }),
      message: /config.json: "image_size" must be a number of pixels \(1 to 16384\) or \[height, width\], got \[518\]/ },
    { name: 'rope-scaling-unknown-type', files: family(LLAMA, { configChange: (c) => { c.rope_scaling = { rope_type: 'su', factor: 4 }; } }),
      message: /config.json: rope_scaling type "su" is not supported \(supported: linear, dynamic, yarn, longrope, llama3\)/ },
    { name: 'rope-scaling-longrope-without-factors', files: family(LLAMA, { configChange: (c) => { c.rope_scaling = { rope_type: 'longrope', short_factor: [1] }; } }),
      message: /config.json: rope_scaling: longrope needs a "long_factor" list/ },
    { name: 'rope-scaling-llama3-incomplete', files: family(LLAMA, { configChange: (c) => { delete c.rope_scaling.low_freq_factor; } }),
      message: /rope_scaling of type "llama3" needs a positive "factor", "low_freq_factor"/ },
    { name: 'kv-heads-not-dividing-heads', files: family(LLAMA, { configChange: (c) => { c.num_key_value_heads = 3; } }),
      message: /the number of heads \(4\) is not divisible by num_key_value_heads \(3\)/ },
    { name: 'kv-heads-disagree-with-weights', files: family(LLAMA, { configChange: (c) => { c.num_key_value_heads = 4; } }),
      message: /tensor 'model.layers.0.self_attn.k_proj.weight' has shape \[16, 32\] but config.json implies \[32, 32\]/ },
    { name: 'untied-without-lm-head', files: family(LLAMA_UNTIED, { weightsChange: ({ header }) => { delete header['lm_head.weight']; } }),
      message: /tensor 'lm_head.weight' is missing from model.safetensors \(config.json has "tie_word_embeddings": false\)/ },
    { name: 'llama-missing-bias', files: family(LLAMA_UNTIED, { weightsChange: ({ header }) => { delete header['model.layers.1.mlp.up_proj.bias']; } }),
      message: /tensor 'model.layers.1.mlp.up_proj.bias' is missing from model.safetensors/ },
    { name: 'qwen2-sliding-layer-types-short', files: family('qwen2-bias-f32', { configChange: (c) => { c.use_sliding_window = true; c.layer_types = ['full_attention']; } }),
      message: /"layer_types" must list one entry per layer \(2\)/ },
    { name: 'qwen3-missing-q-norm', files: family('qwen3-qknorm-bf16', { weightsChange: ({ header }) => { delete header['model.layers.0.self_attn.q_norm.weight']; } }),
      message: /tensor 'model.layers.0.self_attn.q_norm.weight' is missing from model.safetensors/ },
    { name: 'mistral-window-zero', files: family('mistral-window3-f16', { configChange: (c) => { c.sliding_window = 0; } }),
      message: /"sliding_window" must be an integer from 1/ },
    { name: 'neox-fused-qkv-wrong-width', files: family('pythia-serial-f32', { configChange: (c) => { c.hidden_size = 20; } }),
      message: /tensor 'gpt_neox.embed_in.weight' has shape \[257, 16\] but config.json implies \[257, 20\]/ },
    { name: 'neox-rotary-pct-above-one', files: family('pythia-serial-f32', { configChange: (c) => { c.rotary_pct = 1.5; } }),
      message: /"rotary_pct" must be in \(0, 1\]/ },
    { name: 'neox-unknown-activation', files: family('pythia-parallel-f16', { configChange: (c) => { c.hidden_act = 'mish'; } }),
      message: /"hidden_act" is "mish"; supported: gelu \(gelu_python\), gelu_new \(gelu_pytorch_tanh, gelu_fast, gelu_accurate, gelu_python_tanh\), silu \(swish\), relu, quick_gelu/ },
    // A size left out is GPT2Config's default (12 layers), as transformers reads it; this checkpoint has one.
    { name: 'config-missing-key', files: gpt2({ 'config.json': config((c) => { delete c.n_layer; }) }),
      message: /tensor 'h.1.ln_1.weight' is missing from model.safetensors/ },
    { name: 'config-negative-size', files: gpt2({ 'config.json': config((c) => { c.n_embd = -64; }) }),
      message: /"n_embd" must be an integer from 1 to 65536, got -64/ },
    { name: 'config-unsupported-activation', files: gpt2({ 'config.json': config((c) => { c.activation_function = 'mish'; }) }),
      message: /"activation_function" is "mish"; supported: gelu \(gelu_python\), gelu_new/ },
    { name: 'pickle-bin-only', files: { 'config.json': read(GPT2, 'config.json'), 'pytorch_model.bin': Buffer.concat([ZIP_MAGIC, Buffer.alloc(100)]) },
      message: /pytorch_model.bin is a PyTorch pickle checkpoint.*safe_serialization=True/ },
    { name: 'pickle-renamed-to-safetensors', files: gpt2({ 'model.safetensors': Buffer.concat([Buffer.from([0x80, 0x02, 0x7d, 0x71]), Buffer.alloc(100)]) }),
      message: /PyTorch pickle checkpoint.*safe_serialization=True/ },
    { name: 'no-config', files: { 'model.safetensors': good }, message: /config.json/ },
    // Sharded checkpoints (model.safetensors.index.json + model-0000N-of-0000M.safetensors).
    { name: 'shard-missing', files: sharded((p) => { p.shards[1] = null; }),
      message: /shard 'model-00002-of-00002.safetensors' is missing \(model.safetensors.index.json places tensors? .*in it\)/ },
    { name: 'shard-truncated', files: sharded((p) => { p.shards[0] = build(p.shards[0]).subarray(0, 40); }),
      message: /model-00001-of-00002.safetensors: safetensors: / },
    { name: 'index-invalid-json', files: sharded((p) => { p.index = '{"weight_map": {"wte.weight": '; }),
      message: /model.safetensors.index.json: not valid JSON/ },
    { name: 'seq2seq-missing-decoder-tensor', files: family(MARIAN, { weightsChange: (st) => { delete st.header['model.decoder.layers.1.encoder_attn.k_proj.weight']; } }),
      message: /tensor 'model.decoder.layers.1.encoder_attn.k_proj.weight' is missing from model.safetensors/ },
    { name: 'seq2seq-heads-not-dividing-width', files: family(MARIAN, { configChange: (c) => { c.decoder_attention_heads = 5; } }),
      message: /d_model \(32\) is not divisible by the decoder's 5 attention heads/ },
    // Left out: MarianConfig's default start token, 58100; null: the bos token, which Marian has not.
    { name: 'seq2seq-no-decoder-start', files: family(MARIAN, { configChange: (c) => { delete c.decoder_start_token_id; } }),
      message: /"decoder_start_token_id" 58100 is outside the vocabulary \(0..256\)/ },
    { name: 'seq2seq-null-decoder-start', files: family(MARIAN, { configChange: (c) => { c.decoder_start_token_id = null; } }),
      message: /"decoder_start_token_id" is null and there is no "bos_token_id": the decoder's first input token must be given/ },
    { name: 'seq2seq-decoder-start-outside-vocabulary', files: family(MARIAN, { configChange: (c) => { c.decoder_start_token_id = 4000; } }),
      message: /"decoder_start_token_id" 4000 is outside the vocabulary \(0..256\): every decoder pass starts with it/ },
    { name: 'seq2seq-umt5', files: family(MARIAN, { configChange: (c) => { c.model_type = 'umt5'; } }),
      message: /model_type "umt5" is not supported: its layers each learn their own relative position bias/ },
    { name: 'seq2seq-marian-weights-as-t5', files: family(MARIAN, { configChange: (c) => { c.model_type = 't5'; } }),
      message: /tensor 'shared.weight' \(or 'encoder.embed_tokens.weight'\) is missing: not a t5 checkpoint/ },
    { name: 'seq2seq-untied-without-lm-head', files: family(MARIAN, { configChange: (c) => { c.tie_word_embeddings = false; } }),
      message: /tensor 'lm_head.weight' is missing from model.safetensors \(config.json has "tie_word_embeddings": false\)/ },
    { name: 'seq2seq-extra-encoder-layer', files: family(MARIAN, { configChange: (c) => { c.encoder_layers = 1; } }),
      message: /unexpected tensor\(s\) for this architecture: 'model.encoder.layers.1/ },
    { name: 'bart-no-layernorm-embedding', files: family(BART, { weightsChange: (st) => { delete st.header['model.decoder.layernorm_embedding.bias']; } }),
      message: /tensor 'model.decoder.layernorm_embedding.bias' is missing/ },
    { name: 'bart-positions-disagree', files: family(BART, { configChange: (c) => { c.max_position_embeddings = 50; } }),
      message: /tensor 'model.encoder.embed_positions.weight' has shape \[42, 32\] but config.json implies \[52, 32\]/ },
    { name: 'seq2seq-more-source-tokens-than-positions', files: family(MARIAN, {}), ids: Array.from({ length: 41 }, (_, i) => i),
      message: /41 source tokens are more than the model's 40 positions/ },
    { name: 'index-without-weight-map', files: sharded((p) => { p.index = { metadata: { total_size: 1 } }; }),
      message: /model.safetensors.index.json: no "weight_map" object/ },
    { name: 'index-shard-with-path', files: sharded((p) => { p.index.weight_map['wte.weight'] = '../model.safetensors'; }),
      message: /shard '..\/model.safetensors' \(of tensor 'wte.weight'\) is not a plain file name/ },
    { name: 'index-names-absent-tensor', files: sharded((p) => { p.index.weight_map['h.0.attn.phantom'] = SHARD_NAMES[0]; }),
      message: /tensor 'h.0.attn.phantom' is not in shard 'model-00001-of-00002.safetensors', where model.safetensors.index.json places it/ },
    { name: 'index-omits-tensor', files: sharded((p) => { delete p.index.weight_map['wpe.weight']; }),
      message: /shard 'model-0000[12]-of-00002.safetensors' holds tensor 'wpe.weight', which model.safetensors.index.json does not list/ },
    { name: 'tensor-in-two-shards', files: sharded((p) => {
      const [from, to] = p.index.weight_map['ln_f.bias'] === SHARD_NAMES[0] ? p.shards : [...p.shards].reverse();
      const [begin, end] = from.header['ln_f.bias'].data_offsets;
      to.header['ln_f.bias'] = { ...from.header['ln_f.bias'], data_offsets: [to.data.length, to.data.length + end - begin] };
      to.data = Buffer.concat([to.data, from.data.subarray(begin, end)]);
    }), message: /tensor 'ln_f.bias' is in two shards, 'model-00001-of-00002.safetensors' and 'model-00002-of-00002.safetensors'/ },
  ].map((c) => ({ ids, ...c }));
}

export function writeCorpus(outDir) {
  const cases = brokenCases();
  for (const c of cases) {
    const dir = join(outDir, c.name);
    mkdirSync(dir, { recursive: true });
    for (const [file, bytes] of Object.entries(c.files)) writeFileSync(join(dir, file), bytes);
    c.dir = dir;
  }
  return cases;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node tests/broken/make-corpus.mjs OUTDIR');
    process.exit(2);
  }
  for (const c of writeCorpus(out)) console.log(`${c.dir}\t${c.message.source}`);
}
