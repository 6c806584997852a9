// Hybrid search, ingestion, deletion and index persistence over a small
// corpus, with the real embedding model.
#include "retrieval/retriever.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "tests/retrieval/test_models.h"
#include "tests/support/postgres.h"
#include "tests/support/temp_dir.h"

namespace ragd::retrieval {
namespace {

std::shared_ptr<const Embedder> Model() {
  static std::shared_ptr<const Embedder> model = [] {
    auto m = Embedder::Load(testing::MiniLmDir());
    if (!m.ok()) {
      ADD_FAILURE() << "cannot load " << testing::MiniLmDir() << ": " << m.status().ToString();
      std::abort();
    }
    return std::shared_ptr<const Embedder>(std::move(m.value()));
  }();
  return model;
}

struct Doc {
  const char* file;
  const char* text;
};

const Doc kDocs[] = {
    {"volcanoes.md",
     "# Volcanoes\n\nA volcano is a rupture in the crust of a planet where lava, ash and gases escape from a "
     "magma "
     "chamber below the surface. Stratovolcanoes such as Mount Fuji are built from layers of hardened "
     "lava.\n\n"
     "## Eruptions\n\nExplosive eruptions throw pyroclastic flows down the slopes at great speed."},
    {"sourdough.txt",
     "Baking sourdough bread needs a starter of wild yeast and lactobacilli. Feed the starter with flour and "
     "water, "
     "let the dough rise overnight, then bake it in a hot Dutch oven until the crust is dark and crisp."},
    {"tcp.txt",
     "TCP establishes a connection with a three-way handshake: SYN, SYN-ACK and ACK. It retransmits lost "
     "segments, "
     "orders bytes with sequence numbers and slows down with congestion control when packets are dropped."},
    {"chess.md",
     "# Chess openings\n\nThe Sicilian Defence answers 1.e4 with c5 and leads to sharp, unbalanced "
     "positions. The "
     "Queen's Gambit offers a pawn on c4 to gain control of the centre."},
    {"photosynthesis.txt",
     "Photosynthesis lets plants turn sunlight, water and carbon dioxide into glucose and oxygen. "
     "Chlorophyll in the "
     "chloroplasts absorbs red and blue light, which is why leaves look green."},
    {"marathon.txt",
     "Training for a marathon takes months of gradually longer runs. Runners taper in the last weeks, eat "
     "carbohydrates before the race and drink water at aid stations to avoid hitting the wall."},
    {"invoice.html",
     "<html><head><title>Refund policy</title></head><body><h1>Refund policy</h1><p>Customers may return any "
     "product within 30 days of purchase for a full refund. The receipt number XK-4471 must be quoted.</p>"
     "</body></html>"},
};

// kind: "flat", "hnsw", or "flat+postgres": a flat index over a corpus in
// the test PostgreSQL (one schema per folder, the same on every call).
RetrieverOptions Options(const std::string& dir, const std::string& kind = "flat") {
  RetrieverOptions o;
  o.data_dir = dir;
  o.index.kind = kind;
  if (const size_t plus = kind.find("+postgres"); plus != std::string::npos) {
    static std::map<std::string, std::string> schemas;
    std::string& url = schemas[dir];
    if (url.empty()) url = ragd::testing::FreshPostgresSchema();
    o.postgres_url = url;
    o.index.kind = kind.substr(0, plus);
    o.follow_poll_ms = 100;
  }
  o.synchronous_full = false;
  o.ingest.chunking.target_tokens = 48;
  o.ingest.chunking.overlap_tokens = 8;
  return o;
}

std::unique_ptr<Retriever> OpenCorpus(const RetrieverOptions& o, OpenReport* report = nullptr) {
  auto r = Retriever::Open(o, Model(), report);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r.value()) : nullptr;
}

void IngestAll(Retriever& r) {
  for (const Doc& d : kDocs) {
    auto res = r.Ingest(d.text, d.file);
    ASSERT_TRUE(res.ok()) << d.file << ": " << res.status().ToString();
    EXPECT_TRUE(res->inserted);
    EXPECT_GT(res->chunk_count, 0);
  }
}

std::string TopFile(Retriever& r, const std::string& query, SearchOptions o = {}) {
  auto hits = r.Search(query, o);
  EXPECT_TRUE(hits.ok()) << hits.status().ToString();
  if (!hits.ok() || hits->empty()) return "";
  auto doc = r.store().GetDocument((*hits)[0].document_id);
  return doc.ok() ? doc->source_name : "";
}

SearchOptions TopK(int k) {
  SearchOptions o;
  o.top_k = k;
  return o;
}

class RetrieverTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RetrieverTest, HybridSearchRanksTheRightChunkFirst) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path(), GetParam()));
  ASSERT_NE(r, nullptr);
  IngestAll(*r);
  // Paraphrases (dense carries them) and rare keywords (lexical carries them).
  EXPECT_EQ(TopFile(*r, "how do mountains spew molten rock?"), "volcanoes.md");
  EXPECT_EQ(TopFile(*r, "making bread with natural leaven"), "sourdough.txt");
  EXPECT_EQ(TopFile(*r, "how does a reliable network protocol recover lost data"), "tcp.txt");
  EXPECT_EQ(TopFile(*r, "why are leaves green"), "photosynthesis.txt");
  EXPECT_EQ(TopFile(*r, "XK-4471"), "invoice.html");
  EXPECT_EQ(TopFile(*r, "Sicilian"), "chess.md");

  auto hits = r->Search("preparing for a long distance running race", TopK(3));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 3u);
  const SearchHit& top = (*hits)[0];
  EXPECT_EQ(top.title, "marathon");
  EXPECT_EQ(top.dense_rank, 1);
  EXPECT_GT(top.dense_score, 0.3f);
  EXPECT_GT(top.fused_score, (*hits)[1].fused_score);
  auto text = r->store().GetDocumentText(top.document_id);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->substr(static_cast<size_t>(top.start), static_cast<size_t>(top.end - top.start)), top.text);
}

// Dense and lexical halves run concurrently on large indexes
// (SearchOptions::parallel_from_vectors): forced on here, same hits as in turn.
TEST_P(RetrieverTest, ConcurrentHalvesGiveTheSameHits) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path(), GetParam()));
  ASSERT_NE(r, nullptr);
  IngestAll(*r);
  auto docs = r->store().ListDocuments();
  ASSERT_TRUE(docs.ok() && !docs->empty());
  for (const bool filtered : {false, true}) {
    for (const char* query : {"how do mountains spew molten rock?", "XK-4471 refund", "chess pawn centre"}) {
      SearchOptions serial = TopK(4), parallel = TopK(4);
      serial.parallel_from_vectors = int64_t{1} << 40;
      parallel.parallel_from_vectors = 0;
      if (filtered) serial.only_documents = parallel.only_documents = {docs->front().id, docs->back().id};
      auto a = r->Search(query, serial);
      auto b = r->Search(query, parallel);
      ASSERT_TRUE(a.ok() && b.ok());
      ASSERT_EQ(a->size(), b->size()) << query;
      ASSERT_FALSE(a->empty()) << query;
      for (size_t i = 0; i < a->size(); ++i) {
        EXPECT_EQ((*a)[i].chunk_id, (*b)[i].chunk_id) << query;
        EXPECT_EQ((*a)[i].dense_rank, (*b)[i].dense_rank) << query;
        EXPECT_EQ((*a)[i].lexical_rank, (*b)[i].lexical_rank) << query;
        EXPECT_DOUBLE_EQ((*a)[i].fused_score, (*b)[i].fused_score) << query;
      }
    }
  }
}

TEST_P(RetrieverTest, FilterByDocument) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path(), GetParam()));
  ASSERT_NE(r, nullptr);
  IngestAll(*r);
  auto docs = r->store().ListDocuments();
  ASSERT_TRUE(docs.ok());
  corpus::DocumentId chess = 0;
  for (const auto& d : *docs) {
    if (d.source_name == "chess.md") chess = d.id;
  }
  SearchOptions o;
  o.only_documents = {chess};
  auto hits = r->Search("volcano lava eruption", o);
  ASSERT_TRUE(hits.ok());
  ASSERT_FALSE(hits->empty());
  for (const auto& h : *hits) EXPECT_EQ(h.document_id, chess);
}

TEST_P(RetrieverTest, DuplicatesAreReportedNotAdded) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path(), GetParam()));
  ASSERT_NE(r, nullptr);
  auto first = r->Ingest(kDocs[1].text, "a.txt");
  auto again = r->Ingest(kDocs[1].text, "b.txt");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(first->inserted);
  EXPECT_FALSE(again->inserted);
  EXPECT_EQ(again->document_id, first->document_id);
  EXPECT_EQ(*r->store().CountDocuments(), 1);
  EXPECT_EQ(r->index().size(), *r->store().CountChunks());
}

TEST_P(RetrieverTest, RefusalsWriteNothing) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path(), GetParam()));
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->Ingest(std::string("\x00\x01\x02\x03 binary", 11), "x.bin").ok());
  EXPECT_FALSE(r->Ingest("   \n  ", "blank.txt").ok());
  std::atomic<bool> cancel{true};
  EXPECT_EQ(r->Ingest(kDocs[0].text, "v.md", {}, {}, &cancel).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(*r->store().CountDocuments(), 0);
  EXPECT_EQ(r->index().size(), 0);
}

TEST_P(RetrieverTest, DeleteRemovesFromStoreAndIndex) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path(), GetParam()));
  ASSERT_NE(r, nullptr);
  IngestAll(*r);
  auto hits = r->Search("wild yeast starter dough");
  ASSERT_TRUE(hits.ok() && !hits->empty());
  const corpus::DocumentId bread = (*hits)[0].document_id;
  const int64_t before = r->index().size();
  auto removed = r->DeleteDocument(bread);
  ASSERT_TRUE(removed.ok());
  EXPECT_GT(*removed, 0);
  EXPECT_EQ(r->index().size(), before - *removed);
  EXPECT_EQ(r->index().size(), *r->store().CountChunks());
  auto after = r->Search("wild yeast starter dough", TopK(20));
  ASSERT_TRUE(after.ok());
  for (const auto& h : *after) EXPECT_NE(h.document_id, bread);
  EXPECT_EQ(r->DeleteDocument(bread).status().code(), StatusCode::kNotFound);
}

// A change of chunk size applies to a stored document once it is re-indexed:
// same document, new chunks in store and index, the old ones gone.
TEST_P(RetrieverTest, ReindexRechunksAStoredDocument) {
  ragd::testing::TempDir dir;
  corpus::DocumentId bread = 0;
  std::vector<corpus::ChunkRecord> before;
  {
    auto r = OpenCorpus(Options(dir.path(), GetParam()));
    ASSERT_NE(r, nullptr);
    IngestAll(*r);
    auto hits = r->Search("wild yeast starter dough");
    ASSERT_TRUE(hits.ok() && !hits->empty());
    bread = (*hits)[0].document_id;
    before = r->store().ListChunks(bread).value();
  }
  RetrieverOptions larger = Options(dir.path(), GetParam());
  larger.ingest.chunking.target_tokens = 200;
  larger.ingest.chunking.overlap_tokens = 0;
  auto r = OpenCorpus(larger);
  ASSERT_NE(r, nullptr);
  const int64_t documents = *r->store().CountDocuments();
  int64_t progress_total = 0;
  auto result = r->Reindex(bread, nullptr, [&](int64_t, int64_t total) { progress_total = total; });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->document_id, bread);
  const auto after = r->store().ListChunks(bread).value();
  ASSERT_GT(before.size(), after.size());  // fewer, larger chunks
  EXPECT_EQ(result->chunk_count, static_cast<int64_t>(after.size()));
  EXPECT_EQ(progress_total, result->chunk_count);
  EXPECT_EQ(*r->store().CountDocuments(), documents);
  EXPECT_EQ(r->index().size(), *r->store().CountChunks());
  EXPECT_TRUE(r->store().GetChunks({&before.front().id, 1}).value().empty());
  const std::vector<int64_t> ids = r->index().Ids();
  for (const auto& c : before) EXPECT_EQ(std::count(ids.begin(), ids.end(), c.id), 0);
  for (const auto& c : after) EXPECT_EQ(std::count(ids.begin(), ids.end(), c.id), 1);
  auto hits = r->Search("wild yeast starter dough");
  ASSERT_TRUE(hits.ok() && !hits->empty());
  EXPECT_EQ((*hits)[0].document_id, bread);
  EXPECT_EQ(r->Reindex(bread + 1000).status().code(), StatusCode::kNotFound);
  std::atomic<bool> cancel{true};
  EXPECT_EQ(r->Reindex(bread, &cancel).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(r->store().ListChunks(bread).value().size(), after.size());  // a cancel changes nothing
}

std::vector<int64_t> ChunkIds(Retriever& r, const std::string& q) {
  auto hits = r.Search(q, TopK(8));
  EXPECT_TRUE(hits.ok());
  std::vector<int64_t> ids;
  for (const auto& h : *hits) ids.push_back(h.chunk_id);
  return ids;
}

TEST_P(RetrieverTest, IndexPersistsAndRebuildsFromTheStore) {
  ragd::testing::TempDir dir;
  const auto o = Options(dir.path(), GetParam());
  const std::vector<std::string> queries = {"lava", "network congestion", "green leaves", "return a product"};
  std::vector<std::vector<int64_t>> original;
  {
    auto r = OpenCorpus(o);
    ASSERT_NE(r, nullptr);
    IngestAll(*r);
    for (const auto& q : queries) original.push_back(ChunkIds(*r, q));
  }  // saves the index
  const std::string index_path = dir.path() + "/vectors.faiss";
  ASSERT_TRUE(std::filesystem::exists(index_path));

  OpenReport report;
  {
    auto r = OpenCorpus(o, &report);
    ASSERT_NE(r, nullptr);
    EXPECT_FALSE(report.rebuilt) << report.reason;
    for (size_t i = 0; i < queries.size(); ++i) EXPECT_EQ(ChunkIds(*r, queries[i]), original[i]);
  }
  // Missing file: rebuilt from the stored embeddings, same answers.
  std::filesystem::remove(index_path);
  {
    auto r = OpenCorpus(o, &report);
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(report.rebuilt);
    EXPECT_EQ(report.vectors, *r->store().CountChunks());
    for (size_t i = 0; i < queries.size(); ++i) EXPECT_EQ(ChunkIds(*r, queries[i]), original[i]);
  }
  EXPECT_TRUE(std::filesystem::exists(index_path));  // the rebuild was saved
  // Corrupt file: rebuilt.
  std::ofstream(index_path, std::ios::trunc) << "garbage";
  {
    auto r = OpenCorpus(o, &report);
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(report.rebuilt);
    for (size_t i = 0; i < queries.size(); ++i) EXPECT_EQ(ChunkIds(*r, queries[i]), original[i]);
  }
  // Stale file (saved before a later document and a delete): rebuilt.
  const std::string stale = dir.path() + "/stale.faiss";
  std::filesystem::copy_file(index_path, stale);
  {
    auto r = OpenCorpus(o);
    ASSERT_NE(r, nullptr);
    ASSERT_TRUE(r->Ingest("Quantum computers use qubits in superposition.", "quantum.txt").ok());
    ASSERT_TRUE(r->DeleteDocument(1).ok());
  }
  std::filesystem::copy_file(stale, index_path, std::filesystem::copy_options::overwrite_existing);
  {
    auto r = OpenCorpus(o, &report);
    ASSERT_NE(r, nullptr);
    EXPECT_FALSE(report.rebuilt);
    EXPECT_TRUE(report.repaired);
    EXPECT_GT(report.added, 0);    // the quantum document
    EXPECT_GT(report.removed, 0);  // document 1
    EXPECT_EQ(r->index().size(), *r->store().CountChunks());
    EXPECT_EQ(TopFile(*r, "qubits superposition"), "quantum.txt");
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, RetrieverTest, ::testing::Values("flat", "hnsw"));
INSTANTIATE_TEST_SUITE_P(OnPostgres, RetrieverTest, ::testing::Values("flat+postgres"));

// Waits (bounded, generously) until `r`'s index holds `vectors` vectors.
bool IndexReaches(const Retriever& r, int64_t vectors) {
  for (int i = 0; i < 3000 && r.index().size() != vectors; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return r.index().size() == vectors;
}

// Two replicas on one PostgreSQL corpus, each with its own index file: what
// one writes, the other's index follows (the change sequence).
TEST(SharedCorpusTest, ReplicasFollowEachOthersWrites) {
  ragd::testing::TempDir dir_a, dir_b;
  const RetrieverOptions oa = Options(dir_a.path(), "flat+postgres");
  RetrieverOptions ob = Options(dir_b.path(), "flat");
  ob.postgres_url = oa.postgres_url;
  ob.follow_poll_ms = 100;
  auto a = OpenCorpus(oa);
  auto b = OpenCorpus(ob);
  ASSERT_TRUE(a && b);
  IngestAll(*a);
  const int64_t chunks = *a->store().CountChunks();
  ASSERT_TRUE(IndexReaches(*b, chunks)) << b->index().size() << " of " << chunks;
  EXPECT_EQ(b->index().Summary(), a->index().Summary());
  // B answers from vectors it never embedded (a paraphrase: the dense half).
  EXPECT_EQ(TopFile(*b, "how do mountains spew molten rock?"), "volcanoes.md");
  EXPECT_EQ(TopFile(*b, "Sicilian"), "chess.md");

  // A delete on B leaves A's index too.
  auto volcano = TopFile(*a, "lava");
  ASSERT_EQ(volcano, "volcanoes.md");
  auto hits = a->Search("lava");
  ASSERT_TRUE(hits.ok() && !hits->empty());
  const auto removed = b->DeleteDocument((*hits)[0].document_id);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  ASSERT_TRUE(IndexReaches(*a, chunks - *removed));
  EXPECT_NE(TopFile(*a, "how do mountains spew molten rock?"), "volcanoes.md");
  EXPECT_GT(a->followed_vectors(), 0);

  // A reindex (smaller chunks) on A swaps the chunks in B's index too.
  RetrieverOptions smaller = oa;
  smaller.ingest.chunking.target_tokens = 16;
  smaller.ingest.chunking.overlap_tokens = 0;
  a.reset();
  a = OpenCorpus(smaller);
  ASSERT_TRUE(a);
  auto tcp = a->Search("three-way handshake");
  ASSERT_TRUE(tcp.ok() && !tcp->empty());
  auto reindexed = a->Reindex((*tcp)[0].document_id);
  ASSERT_TRUE(reindexed.ok()) << reindexed.status().ToString();
  ASSERT_TRUE(IndexReaches(*b, a->index().size()));
  for (int i = 0; i < 3000 && !(b->index().Summary() == a->index().Summary()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(b->index().Summary(), a->index().Summary());

  // A replica that was down catches up when it starts again.
  b.reset();
  ASSERT_TRUE(a->Ingest("Quantum computers use qubits in superposition.", "quantum.txt").ok());
  b = OpenCorpus(ob);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->index().size(), a->index().size());
  EXPECT_EQ(TopFile(*b, "qubits superposition"), "quantum.txt");
}

TEST(FusionTest, ReciprocalRankFusion) {
  auto fused = FuseReciprocalRank({{1, 2, 3}, {3, 4, 1}}, 60);
  ASSERT_EQ(fused.size(), 4u);
  // 1: 1/61 + 1/63; 3: 1/63 + 1/61 -> tie broken by the dense rank; 2: 1/62; 4: 1/62.
  EXPECT_EQ(fused[0].id, 1);
  EXPECT_EQ(fused[1].id, 3);
  EXPECT_NEAR(fused[0].score, 1.0 / 61 + 1.0 / 63, 1e-12);
  EXPECT_EQ(fused[0].ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(fused[2].id, 2);
  EXPECT_EQ(fused[3].id, 4);
  EXPECT_EQ(fused[3].ranks, (std::vector<int>{0, 2}));
  EXPECT_TRUE(FuseReciprocalRank({{}, {}}, 60).empty());
}

TEST(SearchErrorsTest, BadQueries) {
  ragd::testing::TempDir dir;
  auto r = OpenCorpus(Options(dir.path()));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->Search("   ").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r->Search("x", TopK(0)).status().code(), StatusCode::kInvalidArgument);
  auto empty = r->Search("anything at all");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace ragd::retrieval
