// Secrets for accounts: random tokens, token hashes, password hashes.
// libsodium lives behind secrets.cpp only. All functions are thread-safe.
//
// Why two kinds of hash:
// - Passwords are low-entropy and chosen by people, so they are stored with a
//   deliberately slow, memory-hard hash (Argon2id via crypto_pwhash_str, the
//   "interactive" limits: ~64 MiB and a few tens of milliseconds per hash),
//   with a random salt and the parameters inside the stored string.
// - API keys and session tokens are 256 random bits made here. Guessing one
//   is hopeless, so a slow hash would add nothing but latency to every
//   request; a fast cryptographic hash (BLAKE2b-256, keyed with a fixed
//   per-purpose string for domain separation) is enough to make a stolen
//   database useless for logging in, and allows an indexed look-up.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ragd::accounts {

// Initializes libsodium; idempotent. Internal errors only if the OS has no
// entropy source.
Status InitSecrets();

// `bytes` random bytes from the OS CSPRNG, as unpadded base64url
// ([A-Za-z0-9_-]; 32 bytes -> 43 characters).
std::string RandomToken(size_t bytes = 32);

// What a token hash is for; each purpose hashes with its own key.
enum class TokenPurpose { kApiKey, kSession };
using TokenHash = std::array<uint8_t, 32>;
TokenHash HashToken(std::string_view token, TokenPurpose purpose);

// Argon2id string hash of `password` (interactive limits).
// ResourceExhausted when the memory for the hash cannot be allocated.
Result<std::string> HashPassword(std::string_view password);
// True when `password` matches `hash` (a HashPassword result). Takes the same
// time as HashPassword.
bool VerifyPassword(std::string_view hash, std::string_view password);
// Spends the time of one VerifyPassword against a fixed dummy hash, so a login
// for an unknown user costs as much as one with a wrong password.
void BurnPasswordCheck(std::string_view password);

}  // namespace ragd::accounts
