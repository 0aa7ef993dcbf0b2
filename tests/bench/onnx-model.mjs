// A minimal ONNX model writer for the benchmark: encodes, with a tiny
// protobuf writer, a one-node graph Y = MatMul(A, B) with B as a constant
// initializer (as a linear layer's weight is in a real model), so that
// onnxruntime-web can run the same product as the other libraries.
// Field numbers from onnx/onnx.proto (ModelProto, GraphProto, NodeProto,
// ValueInfoProto, TypeProto, TensorShapeProto, TensorProto).

const FLOAT = 1; // TensorProto.DataType.FLOAT

class Writer {
  #bytes = [];

  varint(field, value) {
    this.#key(field, 0);
    this.#varint(value);
    return this;
  }

  bytes(field, data) {
    this.#key(field, 2);
    this.#varint(data.length);
    for (const b of data) this.#bytes.push(b);
    return this;
  }

  string(field, text) {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  message(field, writer) {
    return this.bytes(field, writer.finish());
  }

  finish() {
    return Uint8Array.from(this.#bytes);
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
