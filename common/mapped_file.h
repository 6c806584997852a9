// A read-only memory map of a whole file. Move-only; unmaps on destruction.
// Thread-safe for concurrent reads once opened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ragd {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path` read-only. An empty file maps to size 0 with data() == nullptr.
  static Result<MappedFile> Open(const std::string& path);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Tells the kernel the whole pages inside [offset, offset + length) will
  // not be read soon: they leave this process's resident memory (the page
  // cache keeps them) and are read back from the file if touched again; they
  // are no longer mapped as part of huge pages (so that reading the bytes
  // around them does not bring them back).
  void DropPages(size_t offset, size_t length) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace ragd
