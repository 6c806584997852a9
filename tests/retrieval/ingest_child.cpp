// Helper process for crash_test: ingests synthetic documents into a data
// folder until killed, printing "<n> <document id>\n" after each commit.
// usage: retrieval_ingest_child DATA_DIR FIRST_DOC COUNT INDEX_SAVE_INTERVAL_S
#include <cstdio>
#include <cstdlib>
#include <string>

#include "retrieval/retriever.h"
#include "tests/retrieval/synthetic_docs.h"
#include "tests/retrieval/test_models.h"

int main(int argc, char** argv) {
  using namespace ragd::retrieval;
  if (argc != 5) return 2;
  auto model = Embedder::Load(testing::MiniLmDir());
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  RetrieverOptions o = testing::CrashTestOptions(argv[1]);
  o.index_save_interval_s = std::atoi(argv[4]);
  auto r = Retriever::Open(o, std::shared_ptr<const Embedder>(std::move(model.value())));
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  const int first = std::atoi(argv[2]), count = std::atoi(argv[3]);
  for (int i = first; i < first + count; ++i) {
    auto res = (*r)->Ingest(testing::SyntheticDocument(i), "doc" + std::to_string(i) + ".txt");
    if (!res.ok()) {
      std::fprintf(stderr, "%s\n", res.status().ToString().c_str());
      return 1;
    }
    std::printf("%d %lld\n", i, static_cast<long long>(res->document_id));
    std::fflush(stdout);
  }
  return 0;
}
