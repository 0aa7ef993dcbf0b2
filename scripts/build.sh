#!/usr/bin/env bash
# Builds attnplay. Usage: scripts/build.sh [native|wasm|all|bench]   (default: all)
#   native: build/native/ (core library, doctest suites, CLI build/native/attnplay)
#   wasm:   build/wasm/ (attnplay_core.mjs + .wasm, single-threaded) and
#           build/wasm-mt/ (attnplay_core_mt.*, pthreads), then assembles dist/
#           (the static site: web/ plus the WASM module under dist/wasm/)
#   all:    both, native first
#   bench:  all, and the benchmark programs (tests/bench/CMakeLists.txt: the
#           native GEMM and runtime benches, the WASM SIMD probe)
# The two WASM builds share one make job server (so at most $(nproc) jobs
# run in all): while one links (binaryen's -O3, ~25 s that keep a core and a
# half busy) the other compiles; 203 -> 172 s here from clean, against one
# after the other. The native build runs on its own: side by side with them
# at -j2 each, the builds thrashed more than they overlapped.
# Each build prints its time when it ends. Incremental: CMake reconfigures
# only when needed.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-all}"
jobs="$(nproc)"
# Debian's emcc finds its JS dependencies (acorn) only through NODE_PATH.
export NODE_PATH=/usr/share/nodejs

# Configures a CMake build folder that is not configured yet: the folder,
# then the configure command (emcmake first for WASM).
# (|| return: set -e does not apply inside a function called from an && list)
configure() {
  local dir="$1"
  shift
  [[ -f "$dir/CMakeCache.txt" ]] || "$@" -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
}

# Natively clang++-14 as well (the compiler the WASM and fuzz builds use):
# it builds this project in 166 s here against GCC 12's 228 s (both with the
# precompiled headers; GCC without them: 261 s), and its code ran the native
# benches faster. Ninja rather than make: make compiles no doctest suite or
# CLI source before the core library is linked, so the core's last batch of
# sources (~25 s) ran alone on one core; ninja compiles them beside it and
# waits only to link.
build_native() {
  local begin="$(date +%s)"
  configure build/native cmake -S . -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 || return
  cmake --build build/native -j "$jobs" || return
  echo "build: build/native in $(($(date +%s) - begin)) s"
}
# Both WASM builds (single-threaded build/wasm, pthreads build/wasm-mt) under
# one make -j: the "+" hands each cmake --build (and the make under it) the
# job server.
build_wasm() {
  local begin="$(date +%s)"
  configure build/wasm emcmake cmake -S . || return
  configure build/wasm-mt emcmake cmake -S . -DATTNPLAY_THREADS=ON || return
  printf 'all: wasm wasm-mt\nwasm wasm-mt:\n\t+@cmake --build build/$@\n.PHONY: all wasm wasm-mt\n' | make -j "$jobs" -f - || return
  echo "build: build/wasm and build/wasm-mt in $(($(date +%s) - begin)) s"
}

case "$target" in
  native) build_native ;;
  wasm) build_wasm && node scripts/assemble-dist.mjs ;;
  all) build_native && build_wasm && node scripts/assemble-dist.mjs ;;
  bench) build_native && build_wasm && node scripts/assemble-dist.mjs &&
         cmake --build build/native -j "$jobs" --target gemm_native_bench runtime_bench &&
         cmake --build build/wasm -j "$jobs" --target simd_peak read_bandwidth ;;
  *) echo "usage: scripts/build.sh [native|wasm|all|bench]" >&2; exit 2 ;;
esac
