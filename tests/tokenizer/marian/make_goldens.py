"""Goldens for Marian's tokenizer files (source.spm, target.spm, vocab.json)
read without tokenizer.json: what Hugging Face's MarianTokenizer computes,
re-done here with Google's sentencepiece (python3-sentencepiece) and a plain
dict lookup, independently of our C++ reader.

  source: source.spm pieces (EncodeAsPieces: an unknown run is its own text)
          -> vocab.json id, a piece absent there -> <unk>'s id; </s> appended;
          </s> <unk> <pad> written in the text split it and are those tokens;
          a leading >>xx<< language code is one token (looked up in vocab.json).
  target: the same through target.spm, nothing appended.
  text:   ids (specials skipped) -> pieces through the inverted vocab.json ->
          target.spm's DecodePieces, stripped (MarianTokenizer's convert_tokens_to_string).

Vocabularies, all derived from models/gettext-en-fr/vocab.json by rules the
tests repeat (so no second 100 KB file is committed):
  shipped   as is (its ids equal the .spm's)
  reversed  every id i -> V-1-i (ids no longer the .spm's)
  missing   shipped without MISSING (pieces the .spm produces -> <unk>)
  codes     shipped plus >>fr<< (id V) and >>de<< (id V+1)

Texts: the 800 validation texts of tests/golden/models/gettext-en-fr-spm.json
(first 200 kept) and EDGE. Run from the repository root:
  /usr/bin/python3 tests/tokenizer/marian/make_goldens.py
"""
import json
from pathlib import Path

import sentencepiece as spm

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "models" / "gettext-en-fr"
OUT = Path(__file__).resolve().parent / "goldens.json"
SPECIALS = ["</s>", "<unk>", "<pad>"]
MISSING = ["\u2581de", "s", "\u2581fichier", "\u2581the"]
EDGE = [
    "incorrect binary data format",
    "  Leading and   extra   spaces  ",
    "Emoji 😀 and 中文 are unknown here",
    "A literal </s> and <unk> in the text",
    "Full-width ＡＢＣ and ligature ﬁle",
    "Ünïcödé façade déjà vu",
    ">>fr<< Cannot open file",
    ">>de<< Error in module",
]


def vocabularies(shipped: dict) -> dict:
    size = max(shipped.values()) + 1
    codes = dict(shipped)
    codes[">>fr<<"], codes[">>de<<"] = size, size + 1
    return {
        "shipped": shipped,
        "reversed": {piece: size - 1 - i for piece, i in shipped.items()},
        "missing": {piece: i for piece, i in shipped.items() if piece not in MISSING},
        "codes": codes,
    }


def split_specials(text: str):
    """The text cut around </s> <unk> <pad> (Hugging Face's added-token split)."""
    out, start, i = [], 0, 0
    while i < len(text):
        hit = next((s for s in SPECIALS if text.startswith(s, i)), None)
        if hit:
            out.append((text[start:i], False))
            out.append((hit, True))
            i = start = i + len(hit)
        else:
            i += 1
    out.append((text[start:], False))
    return [(t, special) for t, special in out if t or special]


def encode(processor, vocab: dict, text: str, eos: bool) -> list:
    unk = vocab["<unk>"]
    ids = []
    for segment, special in split_specials(text):
        if special:
            ids.append(vocab[segment])
            continue
        if segment.startswith(">>") and segment.find("<<") != -1:  # MarianTokenizer.remove_language_code
            end = segment.find("<<") + 2
            ids.append(vocab.get(segment[:end], unk))
            segment = segment[end:]
        ids += [vocab.get(piece, unk) for piece in processor.encode(segment, out_type=str)]
    return ids + ([vocab["</s>"]] if eos else [])


def decode(processor, vocab: dict, ids: list) -> str:
    inverse = {i: piece for piece, i in vocab.items()}
    special = {vocab[s] for s in SPECIALS if s in vocab}
    pieces = [inverse[i] for i in ids if i not in special]
    return processor.decode_pieces(pieces).replace("\u2581", " ").strip()


def main() -> None:
    source = spm.SentencePieceProcessor(model_file=str(MODEL / "source.spm"))
    target = spm.SentencePieceProcessor(model_file=str(MODEL / "target.spm"))
    shipped = json.loads((MODEL / "vocab.json").read_text(encoding="utf-8"))
    validation = json.loads((ROOT / "tests/golden/models/gettext-en-fr-spm.json").read_text(encoding="utf-8"))
    texts = [case["text"] for case in validation["cases"][:200]] + EDGE
    cases = []
    for text in texts:
        case = {"text": text}
        for name, vocab in vocabularies(shipped).items():
            source_ids = encode(source, vocab, text, True)
            target_ids = encode(target, vocab, text, False)
            case[name] = {"source_ids": source_ids, "target_ids": target_ids, "text": decode(target, vocab, target_ids)}
        cases.append(case)
    OUT.write_text(json.dumps({"source": "python3-sentencepiece " + spm.__version__ + " + vocab.json lookups "
                               "(tests/tokenizer/marian/make_goldens.py)", "missing": MISSING, "cases": cases},
                              ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
