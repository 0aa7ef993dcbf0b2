// TypeScript declarations of the <attention-view> element (attention-view.js).
// Importing the module registers the element; see embed/index.html.

/** One token of a run: its vocabulary id and the text shown for it. */
export interface AttentionToken {
  id: number;
  display: string;
  typeId?: number;
}

/** A run's attention: `data` holds `shape` = [layers, heads, tokens, tokens], row-major. */
export interface AttentionResult {
  tokens: AttentionToken[];
  attentions: { data: Float32Array; shape: [number, number, number, number] };
  texts: string[];
  causal: boolean;
  modelType: string;
  /** Key/value heads of the model (fewer than the heads with grouped-query attention); absent in data mode. */
  kvHeads?: number;
}

/** An author's worked example for the scratch view. */
export interface AuthorMatrices {
  title?: string;
  /** One label per row of x. */
  tokens: string[];
  /** Embeddings: tokens × d. */
  x: number[][];
  /** d × d_k. */
  wq: number[][];
  /** d × d_k. */
  wk: number[][];
  /** d × d_v. */
  wv: number[][];
  /** The output a tutorial prints (tokens × d_v): the widget checks its own against it. */
  printedOutput?: number[][];
}

/** An author's alignment example for the scratch view's cross-attention step. */
export interface AuthorCrossMatrices {
  title?: string;
  /** One label per row of xEncoder (the source words). */
  source: string[];
  /** One label per row of xDecoder (the target words). */
  target: string[];
  /** Encoder states: source × d_enc. */
  xEncoder: number[][];
  /** Decoder states: target × d_dec. */
  xDecoder: number[][];
  /** d_dec × d_k (queries from the decoder). */
  wq: number[][];
  /** d_enc × d_k (keys from the encoder). */
  wk: number[][];
  /** d_enc × d_v (values from the encoder). */
  wv: number[][];
  /** Names of the d_enc and d_dec axes (default d0, d1, ...). */
  sourceAxes?: string[];
  targetAxes?: string[];
}

/** A tensor: nested lists, { data, shape }, .npy bytes, or base64 little-endian float32. */
export type AttentionTensor =
  | number[][][][]
  | number[][][][][]
  | { data: Float32Array | number[]; shape: number[] }
  | { dtype: 'float32'; shape: number[]; base64: string }
  | ArrayBuffer
  | Uint8Array;
export type AttentionDataToken = string | { token?: string; display?: string; text?: string; piece?: string; id?: number; special?: boolean; type_id?: number };
type HeadLabels = (string | string[])[][];

/**
 * Attention computed elsewhere, for data mode: [layer][head][query][key], or
 * PyTorch's output_attentions ([layer][1][head][query][key]), with its tokens;
 * encoder–decoder models give the encoder/decoder/cross parts instead.
 */
export interface AttentionData {
  tokens?: AttentionDataToken[];
  ids?: number[];
  attentions?: AttentionTensor;
  encoder_attentions?: AttentionTensor;
  decoder_attentions?: AttentionTensor;
  /** [layer][1][head][decoder token][encoder token]. */
  cross_attentions?: AttentionTensor;
  encoder_tokens?: AttentionDataToken[];
  decoder_tokens?: AttentionDataToken[];
  /** A label (or labels) per head, [layer][head]; per part for encoder–decoder data. */
  head_labels?: HeadLabels | { self?: HeadLabels; encoder?: HeadLabels; decoder?: HeadLabels; cross?: HeadLabels };
  /** Default: true when every weight above the diagonal is 0. */
  causal?: boolean;
  model?: string;
  model_type?: string;
  /** A vision transformer's picture beside `attentions` (its tokens: CLS and the other learned tokens, then the patches row by row). */
  image?: {
    /** The picture as the model saw it (resized and cropped), a PNG in base64. */
    seen: { width: number; height: number; png: string };
    grid: { rows: number; columns: number };
    patch: { height: number; width: number };
    width?: number;
    height?: number;
  };
  /** A classifier's top labels (top_k_before: without the knocked-out heads). */
  top_k?: { ids?: number[]; labels: string[]; probabilities: number[] }[];
  top_k_before?: { ids?: number[]; labels: string[]; probabilities: number[] }[];
  /** [layer + 1][token]: the norm of each token's hidden state, before the first layer and after each. */
  norms?: number[][];
}

export type AttentionViewName = 'image' | 'head' | 'model' | 'matrix' | 'rollout' | 'lens' | 'neuron' | 'scratch' | 'cross' | 'generate' | 'compare' | 'ablation';
export type AttentionTheme = 'auto' | 'light' | 'dark';

export interface TokenSelectDetail { token: number | null; display: string | null; layer: number }
export interface HeadSelectDetail { layer: number; heads: number[] | null }
/** tokens: the token names (a vision model's: '[CLS]', ..., then '(row, column)' of each patch); labels: a vision classifier's top labels. */
export interface AttentionReadyDetail { tokens: string[]; labels?: string[]; translation?: string; layers: number; heads: number }
export interface AblationChangeDetail { ablate: string; ablation: 'zero' | 'mean' }

export class AttentionView extends HTMLElement {
  /** A shipped model's name, hf:ORG/NAME[@revision] (a model on the hub), or the URL of a Hugging Face model folder. */
  model: string;
  /** Where hf: models come from: https://huggingface.co unless set (a mirror). */
  hub: string;
  text: string;
  textB: string;
  /** An encoder–decoder model's target text (the `target` attribute); '' = the model's own translation. */
  target: string;
  view: AttentionViewName;
  /** The compare view's text B (the `compare-text` attribute); text A is `text`. */
  compareText: string;
  /** Settings of the generate view's generation (the `generate` attribute): "20" (greedy, 20 new tokens) or "20:t0.8:k40:p0.95:s7" (sampling), or null (the reader presses Generate). */
  generate: string | null;
  /** Layer index from 0. */
  layer: number;
  /** Selected head indices from 0, or null for every head. */
  heads: number[] | null;
  /** Locked query token index, or null. */
  token: number | null;
  threshold: number;
  /** Knocked-out heads as "LAYER:HEAD,..." (0-based; '' for none), the `ablate` attribute; every view shows the ablated model. Setting takes the string or [[layer, head], ...]. */
  ablate: string;
  /** What an ablated head's output becomes (the `ablation` attribute): 'zero' or its mean over the text's positions. */
  ablation: 'zero' | 'mean';
  theme: AttentionTheme;
  /** What the image view's overlay shows (the `overlay` attribute): the layer's attention, or rollout or attention flow over all layers. */
  overlay: 'attention' | 'rollout' | 'flow';
  editable: boolean;
  /** Maximum height of the view: pixels or a CSS length. */
  height: string | null;
  /** The rollout view's method (the `rollout-method` attribute): rollout (Ā_L · … · Ā_1) or attention flow (max flow). */
  rolloutMethod: 'rollout' | 'flow';
  /** The rollout view's display (the `rollout-display` attribute): a heatmap, or the head view's lines. */
  rolloutDisplay: 'matrix' | 'lines';
  /** The author's example of the scratch view, or null (a cross-attention example is read from a child JSON script; setting one throws). */
  matrices: AuthorMatrices | AuthorCrossMatrices | null;
  /** Attention to draw instead of running a model (data mode), or null. Also: the src attribute, a child JSON script. */
  data: AttentionData | null;
  /** The last run, or null before the first. */
  readonly result: AttentionResult | null;
  /** Forward runs made so far (0 until the widget has been scrolled into view). */
  readonly runs: number;
  /** The element drawing the current view, once shown. */
  readonly viewElement: HTMLElement | null;
}

/** URL of a model folder: a shipped name resolves next to the module, anything else against `base`. */
export function modelFolderUrl(model: string, base?: string): string;

/** What the engine worker loads for a model attribute: a folder URL, or a hub model { hub, id, revision }. */
export function widgetModel(model: string, hub: string): { key: string; source: string | { hub: string; id: string; revision: string } };

declare global {
  interface HTMLElementTagNameMap {
    'attention-view': AttentionView;
  }
  interface HTMLElementEventMap {
    'token-select': CustomEvent<TokenSelectDetail>;
    'head-select': CustomEvent<HeadSelectDetail>;
    'attention-ready': CustomEvent<AttentionReadyDetail>;
    'ablation-change': CustomEvent<AblationChangeDetail>;
  }
}
