// A ZIP archive read from memory (libzip), for the office and e-book
// formats, which are ZIP containers of XML files.
//
// Entries are read whole, each under a byte budget the caller passes, so an
// entry that inflates far beyond its compressed size (a decompression bomb)
// is refused after reading at most the budget, whatever its header claims.
// Encrypted entries are refused (kUnsupported).
//
// Thread-safety: one object per thread; the bytes must outlive it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::corpus {

class ZipArchive {
 public:
  // kInvalidArgument when `bytes` is not a readable ZIP archive.
  static Result<std::unique_ptr<ZipArchive>> Open(std::string_view bytes);
  ~ZipArchive();

  // Entry names in archive order (folders included).
  const std::vector<std::string>& names() const { return names_; }
  bool Has(std::string_view name) const;
  // The entry's bytes. kNotFound when absent; kOutOfRange when it holds more
  // than `max_bytes`; kUnsupported when encrypted; kInvalidArgument when damaged.
  Result<std::string> Read(std::string_view name, size_t max_bytes) const;

 private:
  struct Handle;
  explicit ZipArchive(std::unique_ptr<Handle> handle, std::vector<std::string> names);
  std::unique_ptr<Handle> handle_;
  std::vector<std::string> names_;
};

}  // namespace ragd::corpus
