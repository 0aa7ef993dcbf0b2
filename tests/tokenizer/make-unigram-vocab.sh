#!/usr/bin/env bash
# Makes tests/tokenizer/unigram-austen.json: the pieces and scores of a
# SentencePiece Unigram model (1,000 pieces, byte fallback) trained by Google's
# spm_train (Debian package sentencepiece) on ../shared/corpus/austen-paragraphs.txt,
# read out with Debian's python3-sentencepiece. The Unigram tokenizer.json
# shapes of tests/tokenizer/families.mjs are built around it.
# Usage: bash tests/tokenizer/make-unigram-vocab.sh   (a minute; deterministic sampling seed)
set -euo pipefail
cd "$(dirname "$0")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
spm_train --input=../../../shared/corpus/austen-paragraphs.txt --model_prefix="$work/uni" --vocab_size=1000 \
  --model_type=unigram --character_coverage=0.9995 --input_sentence_size=20000 --shuffle_input_sentence=false \
  --byte_fallback=true --minloglevel=2
/usr/bin/python3 - "$work/uni.model" > unigram-austen.json <<'PY'
import json, sys
import sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
pieces = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
print(json.dumps({"unk_id": sp.unk_id(), "pieces": pieces}, ensure_ascii=False))
PY
echo "wrote tests/tokenizer/unigram-austen.json"
