// Time per MB of extraction and chunking on inputs that used to cost the
// square of their size: HTML with many <script> elements, and long unbroken
// words (CJK text without spaces, minified code) chunked with the embedding
// model's WordPiece counter. Linear code shows a flat s/MB column as the
// input grows.
// Run by hand:  bench_extract [MB...]   (default: 0.25 0.5 1 2)
//   RAGD_MODELS as for tests (the MiniLM vocab.txt; without it a counter of
//   one token per character stands in).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_paths.h"
#include "corpus/chunker.h"
#include "corpus/extract.h"
#include "retrieval/wordpiece.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string Repeat(const std::string& head, const std::string& unit, const std::string& tail, size_t bytes) {
  std::string s = head;
  while (s.size() + tail.size() < bytes) s += unit;
  return s + tail;
}

struct Case {
  const char* name;
  std::function<std::string(size_t)> make;
  bool chunk;  // chunk the text (else extract it as HTML)
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes_mb;
  for (int i = 1; i < argc; ++i) sizes_mb.push_back(std::atof(argv[i]));
  if (sizes_mb.empty()) sizes_mb = {0.25, 0.5, 1, 2};

  ragd::corpus::TokenCounter count = [](std::string_view s) {
    int n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  };
  const char* counter_name = "one token per character";
  auto wp = ragd::retrieval::WordPieceTokenizer::Load(ragd::bench::MiniLmDir() + "/vocab.txt");
  if (wp.ok()) {
    count = [&wp](std::string_view s) { return static_cast<int>(wp->CountTokens(s)); };
    counter_name = "MiniLM WordPiece";
  }

  const std::vector<Case> cases = {
      {"html, <script> elements",
       [](size_t b) {
         return Repeat("<html><body>", "<p>x</p><script>var a=1;</script>", "</body></html>", b);
       },
       false},
      {"html, one CJK paragraph",
       [](size_t b) { return Repeat("<html><body><p>", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "</p>", b); },
       false},
      {"chunk, CJK without spaces",
       [](size_t b) { return Repeat("", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "", b); }, true},
      {"chunk, minified code", [](size_t b) { return Repeat("", "a=b(c);d.e[f]+g;", "", b); }, true},
  };
  std::printf("bench_extract: %u cores, counter: %s\n", std::thread::hardware_concurrency(), counter_name);
  std::printf("%-28s %8s %10s %10s\n", "input", "MB", "seconds", "s/MB");
  for (const Case& c : cases) {
    for (double mb : sizes_mb) {
      const std::string input = c.make(static_cast<size_t>(mb * 1024 * 1024));
      const auto t0 = Clock::now();
      bool ok;
      if (c.chunk) {
        ok = ragd::corpus::ChunkText(input, count).ok();
      } else {
        ragd::corpus::ExtractOptions o;
        o.max_bytes = input.size();
        ok = ragd::corpus::Extract(input, "bench.html", "", o).ok();
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("%-28s %8.2f %10.3f %10.3f%s\n", c.name, mb, s, s / mb, ok ? "" : "  (refused)");
      std::fflush(stdout);
    }
  }
  return 0;
}
