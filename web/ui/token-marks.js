// What the marks in token labels mean. The engine shows each token's text in
// a display form (cpp/tokenizer/byte_level.cpp): ␣ for a space, ↵ for a line
// break, ⇥ for a tab, <0xF0> for one byte of a character the tokenizer split
// across tokens, <U+00A0> for an invisible character. marksNote() says which
// of them the current tokens use, in words, for a note beside the views;
// maskHint() tells the reader which token to write for an encoder's fill-in.
// Not here: producing the display form (the C++ tokenizer).

const MARKS = [
  { pattern: /␣/, meaning: () => '␣ is a space' },
  { pattern: /↵/, meaning: () => '↵ a line break' },
  { pattern: /⇥/, meaning: () => '⇥ a tab' },
  { pattern: /<0x[0-9A-F]{2}>/, meaning: (example) => `${example} one byte of a character split across tokens (its bytes in hexadecimal)` },
  { pattern: /<U\+[0-9A-F]{4,6}>/, meaning: (example) => `${example} an invisible character, by its code point` },
];

/** A sentence explaining the marks found in these display strings, or '' when there are none. */
export function marksNote(displays) {
  const found = [];
  for (const { pattern, meaning } of MARKS) {
    const example = displays.map((display) => pattern.exec(display)?.[0]).find(Boolean);
    if (example) found.push(meaning(example));
  }
  return found.length ? `In the token labels, ${found.join('; ')}.` : '';
}

/**
 * The hint where an encoder shows no predictions: which token to write
 * (config.maskToken: '[MASK]' for BERT's vocabularies, '<mask>' for RoBERTa's),
 * or why there is none (null: no masked-LM head or no mask token). No full stop.
 */
export function maskHint(maskToken) {
  return maskToken ? `Write ${maskToken} in the text to see what the model fills in`
    : 'This checkpoint has no masked-LM head (or its tokenizer no mask token), so it fills in nothing';
}
