// The labelled sentence/passage pairs of tests/data/attribution/ and the
// support features of each pair, shared by the calibration tool and the test
// that checks the chosen thresholds. Header-only.
//
// passages.jsonl       {"id": "configuration#2", "source", "title", "heading", "text"}:
//                      chunks of docs/sample as ragd's chunker cuts them (200 tokens)
// support_pairs.jsonl  {"lang", "kind", "sentence", "supported_by": [ids], "not_supported_by": [ids]}:
//                      each id names a passage that does (not) support the sentence; kind is
//                      "paraphrase", "wrong_fact" (a changed number or claim) or "off_topic"
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "retrieval/support.h"
#include "tests/support/test_paths.h"

namespace ragd::retrieval::testing {

struct LabelledPair {
  std::string lang;
  std::string kind;
  std::string sentence;
  std::string passage_id;
  bool supports = false;
  SupportFeatures features;
};

// tests/data/<name>: under $RAGD_SOURCE_DIR, else under the source tree the
// test was built from (test discovery lists the cases without the variable).
inline std::string DataPath(const std::string& name) {
#ifdef RAGD_SOURCE_TREE
  const char* env = std::getenv("RAGD_SOURCE_DIR");
  if (env == nullptr || *env == '\0') return std::string(RAGD_SOURCE_TREE) + "/tests/data/" + name;
#endif
  return ragd::testing::TestDataPath(name);
}

inline Result<std::vector<nlohmann::json>> ReadJsonLines(const std::string& name) {
  std::ifstream in(DataPath(name));
  if (!in) return Status::NotFound("missing tests/data/" + name);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::Corrupt("bad JSON line in tests/data/" + name + ": " + line);
    out.push_back(std::move(j));
  }
  return out;
}

// Every labelled pair with its features measured through `embed`. With
// whole_passages, the cosine is the whole passage's only (no sentence vectors).
inline Result<std::vector<LabelledPair>> LoadLabelledPairs(const EmbedTextsFn& embed,
                                                           bool whole_passages = false) {
  auto passages = ReadJsonLines("attribution/passages.jsonl");
  if (!passages.ok()) return passages.status();
  auto sentences = ReadJsonLines("attribution/support_pairs.jsonl");
  if (!sentences.ok()) return sentences.status();

  std::map<std::string, size_t> index;
  std::vector<std::string> texts;
  for (const auto& p : *passages) {
    index[p.at("id").get<std::string>()] = texts.size();
    texts.push_back(p.at("text").get<std::string>());
  }
  auto evidence = PreparePassages(texts, embed);
  if (!evidence.ok()) return evidence.status();
  if (whole_passages)
    for (PassageEvidence& e : *evidence) e.vectors.resize(1);

  std::vector<std::string> sentence_texts;
  for (const auto& s : *sentences) sentence_texts.push_back(s.at("sentence").get<std::string>());
  auto vectors = embed(sentence_texts);
  if (!vectors.ok()) return vectors.status();

  // Each line is scored like one answer sentence against the sources it
  // lists, as if those had been retrieved together.
  std::vector<LabelledPair> pairs;
  for (size_t i = 0; i < sentences->size(); ++i) {
    const auto& s = (*sentences)[i];
    std::vector<const PassageEvidence*> sources;
    std::vector<LabelledPair> group;
    for (const char* field : {"supported_by", "not_supported_by"}) {
      for (const auto& id : s.at(field)) {
        auto it = index.find(id.get<std::string>());
        if (it == index.end()) return Status::Corrupt("unknown passage " + id.dump());
        sources.push_back(&(*evidence)[it->second]);
        group.push_back({s.at("lang"),
                         s.at("kind"),
                         sentence_texts[i],
                         it->first,
                         std::string(field) == "supported_by",
                         {}});
      }
    }
    const std::vector<SupportFeatures> features =
        MeasureSupport(ContentTokens(sentence_texts[i]), (*vectors)[i], sources);
    for (size_t k = 0; k < group.size(); ++k) {
      group[k].features = features[k];
      pairs.push_back(std::move(group[k]));
    }
  }
  return pairs;
}

struct PrecisionRecall {
  int true_positives = 0, false_positives = 0, false_negatives = 0, true_negatives = 0;
  double precision() const {
    const int p = true_positives + false_positives;
    return p > 0 ? static_cast<double>(true_positives) / p : 1.0;
  }
  double recall() const {
    const int p = true_positives + false_negatives;
    return p > 0 ? static_cast<double>(true_positives) / p : 1.0;
  }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0;
  }
};

// Pairs whose support score is >= threshold count as "supports".
inline PrecisionRecall Evaluate(const std::vector<LabelledPair>& pairs, const SupportModel& model,
                                double threshold, const std::string& lang = "") {
  PrecisionRecall pr;
  for (const LabelledPair& p : pairs) {
    if (!lang.empty() && p.lang != lang) continue;
    const bool predicted = SupportScore(p.features, model) >= threshold;
    if (predicted && p.supports) ++pr.true_positives;
    if (predicted && !p.supports) ++pr.false_positives;
    if (!predicted && p.supports) ++pr.false_negatives;
    if (!predicted && !p.supports) ++pr.true_negatives;
  }
  return pr;
}

}  // namespace ragd::retrieval::testing
