// The part of a retrieved passage that speaks to a query: what a lower-ranked
// source shows the answer model, so that the prompt (and the time to the
// first word, which is its prefill) stays short.
//
// A passage is cut into units: a sentence of a paragraph (lines wrapped
// inside a paragraph are joined first), or one line of a list, a table, a
// heading or a code block. Each unit scores the weighted content tokens
// (support.h: numbers 3, identifiers 2, words 1) of the query that it holds,
// with the same prefix matching as attribution. The best units are kept,
// best first, while they fit in max_bytes (the best one always), and shown
// in passage order, "…" standing for what was left out between or after
// them. A passage that fits whole is returned whole; one that shares no
// content token with the query keeps its opening units.
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ragd::retrieval {

std::string QueryExcerpt(std::string_view passage, std::string_view query, size_t max_bytes);

}  // namespace ragd::retrieval
