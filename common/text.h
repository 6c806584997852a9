// Small UTF-8 and string helpers shared by every module.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ragd {

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Length of the longest prefix of `s` that ends on a complete UTF-8 character;
// the rest is an incomplete sequence that may be completed by later bytes.
// Invalid bytes are counted as complete (they will never become valid).
size_t CompleteUtf8Prefix(std::string_view s);

// Replaces every invalid byte sequence with U+FFFD.
std::string RepairUtf8(std::string_view s);

// A copy with ASCII letters lower-cased (other bytes unchanged).
std::string AsciiLower(std::string_view s);

// ASCII whitespace trimmed from both ends.
std::string_view Trim(std::string_view s);

}  // namespace ragd
