#!/usr/bin/env bash
# Makes the SentencePiece test models of this folder with Google's spm_train
# (Debian package sentencepiece) from a 400 KB sample of
# ../shared/corpus/austen-paragraphs.txt, and goldens.json (ids, pieces,
# decoded text for each model on parity.py's texts) with Debian's
# python3-sentencepiece, the oracle. CI reads the committed files and needs
# neither package.
#   unigram-nmt-nfkc.model       unigram, the default nmt_nfkc rules, dummy prefix, extra spaces removed
#   unigram-identity-bytes.model unigram, identity, byte fallback, no dummy prefix, spaces kept
#   bpe-identity-bytes.model     BPE as Llama 2: identity, byte fallback, dummy prefix, spaces kept, digits split
#   bpe-rules.model              BPE, a small precompiled charsmap from rules.tsv (full-width letters,
#                                ligatures, deletions, a two-character rule), no dummy prefix, extra spaces removed,
#                                user-defined symbols <sep>, [MASK] and ﬁ (which the rules would change)
#   unigram-rules-cased.model    unigram, rules.tsv, dummy prefix, extra spaces removed, piece types:
#                                a control symbol <ctl> besides <s>, </s>, and a <pad>; user-defined
#                                symbols <sep>, [MASK], ﬁ and "the" (inside words too)
# Usage: bash tests/tokenizer/sentencepiece/make.sh   (half a minute; deterministic)
set -euo pipefail
cd "$(dirname "$0")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
head -c 400000 ../../../../shared/corpus/austen-paragraphs.txt > "$work/sample.txt"
train() {
  local name="$1"; shift
  nice -n 10 spm_train --input="$work/sample.txt" --model_prefix="$work/$name" --num_threads=1 \
    --shuffle_input_sentence=false --minloglevel=2 "$@"
  cp "$work/$name.model" "$name.model"
}
train unigram-nmt-nfkc --model_type=unigram --vocab_size=1000
train unigram-identity-bytes --model_type=unigram --vocab_size=1000 --normalization_rule_name=identity \
  --byte_fallback=true --add_dummy_prefix=false --remove_extra_whitespaces=false
train bpe-identity-bytes --model_type=bpe --vocab_size=1000 --normalization_rule_name=identity \
  --byte_fallback=true --add_dummy_prefix=true --remove_extra_whitespaces=false --split_digits=true
train bpe-rules --model_type=bpe --vocab_size=800 --normalization_rule_tsv=rules.tsv \
  --add_dummy_prefix=false --remove_extra_whitespaces=true --user_defined_symbols='<sep>,[MASK],ﬁ'
train unigram-rules-cased --model_type=unigram --vocab_size=800 --normalization_rule_tsv=rules.tsv \
  --control_symbols='<ctl>' --user_defined_symbols='<sep>,[MASK],ﬁ,the' --pad_id=3 --unk_id=0 --bos_id=1 --eos_id=2
/usr/bin/python3 make_goldens.py *.model > goldens.json
ls -l *.model goldens.json
