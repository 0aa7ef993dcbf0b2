// GPT-2's byte-level alphabet: each of the 256 byte values is shown as one
// printable character (space 0x20 becomes 'Ġ', newline 'Ċ', ...), so every
// byte string is a string of vocabulary characters. Also the readable display
// of byte strings for the page. Not here: merges (bpe_model.h).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace attnplay {

// The character that stands for each byte value.
const std::array<char32_t, 256>& byte_level_alphabet();

// UTF-8 of the byte-level characters of bytes ("Hi there" -> "HiĠthere").
std::string bytes_to_byte_level(std::string_view bytes);

// Inverse of bytes_to_byte_level; false when piece has a character outside the alphabet.
bool byte_level_to_bytes(std::string_view piece, std::string& out);

// Readable form of a byte string: valid characters as they are, with space,
// tab, newline and other control characters as visible symbols (␣ ⇥ ↵ ␍, control
// pictures), and bytes that are not a whole UTF-8 character as <0xF0>.
std::string display_bytes(std::string_view bytes);

}  // namespace attnplay
