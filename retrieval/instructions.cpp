#include "retrieval/instructions.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <initializer_list>
#include <memory>

#include "retrieval/sentences.h"

namespace ragd::retrieval {
namespace {

// Case-folded, accents stripped ("Instrução" -> "instrucao"); the input
// unchanged when it is not valid UTF-8 (it then matches less, never more).
std::string Folded(std::string_view s) {
  utf8proc_uint8_t* out = nullptr;
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD |
                                                      UTF8PROC_STRIPMARK);
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &out, options);
  if (n < 0) return std::string(s);
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

// The words of folded text; apostrophes split ("l'assistant" -> "l", "assistant").
std::vector<std::string_view> Words(std::string_view folded) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < folded.size()) {
    while (i < folded.size() && !IsWordByte(static_cast<unsigned char>(folded[i]))) ++i;
    size_t j = i;
    // U+2019 (’) is three bytes from 0xE2: a word boundary like ''' .
    while (j < folded.size() && IsWordByte(static_cast<unsigned char>(folded[j])) &&
           folded.compare(j, 3, "\xE2\x80\x99") != 0)
      ++j;
    if (j > i) out.push_back(folded.substr(i, j - i));
    i = j == i ? i + 1 : j;
  }
  return out;
}

// A phrase: slots of alternatives separated by '|'; a slot starting with '?'
// may be skipped; "*" is any one word.
using Phrase = std::vector<std::string_view>;

bool SlotHas(std::string_view slot, std::string_view word) {
  if (slot.starts_with('?')) slot.remove_prefix(1);
  if (slot == "*") return true;  // any one word
  while (!slot.empty()) {
    const size_t bar = slot.find('|');
    if (slot.substr(0, bar) == word) return true;
    if (bar == std::string_view::npos) break;
    slot.remove_prefix(bar + 1);
  }
  return false;
}

bool MatchesAt(const Phrase& p, size_t slot, const std::vector<std::string_view>& words, size_t w) {
  if (slot == p.size()) return true;
  if (p[slot].starts_with('?') && MatchesAt(p, slot + 1, words, w)) return true;
  return w < words.size() && SlotHas(p[slot], words[w]) && MatchesAt(p, slot + 1, words, w + 1);
}

// Words for a model as a reader, in the five languages (folded).
constexpr std::string_view kModel =
    "assistant|assistants|model|models|ai|llm|chatbot|bot|agent|assistente|modelo|ia|asistente|modele|"
    "assistenten|assistent|modell|ki|sprachmodell";

const std::vector<Phrase>& Phrases() {
  static const std::vector<Phrase> kPhrases = {
      // Addressing the model.
      {"note|notes|message|instruction|instructions|notice|reminder|warning|attention|nota|mensagem|"
       "instrucao|"
       "instrucoes|aviso|atencao|consigne|consignes|avis|mensaje|instruccion|instrucciones|hinweis|nachricht|"
       "anweisung|anweisungen|notiz|achtung",
       "to|for|para|ao|a|au|aux|pour|al|an|fur",
       "?the|any|all|o|os|l|le|la|les|el|los|den|das|die|alle|jede|jeden", "?ai|language|ia|ki", kModel},
      {"if|si|se|wenn|falls", "you|vous|tu|voce|du", "are|etes|es|eres|e|bist",
       "?an|a|un|une|uma|um|ein|eine", "?large|grand|grande|gran|grosses", "?language", kModel},
      {kModel, "reading|lisant|lendo|leyendo|liest", "this|ceci|isto|esto|dies"},
      // Replacing the rules.
      {"ignore|ignoring|disregard|forget|override|ignora|ignore|desconsidere|esqueca|ignorez|oubliez|ignorad|"
       "olvida|"
       "ignoriere|ignorieren|vergiss|missachte",
       "?all|any|todas|todos|toutes|tous|alle",
       "?the|your|my|of|as|os|a|o|suas|seus|les|la|vos|tes|las|los|tus|sus|"
       "die|deine|ihre|der",
       "?previous|prior|above|earlier|other|preceding|former|anteriores|precedentes|vorherigen|bisherigen",
       "rules|rule|instructions|instruction|question|questions|prompt|directions|guidelines|user|users|"
       "regras|"
       "instrucoes|pergunta|perguntas|regles|consignes|reglas|instrucciones|pregunta|preguntas|regeln|"
       "anweisungen|"
       "frage|fragen|benutzer|nutzer"},
      // "From now on" only when it goes on to address the reader as "you":
      // documentation says "From now on, uploads are limited to ..." too.
      {"from", "now", "on", "you"},
      {"a", "partir", "de", "agora|maintenant|ahora", "?*", "voce|tu|vous|usted"},
      {"de", "ahora", "en", "adelante", "?*", "tu|usted"},
      {"von", "nun", "an", "?*", "du"},
      {"system|systeme|sistema", "prompt"},
      {"reply|respond|answer|responda|responde|repondez|reponds|antworte|antworten",
       "always|only|sempre|apenas|somente|toujours|uniquement|seulement|siempre|solo|solamente|unicamente|"
       "immer|"
       "nur|ausschliesslich",
       "with|in|com|em|avec|en|con|mit|auf"},
      {"always|sempre|toujours|siempre|immer", "answer|reply|respond|responda|responde|repondez|antworte"},
      {"end|start|beginning|top|bottom|fim|final|inicio|fin|debut|ende|anfang",
       "of|de|do|da|del|des|du|von|der|am",
       "every|each|your|cada|toda|todas|tua|chaque|toute|votre|ta|tu|jeder|jede|deiner|deine", "?the",
       "answer|answers|reply|replies|response|responses|resposta|respostas|reponse|reponses|respuesta|"
       "respuestas|antwort|antworten"},
      // Not "su" / "sua": Spanish and Portuguese also mean "its" by them
      // ("el servidor devuelve su respuesta").
      {"your|tua|votre|ta|tu|deine",
       "answer|answers|reply|response|resposta|respostas|reponse|reponses|"
       "respuesta|respuestas|antwort|antworten"},
  };
  return kPhrases;
}

// Not "System:" or "Model:": documentation writes those as field names.
constexpr std::array<std::string_view, 7> kSpeakerLabels = {
    "assistant", "assistente", "asistente", "assistent", "ai", "ia", "ki"};

// Whole control tokens, not "<|" or "|>" alone (pipes in code and tables).
constexpr std::array<std::string_view, 14> kControlSequences = {
    "<|im_start|>",  "<|im_end|>",        "<|system|>",          "<|user|>",   "<|assistant|>",
    "<|endoftext|>", "<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>", "[inst]",
    "<<sys>>",       "<start_of_turn>",   "### instruction",     "### system"};

bool IsInstruction(std::string_view sentence) {
  const std::string folded = Folded(sentence);
  for (std::string_view c : kControlSequences)
    if (folded.find(c) != std::string::npos) return true;
  const std::vector<std::string_view> words = Words(folded);
  if (!words.empty() && words[0].data() == folded.data() + folded.find_first_not_of(" \t#*>-")) {
    const size_t after = static_cast<size_t>(words[0].data() - folded.data()) + words[0].size();
    const size_t colon = folded.find_first_not_of(" \t*", after);
    if (colon != std::string::npos && folded[colon] == ':')
      for (std::string_view label : kSpeakerLabels)
        if (words[0] == label) return true;
  }
  for (const Phrase& p : Phrases())
    for (size_t w = 0; w < words.size(); ++w)
      if (MatchesAt(p, 0, words, w)) return true;
  return false;
}

// End of the paragraph holding text[pos]: the start of the next blank line,
// or the end of the text.
size_t ParagraphEnd(std::string_view text, size_t pos) {
  size_t nl = text.find('\n', pos);
  while (nl != std::string_view::npos) {
    size_t j = nl + 1;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
    if (j >= text.size() || text[j] == '\n') return nl;
    nl = text.find('\n', j);
  }
  return text.size();
}

// The instruction spans of `text` when its sentences are split at `view`'s
// boundaries (`view` is `text` or a same-length copy of it).
void Scan(std::string_view text, std::string_view view, std::vector<std::pair<size_t, size_t>>* out) {
  size_t pos = view.find_first_not_of(" \t\r\n");
  while (pos != std::string_view::npos && pos < view.size()) {
    const std::string_view rest = view.substr(pos);
    const SentenceBreak br = *FindSentenceBreak(rest, /*at_end=*/true);
    size_t next = pos + (br.next > 0 ? br.next : rest.size());
    if (IsInstruction(rest.substr(0, br.end))) {
      const size_t end = ParagraphEnd(text, pos);
      out->emplace_back(pos, end);
      next = end;
    }
    pos = view.find_first_not_of(" \t\r\n", next);
  }
}

}  // namespace

std::vector<std::pair<size_t, size_t>> FindInstructionsToModel(std::string_view passage) {
  std::vector<std::pair<size_t, size_t>> found;
  // Sentences split at every line end (labels such as "Assistant:" start a
  // line), and again with the lines of a paragraph joined (a hard-wrapped
  // sentence: "... to the end of\nevery answer").
  Scan(passage, passage, &found);
  std::string joined(passage);
  for (size_t i = 0; i < joined.size(); ++i) {
    if (joined[i] != '\n') continue;
    size_t j = i + 1;
    while (j < joined.size() && (joined[j] == ' ' || joined[j] == '\t' || joined[j] == '\r')) ++j;
    if (j < joined.size() && joined[j] != '\n') joined[i] = ' ';  // not followed by a blank line
  }
  Scan(passage, joined, &found);
  std::sort(found.begin(), found.end());
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& span : found) {
    if (!out.empty() && span.first <= out.back().second)
      out.back().second = std::max(out.back().second, span.second);
    else
      out.push_back(span);
  }
  return out;
}

std::string WithoutInstructionsToModel(std::string_view passage) {
  const auto spans = FindInstructionsToModel(passage);
  if (spans.empty()) return std::string(passage);
  std::string out;
  size_t at = 0;
  for (const auto& [begin, end] : spans) {
    out.append(passage.substr(at, begin - at));
    at = end;
  }
  out.append(passage.substr(at));
  // Collapse the blank lines a removed paragraph leaves behind.
  std::string tidy;
  int newlines = 0;
  for (char c : out) {
    newlines = c == '\n' ? newlines + 1 : (c == ' ' || c == '\t' || c == '\r' ? newlines : 0);
    if (c == '\n' && newlines > 2) continue;
    tidy += c;
  }
  const size_t last = tidy.find_last_not_of(" \t\r\n");
  tidy.erase(last == std::string::npos ? 0 : last + 1);
  return tidy;
}

}  // namespace ragd::retrieval
