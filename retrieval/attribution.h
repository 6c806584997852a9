// Citation attribution: as an answer streams, each finished sentence is
// matched to the numbered sources that the client received, and its [n]
// markers are corrected so that every marker names a source that supports the
// sentence.
//
// Sources are numbered 1..K in the order given. Sentences are found by
// retrieval/sentences.h; the support of source n for a sentence is the score
// of retrieval/support.h (embedding cosine and content-word overlap, combined
// into [0, 1]), computed on the sentence without its markers. Per sentence:
//   - a marker [n] the model wrote is kept when 1 <= n <= K and source n
//     scores >= keep_threshold (the model's own choice counts as evidence, so
//     keeping needs less than adding);
//   - any other marker number (out of range, or a source that does not support
//     the sentence) is replaced in place by the best-scoring source that scores
//     >= support_threshold and the sentence does not cite yet, or dropped when
//     there is none; a marker left empty is removed with the blank before it;
//     a repeated number is dropped;
//   - a factual sentence left without a marker gets the best source's marker
//     when that source scores >= support_threshold, placed before the final
//     punctuation: "Paris is the capital [1]." ("首都[1]。" without the blank
//     after CJK text; at the end of a sentence without final punctuation, such
//     as a list item);
//   - a marker that opens a sentence ("[2] It is 8080.") moves to its end;
//   - a sentence is supported when it ends with at least one citation, and
//     flagged unsupported when it is factual and not supported.
// A sentence is factual unless it is a Markdown heading ("# ...") or table
// row ("| ..."), ends with ':' (a lead-in to a list or code block), or has a
// content weight (support.h) below min_factual_weight: "Sure!", "Yes, it
// does." and "Here is how:" are neither given a marker nor flagged. A lead-in
// with enough content ("To create a user, run:") is given the marker of a
// supporting source before its colon, but never flagged; a lead-in without
// content that ends the answer ("Sources:" when the model stopped before its
// list, or "Sources: [7]" once a marker naming no supporting source is gone)
// is dropped, and so is a sentence after a fact that only says where the
// answer is written ("These formats are listed in the \"Supported formats\"
// section of the document [2].": abstention.h, PointsAtSources; such a
// sentence is held back until it ends). A sentence without any
// content word (a marker alone on its line) keeps its in-range markers, as
// there is nothing to check them against. Lines of a ``` code block pass
// through unchanged (not factual; their brackets are code, not markers). An
// answer is grounded when it has no factual sentence (an abstention) or at
// least grounded_share of its factual sentences are supported.
//
// Calibration: tests/data/attribution/ holds 180 labelled pairs of an answer
// sentence (English, Portuguese, French, Spanish, German) and a chunk of
// docs/sample, 78 supporting; the others are the nearest chunks of the same
// topic, or the right chunk against a sentence whose fact was changed.
// retrieval_attribution_calibrate refits the score and prints precision and
// recall per threshold, per language and with each language held out; the
// figures of the defaults are in AttributionOptions. The score measures
// shared words and meaning, not entailment: a sentence that keeps a passage's
// words but changes its claim ("/healthz answers 503" against a passage about
// /readyz) still scores as supported.
//
// Cost: Create embeds each source and each of its sentences (5 chunks of
// docs/sample: about 35 texts, 0.2-0.7 s on 2 busy cores; start it while the
// prompt is evaluated), then one short text per finished sentence (7-50 ms).
//
// Spans are byte offsets into the emitted text (UTF-8 bytes, not characters or
// UTF-16 units), end exclusive; a span covers the sentence with its markers and
// punctuation and none of the whitespace around it.
//
// Thread-safety: an Attributor belongs to one answer and is used from one
// thread at a time. The embedding function is called from that thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "retrieval/support.h"

namespace ragd::retrieval {

class Embedder;

struct AttributionOptions {
  // Logistic support score (support.h), fitted by Newton's method on all 180
  // labelled pairs. Fitted on four languages and tested on the fifth, at 0.5:
  // precision 0.84, recall 0.87 (lexical overlap alone: 0.79 and 0.76).
  SupportModel model = {.bias = -1.20,
                        .cosine = 1.66,
                        .lexical = 4.73,
                        .cosine_gap = 2.96,
                        .lexical_gap = 6.05,
                        .number_missing = -1.84};
  // Support at or above which a source supports a sentence (markers added or
  // substituted, sentence counted supported): precision 0.84, recall 0.89 on
  // the labelled pairs; German is the weakest language (0.77, 0.71).
  double support_threshold = 0.5;
  // Support at or above which a marker written by the model is kept:
  // precision 0.84, recall 0.92 (0.3 keeps no more right markers).
  double keep_threshold = 0.4;
  // Sentences with less content weight (support.h) are not factual. Two
  // content words already make a claim: at 3, "Ragd is published under the
  // MIT License." ("published", "license") passed unflagged.
  double min_factual_weight = 2;
  // Share of factual sentences that must be supported for `grounded`.
  double grounded_share = 0.5;
  // A text this long without a sentence end is cut at its last blank before
  // this length (so that a sentence-less answer still streams).
  size_t max_sentence_bytes = 1500;
};

// One source's support for a sentence, as cited.
struct Citation {
  int n = 0;           // 1..K
  double support = 0;  // score in [0, 1]
};

struct AttributedSentence {
  size_t begin = 0;                 // byte offset of the sentence in emitted()
  size_t end = 0;                   // one past its last byte
  std::vector<Citation> citations;  // the sentence's markers after correction, in order, each number once
  bool factual = false;             // checked against the sources (see above)
  bool supported = false;           // ends with at least one citation
  int best_source = 0;              // highest-scoring source, 0 when there are no sources
  double best_support = 0;          // its score
  int markers_kept = 0;             // marker numbers the model wrote that were kept
  int markers_replaced = 0;         // ... that were replaced by a supporting source
  int markers_removed = 0;          // ... that were dropped (out of range or unsupported, none to replace)
  bool marker_added = false;        // a marker was appended to a sentence that had none
  bool code = false;                // a line of a ``` code block, passed through (its brackets are code)
  bool unsupported() const { return factual && !supported; }
};

class Attributor {
 public:
  // Prepares the sources (one call of `embed` for their passages and
  // sentences). `embed` is kept and called once per finished sentence. Errors
  // are embed's.
  static Result<Attributor> Create(const std::vector<std::string>& sources, EmbedTextsFn embed,
                                   const AttributionOptions& options = {});

  // Adds the next piece of the answer (any split: mid-word, mid-marker,
  // mid-character) and returns the text to send on: the finished sentences,
  // rewritten, with the whitespace that follows them, then as much of the
  // unfinished sentence as no rewrite can change. That is its words up to
  // the last blank, stopping before a '[' (a marker may be rewritten or
  // moved), a newline, or a word that ends in punctuation or a closer (a
  // marker may go before it); nothing of a sentence shorter than 24 bytes (a
  // lead-in that may be dropped) or of a code line. The rest waits until the
  // sentence ends (and the next non-blank character shows it has), so this
  // is often empty. Errors are embed's; the attributor must not be used
  // after one.
  Result<std::string> Feed(std::string_view delta);
  // The answer is complete: returns the rest (the last sentence, rewritten).
  Result<std::string> Finish();
  // After an error of Feed or Finish: everything received and not yet
  // returned (sentences attributed before the error, then the rest as
  // received), so that a caller passing the answer on loses none of it.
  std::string Abandon();

  // Everything returned so far, concatenated (the spans refer to it).
  const std::string& emitted() const { return emitted_; }
  const std::vector<AttributedSentence>& sentences() const { return sentences_; }
  int factual_sentences() const;
  int supported_factual_sentences() const;
  // False when the answer as a whole is unsupported (see above).
  bool grounded() const;
  int source_count() const { return static_cast<int>(sources_.size()); }

 private:
  Attributor(std::vector<PassageEvidence> sources, EmbedTextsFn embed, const AttributionOptions& options)
      : sources_(std::move(sources)), embed_(std::move(embed)), options_(options) {}

  Result<std::string> Drain(bool at_end);
  // How much of an unfinished sentence can be sent before it ends.
  size_t StreamablePrefix(std::string_view partial) const;
  // Scores and rewrites one sentence and records it; returns the rewritten text.
  // `last`: nothing follows it in the answer.
  Result<std::string> Attribute(std::string_view sentence, bool last);

  std::vector<PassageEvidence> sources_;
  EmbedTextsFn embed_;
  AttributionOptions options_;
  std::string pending_;  // received, not yet attributed
  size_t streamed_ = 0;  // bytes at the start of pending_ already emitted
  std::string unsent_;   // emitted by the current Drain, not yet returned
  std::string emitted_;
  std::vector<AttributedSentence> sentences_;
  bool in_code_block_ = false;  // inside a ``` fence
};

// An EmbedTextsFn over a loaded embedding model, which must outlive it.
EmbedTextsFn EmbedTextsWith(const Embedder& embedder);

// The whole answer at once: Create, one Feed, Finish. The rewritten text is
// attributor.emitted().
Result<Attributor> AttributeAnswer(std::string_view answer, const std::vector<std::string>& sources,
                                   EmbedTextsFn embed, const AttributionOptions& options = {});

}  // namespace ragd::retrieval
