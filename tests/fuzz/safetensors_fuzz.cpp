// safetensors files (retrieval/safetensors.h), the embedding model's weights:
// the JSON header and every tensor's dtype, shape and byte range.
#include <cstdint>
#include <string>

#include "retrieval/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ragd;
using namespace ragd::retrieval;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile file;
  auto f = SafetensorsFile::Open(file.Write(data, size));
  if (!f.ok()) return 0;
  for (const auto& [name, t] : f->tensors()) {
    FUZZ_CHECK(t.name == name, "tensor name");
    FUZZ_CHECK(f->Find(name) == &t, "Find");
    const int esize = SafetensorsDtypeSize(t.dtype);
    FUZZ_CHECK(esize > 0, "accepted an unknown dtype");
    // What the loader computes from the shape must be what Open checked.
    const int64_t n = t.n_elements();
    FUZZ_CHECK(n >= 0 && static_cast<uint64_t>(n) * static_cast<uint64_t>(esize) == t.n_bytes,
               "shape, dtype and byte range disagree");
    FUZZ_CHECK(t.n_bytes <= f->file_size(), "tensor larger than the file");
    if (t.n_bytes > 0) {
      volatile uint8_t first = t.data[0], last = t.data[t.n_bytes - 1];
      (void)first;
      (void)last;
    }
  }
  return 0;
}
