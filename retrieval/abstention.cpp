#include "retrieval/abstention.h"

#include <string>

#include "common/text.h"

namespace ragd::retrieval {

bool SaysSourcesDoNotAnswer(std::string_view text) {
  static const char* const kPhrases[] = {
      // English
      "do not say", "does not say", "don't say", "doesn't say", "not in the", "don't know", "do not mention",
      "does not mention", "do not contain", "does not contain", "do not provide", "does not provide",
      "do not specify", "does not specify", "no information", "not stated", "not mentioned", "not specified",
      // Portuguese
      "não dizem", "não diz ", "não mencionam", "não menciona ", "não contêm", "não contém", "não fornecem",
      "não especificam", "não há informação", "não há informações", "não informam", "não é mencionad",
      "não são mencionad", "não é especificad",
      // French
      "ne le disent pas", "ne disent pas", "ne le dit pas", "ne dit pas", "ne mentionnent pas",
      "ne mentionne pas", "ne précisent pas", "ne précise pas", "ne contiennent pas", "ne fournissent pas",
      "ne donnent pas", "aucune information", "n'est pas mentionné", "n'est pas précisé", "pas mentionné",
      // Spanish
      "no lo dicen", "no dicen", "no lo dice", "no dice ", "no mencionan", "no menciona ", "no especifican",
      "no especifica ", "no contienen", "no proporcionan", "no proporciona ", "no hay información",
      "no indican", "no se menciona", "no se especifica", "no está especificad",
      // German
      "sagen dazu nichts", "sagen nichts", "sagt nichts", "nicht erwähnt", "nicht angegeben", "keine angaben",
      "keine informationen", "enthalten keine", "enthält keine", "nicht beschrieben", "nicht genannt",
      "geben keine auskunft"};
  std::string lower = AsciiLower(text);
  lower += ' ';  // "não diz " and the like also match at the end
  for (const char* p : kPhrases)
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

}  // namespace ragd::retrieval
