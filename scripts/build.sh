#!/usr/bin/env bash
# Builds attnplay. Usage: scripts/build.sh [native|wasm|all]   (default: all)
#   native: build/native/ (core library, doctest suites, CLI build/native/attnplay)
#   wasm:   build/wasm/ (attnplay_core.mjs + .wasm, single-threaded) and
#           build/wasm-mt/ (attnplay_core_mt.*, pthreads), then assembles dist/
#           (the static site: web/ plus the WASM module under dist/wasm/)
#   all:    both, one after the other (side by side they took longer here:
#           three builds of -j2 on two cores thrash more than they overlap)
# Each build prints its time when it ends. Incremental: CMake reconfigures
# only when needed.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-all}"
jobs="$(nproc)"
# Debian's emcc finds its JS dependencies (acorn) only through NODE_PATH.
export NODE_PATH=/usr/share/nodejs

# One CMake build: folder, then configure arguments (emcmake first for WASM).
cmake_build() {
  local dir="$1" begin
  shift
  begin="$(date +%s)"
  # (|| return: set -e does not apply inside a function called from an && list)
  [[ -f "$dir/CMakeCache.txt" ]] || "$@" -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null || return
  cmake --build "$dir" -j "$jobs" || return
  echo "build: $dir in $(($(date +%s) - begin)) s"
}

# Natively clang++-14 as well (the compiler the WASM and fuzz builds use):
# it builds this project in 166 s here against GCC 12's 228 s (both with the
# precompiled headers; GCC without them: 261 s), and its code ran the native
# benches faster.
build_native() { cmake_build build/native cmake -S . -DCMAKE_CXX_COMPILER=clang++-14; }
build_wasm_st() { cmake_build build/wasm emcmake cmake -S .; }
build_wasm_mt() { cmake_build build/wasm-mt emcmake cmake -S . -DATTNPLAY_THREADS=ON; }

case "$target" in
  native) build_native ;;
  wasm) build_wasm_st && build_wasm_mt && node scripts/assemble-dist.mjs ;;
  all) build_native && build_wasm_st && build_wasm_mt && node scripts/assemble-dist.mjs ;;
  *) echo "usage: scripts/build.sh [native|wasm|all]" >&2; exit 2 ;;
esac
