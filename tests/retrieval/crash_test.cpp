// A real crash: a child process ingesting documents is killed with SIGKILL at
// several points; after each kill the data folder must be consistent (no
// half document, index rebuilt to match the store) and ingestion must resume.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "retrieval/retriever.h"
#include "tests/retrieval/synthetic_docs.h"
#include "tests/retrieval/test_models.h"
#include "tests/support/temp_dir.h"

#ifndef RAGD_INGEST_CHILD
#error "RAGD_INGEST_CHILD must name the helper executable"
#endif

namespace ragd::retrieval {
namespace {

// Starts the child, waits until it reports `commits` committed documents plus
// `extra_ms`, then kills it with SIGKILL. Returns the number of commits seen.
int IngestAndKill(const std::string& dir, int first, int commits, int extra_ms, int save_interval_s) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string first_s = std::to_string(first), interval_s = std::to_string(save_interval_s);
    execl(RAGD_INGEST_CHILD, RAGD_INGEST_CHILD, dir.c_str(), first_s.c_str(), "100000", interval_s.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  FILE* out = fdopen(fds[0], "r");
  int seen = 0, n = 0;
  long long id = 0;
  while (seen < commits && std::fscanf(out, "%d %lld", &n, &id) == 2) ++seen;
  std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  while (std::fscanf(out, "%d %lld", &n, &id) == 2) ++seen;  // commits reported before the kill
  std::fclose(out);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child ended on its own: " << status;
  return seen;
}

std::shared_ptr<const Embedder> Model() {
  auto m = Embedder::Load(testing::MiniLmDir());
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::shared_ptr<const Embedder>(std::move(m.value())) : nullptr;
}

TEST(CrashTest, KillNineMidIngestLeavesAConsistentStore) {
  ragd::testing::TempDir dir;
  auto model = Model();
  ASSERT_NE(model, nullptr);
  int reported = 0;
  int next_doc = 0;
  // Different kill points: right after a commit, and some time into the next
  // documents; the child saves its index after every change (kills also land
  // mid-save) or never (the index file is always stale after the kill).
  const int kill_after_ms[] = {0, 37, 150, 410};
  const int save_interval_s[] = {0, 3600, 0, 3600};
  for (int round = 0; round < 4; ++round) {
    const int seen =
        IngestAndKill(dir.path(), next_doc, 3 + round, kill_after_ms[round], save_interval_s[round]);
    ASSERT_GE(seen, 3 + round);
    reported += seen;

    OpenReport report;
    auto r = Retriever::Open(testing::CrashTestOptions(dir.path()), model, &report);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (save_interval_s[round] > 0) {
      EXPECT_TRUE(report.repaired) << report.reason;
      EXPECT_GT(report.added, 0);
    }
    corpus::Store& store = (*r)->store();
    auto docs = store.ListDocuments();
    ASSERT_TRUE(docs.ok());
    // Every acknowledged commit is there; at most one more (committed, not yet reported).
    EXPECT_GE(static_cast<int>(docs->size()), reported);
    EXPECT_LE(static_cast<int>(docs->size()), reported + 1);
    reported = static_cast<int>(docs->size());
    // No half document: each has all its chunks, each chunk its embedding.
    int64_t chunks = 0;
    for (const auto& d : *docs) {
      auto list = store.ListChunks(d.id, /*with_embeddings=*/true);
      ASSERT_TRUE(list.ok());
      EXPECT_GT(d.chunk_count, 0);
      EXPECT_EQ(static_cast<int64_t>(list->size()), d.chunk_count);
      for (const auto& c : *list) EXPECT_EQ(c.embedding.size(), 384u);
      chunks += d.chunk_count;
    }
    EXPECT_EQ(*store.CountChunks(), chunks);
    // The index matches the store (loaded as saved or rebuilt).
    EXPECT_EQ((*r)->index().size(), chunks) << "rebuilt=" << report.rebuilt << " " << report.reason;
    // The last committed document is searchable: lexically by its marker, and
    // densely (its vectors are in the index) by the exact text of a chunk.
    SearchOptions lexical;
    lexical.dense = false;
    auto hits = (*r)->Search("docmarker" + std::to_string(reported - 1), lexical);
    ASSERT_TRUE(hits.ok());
    ASSERT_FALSE(hits->empty());
    EXPECT_EQ((*hits)[0].title, "doc" + std::to_string(reported - 1));
    auto last = store.ListChunks(docs->front().id);  // newest first
    ASSERT_TRUE(last.ok() && !last->empty());
    EXPECT_EQ(docs->front().source_name, "doc" + std::to_string(reported - 1) + ".txt");
    SearchOptions dense;
    dense.lexical = false;
    dense.top_k = 1;
    auto same = (*r)->Search(last->back().text, dense);
    ASSERT_TRUE(same.ok());
    ASSERT_EQ(same->size(), 1u);
    EXPECT_EQ((*same)[0].chunk_id, last->back().id);
    next_doc = reported;
  }
}

}  // namespace
}  // namespace ragd::retrieval
