// Chunker: splits extracted text into overlapping, token-bounded chunks.
//
// Token counts come from a counter passed in (the embedding model's tokenizer),
// so this module knows no model. The counter must return the number of tokens
// of its argument without special tokens ([CLS], <bos>, ...).
//
// Breaks are chosen, in order of preference, at Markdown headings (a chunk
// never spans two sections), blank lines (paragraphs), sentence ends or line
// breaks, then spaces; a single word longer than the target is cut at UTF-8
// character boundaries. Each chunk starts where the previous one ends minus
// about overlap_tokens of trailing words (no overlap across headings), and
// at the start of a row inside a Markdown table (less overlap, or none).
//
// Guarantees: chunks are in text order; text.substr(start, end - start) ==
// chunk.text; chunk.text has no leading/trailing whitespace; token_count is
// counter(chunk.text) and is <= target_tokens unless one character alone is
// larger; every non-whitespace byte of the input is in at least one chunk.
//
// Thread-safety: pure; the counter is called from the calling thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::corpus {

using TokenCounter = std::function<int(std::string_view)>;

struct ChunkerOptions {
  // Upper bound of tokens per chunk (>= 1).
  int target_tokens = 200;
  // Tokens repeated from the end of the previous chunk (0 <= overlap < target).
  int overlap_tokens = 30;
  // Treat ATX lines ("# ", "## ", ... outside ``` fences) as section breaks and context.
  bool markdown_headings = true;
};

struct TextChunk {
  size_t start = 0;  // byte offset into the chunked text
  size_t end = 0;    // one past the last byte
  std::string text;
  int token_count = 0;
  // The chain of headings above the chunk, outermost first, joined by " > "
  // ("Guide > Install > Linux"); empty when the chunk is before any heading.
  std::string heading_context;
};

// kInvalidArgument for bad options or a null counter. Empty or
// whitespace-only text gives no chunks.
Result<std::vector<TextChunk>> ChunkText(std::string_view text, const TokenCounter& count_tokens,
                                         const ChunkerOptions& options = {});

}  // namespace ragd::corpus
