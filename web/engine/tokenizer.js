// Tokenizer: a tokenizer held by the WASM module, around the bound C++
// object that the engine creates (Engine.loadTokenizer and friends); and
// tokenObjects(), the per-token objects of a model run. Never sees the WASM
// module itself. Not here: reading tokenizer files (engine.js), models.
import { AttnplayError, unwrap } from './errors.js';
import { utf8 } from './engine-inputs.js';

const utf8Decoder = new TextDecoder();

// Frees the C++ tokenizer of a Tokenizer that was garbage-collected without dispose().
const tokenizerRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => handle.delete()) : null;

/**
 * A tokenizer held by the WASM module (GPT-2 byte-level BPE or BERT WordPiece).
 * Call dispose() when done (it is also freed when garbage-collected).
 */
export class Tokenizer {
  #handle;

  constructor(handle) {
    this.#handle = handle;
    tokenizerRegistry?.register(this, handle, this);
  }

  #live() {
    if (!this.#handle) throw new AttnplayError('tokenizer: used after dispose()');
    return this.#handle;
  }

  /**
   * Tokens of a text (or a pair of texts), the post-processor applied when addSpecialTokens.
   * options: { pair?: string, addSpecialTokens = true, matchSpecialTokens = true }
   * returns { ids: Int32Array, typeIds: Int32Array, segments: Int32Array (0 text, 1 pair, -1 added by the
   *   post-processor), offsets: Uint32Array (byte [begin, end) pairs), utf16Offsets: Uint32Array (same in
   *   string indices, for highlighting), special: Uint8Array, pieces: string[], displays: string[], length }
   */
  encode(text, { pair, addSpecialTokens = true, matchSpecialTokens = true } = {}) {
    const result = unwrap(this.#live().encode(utf8(text, 'text'), pair === undefined || pair === null ? null : utf8(pair, 'pair'),
      addSpecialTokens, matchSpecialTokens));
    result.length = result.ids.length;
    return result;
  }

  /** Ids only (fast path): Int32Array. options: { addSpecialTokens = true, matchSpecialTokens = true } */
  encodeIds(text, { addSpecialTokens = true, matchSpecialTokens = true } = {}) {
    return unwrap(this.#live().encodeIds(utf8(text, 'text'), addSpecialTokens, matchSpecialTokens));
  }

  /** Text of ids (invalid UTF-8 shown as U+FFFD; decodeBytes gives the exact bytes). */
  decode(ids, { skipSpecialTokens = false } = {}) {
    return utf8Decoder.decode(this.decodeBytes(ids, { skipSpecialTokens }));
  }

  /** Bytes of ids: Uint8Array. */
  decodeBytes(ids, { skipSpecialTokens = false } = {}) {
    return unwrap(this.#live().decode(Int32Array.from(ids), skipSpecialTokens));
  }

  /** Readable string of one vocabulary entry ("␣the", "##ing", "<0xF0>"); render it as text, never HTML. */
  display(id) {
    return unwrap(this.#live().display(id));
  }

  /** Id of a vocabulary piece, or null. */
  tokenToId(piece) {
    return this.#live().tokenToId(String(piece));
  }

  /** Vocabulary piece of an id, or null. */
  idToToken(id) {
    return this.#live().idToToken(id);
  }

  /** Number of ids (model vocabulary and added tokens). */
  get vocabSize() {
    return this.#live().vocabSize();
  }

  /** "BPE" or "WordPiece". */
  get modelType() {
    return this.#live().modelType();
  }

  /** Hugging Face tokenizer.json text of this tokenizer. */
  toJson() {
    return utf8Decoder.decode(unwrap(this.#live().toJson()));
  }

  /** Frees the C++ tokenizer. */
  dispose() {
    if (!this.#handle) return;
    tokenizerRegistry?.unregister(this);
    this.#handle.delete();
    this.#handle = null;
  }
}

/** The bindings' parallel token arrays -> one object per token (TextModel.run's tokens). */
export function tokenObjects(t) {
  return Array.from(t.ids, (id, i) => ({
    id,
    piece: t.pieces[i],
    display: t.displays[i],
    start: t.utf16Offsets[2 * i],
    end: t.utf16Offsets[2 * i + 1],
    byteStart: t.offsets[2 * i],
    byteEnd: t.offsets[2 * i + 1],
    typeId: t.typeIds[i],
    segment: t.segments[i],
    special: t.special[i] === 1,
  }));
}
