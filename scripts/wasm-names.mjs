// Removes the "name" custom section from a WebAssembly binary. The build keeps
// function names (--profiling-funcs) so that tests can find the hot functions
// in the disassembly; the copy the page downloads (dist/wasm/) goes without
// them, which saves about 30 KB gzipped. Every other section is kept byte for
// byte. Not a general WASM rewriter: it only walks the section list.
const MAGIC_AND_VERSION = 8;
const CUSTOM_SECTION = 0;

// Unsigned LEB128 at `offset` -> { value, next }.
function readVarUint(bytes, offset) {
  let value = 0;
  let shift = 0;
  for (let at = offset; at < bytes.length; at++) {
    value += (bytes[at] & 0x7f) * 2 ** shift;
    shift += 7;
    if ((bytes[at] & 0x80) === 0) return { value, next: at + 1 };
  }
  throw new Error('truncated LEB128 in the WASM section list');
}

/** bytes (Uint8Array of a .wasm file) -> a Uint8Array without the name section. */
export function withoutNameSection(bytes) {
  if (bytes.length < MAGIC_AND_VERSION || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new Error('not a WebAssembly binary');
  }
  const kept = [bytes.subarray(0, MAGIC_AND_VERSION)];
  for (let offset = MAGIC_AND_VERSION; offset < bytes.length;) {
    const { value: size, next: payload } = readVarUint(bytes, offset + 1);
    const end = payload + size;
    if (end > bytes.length) throw new Error('a WASM section runs past the end of the file');
    let isName = false;
    if (bytes[offset] === CUSTOM_SECTION) {
      const { value: nameLength, next: name } = readVarUint(bytes, payload);
      isName = new TextDecoder().decode(bytes.subarray(name, name + nameLength)) === 'name';
    }
    if (!isName) kept.push(bytes.subarray(offset, end));
    offset = end;
  }
  const out = new Uint8Array(kept.reduce((n, part) => n + part.length, 0));
  kept.reduce((at, part) => (out.set(part, at), at + part.length), 0);
  return out;
}
