#include "accounts/secrets.h"

#include <sodium.h>

#include <string>
#include <vector>

namespace ragd::accounts {
namespace {

// Keys for crypto_generichash (16..64 bytes); changing them invalidates
// every stored key and session.
constexpr std::string_view kApiKeyHashKey = "ragd api key hash v1";
constexpr std::string_view kSessionHashKey = "ragd session hash v1";

void EnsureInit() {
  static const int rc = sodium_init();
  (void)rc;  // < 0 only without an entropy source; randombytes then aborts loudly
}

}  // namespace

Status InitSecrets() {
  if (sodium_init() < 0) return Status::Internal("libsodium initialisation failed");
  return Status::Ok();
}

std::string RandomToken(size_t bytes) {
  EnsureInit();
  std::vector<unsigned char> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  const int variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
  std::string out(sodium_base64_ENCODED_LEN(bytes, variant), '\0');
  sodium_bin2base64(out.data(), out.size(), raw.data(), raw.size(), variant);
  out.resize(out.find('\0'));
  sodium_memzero(raw.data(), raw.size());
  return out;
}

TokenHash HashToken(std::string_view token, TokenPurpose purpose) {
  EnsureInit();
  std::string_view key = purpose == TokenPurpose::kApiKey ? kApiKeyHashKey : kSessionHashKey;
  TokenHash hash{};
  crypto_generichash(hash.data(), hash.size(), reinterpret_cast<const unsigned char*>(token.data()),
                     token.size(), reinterpret_cast<const unsigned char*>(key.data()), key.size());
  return hash;
}

Result<std::string> HashPassword(std::string_view password) {
  EnsureInit();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return Status::ResourceExhausted("not enough memory to hash a password");
  }
  return std::string(out);
}

bool VerifyPassword(std::string_view hash, std::string_view password) {
  EnsureInit();
  std::string stored(hash);  // crypto_pwhash_str_verify wants a NUL-terminated string
  return crypto_pwhash_str_verify(stored.c_str(), password.data(), password.size()) == 0;
}

void BurnPasswordCheck(std::string_view password) {
  static const std::string dummy = [] {
    Result<std::string> hash = HashPassword("ragd dummy password for timing");
    return hash.ok() ? *hash : std::string();
  }();
  if (!dummy.empty()) VerifyPassword(dummy, password);
}

}  // namespace ragd::accounts
