// SHA-256 (FIPS 180-4) of a byte string, for recognising re-uploaded documents.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ragd::corpus {

// The 32-byte digest.
std::array<uint8_t, 32> Sha256(std::string_view bytes);
// The digest as 64 lowercase hex characters (the form Store keeps).
std::string Sha256Hex(std::string_view bytes);

}  // namespace ragd::corpus
