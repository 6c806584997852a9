#include "retrieval/abstention.h"

#include <string>

#include "common/text.h"
#include "retrieval/support.h"

namespace ragd::retrieval {

namespace {

// Lower-cased, leading blanks and Markdown emphasis skipped.
std::string Opening(std::string_view sentence) {
  size_t at = 0;
  while (at < sentence.size() && (sentence[at] == ' ' || sentence[at] == '*' || sentence[at] == '_')) ++at;
  return AsciiLower(sentence.substr(at));
}

bool StartsWithAny(const std::string& s, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes)
    if (std::string_view(s).starts_with(p)) return true;
  return false;
}

bool ContainsAny(const std::string& s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts)
    if (s.find(p) != std::string::npos) return true;
  return false;
}

// Whether a sentence's Opening() points. Articles alone ("Das Cookie ...",
// "Die Rolle ...") open facts: only pointing words, or an article before
// "information" or "answer".
bool OpensByPointing(const std::string& opening) {
  return StartsWithAny(
      opening,
      {// English
       "this ", "these ", "that ", "it is stated", "it is listed", "it is mentioned", "the information",
       "this information", "the answer can", "the answer is found", "the answer is given",
       // Portuguese
       "isso ", "isto ", "esta ", "este ", "essa ", "esse ", "estas ", "estes ", "a informação",
       "essa informação",
       // French
       "c'est ", "cela ", "ceci ", "cette ", "ces ", "ce ", "l'information", "cette information",
       // Spanish
       "esto ", "eso ", "estos ", "la información", "esta información",
       // German
       "dies ", "dieses ", "diese ", "das wird", "das steht", "das ist in", "die information",
       "diese information", "die angabe"});
}

}  // namespace

bool SaysSourcesDoNotAnswer(std::string_view text) {
  std::string lower = AsciiLower(text);
  lower += ' ';  // "não diz " and the like also match at the end
  return ContainsAny(
      lower,
      {// English
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
       "sagen dazu nichts", "sagen nichts", "sagt nichts", "nicht erwähnt", "nicht angegeben",
       "keine angaben", "keine informationen", "enthalten keine", "enthält keine", "nicht beschrieben",
       "nicht genannt", "geben keine auskunft"});
}

bool MayPointAtSources(std::string_view sentence) { return OpensByPointing(Opening(sentence)); }

bool PointsAtSources(std::string_view sentence) {
  const std::string lower = Opening(sentence);
  if (!OpensByPointing(lower)) return false;
  // Documents are also what ragd is about ("These documents are found in
  // the data folder."): only "the document" pointing at one.
  const bool part = ContainsAny(
      lower, {"source",       "section", "the document", "documentation", "table",         "paragraph",
              "passage",      " text",   "fonte",        "seção",         "secção",        "do documento",
              "documentação", "tabela",  "parágrafo",    "trecho",        "du document",   "tableau",
              "paragraphe",   "fuente",  "sección",      "del documento", "tabla",         "párrafo",
              "pasaje",       "quelle",  "abschnitt",    "im dokument",   "des dokuments", "dokumentation",
              "tabelle",      "absatz"});
  const bool says = ContainsAny(
      lower, {// English
              "stated", "listed", "mentioned", "found", "seen", "described", "explained", "shown", "says",
              "states", "mentions", "specified", "indicated", "given in", "covered",
              // Portuguese
              "mencionad", "descrit", "listad", "encontrad", "indicad", "explicad", "afirmad", "especificad",
              "pode ser vist", "está escrit", "definid",
              // French
              "mentionn", "indiqu", "décrit", "expliqu", "trouv", "précis", "déclar", "figure", "défini",
              // Spanish
              "menciona", "describ", "explica", "encuentra", "se puede ver", "especifica", "dice", "definid",
              // German
              "beschrieben", "erwähnt", "angegeben", "genannt", "steht", "aufgeführt", "erklärt", "zu finden",
              "gefunden", "definiert"});
  if (!part || !says) return false;
  // A number or an identifier is a fact of its own.
  for (const ContentToken& t : ContentTokens(sentence))
    if (t.kind != TokenKind::kWord) return false;
  return true;
}

}  // namespace ragd::retrieval
