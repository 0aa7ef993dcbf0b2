#!/usr/bin/env bash
# Checks (and, as root, installs) what building, serving and testing attnplay
# needs on a fresh Debian machine: Debian packages, then the npm packages of
# package-lock.json. Usage: scripts/ensure-deps.sh [build|test]
#   build: compilers and libraries for the native and WASM builds
#   test:  build + what the test suites use (Chromium for browser tests,
#          binaryen's wasm-dis for the SIMD check, clang with libFuzzer and
#          the sanitizer runtimes for the fuzz targets, Jupyter's nbconvert
#          and the Python kernel for the notebook recipe's test: about 80 MB)
set -euo pipefail
cd "$(dirname "$0")/.."

profile="${1:-build}"
packages=(cmake make g++ emscripten libeigen3-dev nlohmann-json3-dev doctest-dev unicode-data)
if [[ "$profile" == "test" ]]; then
  # bzip2: tokenizer_components_test reads unicode-data's NormalizationTest.txt.bz2
  packages+=(chromium binaryen clang-14 libclang-rt-14-dev bzip2 python3-nbconvert python3-ipykernel)
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  if [[ "$(id -u)" == 0 ]]; then
    echo "attnplay: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "attnplay: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# npm packages: install when node_modules is missing or older than the lock file.
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "attnplay: installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
