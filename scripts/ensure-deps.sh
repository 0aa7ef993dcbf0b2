#!/usr/bin/env bash
# Checks (and, as root, installs) what building, serving, testing, benchmarking
# and remaking the goldens of attnplay need on a fresh Debian machine: the
# Debian packages of the table below, then the npm packages of
# package-lock.json, then every program of the profile with a real invocation.
# Usage: scripts/ensure-deps.sh [native|build|test|bench|goldens]   (default: build)
#   native:  the native build's compilers and libraries (CMake, Ninja,
#            clang-14, Eigen, ...), no npm packages: what npm test installs
#            first, so that its native build runs while the rest installs;
#            every profile includes it
#   build:   native + emscripten: the native and WASM builds (npm start);
#            every profile but native includes it
#   test:    build + what the test suites run (npm test): Chromium, binaryen's
#            wasm-dis, clang's libFuzzer and sanitizer runtimes, Debian's
#            Python with nbconvert and the Jupyter kernel (about 80 MB)
#   bench:   build + what the benchmarks run (npm run bench): Chromium, and
#            Debian's Python with sentencepiece (the SentencePiece bench's peer)
#   goldens: what remakes the golden data and trains the shipped models
#            (tests/golden, tests/tokenizer's make scripts, models/train,
#            scripts/make-sample-pictures.py): PyTorch, SentencePiece, Pillow;
#            never needed by npm test
# The table is the one list of programs that a build, test, bench or golden
# script runs: tests/node/programs.test.mjs fails when a script spawns a
# program that is not in it, and tests/programs.mjs's requireProgram names a
# missing one's package.
# It does not install Node.js: Node.js >= 20 with npm is the one prerequisite.
set -euo pipefail
cd "$(dirname "$0")/.."

profile="${1:-build}"
case "$profile" in
  native | build | test | bench | goldens) ;;
  *) echo "usage: scripts/ensure-deps.sh [native|build|test|bench|goldens]" >&2; exit 2 ;;
esac

# profiles: where the row applies (base and native: always; build: all but native). package: the
# Debian package ("-": a prerequisite this script does not install). programs: what the
# scripts run from it (python3:MODULE is `python3 -m MODULE`). check: a real
# invocation, run from the repository root with $tmp an empty scratch folder.
# BEGIN PROGRAMS
#| profiles            | package            | programs                      | check
# base: Debian's required packages, and Node.js
#| base                | bash               | bash                          | bash -c true
#| base                | coreutils          | basename cat cp date dirname env head id ln ls mkdir mktemp nice nproc printf rm sleep sort stat tail tee touch tr wc | date +%s >/dev/null && nproc >/dev/null && mktemp -d -p "$tmp" >/dev/null
#| base                | findutils          | find xargs                    | find scripts -name ensure-deps.sh | grep -q .
#| base                | grep               | grep                          | echo ok | grep -q ok
#| base                | sed                | sed                           | echo ok | sed -n /ok/p | grep -q ok
#| base                | dpkg               | dpkg-query dpkg-deb           | dpkg-query -W bash >/dev/null && dpkg-deb --version >/dev/null
#| base                | apt                | apt-get                       | apt-get --version >/dev/null
#| base                | -                  | node npm                      | node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' && npm --version >/dev/null
#| native              | cmake              | cmake ctest                   | cmake --version >/dev/null && ctest --version >/dev/null
#| native              | make               | make                          | make --version >/dev/null
#| native              | ninja-build        | ninja                         | ninja --version >/dev/null
#| native              | clang-14           | clang++-14                    | printf '#include <vector>\nint main() { return std::vector<int>{0}[0]; }\n' | clang++-14 -x c++ - -o "$tmp/a.out" && "$tmp/a.out"
#| build               | emscripten         | emcc emcmake                  | printf 'int f(int x) { return x + 1; }\n' | NODE_PATH=/usr/share/nodejs emcc -msimd128 -x c -c - -o "$tmp/f.o"
#| native              | libeigen3-dev      | -                             | test -f /usr/include/eigen3/Eigen/Core
#| native              | nlohmann-json3-dev | -                             | test -f /usr/include/nlohmann/json.hpp
#| native              | doctest-dev        | -                             | test -f /usr/include/doctest/doctest.h
#| native              | unicode-data       | -                             | test -f /usr/share/unicode/UnicodeData.txt
# libstb-dev, libjpeg62-turbo-dev: stb_image (PNG, BMP, GIF) and libjpeg-turbo decode the CLI's pictures (cpp/image/decode.cpp)
#| native              | libstb-dev         | -                             | test -f /usr/include/stb/stb_image.h
#| native              | libjpeg62-turbo-dev | -                            | test -f /usr/include/jpeglib.h
#| test,bench          | chromium           | chromium                      | /usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --user-data-dir="$tmp/chromium" --dump-dom 'data:text/html,<p>chromium-ok</p>' 2>/dev/null | grep -q chromium-ok
#| test                | binaryen           | wasm-dis                      | wasm-dis --version >/dev/null
#| test                | libclang-rt-14-dev | -                             | printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' | clang++-14 -fsanitize=fuzzer,address,undefined -x c++ - -o "$tmp/fuzz" && "$tmp/fuzz" -runs=1 >/dev/null 2>&1
# bzip2: tokenizer_components_test reads unicode-data's NormalizationTest.txt.bz2 through it
#| test                | bzip2              | bzip2                         | bzip2 -dc /usr/share/unicode/NormalizationTest.txt.bz2 | head -c 1 >/dev/null
#| test,bench,goldens  | python3            | python3                       | /usr/bin/python3 -c 'import json'
#| test                | python3-nbconvert  | python3:nbconvert             | /usr/bin/python3 -m nbconvert --version >/dev/null
#| test                | python3-ipykernel  | python3:ipykernel_launcher    | /usr/bin/python3 -c 'from jupyter_client.kernelspec import get_kernel_spec; get_kernel_spec("python3")'
# python3-venv: the Python package's test installs it into a fresh virtual environment (pip comes with the venv)
#| test                | python3-venv       | python3:venv                  | /usr/bin/python3 -m venv "$tmp/venv" && "$tmp/venv/bin/python" -m pip --version >/dev/null
#| goldens             | python3-torch      | -                             | /usr/bin/python3 -c 'import torch; torch.ones(2) @ torch.ones(2)'
#| goldens             | libopenblas0-pthread | -                           | test -n "$(find /usr/lib -name 'libopenblas*.so*' -path '*pthread*' -print -quit)"
#| test,bench,goldens  | python3-numpy      | -                             | /usr/bin/python3 -c 'import numpy'
# python3-pil: Pillow resizes the vision goldens' pictures, as transformers' image processors call it
#| goldens             | python3-pil        | -                             | /usr/bin/python3 -c 'import PIL.Image'
#| bench,goldens       | python3-sentencepiece | python3:sentencepiece      | /usr/bin/python3 -c 'import sentencepiece'
#| goldens             | sentencepiece      | spm_train                     | spm_train --help 2>&1 | grep -q model_prefix
# END PROGRAMS

# Rows of this profile: "package|check" lines.
rows() {
  sed -n '/^# BEGIN PROGRAMS$/,/^# END PROGRAMS$/s/^#| //p' "$0" | sed 1d |
    while IFS='|' read -r profiles package programs check; do
      profiles="$(echo $profiles)"; package="$(echo $package)"
      case ",$profiles," in
        *,base,* | *,native,* | *",$profile,"*) ;;
        *,build,*) [[ "$profile" != native ]] || continue ;;
        *) continue ;;
      esac
      printf '%s|%s\n' "$package" "$(echo "$check" | sed 's/^ *//')"
    done
}

# npm packages: installed (npm ci) when node_modules is missing or older than
# the lock file, while apt works: neither needs the other.
npm_install=""
if [[ "$profile" != goldens && "$profile" != native ]] && [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "attnplay: installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error &
  npm_install=$!
fi

missing=()
while IFS='|' read -r package _; do
  [[ "$package" == - ]] && continue
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done < <(rows)

if ((${#missing[@]} > 0)); then
  if [[ "$(id -u)" == 0 ]]; then
    echo "attnplay: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Once: npm test installs the native profile, then the test profile.
    [[ -n "$(find /var/lib/apt/lists -maxdepth 0 -mmin -30 2>/dev/null)" ]] || apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "attnplay: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

if [[ -n "$npm_install" ]] && ! wait "$npm_install"; then
  echo "attnplay: npm ci failed" >&2
  exit 1
fi

# Every program of the profile, run for real: a package that is installed but
# broken, or a program that a package did not bring, fails here by name.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=()
checked=0
while IFS='|' read -r package check; do
  checked=$((checked + 1))
  if ! (export tmp; bash -c "$check") </dev/null >"$tmp/check.log" 2>&1; then
    failed+=("$package: $check")
    sed 's/^/    /' "$tmp/check.log" | tail -n 5 >&2
  fi
done < <(rows)
if ((${#failed[@]} > 0)); then
  echo "attnplay: these checks failed (profile $profile):" >&2
  printf '  %s\n' "${failed[@]}" >&2
  [[ " ${failed[*]} " == *" -: "* ]] && echo "  (Node.js >= 20 with npm is a prerequisite: install it first)" >&2
  exit 1
fi
echo "attnplay: $checked checks passed (profile $profile)"
