#!/usr/bin/env bash
# Builds attnplay. Usage: scripts/build.sh [native|wasm|all]   (default: all)
#   native: build/native/ (core library, doctest suites, CLI build/native/attnplay)
#   wasm:   build/wasm/ (attnplay_core.mjs + .wasm, single-threaded) and
#           build/wasm-mt/ (attnplay_core_mt.*, pthreads), then assembles dist/
#           (the static site: web/ plus the WASM module under dist/wasm/)
# Incremental: CMake reconfigures only when needed.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-all}"
jobs="$(nproc)"

build_native() {
  [[ -f build/native/CMakeCache.txt ]] || cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j "$jobs"
}

build_wasm() {
  # Debian's emcc finds its JS dependencies (acorn) only through NODE_PATH.
  export NODE_PATH=/usr/share/nodejs
  [[ -f build/wasm/CMakeCache.txt ]] || emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/wasm -j "$jobs"
  [[ -f build/wasm-mt/CMakeCache.txt ]] ||
    emcmake cmake -S . -B build/wasm-mt -DCMAKE_BUILD_TYPE=Release -DATTNPLAY_THREADS=ON >/dev/null
  cmake --build build/wasm-mt -j "$jobs"
  node scripts/assemble-dist.mjs
}

case "$target" in
  native) build_native ;;
  wasm) build_wasm ;;
  all) build_native && build_wasm ;;
  *) echo "usage: scripts/build.sh [native|wasm|all]" >&2; exit 2 ;;
esac
