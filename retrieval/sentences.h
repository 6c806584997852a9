// Sentence boundaries in model answers (English, Portuguese, French, Spanish,
// German, and CJK full stops), decided incrementally so that an answer can be
// split while it streams.
//
// A sentence ends:
//   - after a run of terminal punctuation (. ! ? … 。 ！ ？), plus any closing
//     quotes, brackets or Markdown emphasis right after it (" ' ” ’ » ) 」 』 ）
//     * _ `), plus citation markers that follow it on the same line ("It is
//     8080. [1]" is one sentence): for . ! ? … only when whitespace follows;
//   - at every newline (list items, headings, paragraphs), without needing
//     punctuation.
// A '.' (or "…"/"...") is not an end when:
//   - the next character is not whitespace ("3.14", "1.000,50", "v1.2.3",
//     "ragd.jsonc", "e.g.,");
//   - the word before it is a known abbreviation ("e.g", "i.e", "Dr", "Sr",
//     "z.B", "d.h", "p.ex", "p.ej", ... see kAbbreviations) or one capital
//     letter (an initial, "J. Smith");
//   - the sentence so far is only digits (a numbered list item "1. Install");
//   - the next word starts with a lower-case letter ("approx. three").
// "?" and "!" always end a sentence when whitespace follows; "¿" and "¡" open
// one and need nothing. Known misses: a German ordinal before a capital ("am
// 3. Mai") ends a sentence, and a sentence that ends in one of the listed
// abbreviations ("... by Dr. Smith Jr.") runs on into the next.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace ragd::retrieval {

// Where the first sentence of a text ends.
struct SentenceBreak {
  size_t end = 0;   // the sentence is text[0, end): trailing whitespace excluded
  size_t next = 0;  // the next sentence starts at text[next] (whitespace between skipped)
};

// The first sentence of `text`, which must start a sentence (leading
// whitespace is part of the sentence; callers skip it). With at_end = false
// the text may continue (a streamed answer): nullopt when later text could
// still change where the sentence ends ("3." may become "3.14", "capital. ["
// may become a citation marker, a UTF-8 character may be incomplete). With
// at_end = true there is always an answer; a text without a boundary is one
// sentence, {text.size(), text.size()}.
std::optional<SentenceBreak> FindSentenceBreak(std::string_view text, bool at_end);

// Every sentence of a complete text, whitespace around them dropped.
std::vector<std::string_view> SplitSentences(std::string_view text);

// A citation marker "[n]" or "[n, m, ...]" found in a text.
struct CitationMarker {
  size_t begin = 0;  // byte offset of '['
  size_t end = 0;    // one past ']'
  std::vector<int> numbers;
};

// Length of the citation marker at the start of `text` ('[', digits separated
// by commas and spaces, ']'), 0 when there is none. With at_end = false,
// nullopt when the text ends inside what could still become a marker ("[", "[1").
std::optional<size_t> MarkerLengthAt(std::string_view text, bool at_end);

// Every citation marker in a complete text, in order. Numbers above 9999 are
// kept as 9999 + 1 (still out of any source range) rather than overflowing.
std::vector<CitationMarker> FindCitationMarkers(std::string_view text);

}  // namespace ragd::retrieval
