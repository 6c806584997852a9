// Guesses a chunk's language from its function words: in running text the
// short words (articles, prepositions, pronouns) of one language outnumber
// the others' by far, and the lists below hardly overlap where it matters.
// Words are compared lowercased (ASCII letters only: the lists' accented
// letters are matched as written). A language wins with at least two hits
// and more hits than any other; otherwise the text gets "simple".
#include "corpus/language.h"

#include <array>
#include <string>
#include <unordered_map>

namespace ragd::corpus {
namespace {

constexpr std::array<const char*, 6> kConfigs = {"english", "portuguese", "french",
                                                 "spanish", "german",     "simple"};

// word -> bit set of the languages (index into kConfigs) that use it often.
const std::unordered_map<std::string_view, unsigned>& FunctionWords() {
  static const std::unordered_map<std::string_view, unsigned> words = [] {
    const char* const lists[5] = {
        // english
        "the of and to in is that for it with as on are be this by from or an was which not have has but "
        "can you they their will when all if its",
        // portuguese
        "o os do da dos das em no na nos nas um uma para com não é são pelo pela ao às você seu sua também "
        "quando está isso foi",
        // french
        "le les des du au aux un une est et dans pour avec sur pas ce cette qui ne sont vous il elle ou par "
        "plus été leur",
        // spanish
        "el los las del al un una es y en por con para no se su sus lo como está son usted también cuando "
        "pero muy",
        // german
        "der die das den dem des ein eine einen und ist nicht mit von zu im auf für sich auch wird werden "
        "sie wenn oder bei aus nach",
    };
    std::unordered_map<std::string_view, unsigned> out;
    for (unsigned lang = 0; lang < 5; ++lang) {
      std::string_view list = lists[lang];
      while (!list.empty()) {
        const size_t space = list.find(' ');
        out[list.substr(0, space)] |= 1u << lang;
        list = space == std::string_view::npos ? std::string_view() : list.substr(space + 1);
      }
    }
    return out;
  }();
  return words;
}

}  // namespace

const char* TextSearchConfig(std::string_view text) {
  const auto& words = FunctionWords();
  std::array<int, 5> hits{};
  std::string word;
  auto count = [&] {
    if (word.empty()) return;
    if (auto it = words.find(word); it != words.end()) {
      for (unsigned lang = 0; lang < 5; ++lang) hits[lang] += (it->second >> lang) & 1u;
    }
    word.clear();
  };
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    // Letters: ASCII ones and every byte of a multi-byte UTF-8 character
    // (accented letters, as the lists hold them); the rest ends a word.
    if (c >= 0x80 || (c >= 'a' && c <= 'z')) {
      word += static_cast<char>(c);
    } else if (c >= 'A' && c <= 'Z') {
      word += static_cast<char>(c - 'A' + 'a');
    } else {
      count();
    }
  }
  count();
  int best = -1, best_hits = 1, runner_up = 0;
  for (int lang = 0; lang < 5; ++lang) {
    if (hits[lang] > best_hits) {
      runner_up = best_hits;
      best_hits = hits[lang];
      best = lang;
    } else if (hits[lang] > runner_up) {
      runner_up = hits[lang];
    }
  }
  if (best < 0 || best_hits == runner_up) return kConfigs[5];
  return kConfigs[best];
}

std::span<const char* const> TextSearchConfigs() { return kConfigs; }

}  // namespace ragd::corpus
