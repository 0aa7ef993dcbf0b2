# Writes goldens.json for the SentencePiece models named on the command line:
# for each model its vocabulary (piece, score; the type of
# each piece that is not normal: unknown, control, unused or byte; the
# processor reports user-defined pieces as normal), and for each parity text
# (valid UTF-8 as "text", any bytes as "hex") what Google's sentencepiece
# (python3-sentencepiece, the oracle) gives: ids (with <s> and </s> for the first),
# pieces, byte offsets of each piece into the text (the wrapper's character
# offsets converted), and the decoded text; and the ids of a long text (LONG).
# Run by make.sh. Usage: python3 make_goldens.py a.model b.model > goldens.json
import json
import sys

import sentencepiece as spm

AUSTEN = open('../../../../shared/corpus/austen-paragraphs.txt', encoding='utf-8').read().split('\n')

TEXTS = [
    'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.',
    'Hello world',
    '',
    ' ',
    '   leading and trailing spaces   ',
    'many     spaces  between\u3000words',
    'tabs\tand\nnewlines\r\nand \t mixed',
    'caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m \u00fcber',
    'cafe\u0301 decomposed, A\u030a and a\u0300\u0301\u0302 stacked marks',
    '\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002 \ud55c\uad6d\uc5b4 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0939\u093f\u0928\u094d\u0926\u0940',
    'emoji \U0001F44D\U0001F3FD and \U0001F468\u200d\U0001F469\u200d\U0001F467 family \U0001F600!',
    '\uff21\uff22 \uff41\uff42 \uff10\uff11 full-width, \ufb01nance \ufb02ow, \u2460 \u2126 \u00bd x\u00b2',
    'control \x01\x02\x7f chars, zero\u200bwidth, bom\ufeffhere, nbsp\u00a0here',
    '\u2581 a literal lower block \u2581\u2581 and \u2581x',
    '<unk> <s> </s> <pad> <ctl> <0x41> written out',
    'user symbols: a<sep>b [MASK] and  <sep>  x <sep><sep>[MASK]the other theme Ａ<sep>',
    'digits 1234567890 and 3.14159, 2024-11-23',
    'x' * 120,
    'supercalifragilisticexpialidocious' * 3,
    "Don't you think it's odd? \"Quoted\" -- dashes \u2014 and \u2018curly\u2019 quotes\u2026",
    'UPPER lower MiXeD Title Case',
    '\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5\u00e6\u00e7\u00e8\u00e9 \u0152uvre \u00df stra\u00dfe \u0130stanbul',
    'ends with spaces and a tab \t',
    '\n\n',
    'mid\u2028line\u2029para\u0085next',
] + [line[:300] for line in AUSTEN[5000:5004] if line]

BYTES = [
    b'ab\xffcd',
    b'truncated \xe2\x82',
    b'surrogate \xed\xa0\x80 here',
    b'overlong \xc0\xaf \xe0\x80\xaf',
    b'caf\xc3',
    b'\x80\x80 lone continuations',
    b'mixed \xf0\x9f\x98 valid \xf0\x9f\x98\x80',
]

def piece_type(sp, i):
    # The processor's view of each piece (the protobuf module is not installed).
    for name, test in (('unknown', sp.is_unknown), ('control', sp.is_control), ('unused', sp.is_unused), ('byte', sp.is_byte)):
        if test(i):
            return name
    return 'normal'


def piece_text(p):
    return p.decode('utf-8') if isinstance(p, bytes) else p


def run(sp, data, valid):
    # The offsets come from the immutable proto, which crashes this version on
    # invalid UTF-8: null there.
    proto = sp.encode_as_immutable_proto(data) if valid else None
    # The wrapper gives offsets in characters: to bytes.
    byte_at = [len(data.decode('utf-8')[:i].encode('utf-8')) for i in range(len(data.decode('utf-8')) + 1)] if valid else None
    return {
        'ids': sp.encode(data),
        'pieces': [piece_text(p) for p in sp.encode(data, out_type=str)],
        'offsets': [[byte_at[p.begin], byte_at[p.end]] for p in proto.pieces] if valid else None,
        'decoded': sp.decode(sp.encode(data)),
    }


# A long text for the scores summed along a whole path (floats in
# sentencepiece): paragraphs after the training sample, about 300 KB; its ids
# as a count and a 64-bit FNV-1a hash of their little-endian uint32 bytes.
LONG = {'first_line': 1200, 'last_line': 1999}


def long_text():
    return '\n'.join(AUSTEN[LONG['first_line']:LONG['last_line'] + 1])


def fnv1a64(ids):
    h = 0xcbf29ce484222325
    for i in ids:
        for b in int(i).to_bytes(4, 'little'):
            h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return '%016x' % h


out = {'long': LONG, 'texts': [{'text': t} for t in TEXTS] + [{'hex': b.hex()} for b in BYTES], 'models': {}}
for path in sys.argv[1:]:
    sp = spm.SentencePieceProcessor(model_file=path)
    vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
    types = {i: piece_type(sp, i) for i in range(sp.get_piece_size()) if piece_type(sp, i) != 'normal'}
    results = [run(sp, t.encode('utf-8'), True) for t in TEXTS] + [run(sp, b, False) for b in BYTES]
    out['models'][path] = {
        'bos_id': sp.bos_id(), 'eos_id': sp.eos_id(), 'unk_id': sp.unk_id(), 'pad_id': sp.pad_id(),
        'vocab': vocab,
        'types': types,
        'ids_bos_eos': sp.encode(TEXTS[0], add_bos=True, add_eos=True),
        'long': {'count': len(sp.encode(long_text())), 'fnv1a64': fnv1a64(sp.encode(long_text()))},
        'results': results,
    }
json.dump(out, sys.stdout, ensure_ascii=False, separators=(',', ':'))
