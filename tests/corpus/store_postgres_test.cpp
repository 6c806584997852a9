// The corpus store on PostgreSQL: what only that engine does (shared by
// replicas, the change sequence, per-language text search). The engine-
// neutral suites (store_test.cpp, store_search_test.cpp) run on it too.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <thread>

#include "corpus/language.h"
#include "corpus/sha256.h"
#include "corpus/store.h"
#include "tests/corpus/test_util.h"
#include "tests/support/postgres.h"

namespace ragd::corpus {
namespace {

NewDocument Doc(const std::string& title, const std::vector<std::pair<std::string, std::string>>& chunks) {
  return testing::DocumentOf(title, chunks, /*embed=*/true);
}

class PostgresStore : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = ragd::testing::FreshPostgresSchema();
    ASSERT_FALSE(url_.empty());
    store_ = Open();
    ASSERT_TRUE(store_);
  }
  std::unique_ptr<Store> Open() {
    auto store = Store::Open({.postgres_url = url_});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // Runs one statement on the test schema.
  void Sql(const std::string& sql) {
    PGconn* conn = PQconnectdb(url_.c_str());
    PGresult* r = PQexec(conn, sql.c_str());
    EXPECT_TRUE(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
        << PQerrorMessage(conn);
    PQclear(r);
    PQfinish(conn);
  }
  std::string TextOf(ChunkId id) {
    auto chunks = store_->GetChunks(std::vector<ChunkId>{id});
    return chunks.ok() && !chunks->empty() ? (*chunks)[0].text : "";
  }

  std::string url_;
  std::unique_ptr<Store> store_;
};

TEST_F(PostgresStore, RefusesANewerSchemaAndAnUnreachableDatabase) {
  EXPECT_EQ(store_->SchemaVersion().value(), 1);
  Sql("UPDATE corpus_schema_version SET version = 99");
  auto newer = Store::Open({.postgres_url = url_});
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(newer.status().message().find("99"), std::string::npos) << newer.status().ToString();

  auto away = Store::Open({.postgres_url = "host=/nonexistent-ragd-socket user=ragd dbname=postgres"});
  ASSERT_FALSE(away.ok());
  EXPECT_EQ(away.status().code(), StatusCode::kUnavailable) << away.status().ToString();
}

TEST_F(PostgresStore, ReplicasShareOneStore) {
  auto other = Open();
  ASSERT_TRUE(other);
  auto a = store_->AddDocument(Doc("a", {{"", "shared walrus text"}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // The other replica sees it at once, and the same bytes are not stored twice.
  EXPECT_EQ(other->CountDocuments().value(), 1);
  EXPECT_EQ(other->SearchLexical("walrus", 5).value().size(), 1u);
  auto again = other->AddDocument(Doc("a", {{"", "shared walrus text"}}));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->inserted);
  EXPECT_EQ(again->id, a->id);
  // Ids stay unique and are never reused, whichever replica writes.
  ASSERT_TRUE(other->DeleteDocument(a->id).ok());
  auto b = store_->AddDocument(Doc("b", {{"", "another text"}}));
  ASSERT_TRUE(b.ok());
  EXPECT_GT(b->id, a->id);
  EXPECT_GT(b->chunk_ids[0], a->chunk_ids[0]);
  // Replicas writing at once: every document lands once, with all its chunks.
  std::thread t1([&] {
    for (int i = 0; i < 10; ++i)
      EXPECT_TRUE(
          store_->AddDocument(Doc("x" + std::to_string(i), {{"", "one " + std::to_string(i)}, {"", "two"}}))
              .ok());
  });
  std::thread t2([&] {
    for (int i = 0; i < 10; ++i)
      EXPECT_TRUE(
          other->AddDocument(Doc("y" + std::to_string(i), {{"", "uno " + std::to_string(i)}, {"", "dos"}}))
              .ok());
  });
  t1.join();
  t2.join();
  EXPECT_EQ(store_->CountDocuments().value(), 21);
  EXPECT_EQ(store_->CountChunks().value(), 41);
  EXPECT_TRUE(store_->CheckIntegrity().ok()) << store_->CheckIntegrity().ToString();
}

TEST_F(PostgresStore, EveryWriteExtendsTheChangeSequence) {
  EXPECT_EQ(store_->LastChange().value(), 0);
  auto a = store_->AddDocument(Doc("a", {{"", "one"}, {"", "two"}}));
  ASSERT_TRUE(a.ok());
  auto changes = store_->ChangesSince(0, 100).value();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].chunk_id, a->chunk_ids[0]);
  EXPECT_EQ(changes[1].chunk_id, a->chunk_ids[1]);
  EXPECT_EQ(changes[0].op, Change::Op::kAdd);
  EXPECT_LT(changes[0].seq, changes[1].seq);
  const int64_t after_add = store_->LastChange().value();
  EXPECT_EQ(after_add, changes[1].seq);

  // A rechunk removes the old chunks and adds the new, in that order.
  NewChunk whole;
  whole.end = 3;
  whole.text = "one";
  auto replaced = store_->ReplaceChunks(a->id, {&whole, 1});
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  changes = store_->ChangesSince(after_add, 100).value();
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].op, Change::Op::kRemove);
  EXPECT_EQ(changes[1].op, Change::Op::kRemove);
  EXPECT_EQ(changes[2].op, Change::Op::kAdd);
  EXPECT_EQ(changes[2].chunk_id, replaced->added[0]);

  ASSERT_TRUE(store_->DeleteDocument(a->id).ok());
  changes = store_->ChangesSince(changes[2].seq, 100).value();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].op, Change::Op::kRemove);
  EXPECT_EQ(changes[0].chunk_id, replaced->added[0]);
  EXPECT_EQ(store_->ChangesSince(0, 2).value().size(), 2u);  // the limit holds
  // A refused write leaves no entry.
  EXPECT_FALSE(store_->DeleteDocument(a->id).ok());
  EXPECT_EQ(store_->ChangesSince(changes[0].seq, 100).value().size(), 0u);
}

TEST_F(PostgresStore, WaitForChangeWakesOnAnotherReplicasWrite) {
  auto other = Open();
  ASSERT_TRUE(other);
  EXPECT_TRUE(store_->WaitForChange(0).value());  // the first call starts listening
  EXPECT_FALSE(store_->WaitForChange(50).value());
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(other->AddDocument(Doc("late", {{"", "news"}})).ok());
  });
  // Bounded by a generous wait: the notice, not the time, is asserted.
  EXPECT_TRUE(store_->WaitForChange(30000).value());
  writer.join();
  EXPECT_EQ(store_->ChangesSince(0, 10).value().size(), 1u);
}

TEST_F(PostgresStore, WriteInAnotherSchemaDoesNotWakeThisOne) {
  // Another deployment in the same database (its own schema).
  auto elsewhere = Store::Open({.postgres_url = ragd::testing::FreshPostgresSchema()});
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status().ToString();
  EXPECT_TRUE(store_->WaitForChange(0).value());  // starts listening
  ASSERT_TRUE((*elsewhere)->AddDocument(Doc("theirs", {{"", "news of another schema"}})).ok());
  // Notices are delivered at commit, before AddDocument returns; a second
  // is more than enough for one that would come.
  EXPECT_FALSE(store_->WaitForChange(1000).value());
  ASSERT_TRUE(Open()->AddDocument(Doc("ours", {{"", "news of this schema"}})).ok());
  EXPECT_TRUE(store_->WaitForChange(30000).value());
}

TEST_F(PostgresStore, SearchStemsEachLanguageByItsOwnRules) {
  auto added = store_->AddDocument(
      Doc("Languages",
          {{"", "The engineers were configuring the servers for the nightly backups."},
           {"", "Os arquivos são guardados na pasta do servidor e os usuários não os perdem."},
           {"", "Les utilisateurs déposent des documents dans la bibliothèque pour les partager."},
           {"", "Los modelos se cargan en la memoria cuando el servidor arranca por la mañana."},
           {"", "Die Dokumente werden beim Hochladen in kleine Abschnitte zerlegt und gespeichert."}}));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  // Each query uses other inflections of its chunk's words (no word of a
  // query appears as such in any chunk): only the language's stemmer makes
  // them meet.
  const std::pair<std::string, int> cases[] = {
      {"How do I configure a server backup?", 0},      {"Onde guardar o arquivo?", 1},
      {"Quel utilisateur dépose le document ?", 2},    {"¿Cómo cargar un modelo?", 3},
      {"In welchem Abschnitt steht das Dokument?", 4},
  };
  for (const auto& [query, chunk] : cases) {
    auto hits = store_->SearchLexical(query, 5);
    ASSERT_TRUE(hits.ok()) << query << ": " << hits.status().ToString();
    ASSERT_FALSE(hits->empty()) << query;
    EXPECT_EQ((*hits)[0].chunk_id, added->chunk_ids[chunk])
        << query << " found " << TextOf((*hits)[0].chunk_id);
    for (const LexicalHit& h : *hits) EXPECT_GT(h.score, 0) << query;
  }
}

TEST_F(PostgresStore, RanksRepeatsMoreTermsAndTextAboveHeadings) {
  auto a = store_->AddDocument(
      Doc("Fruit", {{"", "apple apple apple"},
                    {"", "An apple fell from the tree in the orchard near the old stone wall by the river."},
                    {"", "The apple harvest was shared among neighbours."},
                    {"Quince", "A fruit for jam."},
                    {"", "The quince is a hard fruit."}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto apple = store_->SearchLexical("apple", 10).value();
  ASSERT_EQ(apple.size(), 3u);
  EXPECT_EQ(apple[0].chunk_id, a->chunk_ids[0]);
  for (size_t i = 0; i + 1 < apple.size(); ++i) EXPECT_GE(apple[i].score, apple[i + 1].score);
  auto two = store_->SearchLexical("apple orchard", 10).value();
  ASSERT_FALSE(two.empty());
  EXPECT_EQ(two[0].chunk_id, a->chunk_ids[1]);
  // The same word in a chunk's text outranks it in another's heading.
  auto quince = store_->SearchLexical("quince", 10).value();
  ASSERT_EQ(quince.size(), 2u);
  EXPECT_EQ(quince[0].chunk_id, a->chunk_ids[4]);
  EXPECT_EQ(quince[1].chunk_id, a->chunk_ids[3]);
  EXPECT_GT(quince[0].score, quince[1].score);
}

TEST_F(PostgresStore, RareTermsWeighMoreAndLargeStoresSkipChunksWithOnlyCommonOnes) {
  std::vector<std::pair<std::string, std::string>> chunks;
  for (int i = 0; i < 40; ++i) chunks.push_back({"", "lantern number " + std::to_string(i)});
  chunks[7].second += " with a bronze hinge";
  chunks[9].second = "lantern lantern lantern lantern";
  auto a = store_->AddDocument(Doc("lanterns", chunks));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // The rare word outweighs the common one repeated.
  auto full = store_->SearchLexical("lantern hinge", 10).value();
  ASSERT_EQ(full.size(), 10u);
  EXPECT_EQ(full[0].chunk_id, a->chunk_ids[7]);
  EXPECT_EQ(full[1].chunk_id, a->chunk_ids[9]);
  // Pruning from the first chunk: the top hit is the same; asking for more
  // than the chunks with a rare term holds runs the full search.
  auto pruning = Store::Open({.postgres_url = url_, .lexical_prune_from_chunks = 1});
  ASSERT_TRUE(pruning.ok()) << pruning.status().ToString();
  auto top = (*pruning)->SearchLexical("lantern hinge", 1).value();
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].chunk_id, a->chunk_ids[7]);
  auto all = (*pruning)->SearchLexical("lantern hinge", 10).value();
  ASSERT_EQ(all.size(), 10u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].chunk_id, full[i].chunk_id) << i;
}

TEST_F(PostgresStore, IntegrityCheckFindsAStaleSearchVector) {
  auto a = store_->AddDocument(Doc("a", {{"", "walrus"}}));
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(store_->CheckIntegrity().ok());
  Sql("UPDATE corpus_chunks SET tsv = to_tsvector('simple', 'other')");
  EXPECT_EQ(store_->CheckIntegrity().code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace ragd::corpus
