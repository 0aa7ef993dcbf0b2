// Models whose files a page holds itself, by name: a page that cannot serve
// a model folder (the Python package's playground cell, an <iframe srcdoc>
// in a notebook) registers { config, weights, tokenizer } as Blobs, and a
// widget whose `model` attribute is that name loads them instead of the
// folder models/<name>/ (attention-view.js's widgetModel).
// Not here: reading the files (the engine's model-files.js).

const embedded = new Map(); // name -> { config, weights, tokenizer, ... } (Blobs)

/** Registers the files of model `name` (keys as the engine's MODEL_FILES: config, weights, tokenizer, ...). */
export function registerEmbeddedModel(name, files) {
  embedded.set(name, files);
}

/** The registered files of model `name`, or null. */
export function embeddedModel(name) {
  return embedded.get(name) ?? null;
}
