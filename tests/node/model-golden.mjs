// Shared by the Node model tests: the golden checkpoints of tests/golden/models
// (PyTorch reference, see tests/golden/make_model_goldens.py) and comparisons.
import { readFileSync } from 'node:fs';

export const MODELS = ['gpt2-l2-h12-k8-f16', 'gpt2-l1-h1-k64-f32', 'gpt2-l4-h4-k8-bf16',
  'bert-l2-h2-k32-f32', 'bert-l3-h6-k16-f16', 'bert-l1-h3-k8-bf16', 'distilbert-l2-h4-k8-f32', 'distilbert-l1-h2-k16-bf16',
  'electra-generator-l2-h2-k16-e24-f32', 'electra-discriminator-l1-h4-k8-bf16',
  'roberta-l2-h2-k16-f32', 'xlm-roberta-l1-h4-k8-bf16', 'roberta-l1-h2-k8-f16',
  'opt-l2-h4-k8-f32', 'opt-post-ln-proj-f16', 'opt-nobias-gelu-untied-bf16',
  'gemma-mqa-hd16-bf16', 'gemma2-softcap-window-f32', 'gemma3-layer-types-f16', 'olmo2-gqa-f16', 'smollm3-norope-f32',
  'phi3-partial-window-bf16',
  'llama-gqa-llama3-bf16', 'llama-mqa-bias-linear-f32', 'mistral-window3-f16', 'qwen2-bias-f32',
  'qwen3-qknorm-bf16', 'pythia-parallel-f16', 'pythia-serial-f32', 'qwen2-yarn-f32', 'phi3-longrope-f16',
  'gpt2-unscaled-inverse-layer-f32', 'opt-bare-norms-no-final-f32', 'qwen2-sliding-layers-f16'];

export const modelsDir = new URL('../golden/models/', import.meta.url);

export function modelFiles(name) {
  const dir = new URL(`${name}/`, modelsDir);
  return {
    config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)),
    tokenizer: readFileSync(new URL('tokenizer.json', dir), 'utf8'),
  };
}

export function golden(name) {
  return JSON.parse(readFileSync(new URL(`${name}/golden.json`, modelsDir), 'utf8'));
}

export const flat = (nested) => nested.flat(Infinity);

export function maxAbsDiff(data, reference) {
  if (data.length !== reference.length) throw new Error(`length ${data.length} vs ${reference.length}`);
  let m = 0;
  for (let i = 0; i < data.length; i += 1) m = Math.max(m, Math.abs(data[i] - reference[i]));
  return m;
}

/** max |ours - reference| / max |reference| */
export function relativeError(data, reference) {
  return maxAbsDiff(data, reference) / reference.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
}
