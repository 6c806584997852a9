// The language of a chunk of text, as a PostgreSQL text search
// configuration name, so that each chunk is stemmed by the rules of the
// language it is written in. ragd's corpus is multilingual (English,
// Portuguese, French, Spanish, German); anything else, or text too short to
// tell, gets "simple" (lowercased words, no stemming, no stop words).
#pragma once

#include <span>
#include <string_view>

namespace ragd::corpus {

// "english", "portuguese", "french", "spanish", "german" or "simple".
const char* TextSearchConfig(std::string_view text);

// Every configuration TextSearchConfig may return, "simple" last.
std::span<const char* const> TextSearchConfigs();

}  // namespace ragd::corpus
