// Deterministic synthetic documents for crash and benchmark runs.
#pragma once

#include <random>
#include <string>

#include "retrieval/retriever.h"

namespace ragd::retrieval::testing {

// A few paragraphs of pseudo-random words plus a marker word "docmarkerN".
inline std::string SyntheticDocument(int n, int paragraphs = 6) {
  static const char* kWords[] = {"river",  "engine", "signal",  "garden",  "copper",  "winter",
                                 "ledger", "harbor", "violet",  "matrix",  "candle",  "pepper",
                                 "falcon", "quartz", "meadow",  "socket",  "thunder", "marble",
                                 "orbit",  "velvet", "glacier", "lantern", "cipher",  "prairie"};
  std::mt19937 rng(static_cast<uint32_t>(n) * 2654435761u);
  std::uniform_int_distribution<int> word(0, static_cast<int>(std::size(kWords)) - 1);
  std::string text = "Document docmarker" + std::to_string(n) + ".\n\n";
  for (int p = 0; p < paragraphs; ++p) {
    for (int s = 0; s < 4; ++s) {
      for (int w = 0; w < 10; ++w) {
        text += kWords[word(rng)];
        text += w == 9 ? ". " : " ";
      }
    }
    text += "\n\n";
  }
  return text;
}

// Options shared by the crash test and its child process.
inline RetrieverOptions CrashTestOptions(const std::string& dir) {
  RetrieverOptions o;
  o.data_dir = dir;
  o.synchronous_full = true;
  o.ingest.chunking.target_tokens = 40;
  o.ingest.chunking.overlap_tokens = 5;
  return o;
}

}  // namespace ragd::retrieval::testing
