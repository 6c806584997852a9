// The pushdown matcher: one frame per open value, each in a phase; a byte
// advances the top frame, pushes a child (a property value, an array item)
// or completes the top value and hands the byte back to its parent (numbers
// and literals end where the next byte cannot continue them).
#include <cstring>

#include "inference/grammar/json_grammar.h"

namespace ragd::inference {
namespace {

enum Phase : uint8_t {
  kStart,          // before a value: whitespace, then its first byte
  kObjOpen,        // after '{'
  kObjKey,         // inside a known property's key
  kObjKeyString,   // any-object: the key is a string frame above
  kObjColon,       // after a key
  kObjValue,       // the value is a frame above
  kObjAfterValue,  // after a value: ',' or '}'
  kObjComma,       // after ',': the next key
  kArrOpen,        // after '['
  kArrItem,        // the item is a frame above
  kArrAfterValue,  // after an item: ',' or ']'
  kArrNext,        // after ',': the next item
  kStrBody,        // inside a string
  kStrEscape,      // after '\'
  kStrHex,         // inside \uXXXX
  kNum,            // inside a number
  kLit,            // inside a literal (enum value, true, false, null)
};

bool IsSpace(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
bool IsHex(uint8_t c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// JSON number DFA: 0 start, 1 after '-', 2 a leading 0, 3 integer digits,
// 4 after '.', 5 fraction digits, 6 after 'e', 7 after the exponent's sign,
// 8 exponent digits. Returns the next state, or -1.
int NumberStep(int state, uint8_t c, bool integer) {
  const bool digit = IsDigit(c);
  const bool exp = !integer && (c == 'e' || c == 'E');
  switch (state) {
    case 0:
      if (c == '-') return 1;
      [[fallthrough]];
    case 1:
      if (c == '0') return 2;
      return digit ? 3 : -1;
    case 2:
      if (!integer && c == '.') return 4;
      return exp ? 6 : -1;
    case 3:
      if (digit) return 3;
      if (!integer && c == '.') return 4;
      return exp ? 6 : -1;
    case 4:
      return digit ? 5 : -1;
    case 5:
      if (digit) return 5;
      return exp ? 6 : -1;
    case 6:
      if (c == '+' || c == '-') return 7;
      return digit ? 8 : -1;
    case 7:
    case 8:
      return digit ? 8 : -1;
  }
  return -1;
}

}  // namespace

bool JsonGrammar::CanStart(int node, uint8_t c, int depth) const {
  if (depth > kMaxDepth) return false;
  const Node& n = nodes_[node];
  switch (n.kind) {
    case Kind::kAny:
      return c == '{' || c == '[' || c == '"' || c == '-' || IsDigit(c) || c == 't' || c == 'f' || c == 'n';
    case Kind::kObject:
      return c == '{';
    case Kind::kArray:
      return c == '[';
    case Kind::kString:
      return c == '"';
    case Kind::kNumber:
    case Kind::kInteger:
      return c == '-' || IsDigit(c);
    case Kind::kLiterals:
      for (const std::string& l : n.literals)
        if (static_cast<uint8_t>(l[0]) == c) return true;
      return false;
    case Kind::kUnion:
      for (int a : n.alternatives)
        if (CanStart(a, c, depth + 1)) return true;
      return false;
  }
  return false;
}

JsonMatcher::JsonMatcher(std::shared_ptr<const JsonGrammar> grammar) : grammar_(std::move(grammar)) {
  nodes_ = grammar_->nodes().data();
  Push(static_cast<uint16_t>(grammar_->root()), kStart);
}

JsonMatcher& JsonMatcher::operator=(const JsonMatcher& other) {
  // The trie walk copies states at every step: no reference count traffic
  // when the grammar is the same, and only the active frames.
  if (grammar_ != other.grammar_) grammar_ = other.grammar_;
  nodes_ = other.nodes_;
  depth_ = other.depth_;
  whitespace_ = other.whitespace_;
  finished_ = other.finished_;
  std::memcpy(frames_, other.frames_, sizeof(Frame) * static_cast<size_t>(depth_));
  return *this;
}

bool JsonMatcher::Push(uint16_t node, uint8_t phase) {
  if (depth_ == JsonGrammar::kMaxDepth) return false;
  frames_[depth_++] = Frame{0, node, 0, phase, 0, 0, 0};
  return true;
}

void JsonMatcher::Pop() {
  if (--depth_ == 0) {
    finished_ = true;
    return;
  }
  Frame& parent = frames_[depth_ - 1];
  if (parent.phase == kObjKeyString) parent.phase = kObjColon;
  if (parent.phase == kObjValue) parent.phase = kObjAfterValue;
  if (parent.phase == kArrItem) parent.phase = kArrAfterValue;
}

uint64_t JsonMatcher::AllowedKeys(const Frame& f) const {
  const JsonGrammar::Node& n = nodes_[f.node];
  uint64_t mask = 0;
  for (size_t i = f.next; i < n.properties.size(); ++i) {
    mask |= uint64_t{1} << i;
    if (n.properties[i].required) break;  // a required property cannot be skipped
  }
  return mask;
}

bool JsonMatcher::NumberAccepting(const Frame& f) const {
  return f.aux == 2 || f.aux == 3 || f.aux == 5 || f.aux == 8;
}

bool JsonMatcher::LiteralComplete(const Frame& f) const {
  const auto& lits = nodes_[f.node].literals;
  for (size_t i = 0; i < lits.size(); ++i)
    if ((f.candidates >> i & 1) && lits[i].size() == f.pos) return true;
  return false;
}

bool JsonMatcher::CanEnd() const {
  if (finished_) return true;
  if (depth_ != 1) return false;
  const Frame& f = frames_[0];
  return (f.phase == kNum && NumberAccepting(f)) || (f.phase == kLit && LiteralComplete(f));
}

bool JsonMatcher::InStringText() const {
  return depth_ > 0 && frames_[depth_ - 1].phase == kStrBody && frames_[depth_ - 1].aux == 0;
}

bool JsonMatcher::Start(Frame& f, uint8_t c) {
  const JsonGrammar::Node& n = nodes_[f.node];
  switch (n.kind) {
    case JsonGrammar::Kind::kAny: {
      int to = -1;
      if (c == '{') to = JsonGrammar::kAnyObject;
      if (c == '[') to = JsonGrammar::kAnyArray;
      if (c == '"') to = JsonGrammar::kString;
      if (c == '-' || IsDigit(c)) to = JsonGrammar::kNumber;
      if (c == 't' || c == 'f' || c == 'n') to = JsonGrammar::kTrueFalseNull;
      if (to < 0) return false;
      f.node = static_cast<uint16_t>(to);
      return Start(f, c);
    }
    case JsonGrammar::Kind::kUnion:
      for (int a : n.alternatives) {
        if (grammar_->CanStart(a, c)) {
          f.node = static_cast<uint16_t>(a);
          return Start(f, c);
        }
      }
      return false;
    case JsonGrammar::Kind::kObject:
      if (c != '{') return false;
      f.phase = kObjOpen;
      return true;
    case JsonGrammar::Kind::kArray:
      if (c != '[') return false;
      f.phase = kArrOpen;
      return true;
    case JsonGrammar::Kind::kString:
      if (c != '"') return false;
      f.phase = kStrBody;
      return true;
    case JsonGrammar::Kind::kNumber:
    case JsonGrammar::Kind::kInteger: {
      const int s = NumberStep(0, c, n.kind == JsonGrammar::Kind::kInteger);
      if (s < 0) return false;
      f.phase = kNum;
      f.aux = static_cast<uint8_t>(s);
      f.pos = 1;
      return true;
    }
    case JsonGrammar::Kind::kLiterals: {
      uint64_t cand = 0;
      for (size_t i = 0; i < n.literals.size(); ++i)
        if (static_cast<uint8_t>(n.literals[i][0]) == c) cand |= uint64_t{1} << i;
      if (cand == 0) return false;
      f.phase = kLit;
      f.candidates = cand;
      f.pos = 1;
      return true;
    }
  }
  return false;
}

bool JsonMatcher::Feed(uint8_t c) {
  const bool space = IsSpace(c);
  if (!space) whitespace_ = 0;
  if (!Step(c)) return false;
  // A literal every remaining candidate of which is complete ends now: its
  // parent is ready for the next byte.
  if (depth_ > 0) {
    const Frame& f = frames_[depth_ - 1];
    if (f.phase == kLit) {
      const auto& lits = nodes_[f.node].literals;
      bool all_complete = true;
      for (size_t i = 0; i < lits.size() && all_complete; ++i)
        if ((f.candidates >> i & 1) && lits[i].size() != f.pos) all_complete = false;
      if (all_complete) Pop();
    }
  }
  return true;
}

bool JsonMatcher::Step(uint8_t c) {
  const bool space = IsSpace(c);
  const auto take_space = [&] { return space && ++whitespace_ <= JsonGrammar::kMaxWhitespace; };
  if (depth_ == 0) return finished_ && take_space();
  Frame& f = frames_[depth_ - 1];
  const JsonGrammar::Node& n = nodes_[f.node];
  const bool any_keys = n.properties.empty();
  const auto begin_key = [&] {
    if (any_keys) {
      f.phase = kObjKeyString;
      return Push(JsonGrammar::kString, kStrBody);
    }
    f.candidates = AllowedKeys(f);
    f.pos = 0;
    f.phase = kObjKey;
    return f.candidates != 0;
  };
  const auto may_close = [&] { return any_keys || static_cast<int>(f.next) > n.last_required; };
  const auto push_item = [&] {
    f.phase = kArrItem;
    return Push(static_cast<uint16_t>(n.items < 0 ? JsonGrammar::kAnyValue : n.items), kStart) && Step(c);
  };
  switch (f.phase) {
    case kStart:
      return take_space() || Start(f, c);
    case kObjOpen:
      if (c == '}' && may_close()) {
        Pop();
        return true;
      }
      [[fallthrough]];
    case kObjComma:
      if (c == '"') return begin_key();
      return take_space();
    case kObjKey: {
      if (c == '"') {
        for (size_t i = 0; i < n.properties.size(); ++i) {
          if ((f.candidates >> i & 1) && n.properties[i].name.size() == f.pos) {
            f.key = static_cast<uint8_t>(i);
            f.next = static_cast<uint16_t>(i + 1);
            f.phase = kObjColon;
            return true;
          }
        }
        return false;
      }
      uint64_t cand = 0;
      for (size_t i = 0; i < n.properties.size(); ++i) {
        const std::string& name = n.properties[i].name;
        if ((f.candidates >> i & 1) && name.size() > f.pos && static_cast<uint8_t>(name[f.pos]) == c)
          cand |= uint64_t{1} << i;
      }
      if (cand == 0 || f.pos == 255) return false;
      f.candidates = cand;
      ++f.pos;
      return true;
    }
    case kObjColon:
      if (c == ':') {
        f.phase = kObjValue;
        return Push(static_cast<uint16_t>(any_keys ? JsonGrammar::kAnyValue : n.properties[f.key].node),
                    kStart);
      }
      return take_space();
    case kObjAfterValue:
      if (c == ',' && (any_keys || AllowedKeys(f) != 0)) {
        f.phase = kObjComma;
        return true;
      }
      if (c == '}' && may_close()) {
        Pop();
        return true;
      }
      return take_space();
    case kArrOpen:
      if (c == ']') {
        Pop();
        return true;
      }
      [[fallthrough]];
    case kArrNext:
      return take_space() || push_item();
    case kArrAfterValue:
      if (c == ',') {
        f.phase = kArrNext;
        return true;
      }
      if (c == ']') {
        Pop();
        return true;
      }
      return take_space();
    case kStrBody:
      if (f.aux > 0) {  // inside a multi-byte character
        if ((c & 0xC0) != 0x80) return false;
        --f.aux;
        return true;
      }
      if (c == '"') {
        Pop();
        return true;
      }
      if (c == '\\') {
        f.phase = kStrEscape;
        return true;
      }
      if (c < 0x20) return false;
      if (c < 0x80) return true;
      if (c >= 0xC2 && c <= 0xDF)
        f.aux = 1;
      else if (c >= 0xE0 && c <= 0xEF)
        f.aux = 2;
      else if (c >= 0xF0 && c <= 0xF4)
        f.aux = 3;
      else
        return false;
      return true;
    case kStrEscape:
      if (c == 'u') {
        f.phase = kStrHex;
        f.aux = 0;
        return true;
      }
      if (std::strchr("\"\\/bfnrt", c) == nullptr || c == 0) return false;
      f.phase = kStrBody;
      return true;
    case kStrHex:
      if (!IsHex(c)) return false;
      if (++f.aux == 4) {
        f.aux = 0;
        f.phase = kStrBody;
      }
      return true;
    case kNum: {
      const int s = NumberStep(f.aux, c, n.kind == JsonGrammar::Kind::kInteger);
      if (s >= 0) {
        f.aux = static_cast<uint8_t>(s);
        return ++f.pos <= JsonGrammar::kMaxNumberBytes;
      }
      if (!NumberAccepting(f)) return false;
      Pop();
      return Step(c);
    }
    case kLit: {
      uint64_t cand = 0;
      for (size_t i = 0; i < n.literals.size(); ++i) {
        const std::string& l = n.literals[i];
        if ((f.candidates >> i & 1) && l.size() > f.pos && static_cast<uint8_t>(l[f.pos]) == c)
          cand |= uint64_t{1} << i;
      }
      if (cand != 0) {
        f.candidates = cand;
        ++f.pos;
        return true;
      }
      if (!LiteralComplete(f)) return false;
      Pop();
      return Step(c);
    }
    default:  // a phase waiting for the frame above: never on top
      return false;
  }
}

}  // namespace ragd::inference
