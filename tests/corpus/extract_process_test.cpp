#include "corpus/extract_process.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

using testing::ReadFixture;

ContainmentOptions Contained() {
  ContainmentOptions c;
  c.worker_command = {RAGD_EXTRACT_WORKER};
  c.cpu_seconds = 2;
  c.memory_bytes = int64_t{256} << 20;
  c.max_output_bytes = 1 << 20;
  c.wall_seconds = 20;
  return c;
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// No child is left behind, reaped or not.
void ExpectNoChildren() {
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

class ContainedFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(ContainedFixture, SameDocumentAsInProcess) {
  const std::string bytes = ReadFixture(GetParam());
  auto direct = Extract(bytes, GetParam());
  auto contained = ExtractContained(bytes, GetParam(), "", {}, Contained());
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  ASSERT_TRUE(contained.ok()) << contained.status().ToString();
  EXPECT_EQ(contained->text, direct->text);
  EXPECT_EQ(contained->title, direct->title);
  EXPECT_EQ(contained->media_type, direct->media_type);
  ExpectNoChildren();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ContainedFixture,
                         ::testing::Values("sample.txt", "sample.md", "sample.html", "sample.pdf"),
                         [](const auto& info) {
                           return std::filesystem::path(info.param).extension().string().substr(1);
                         });

TEST(ExtractContained, RefusalsKeepTheirCodeAndMessage) {
  for (const auto& [bytes, name] :
       std::vector<std::pair<std::string, std::string>>{{"looks like text", "report.docx"},
                                                        {std::string("a\0b", 3), "a.txt"},
                                                        {" \n", "a.txt"},
                                                        {"%PDF-1.4\nnot really", "x.pdf"}}) {
    auto direct = Extract(bytes, name);
    auto contained = ExtractContained(bytes, name, "", {}, Contained());
    ASSERT_FALSE(direct.ok());
    ASSERT_FALSE(contained.ok()) << name;
    EXPECT_EQ(contained.status().code(), direct.status().code()) << name;
    EXPECT_EQ(contained.status().message(), direct.status().message()) << name;
  }
  ExtractOptions small;
  small.max_bytes = 4;
  EXPECT_EQ(ExtractContained("12345", "a.txt", "", small, Contained()).status().code(),
            StatusCode::kOutOfRange);
  ExpectNoChildren();
}

struct Limit {
  const char* file_name;
  const char* message;  // what the refusal must say
  double wall_seconds;  // generous where another limit must come first on a busy machine
};

class ContainedLimit : public ::testing::TestWithParam<Limit> {};

TEST_P(ContainedLimit, StopsTheChildWithAClearError) {
  ContainmentOptions c = Contained();
  c.cpu_seconds = 1;
  c.wall_seconds = GetParam().wall_seconds;
  const auto t0 = std::chrono::steady_clock::now();
  auto doc = ExtractContained("some text", GetParam().file_name, "", {}, c);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kResourceExhausted) << doc.status().ToString();
  EXPECT_TRUE(Contains(doc.status().message(), GetParam().message)) << doc.status().message();
  EXPECT_LT(s, c.wall_seconds + 10);  // not a timing check: a limit that did not hold would hang here
  ExpectNoChildren();
}

INSTANTIATE_TEST_SUITE_P(Limits, ContainedLimit,
                         ::testing::Values(Limit{"spin.txt", "CPU time", 120},
                                           Limit{"sleep.txt", "took longer than 2 s", 2},
                                           Limit{"grab.txt", "memory", 120},
                                           Limit{"crash.txt", "parser stopped on signal", 120},
                                           Limit{"flood.txt", "larger than the limit of 1 MiB", 120}),
                         [](const auto& info) {
                           std::string n = info.param.file_name;
                           return n.substr(0, n.find('.'));
                         });

TEST(ExtractContained, CancelKillsTheChild) {
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  auto doc = ExtractContained("x", "sleep.txt", "", {}, Contained(), &cancel);
  canceller.join();
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kCancelled);
  ExpectNoChildren();
}

TEST(ExtractContained, ChildrenRunSideBySide) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto doc = ExtractContained("text number " + std::to_string(i), "n.txt", "", {}, Contained());
      good += doc.ok() && doc->text == "text number " + std::to_string(i);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 4);
  ExpectNoChildren();
}

TEST(ExtractContained, ChildGetsNoEnvironment) {
  ::setenv("RAGD_TEST_SECRET", "s3cret", 1);
  auto doc = ExtractContained("x", "env.txt", "", {}, Contained());
  ::unsetenv("RAGD_TEST_SECRET");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->text, "(unset)");
}

TEST(ExtractContained, ChildCannotRunWriteConnectOrFork) {
  auto doc = ExtractContained("x", "escape.txt", "", {}, Contained());
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->text,
            "exec: Operation not permitted\n"
            "create: Operation not permitted\n"
            "socket: Operation not permitted\n"
            "fork: Operation not permitted\n"
            "read: done\n");
  ExpectNoChildren();
}

TEST(ExtractContained, MissingWorkerIsAnError) {
  ContainmentOptions c = Contained();
  c.worker_command = {"/nonexistent/extract-worker"};
  auto doc = ExtractContained("x", "a.txt", "", {}, c);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInternal);
  ExpectNoChildren();
}

TEST(ExtractContained, EmptyCommandExtractsInProcess) {
  auto doc = ExtractContained("hello", "a.txt", "", {}, ContainmentOptions{});
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->text, "hello");
}

}  // namespace
}  // namespace ragd::corpus
