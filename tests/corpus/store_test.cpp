#include "corpus/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "corpus/sha256.h"
#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

using testing::TempDir;

// A document whose chunks are its lines; embeddings of size `dim` (0: none).
NewDocument MakeDocument(const std::string& title, const std::vector<std::string>& lines, int dim) {
  NewDocument doc;
  doc.title = title;
  doc.source_name = title + ".txt";
  doc.media_type = "text/plain";
  for (size_t i = 0; i < lines.size(); ++i) {
    NewChunk c;
    c.start = static_cast<int64_t>(doc.text.size());
    doc.text += lines[i];
    c.end = static_cast<int64_t>(doc.text.size());
    doc.text += "\n";
    c.text = lines[i];
    c.token_count = static_cast<int>(i) + 1;
    c.heading_context = "Part " + std::to_string(i);
    for (int k = 0; k < dim; ++k)
      c.embedding.push_back(static_cast<float>(i) + 0.25f * static_cast<float>(k));
    doc.chunks.push_back(std::move(c));
  }
  doc.byte_size = static_cast<int64_t>(doc.text.size());
  doc.sha256 = Sha256Hex(doc.text);
  return doc;
}

std::unique_ptr<Store> OpenStore(const std::string& path) {
  auto store = Store::Open({.path = path});
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// The store suites below run on SQLite and on the test PostgreSQL.
class StoreOnBoth : public testing::EngineTest {};
RAGD_ON_BOTH_ENGINES(StoreOnBoth);

TEST_P(StoreOnBoth, MigratesFromEmptyAndReopens) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    EXPECT_EQ(store->SchemaVersion().value(), 1);
    EXPECT_EQ(store->CountDocuments().value(), 0);
    EXPECT_EQ(store->CountChunks().value(), 0);
    EXPECT_EQ(store->EmbeddingDim().value(), 0);
    ASSERT_TRUE(store->AddDocument(MakeDocument("a", {"alpha"}, 2)).ok());
  }
  auto store = OpenStore();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->SchemaVersion().value(), 1);
  EXPECT_EQ(store->CountDocuments().value(), 1);
  EXPECT_EQ(store->EmbeddingDim().value(), 2);
  EXPECT_TRUE(store->CheckIntegrity().ok()) << store->CheckIntegrity().ToString();
}

TEST(Store, OpensAnEmptyFile) {
  TempDir dir;
  { std::ofstream touch(dir.File("empty.db")); }
  auto store = OpenStore(dir.File("empty.db"));
  ASSERT_TRUE(store);
  EXPECT_EQ(store->SchemaVersion().value(), 1);
}

TEST(Store, RefusesNewerSchema) {
  TempDir dir;
  const std::string path = dir.File("corpus.db");
  ASSERT_TRUE(OpenStore(path));  // closed again: the WAL is checkpointed into the file
  {
    // PRAGMA user_version lives in the file header at offset 60 (big-endian).
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    const char version[4] = {0, 0, 0, 99};
    f.write(version, 4);
  }
  auto store = Store::Open({.path = path});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(store.status().message().find("99"), std::string::npos) << store.status().ToString();
}

TEST(Store, RefusesInMemoryAndBadPaths) {
  EXPECT_EQ(Store::Open({.path = ""}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store::Open({.path = ":memory:"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Store::Open({.path = "/nonexistent-dir/x/corpus.db"}).ok());
}

TEST(Store, RefusesNonDatabaseFile) {
  TempDir dir;
  {
    std::ofstream out(dir.File("junk.db"), std::ios::binary);
    out << std::string(4096, 'j');
  }
  auto store = Store::Open({.path = dir.File("junk.db")});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kCorrupt) << store.status().ToString();
}

TEST_P(StoreOnBoth, RoundTrip) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  const NewDocument doc = MakeDocument("Manual", {"first line", "second line", "third line"}, 3);
  auto added = store->AddDocument(doc);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE(added->inserted);
  ASSERT_EQ(added->chunk_ids.size(), 3u);

  auto info = store->GetDocument(added->id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->title, "Manual");
  EXPECT_EQ(info->source_name, "Manual.txt");
  EXPECT_EQ(info->media_type, "text/plain");
  EXPECT_EQ(info->byte_size, doc.byte_size);
  EXPECT_EQ(info->sha256, doc.sha256);
  EXPECT_EQ(info->chunk_count, 3);
  EXPECT_GT(info->created_at, 1600000000);
  EXPECT_EQ(store->GetDocumentText(added->id).value(), doc.text);

  auto chunks = store->ListChunks(added->id, /*with_embeddings=*/true);
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const ChunkRecord& c = (*chunks)[i];
    EXPECT_EQ(c.id, added->chunk_ids[i]);
    EXPECT_EQ(c.ordinal, i);
    EXPECT_EQ(c.document_id, added->id);
    EXPECT_EQ(c.document_title, "Manual");
    EXPECT_EQ(c.text, doc.chunks[i].text);
    EXPECT_EQ(doc.text.substr(c.start, c.end - c.start), c.text);
    EXPECT_EQ(c.token_count, i + 1);
    EXPECT_EQ(c.heading_context, "Part " + std::to_string(i));
    EXPECT_EQ(c.embedding, doc.chunks[i].embedding);
  }

  // By ids: order kept, unknown ids skipped, no embeddings unless asked.
  const std::vector<ChunkId> ids = {added->chunk_ids[2], 999999, added->chunk_ids[0]};
  auto some = store->GetChunks(ids);
  ASSERT_TRUE(some.ok());
  ASSERT_EQ(some->size(), 2u);
  EXPECT_EQ((*some)[0].text, "third line");
  EXPECT_EQ((*some)[1].text, "first line");
  EXPECT_EQ((*some)[0].document_title, "Manual");
  EXPECT_TRUE((*some)[0].embedding.empty());

  std::vector<std::pair<ChunkId, std::vector<float>>> seen;
  ASSERT_TRUE(store
                  ->ForEachEmbedding([&](const EmbeddingRow& row) {
                    EXPECT_EQ(row.document_id, added->id);
                    seen.emplace_back(row.chunk_id,
                                      std::vector<float>(row.embedding.begin(), row.embedding.end()));
                    return true;
                  })
                  .ok());
  ASSERT_EQ(seen.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seen[i].first, added->chunk_ids[i]);
    EXPECT_EQ(seen[i].second, doc.chunks[i].embedding);
  }
  EXPECT_EQ(store->CountChunks().value(), 3);
  EXPECT_EQ(store->EmbeddingDim().value(), 3);
}

TEST_P(StoreOnBoth, AnyTextRoundTrips) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  const std::vector<std::string> lines = {"NULL",
                                          "{a,b}",
                                          "say \"hi\" \\ back\\slash",
                                          "",
                                          "tab\there, comma",
                                          "ünïcödé 日本語 😀",
                                          "'quoted' ''twice''"};
  NewDocument doc = MakeDocument("odd", lines, 3);
  doc.chunks[1].heading_context = "{\"h\"}";
  doc.chunks[2].embedding.clear();  // mixed: chunks with and without embeddings
  auto added = store->AddDocument(doc);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  auto chunks = store->ListChunks(added->id, /*with_embeddings=*/true);
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ((*chunks)[i].text, lines[i]) << i;
    EXPECT_EQ((*chunks)[i].heading_context, doc.chunks[i].heading_context) << i;
    EXPECT_EQ((*chunks)[i].embedding, doc.chunks[i].embedding) << i;
    EXPECT_EQ((*chunks)[i].id, added->chunk_ids[i]) << i;
  }
  EXPECT_EQ(store->SearchLexical("slash", 5).value().size(), 1u);
  EXPECT_TRUE(store->CheckIntegrity().ok()) << store->CheckIntegrity().ToString();
}

TEST_P(StoreOnBoth, ForEachEmbeddingStopsEarlyAndSkipsChunksWithout) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AddDocument(MakeDocument("plain", {"no vectors here"}, 0)).ok());
  ASSERT_TRUE(store->AddDocument(MakeDocument("vec", {"a", "b", "c"}, 2)).ok());
  int calls = 0;
  ASSERT_TRUE(store->ForEachEmbedding([&](const EmbeddingRow&) { return ++calls < 2; }).ok());
  EXPECT_EQ(calls, 2);
  calls = 0;
  ASSERT_TRUE(store->ForEachEmbedding([&](const EmbeddingRow&) { return ++calls > 0; }).ok());
  EXPECT_EQ(calls, 3);
}

TEST_P(StoreOnBoth, SameBytesAreNotStoredTwice) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  const NewDocument doc = MakeDocument("Same", {"identical bytes"}, 0);
  auto first = store->AddDocument(doc);
  ASSERT_TRUE(first.ok());
  auto again = store->AddDocument(doc);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->inserted);
  EXPECT_EQ(again->id, first->id);
  EXPECT_TRUE(again->chunk_ids.empty());
  EXPECT_EQ(store->CountDocuments().value(), 1);
  EXPECT_EQ(store->CountChunks().value(), 1);

  std::string upper = doc.sha256;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto found = store->FindDocumentBySha256(upper);
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->id, first->id);
  auto missing = store->FindDocumentBySha256(Sha256Hex("other"));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(store->FindDocumentBySha256("xyz").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreOnBoth, ValidatesDocumentsBeforeWriting) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  NewDocument bad_sha = MakeDocument("x", {"x"}, 0);
  bad_sha.sha256 = "not-a-digest";
  EXPECT_EQ(store->AddDocument(bad_sha).status().code(), StatusCode::kInvalidArgument);
  NewDocument bad_offsets = MakeDocument("y", {"y"}, 0);
  bad_offsets.chunks[0].end = 1000;
  EXPECT_EQ(store->AddDocument(bad_offsets).status().code(), StatusCode::kInvalidArgument);
  NewDocument bad_text = MakeDocument("z", {"zzz"}, 0);
  bad_text.chunks[0].text = "zzq";
  EXPECT_EQ(store->AddDocument(bad_text).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->CountDocuments().value(), 0);
}

TEST_P(StoreOnBoth, FailureMidDocumentLeavesNothing) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AddDocument(MakeDocument("ok", {"kept chunk"}, 4)).ok());
  // Chunks 0 and 1 are written before chunk 2's embedding size fails the insert.
  NewDocument doc = MakeDocument("broken", {"walrus one", "walrus two", "walrus three"}, 4);
  doc.chunks[2].embedding.resize(3);
  auto added = store->AddDocument(doc);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(added.status().message().find("embedding"), std::string::npos);
  EXPECT_EQ(store->CountDocuments().value(), 1);
  EXPECT_EQ(store->CountChunks().value(), 1);
  EXPECT_FALSE(store->FindDocumentBySha256(doc.sha256).value().has_value());
  EXPECT_TRUE(store->SearchLexical("walrus", 10).value().empty());
  EXPECT_TRUE(store->CheckIntegrity().ok());
  // The same document, fixed, goes in afterwards.
  doc.chunks[2].embedding.resize(4);
  auto retry = store->AddDocument(doc);
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_TRUE(retry->inserted);
  EXPECT_EQ(store->SearchLexical("walrus", 10).value().size(), 3u);
}

TEST(Store, KilledWriterLeavesOnlyWholeDocuments) {
  TempDir dir;
  const std::string path = dir.File("corpus.db");
  constexpr int kChunksPerDoc = 40;
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // Writes documents until killed; never returns into the test runner.
    auto store = Store::Open({.path = path, .synchronous_full = false});
    if (!store.ok()) _exit(2);
    for (int d = 0;; ++d) {
      std::vector<std::string> lines;
      for (int i = 0; i < kChunksPerDoc; ++i)
        lines.push_back("doc" + std::to_string(d) + " line " + std::to_string(i));
      if (!(*store)->AddDocument(MakeDocument("doc" + std::to_string(d), lines, 8)).ok()) _exit(3);
    }
  }
  // Wait for a few commits (bounded by a generous number of polls), then kill mid-stream.
  int64_t docs = 0;
  for (int poll = 0; poll < 3000 && docs < 5; ++poll) {
    usleep(10000);
    auto store = Store::Open({.path = path});
    if (!store.ok()) continue;
    auto count = (*store)->CountDocuments();
    if (count.ok()) docs = *count;
  }
  kill(child, SIGKILL);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "writer exited early with " << WEXITSTATUS(wstatus);
  ASSERT_GE(docs, 5);

  auto store = OpenStore(path);
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->CheckIntegrity().ok()) << store->CheckIntegrity().ToString();
  auto list = store->ListDocuments();
  ASSERT_TRUE(list.ok());
  ASSERT_GE(list->size(), 5u);
  for (const DocumentInfo& d : *list) {
    EXPECT_EQ(d.chunk_count, kChunksPerDoc) << d.title;
    EXPECT_EQ(store->SearchLexical(d.title, 100).value().size(), static_cast<size_t>(kChunksPerDoc))
        << d.title;
  }
  EXPECT_EQ(store->CountChunks().value(), static_cast<int64_t>(list->size()) * kChunksPerDoc);
}

TEST_P(StoreOnBoth, DeleteRemovesChunksTextAndSearchRows) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  auto keep = store->AddDocument(MakeDocument("keep", {"giraffe kept"}, 2));
  auto drop = store->AddDocument(MakeDocument("drop", {"giraffe dropped", "okapi dropped"}, 2));
  ASSERT_TRUE(keep.ok() && drop.ok());
  auto removed = store->DeleteDocument(drop->id);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, drop->chunk_ids);
  EXPECT_EQ(store->GetDocument(drop->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->GetDocumentText(drop->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->ListChunks(drop->id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store->GetChunks(drop->chunk_ids).value().empty());
  EXPECT_TRUE(store->SearchLexical("okapi", 10).value().empty());
  auto giraffe = store->SearchLexical("giraffe", 10);
  ASSERT_EQ(giraffe->size(), 1u);
  EXPECT_EQ((*giraffe)[0].document_id, keep->id);
  EXPECT_EQ(store->CountChunks().value(), 1);
  EXPECT_EQ(store->DeleteDocument(drop->id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store->CheckIntegrity().ok());
  int rows = 0;
  ASSERT_TRUE(store->ForEachEmbedding([&](const EmbeddingRow&) { return ++rows > 0; }).ok());
  EXPECT_EQ(rows, 1);
  // Ids of deleted rows are never handed out again.
  auto next = store->AddDocument(MakeDocument("next", {"new"}, 2));
  ASSERT_TRUE(next.ok());
  EXPECT_GT(next->id, drop->id);
  EXPECT_GT(next->chunk_ids[0], drop->chunk_ids.back());
  // Re-uploading the deleted bytes stores them again.
  auto back = store->AddDocument(MakeDocument("drop", {"giraffe dropped", "okapi dropped"}, 2));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->inserted);
}

TEST_P(StoreOnBoth, ReplaceChunksSwapsChunksAndSearchRowsInOneStep) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  const NewDocument doc = MakeDocument("zoo", {"giraffe line", "okapi line"}, 2);
  auto added = store->AddDocument(doc);
  ASSERT_TRUE(added.ok());
  // One chunk over the whole text now.
  NewChunk whole;
  whole.start = 0;
  whole.end = static_cast<int64_t>(doc.text.size());
  whole.text = doc.text;
  whole.token_count = 5;
  whole.heading_context = "Zoo";
  whole.embedding = {0.5f, 0.5f};
  auto replaced = store->ReplaceChunks(added->id, {&whole, 1});
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(replaced->removed, added->chunk_ids);
  ASSERT_EQ(replaced->added.size(), 1u);
  EXPECT_GT(replaced->added[0], added->chunk_ids.back());
  const auto chunks = store->ListChunks(added->id).value();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].ordinal, 0);
  EXPECT_EQ(chunks[0].heading_context, "Zoo");
  EXPECT_EQ(store->GetDocument(added->id)->chunk_count, 1);
  auto okapi = store->SearchLexical("okapi", 10);
  ASSERT_EQ(okapi->size(), 1u);
  EXPECT_EQ((*okapi)[0].chunk_id, replaced->added[0]);
  EXPECT_TRUE(store->CheckIntegrity().ok());

  // Refusals write nothing: chunks that do not match the stored text, a
  // wrong embedding size, an unknown document.
  NewChunk wrong = whole;
  wrong.text = "not the text";
  EXPECT_EQ(store->ReplaceChunks(added->id, {&wrong, 1}).status().code(), StatusCode::kInvalidArgument);
  NewChunk wide = whole;
  wide.embedding = {1, 2, 3};
  EXPECT_EQ(store->ReplaceChunks(added->id, {&wide, 1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->ReplaceChunks(added->id + 99, {&whole, 1}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->ListChunks(added->id).value()[0].id, replaced->added[0]);
}

TEST_P(StoreOnBoth, ListsNewestFirstWithPaging) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(store->AddDocument(MakeDocument("d" + std::to_string(i), {"x" + std::to_string(i)}, 0)).ok());
  auto all = store->ListDocuments();
  ASSERT_EQ(all->size(), 5u);
  EXPECT_EQ((*all)[0].title, "d4");
  EXPECT_EQ((*all)[4].title, "d0");
  auto page = store->ListDocuments(1, 2);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].title, "d3");
  EXPECT_EQ((*page)[1].title, "d2");
}

TEST_P(StoreOnBoth, EmbeddingSizeIsFixedUntilReplaced) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  auto a = store->AddDocument(MakeDocument("a", {"one", "two"}, 4));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(store->AddDocument(MakeDocument("b", {"three"}, 5)).status().code(),
            StatusCode::kInvalidArgument);
  // Re-embedding with a new model: size 2 for both chunks.
  std::vector<std::pair<ChunkId, std::vector<float>>> rows = {{a->chunk_ids[0], {1, 2}},
                                                              {a->chunk_ids[1], {3, 4}}};
  ASSERT_TRUE(store->ReplaceEmbeddings(rows).ok());
  EXPECT_EQ(store->EmbeddingDim().value(), 2);
  auto chunks = store->GetChunks(a->chunk_ids, true);
  EXPECT_EQ((*chunks)[1].embedding, (std::vector<float>{3, 4}));
  std::vector<std::pair<ChunkId, std::vector<float>>> unknown = {{123456, {1, 2}}};
  EXPECT_EQ(store->ReplaceEmbeddings(unknown).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store->AddDocument(MakeDocument("c", {"five"}, 2)).ok());
}

TEST_P(StoreOnBoth, ConcurrentReadersDuringWrites) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  std::atomic<bool> done{false};
  std::atomic<int> read_errors{0};
  std::atomic<int> reads{0};
  auto reader = [&] {
    while (!done.load()) {
      auto hits = store->SearchLexical("lemur", 5);
      auto n = store->CountChunks();
      if (!hits.ok() || !n.ok()) ++read_errors;
      if (hits.ok() && !hits->empty() &&
          store->GetChunks(std::vector<ChunkId>{(*hits)[0].chunk_id}).value().empty()) {
        ++read_errors;  // a hit whose chunk cannot be read back: only possible after a delete
      }
      ++reads;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int i = 0; i < 30; ++i) {
    auto added = store->AddDocument(
        MakeDocument("w" + std::to_string(i), {"lemur " + std::to_string(i), "filler"}, 2));
    ASSERT_TRUE(added.ok()) << added.status().ToString();
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(read_errors.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(store->CountChunks().value(), 60);
}

}  // namespace
}  // namespace ragd::corpus
