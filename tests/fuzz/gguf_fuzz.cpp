// GGUF model files (inference/gguf.h): the header, metadata and tensor table,
// then the tokenizer built from the vocabulary they carry. A model file is
// chosen by the operator, but a truncated download or a file from an
// untrusted source must still be an error value, never a bad read.
#include <cstdint>
#include <string>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ragd;
using namespace ragd::inference;

namespace {

// Every accessor of an opened file, and the invariants Open promises.
void CheckOpened(const GgufFile& f) {
  FUZZ_CHECK(f.version() == 2 || f.version() == 3, "version");
  FUZZ_CHECK(f.alignment() > 0 && (f.alignment() & (f.alignment() - 1)) == 0, "alignment");
  for (const auto& [key, value] : f.metadata()) {
    (void)f.GetInt(key);
    (void)f.GetFloat(key);
    (void)f.GetString(key);
    FUZZ_CHECK(f.Find(key) == &value, "Find");
  }
  (void)f.architecture();
  for (const GgufTensor& t : f.tensors()) {
    FUZZ_CHECK(t.info != nullptr, "tensor type info");
    FUZZ_CHECK(f.FindTensor(t.name) == &t, "FindTensor");
    FUZZ_CHECK(t.n_bytes == t.row_bytes() * t.n_rows(), "tensor size");
    // The tensor's bytes lie inside the file: touching its first and last
    // byte is what ASan checks.
    if (t.n_bytes > 0) {
      volatile uint8_t first = t.data[0], last = t.data[t.n_bytes - 1];
      (void)first;
      (void)last;
    }
  }
}

void CheckTokenizer(const GgufFile& f) {
  auto tok = Tokenizer::FromGguf(f);
  if (!tok.ok()) return;
  const Tokenizer& t = **tok;
  FUZZ_CHECK(t.vocab_size() > 0, "empty vocabulary");
  for (const char* text :
       {"Hello world", "  two  spaces\n\nand a line", "caf\xC3\xA9 \xE2\x96\x81 \xF0\x9F\x99\x82"}) {
    auto ids = t.Encode(text);
    if (!ids.ok()) continue;
    for (TokenId id : *ids)
      FUZZ_CHECK(id >= 0 && id < t.vocab_size(), "Encode gave an id outside the vocabulary");
    auto decoded = t.Decode(*ids);
    FUZZ_CHECK(decoded.ok(), "Decode of Encode's ids failed");
    FUZZ_CHECK(IsValidUtf8(*decoded), "Decode gave invalid UTF-8");
  }
  for (TokenId id : {TokenId{0}, t.bos_id(), t.eos_id(), t.eot_id(), t.vocab_size() - 1, t.vocab_size()}) {
    (void)t.TokenBytes(id);
    (void)t.TokenPiece(id);
    (void)t.IsControl(id);
    (void)t.IsEndOfGeneration(id);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile file;
  const std::string& path = file.Write(data, size);
  for (bool require_supported : {false, true}) {
    auto f = GgufFile::Open(path, GgufOpenOptions{.require_supported_types = require_supported});
    if (!f.ok()) continue;
    CheckOpened(*f);
    if (!require_supported) CheckTokenizer(*f);
  }
  return 0;
}
