// A minimal ONNX model writer for the benchmark: encodes, with a tiny
// protobuf writer, a one-node graph Y = MatMul(A, B) with B as a constant
// initializer (as a linear layer's weight is in a real model), so that
// onnxruntime-web can run the same product as the other libraries; and a
// ViT's forward pass (vitModel: the graph a ViT exports to, every layer's
// attention weights among its outputs).
// Field numbers from onnx/onnx.proto (ModelProto, GraphProto, NodeProto,
// AttributeProto, ValueInfoProto, TypeProto, TensorShapeProto, TensorProto).

const FLOAT = 1; // TensorProto.DataType.FLOAT
const INT64 = 7; // TensorProto.DataType.INT64

class Writer {
  #chunks = []; // Uint8Arrays, and small runs of bytes as plain arrays (a model's weights are too many for one array)
  #bytes = [];

  varint(field, value) {
    this.#key(field, 0);
    this.#varint(value);
    return this;
  }

  bytes(field, data) {
    this.#key(field, 2);
    this.#varint(data.length);
    if (data.length < 64) {
      for (const b of data) this.#bytes.push(b);
    } else {
      this.#flush();
      this.#chunks.push(data);
    }
    return this;
  }

  float(field, value) {
    this.#key(field, 5);
    for (const b of new Uint8Array(new Float32Array([value]).buffer)) this.#bytes.push(b);
    return this;
  }

  string(field, text) {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  message(field, writer) {
    return this.bytes(field, writer.finish());
  }

  finish() {
    this.#flush();
    const length = this.#chunks.reduce((n, c) => n + c.length, 0);
    const out = new Uint8Array(length);
    let at = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }

  #flush() {
    if (this.#bytes.length) this.#chunks.push(Uint8Array.from(this.#bytes));
    this.#bytes = [];
  }

  #key(field, wireType) {
    this.#varint(field * 8 + wireType);
  }

  #varint(value) {
    let v = BigInt(value);
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      this.#bytes.push(byte);
    } while (v > 0n);
  }
}

function valueInfo(name, shape) {
  const dims = new Writer();
  for (const d of shape) dims.message(1, new Writer().varint(1, d)); // TensorShapeProto.dim.dim_value
  const tensorType = new Writer().varint(1, FLOAT).message(2, dims); // elem_type, shape
  return new Writer().string(1, name).message(2, new Writer().message(1, tensorType)); // name, type.tensor_type
}

/**
 * ONNX bytes of Y [m, n] = A [m, k] · B, with B (Float32Array, [k, n]) baked in.
 * Inputs: "A"; output: "Y".
 */
export function matmulModel(m, k, n, b) {
  const initializer = new Writer()
    .varint(1, k)
    .varint(1, n) // dims
    .varint(2, FLOAT) // data_type
    .string(8, 'B') // name
    .bytes(9, new Uint8Array(b.buffer, b.byteOffset, b.byteLength)); // raw_data (little-endian floats)
  const node = new Writer().string(1, 'A').string(1, 'B').string(2, 'Y').string(3, 'matmul').string(4, 'MatMul');
  const graph = new Writer()
    .message(1, node)
    .string(2, 'gemm')
    .message(5, initializer)
    .message(11, valueInfo('A', [m, k]))
    .message(12, valueInfo('Y', [m, n]));
  return new Writer()
    .varint(1, 8) // ir_version
    .string(2, 'attnplay-bench') // producer_name
    .message(7, graph)
    .message(8, new Writer().string(1, '').varint(2, 13)) // opset_import: default domain, opset 13
    .finish();
}

// TensorProto of a float32 or int64 initializer.
function tensor(name, shape, values, type = FLOAT) {
  const raw = type === FLOAT ? new Uint8Array(values.buffer, values.byteOffset, values.byteLength)
    : new Uint8Array(BigInt64Array.from(values, (v) => BigInt(v)).buffer);
  const t = new Writer();
  for (const d of shape) t.varint(1, d); // dims
  return t.varint(2, type).string(8, name).bytes(9, raw); // data_type, name, raw_data
}

// AttributeProto: an int (type 2), a float (1) or ints (7).
function attribute(name, value) {
  const a = new Writer().string(1, name);
  if (Array.isArray(value)) {
    for (const v of value) a.varint(8, v < 0 ? BigInt.asUintN(64, BigInt(v)) : v);
    return a.varint(20, 7);
  }
  return Number.isInteger(value) ? a.varint(3, value < 0 ? BigInt.asUintN(64, BigInt(value)) : value).varint(20, 2) : a.float(2, value).varint(20, 1);
}

/**
 * ONNX bytes of a ViT (ViTForImageClassification's arithmetic, as
 * transformers exports it): input "patches" [N, C·p·p] (the picture cut into
 * patches, each flattened channel, row, column: the patch Conv2d as a
 * product), outputs "att0".."att{L-1}" ([H, T, T] each: every layer's
 * attention weights) and "logits" [1, labels]. w: the model's tensors by
 * transformers' names as float32 arrays in their stored layout
 * (nn.Linear [out, in]); c: { width, layers, heads, inner, patches, labels, eps }.
 */
export function vitModel(w, c) {
  const { width: d, layers: L, heads: H, inner, patches: N, labels, eps } = c;
  const T = N + 1;
  const dk = d / H;
  const nodes = [];
  const initializers = [];
  let counter = 0;
  const fresh = (stem) => `${stem}_${counter++}`;
  const node = (op, inputs, attributes = {}, output = fresh(op)) => {
    const n = new Writer();
    for (const input of inputs) n.string(1, input);
    n.string(2, output).string(3, fresh('node')).string(4, op);
    for (const [name, value] of Object.entries(attributes)) n.message(5, attribute(name, value));
    nodes.push(n);
    return output;
  };
  const constant = (name, shape, values, type = FLOAT) => {
    initializers.push(tensor(name, shape, values, type));
    return name;
  };
  // nn.Linear [out, in] -> the [in, out] a MatMul takes.
  const transposed = (name, out, inn) => {
    const src = w[name];
    const t = new Float32Array(out * inn);
    for (let o = 0; o < out; o += 1) for (let i = 0; i < inn; i += 1) t[i * out + o] = src[o * inn + i];
    return constant(name, [inn, out], t);
  };
  const linear = (x, base, inn, out) => node('Add', [node('MatMul', [x, transposed(`${base}.weight`, out, inn)]), constant(`${base}.bias`, [out], w[`${base}.bias`])]);
  const layerNorm = (x, base) => node('LayerNormalization', [x, constant(`${base}.weight`, [d], w[`${base}.weight`]), constant(`${base}.bias`, [d], w[`${base}.bias`])], { axis: -1, epsilon: eps });
  const headsShape = constant('heads_shape', [3], [T, H, dk], INT64);
  const flatShape = constant('flat_shape', [2], [T, d], INT64);
  const scale = constant('scale', [], new Float32Array([1 / Math.sqrt(dk)]));
  const half = constant('half', [], new Float32Array([0.5]));
  const one = constant('one', [], new Float32Array([1]));
  const rootTwo = constant('root_two', [], new Float32Array([Math.SQRT2]));

  const patchSize = c.patchInput;
  const embedded = linear('patches', 'vit.embeddings.patch_embeddings.projection', patchSize, d); // [N, d]
  const cls = constant('vit.embeddings.cls_token', [1, d], w['vit.embeddings.cls_token']);
  const positions = constant('vit.embeddings.position_embeddings', [T, d], w['vit.embeddings.position_embeddings']);
  let h = node('Add', [node('Concat', [cls, embedded], { axis: 0 }), positions]); // [T, d]
  const outputs = [];
  for (let l = 0; l < L; l += 1) {
    const p = `vit.encoder.layer.${l}.`;
    const x = layerNorm(h, `${p}layernorm_before`);
    const split = (t, perm) => node('Transpose', [node('Reshape', [t, headsShape])], { perm });
    const q = split(linear(x, `${p}attention.attention.query`, d, d), [1, 0, 2]); // [H, T, dk]
    const k = split(linear(x, `${p}attention.attention.key`, d, d), [1, 2, 0]); // [H, dk, T]
    const v = split(linear(x, `${p}attention.attention.value`, d, d), [1, 0, 2]); // [H, T, dk]
    const weights = node('Softmax', [node('Mul', [node('MatMul', [q, k]), scale])], { axis: -1 }, `att${l}`); // [H, T, T]
    outputs.push(`att${l}`);
    const context = node('Reshape', [node('Transpose', [node('MatMul', [weights, v])], { perm: [1, 0, 2] }), flatShape]); // [T, d]
    h = node('Add', [h, linear(context, `${p}attention.output.dense`, d, d)]);
    const inner1 = linear(layerNorm(h, `${p}layernorm_after`), `${p}intermediate.dense`, d, inner);
    const gelu = node('Mul', [node('Mul', [inner1, half]), node('Add', [one, node('Erf', [node('Div', [inner1, rootTwo])])])]);
    h = node('Add', [h, linear(gelu, `${p}output.dense`, inner, d)]);
  }
  const final = layerNorm(h, 'vit.layernorm');
  const clsRow = node('Gather', [final, constant('zero_index', [1], [0], INT64)], { axis: 0 }); // [1, d]
  node('Add', [node('MatMul', [clsRow, transposed('classifier.weight', labels, d)]), constant('classifier.bias', [labels], w['classifier.bias'])], {}, 'logits');
  const graph = new Writer();
  for (const n of nodes) graph.message(1, n);
  graph.string(2, 'vit');
  for (const t of initializers) graph.message(5, t);
  graph.message(11, valueInfo('patches', [N, patchSize]));
  for (const name of outputs) graph.message(12, valueInfo(name, [H, T, T]));
  graph.message(12, valueInfo('logits', [1, labels]));
  return new Writer()
    .varint(1, 8)
    .string(2, 'attnplay-bench')
    .message(7, graph)
    .message(8, new Writer().string(1, '').varint(2, 17)) // opset 17: LayerNormalization
    .finish();
}
