// The full-text query builder (corpus/fts_query.cpp): any question a user
// types becomes an FTS5 MATCH expression that SQLite accepts, and the search
// over a small real store runs without error.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "corpus/sha256.h"
#include "corpus/store.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ragd;
using namespace ragd::corpus;

namespace {

// A store in a fresh temporary folder with two documents (removed at exit).
std::unique_ptr<Store> OpenStore() {
  char dir[] = "/tmp/ragd-fuzz-fts-XXXXXX";
  if (mkdtemp(dir) == nullptr) std::abort();
  static const std::string folder = dir;
  std::atexit([] { (void)std::system(("rm -rf '" + folder + "'").c_str()); });
  auto store = Store::Open(StoreOptions{.path = folder + "/corpus.db", .synchronous_full = false});
  FUZZ_CHECK(store.ok(), "cannot open the store");
  const char* texts[] = {"The quota resets at midnight UTC. Admins can raise it per user.",
                         "Uploads accept PDF, HTML, Markdown and plain text; \xC3\xA9t\xC3\xA9 caf\xC3\xA9 "
                         "\xE6\x97\xA5\xE6\x9C\xAC"};
  for (const char* t : texts) {
    NewDocument doc;
    doc.title = doc.source_name = "doc";
    doc.media_type = "text/plain";
    doc.text = t;
    doc.byte_size = static_cast<int64_t>(doc.text.size());
    doc.sha256 = Sha256Hex(doc.text);
    doc.chunks.push_back(NewChunk{.text = doc.text,
                                  .start = 0,
                                  .end = doc.byte_size,
                                  .token_count = 10,
                                  .heading_context = "Guide > Limits"});
    FUZZ_CHECK((*store)->AddDocument(doc).ok(), "cannot add a document");
  }
  return std::move(store).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<Store> store = OpenStore();
  const std::string_view text = fuzz::AsText(data, size);
  const std::vector<std::string> terms = FtsTerms(text);
  FUZZ_CHECK(terms.size() <= 64, "too many terms");
  for (const std::string& t : terms) {
    FUZZ_CHECK(!t.empty() && t.size() <= 256, "term length");
    FUZZ_CHECK(t.find('"') == std::string::npos, "a quote inside a term");
  }
  FUZZ_CHECK(BuildFtsQuery(text) == JoinFtsTerms(terms), "BuildFtsQuery is the join of FtsTerms");
  auto hits = store->SearchLexical(text, 5);
  FUZZ_CHECK(hits.ok(), hits.ok() ? "" : hits.status().ToString().c_str());
  for (const LexicalHit& h : *hits) FUZZ_CHECK(h.score > 0, "hit without a positive score");
  return 0;
}
