#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (ASan + UBSan) into
# build/fuzz/ (tests/fuzz/CMakeLists.txt: each source compiled once, in
# parallel) and runs each for a few seconds from the golden files as seeds,
# as many at a time as there are cores.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 5; npm test uses this)
# The random seed is fixed (FUZZ_SEED, default 1) so that npm test is
# reproducible; FUZZ_SEED=0 lets libFuzzer pick one, for longer hunts.
# Any crash, sanitizer report or leak fails the script; libFuzzer writes the
# input that triggered it to build/fuzz/crash-*.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
out=build/fuzz
jobs="$(nproc)"
# Ninja, as the native build (scripts/build.sh): the targets' own sources
# compile beside the object libraries they link, not after them.
[[ -f "$out/CMakeCache.txt" ]] || cmake -S tests/fuzz -B "$out" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null

# Seeds: small valid inputs (the smallest golden checkpoint, every config.json,
# config + NUL + weights for the model loader (BERT, Qwen3, GPT-NeoX, ViT), and every golden tokenizer.json
# + NUL + a text for the tokenizer loader, with the families' tokenizer.json
# shapes of tests/fuzz/tokenizer-seeds.mjs, a one-shard index + NUL + that
# shard for the sharded checkpoint loader, and a text + NUL + each small
# SentencePiece model of tests/tokenizer/sentencepiece for the .model reader;
# the golden pictures, good and malformed, for the picture decoder).
# Written while the targets compile (the node script is ~5 s on one core).
seeds="$out/seeds"
make_seeds() {
  rm -rf "$seeds" && mkdir -p "$seeds/safetensors" "$seeds/config" "$seeds/tokenizer" "$seeds/checkpoint" "$seeds/sentencepiece" "$seeds/picture"
  cp tests/golden/pictures/* "$seeds/picture/"
  local small=tests/golden/models/bert-l1-h3-k8-bf16
  cp "$small/model.safetensors" "$seeds/safetensors/"
  for dir in tests/golden/models/*/; do cp "$dir/config.json" "$seeds/config/$(basename "$dir").json"; done
  for dir in "$small" tests/golden/models/qwen3-qknorm-bf16 tests/golden/models/pythia-serial-f32 tests/golden/models/vit-bare-pooler-f16; do
    { cat "$dir/config.json"; printf '\0'; cat "$dir/model.safetensors"; } > "$seeds/config/bundle-$(basename "$dir")"
  done
  for dir in tests/golden/models/*/; do
    [[ -f "$dir/tokenizer.json" ]] || continue  # vision models read pictures
    { cat "$dir/tokenizer.json"; printf '\0%s' "Hello, café! The cat [MASK] sat. 😀 <|endoftext|>"; } > "$seeds/tokenizer/$(basename "$dir")"
  done
  node tests/fuzz/tokenizer-seeds.mjs "$seeds/tokenizer"
  for model in tests/tokenizer/sentencepiece/*.model; do
    [[ $(stat -c %s "$model") -lt 65536 ]] || continue  # within -max_len
    { printf '%s\0' "Hello,  café! ＡＢ ﬁ 😀 é <s>"; cat "$model"; } > "$seeds/sentencepiece/$(basename "$model")"
  done

  { node -e 'const b = require("fs").readFileSync(process.argv[1]); const h = JSON.parse(b.subarray(8, 8 + Number(b.readBigUInt64LE(0)))); delete h.__metadata__;
    process.stdout.write(JSON.stringify({ weight_map: Object.fromEntries(Object.keys(h).map((k) => [k, "model-00001-of-00001.safetensors"])) }))' "$small/model.safetensors"
    printf '\0'; cat "$small/model.safetensors"; } > "$seeds/checkpoint/one-shard"
}
make_seeds &
seeds_written=$!
cmake --build "$out" -j "$jobs"
wait "$seeds_written"

# One target: runs it, prints libFuzzer's closing count, or its log's tail and fails.
fuzz() {
  local name="$1" corpus="$seeds/${1#fuzz_}"
  if ! (cd "$out" && "./$name" -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -max_len=65536 "../../$corpus" >"$name.log" 2>&1); then
    tail -n 40 "$out/$name.log" >&2
    echo "fuzz: $name failed (log: $out/$name.log)" >&2
    return 1
  fi
  echo "fuzz: $name for ${seconds}s: $(grep -E '^Done [0-9]+ runs' "$out/$name.log" || echo 'no count')"
}

running=()
failed=0
for name in fuzz_safetensors fuzz_checkpoint fuzz_config fuzz_tokenizer fuzz_sentencepiece fuzz_picture; do
  fuzz "$name" &
  running+=($!)
  if ((${#running[@]} >= jobs)); then
    wait "${running[0]}" || failed=1
    running=("${running[@]:1}")
  fi
done
for pid in "${running[@]}"; do wait "$pid" || failed=1; done
exit "$failed"
