// The WordPiece tokenizer (retrieval/wordpiece.h) with all-MiniLM-L6-v2's
// vocab.txt ($RAGD_MODELS or ~/.cache/ragd/models): every question and every
// chunk is embedded through it. Any bytes are accepted (invalid UTF-8 is
// dropped); each piece must point back into the text, in order.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "retrieval/wordpiece.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/support/test_paths.h"

using namespace ragd;
using namespace ragd::retrieval;

namespace {

WordPieceTokenizer LoadMiniLm() {
  const std::string path = ragd::testing::ModelsDir() + "/all-MiniLM-L6-v2/vocab.txt";
  auto tok = WordPieceTokenizer::Load(path);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s (run scripts/fetch-models)\n", tok.status().ToString().c_str());
    std::exit(2);
  }
  return std::move(tok).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const WordPieceTokenizer tok = LoadMiniLm();
  const std::string_view text = fuzz::AsText(data, size);
  const std::vector<TokenSpan> spans = tok.Tokenize(text);
  size_t previous_begin = 0;
  for (const TokenSpan& s : spans) {
    FUZZ_CHECK(s.id >= 0 && static_cast<size_t>(s.id) < tok.vocab_size(), "id outside the vocabulary");
    FUZZ_CHECK(s.begin < s.end && s.end <= text.size(), "span outside the text");
    FUZZ_CHECK(s.begin >= previous_begin, "spans out of order");
    previous_begin = s.begin;
  }
  const size_t max_length = 2 + (size > 0 ? data[0] % 64 : 0);
  const std::vector<int32_t> ids = tok.Encode(text, max_length);
  FUZZ_CHECK(ids.size() >= 2 && ids.size() <= max_length, "Encode length");
  FUZZ_CHECK(ids.front() == tok.cls_id() && ids.back() == tok.sep_id(), "[CLS] ... [SEP]");
  FUZZ_CHECK(ids.size() == std::min(max_length, spans.size() + 2), "Encode keeps the first pieces");
  return 0;
}
