// Fits the support score of retrieval/support.h on the labelled pairs of
// tests/data/attribution/ and prints precision and recall, so that the
// defaults in retrieval/attribution.h can be checked and re-derived:
//
//   build/tests/retrieval/retrieval_attribution_calibrate [--pairs]
//
// It prints: the fitted coefficients over all pairs; precision/recall over a
// range of thresholds; the same per language; leave-one-language-out figures
// (fitted on four languages, measured on the fifth); and the figures of the
// defaults. --pairs also lists every pair with its features and score.
// Needs the real all-MiniLM-L6-v2 ($RAGD_MODELS or ~/.cache/ragd/models);
// the data comes from $RAGD_SOURCE_DIR, else the source tree it was built from.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "retrieval/attribution.h"
#include "retrieval/embedder.h"
#include "tests/retrieval/support_pairs.h"
#include "tests/retrieval/test_models.h"

namespace ragd::retrieval {
namespace {

using testing::LabelledPair;

constexpr int kFeatures = 6;  // bias, then SupportFeatures' fields in SupportModel's order

std::array<double, kFeatures> Row(const SupportFeatures& f) {
  return {1, f.cosine, f.lexical, f.cosine_gap, f.lexical_gap, f.number_missing};
}

SupportModel ToModel(const std::array<double, kFeatures>& w) { return {w[0], w[1], w[2], w[3], w[4], w[5]}; }

// Logistic regression by Newton's method with a small ridge penalty, over the
// features whose mask entry is set (the bias always).
SupportModel Fit(const std::vector<LabelledPair>& pairs, const std::array<bool, kFeatures>& use) {
  constexpr double kRidge = 1e-2;
  std::array<double, kFeatures> w{};
  for (int iter = 0; iter < 60; ++iter) {
    double m[kFeatures][kFeatures + 1] = {};
    for (int a = 0; a < kFeatures; ++a) {
      m[a][a] = kRidge;
      m[a][kFeatures] = kRidge * w[a];
    }
    for (const LabelledPair& p : pairs) {
      std::array<double, kFeatures> x = Row(p.features);
      for (int a = 0; a < kFeatures; ++a) x[a] = use[a] || a == 0 ? x[a] : 0;
      double z = 0;
      for (int a = 0; a < kFeatures; ++a) z += w[a] * x[a];
      const double q = 1 / (1 + std::exp(-z));
      for (int a = 0; a < kFeatures; ++a) {
        m[a][kFeatures] += (q - (p.supports ? 1 : 0)) * x[a];
        for (int b = 0; b < kFeatures; ++b) m[a][b] += q * (1 - q) * x[a] * x[b];
      }
    }
    // Gauss-Jordan elimination with partial pivoting: the Newton step.
    for (int c = 0; c < kFeatures; ++c) {
      int piv = c;
      for (int r = c + 1; r < kFeatures; ++r)
        if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
      for (int k = 0; k <= kFeatures; ++k) std::swap(m[c][k], m[piv][k]);
      for (int r = 0; r < kFeatures; ++r) {
        if (r == c) continue;
        const double f = m[r][c] / m[c][c];
        for (int k = c; k <= kFeatures; ++k) m[r][k] -= f * m[c][k];
      }
    }
    for (int a = 0; a < kFeatures; ++a) w[a] -= m[a][kFeatures] / m[a][a];
  }
  return ToModel(w);
}

void PrintModel(const char* name, const SupportModel& m) {
  std::printf(
      "-- %s: bias %.2f  cosine %.2f  lexical %.2f  cosine_gap %.2f  lexical_gap %.2f  number_missing %.2f\n",
      name, m.bias, m.cosine, m.lexical, m.cosine_gap, m.lexical_gap, m.number_missing);
}

void PrintRow(const char* label, const testing::PrecisionRecall& pr) {
  std::printf("  %-28s precision %.3f  recall %.3f  F1 %.3f  (tp %d fp %d fn %d tn %d)\n", label,
              pr.precision(), pr.recall(), pr.f1(), pr.true_positives, pr.false_positives, pr.false_negatives,
              pr.true_negatives);
}

void PrintSweep(const std::vector<LabelledPair>& pairs, const SupportModel& model) {
  for (double t = 0.2; t < 0.86; t += 0.1) {
    char label[32];
    std::snprintf(label, sizeof label, "threshold %.2f", t);
    PrintRow(label, testing::Evaluate(pairs, model, t));
  }
}

int Main(int argc, char** argv) {
  const bool list_pairs = argc > 1 && std::strcmp(argv[1], "--pairs") == 0;
  auto embedder = Embedder::Load(testing::MiniLmDir());
  if (!embedder.ok()) {
    std::fprintf(stderr, "cannot load %s: %s\n", testing::MiniLmDir().c_str(),
                 embedder.status().ToString().c_str());
    return 1;
  }
  const EmbedTextsFn embed = EmbedTextsWith(**embedder);
  const char* kLangs[] = {"en", "pt", "fr", "es", "de"};

  for (bool whole : {true, false}) {
    auto pairs = testing::LoadLabelledPairs(embed, whole);
    if (!pairs.ok()) {
      std::fprintf(stderr, "%s\n", pairs.status().ToString().c_str());
      return 1;
    }
    int positives = 0;
    for (const auto& p : *pairs) positives += p.supports ? 1 : 0;
    std::printf("\n== cosine over %s: %zu pairs (%d supporting)\n",
                whole ? "the whole passage only" : "the passage and each of its sentences", pairs->size(),
                positives);
    using Mask = std::array<bool, kFeatures>;
    const std::pair<Mask, const char*> kVariants[] = {
        {{true, true, false, false, false, false}, "cosine"},
        {{true, false, true, false, false, false}, "lexical"},
        {{true, true, true, false, false, false}, "cosine + lexical"},
        {{true, true, true, true, true, false}, "cosine + lexical + gaps"},
        {{true, true, true, true, true, true}, "all features"},
    };
    for (const auto& [mask, name] : kVariants) {
      const SupportModel m = Fit(*pairs, mask);
      PrintModel(name, m);
      PrintSweep(*pairs, m);
      std::printf("   leave one language out (fitted on the other four):\n");
      std::vector<LabelledPair> held_out;
      std::vector<double> scores;
      testing::PrecisionRecall total;
      for (const char* lang : kLangs) {
        std::vector<LabelledPair> train;
        for (const auto& p : *pairs)
          if (p.lang != lang) train.push_back(p);
        const SupportModel lm = Fit(train, mask);
        const testing::PrecisionRecall pr = testing::Evaluate(*pairs, lm, 0.5, lang);
        total.true_positives += pr.true_positives;
        total.false_positives += pr.false_positives;
        total.false_negatives += pr.false_negatives;
        total.true_negatives += pr.true_negatives;
      }
      PrintRow("held out, threshold 0.50", total);
    }
  }

  auto pairs = testing::LoadLabelledPairs(embed);
  if (!pairs.ok()) return 1;
  const AttributionOptions defaults;
  PrintModel("the defaults", defaults.model);
  for (auto [t, what] :
       {std::pair{defaults.support_threshold, "support"}, {defaults.keep_threshold, "keep"}}) {
    for (const char* lang : {"", "en", "pt", "fr", "es", "de"}) {
      char label[48];
      std::snprintf(label, sizeof label, "%s %.2f %s", what, t, *lang ? lang : "all");
      PrintRow(label, testing::Evaluate(*pairs, defaults.model, t, lang));
    }
  }
  if (list_pairs) {
    std::printf(
        "\n-- pairs: label score cosine lexical cosine_gap lexical_gap number_missing lang kind passage "
        "sentence\n");
    for (const auto& p : *pairs)
      std::printf("%s %.3f %.3f %.3f %.3f %.3f %.0f %s %-10s %-20s %s\n", p.supports ? "YES" : "no ",
                  SupportScore(p.features, defaults.model), p.features.cosine, p.features.lexical,
                  p.features.cosine_gap, p.features.lexical_gap, p.features.number_missing, p.lang.c_str(),
                  p.kind.c_str(), p.passage_id.c_str(), p.sentence.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace ragd::retrieval

int main(int argc, char** argv) { return ragd::retrieval::Main(argc, argv); }
