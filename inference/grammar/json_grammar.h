// Constrained decoding for JSON output: a JSON schema (or "any JSON object")
// compiled into a tree of value nodes, a character-level pushdown matcher
// that says whether a byte can continue a valid prefix, and the vocabulary
// index that turns a matcher state into the set of tokens whose text can
// follow (the way llama-server's grammars and vLLM's guided decoding mask
// tokens).
//
// The schema subset (anything else is refused, naming the keyword):
//   type: object, array, string, number, integer, boolean, null (or a list
//   of them); properties, required, additionalProperties (never generated:
//   only listed properties are written); items; enum; const; anyOf / oneOf
//   whose alternatives start with different characters (a string or null,
//   an object or null, ...); $ref to "#/$defs/..." or "#/definitions/...",
//   recursive ones included; the annotations title, description, default,
//   examples, $schema, $id, $comment, and strict. An object's properties are
//   written in the schema's order: every required one, optional ones when
//   the model chooses. An object schema with no properties, or {} / true,
//   accepts any JSON of that type.
//
// Output shape: whitespace between tokens (at most kMaxWhitespace bytes in a
// row), strings of valid UTF-8 with JSON escapes, numbers of at most
// kMaxNumberBytes bytes, values nested at most kMaxDepth deep. After the top
// value only whitespace may follow, then the end of generation.
//
// Thread-safety: a JsonGrammar and a GrammarVocabulary are immutable once
// built and may be shared by any number of threads; a JsonMatcher is
// per-request state for one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

class JsonGrammar {
 public:
  static constexpr int kMaxDepth = 32;
  static constexpr int kMaxWhitespace = 40;
  static constexpr int kMaxNumberBytes = 32;
  static constexpr size_t kMaxChoices = 64;   // properties of one object, values of one enum
  static constexpr size_t kMaxLiteral = 200;  // bytes of a property name or an enum value's JSON
  static constexpr size_t kMaxNodes = 4096;   // values in one schema

  // Any JSON object at the top (OpenAI's response_format json_object).
  static std::shared_ptr<const JsonGrammar> AnyObject();
  // The schema given as JSON text. kInvalidArgument naming what is wrong or
  // unsupported, with where it is ("'pattern' is not supported (at
  // #/properties/code)").
  static Result<std::shared_ptr<const JsonGrammar>> FromSchema(std::string_view schema_json);

  enum class Kind : uint8_t { kAny, kObject, kArray, kString, kNumber, kInteger, kLiterals, kUnion };
  struct Property {
    std::string name;  // the key as written (no escapes needed, checked at compile)
    int node = 0;
    bool required = false;
  };
  struct Node {
    Kind kind = Kind::kAny;
    std::vector<Property> properties;   // kObject; empty = any keys and values
    int last_required = -1;             // kObject: index of the last required property
    int items = -1;                     // kArray: the items' node (-1 = any value)
    std::vector<std::string> literals;  // kLiterals: JSON texts ("\"red\"", "3", "true")
    std::vector<int> alternatives;      // kUnion: nodes starting with different characters
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  int root() const { return root_; }
  // Whether a value of `node` may begin with byte `c`.
  bool CanStart(int node, uint8_t c, int depth = 0) const;

  // Built-in nodes every grammar holds, for values of any shape.
  static constexpr int kAnyValue = 0, kAnyObject = 1, kAnyArray = 2, kString = 3, kNumber = 4,
                       kTrueFalseNull = 5;

 private:
  friend class SchemaCompiler;
  JsonGrammar();
  std::vector<Node> nodes_;
  int root_ = kAnyObject;
};

// Where a generation stands in the grammar. Copying is cheap (the active
// frames only); after Feed returns false the state is spoilt: feed a copy
// when the answer is not known.
class JsonMatcher {
 public:
  explicit JsonMatcher(std::shared_ptr<const JsonGrammar> grammar);
  JsonMatcher(const JsonMatcher& other) { *this = other; }
  JsonMatcher& operator=(const JsonMatcher& other);

  // Whether byte `c` continues a valid prefix; advances when it does.
  bool Feed(uint8_t c);
  bool Feed(std::string_view bytes) {
    for (char c : bytes)
      if (!Feed(static_cast<uint8_t>(c))) return false;
    return true;
  }
  // Whether the text so far is a whole value (generation may end here).
  bool CanEnd() const;
  // Inside a string, between characters: any plain text may follow.
  bool InStringText() const;

 private:
  struct Frame {
    uint64_t candidates;  // literal or key candidates still matching (bit i = choice i)
    uint16_t node;
    uint16_t next;  // objects: the next property that may be written
    uint8_t phase;
    uint8_t pos;  // bytes matched of a literal or key; length of a number
    uint8_t aux;  // strings: UTF-8 continuation bytes expected / hex digits; numbers: DFA state
    uint8_t key;  // objects: the property being written
  };
  bool Start(Frame& f, uint8_t c);  // a value's first byte
  bool Step(uint8_t c);
  bool Push(uint16_t node, uint8_t phase);
  // The top frame is a complete value: pop it and tell its parent.
  void Pop();
  uint64_t AllowedKeys(const Frame& f) const;
  bool NumberAccepting(const Frame& f) const;
  bool LiteralComplete(const Frame& f) const;

  std::shared_ptr<const JsonGrammar> grammar_;
  const JsonGrammar::Node* nodes_ = nullptr;
  int depth_ = 0;
  int whitespace_ = 0;     // whitespace bytes in a row
  bool finished_ = false;  // the top value is complete
  Frame frames_[JsonGrammar::kMaxDepth];
};

// The vocabulary arranged for masking: every token's text (TokenBytes) in a
// byte trie, built once per model. Control tokens have no text and are never
// allowed; end-of-generation tokens are allowed exactly when the matcher can end.
class GrammarVocabulary {
 public:
  explicit GrammarVocabulary(const Tokenizer& tokenizer);

  // Whether token `id` may come next.
  bool Allows(const JsonMatcher& matcher, TokenId id) const;
  // Advances `matcher` over token `id` (which Allows); false when it may not follow.
  bool Accept(JsonMatcher* matcher, TokenId id) const;
  // Every token that may come next, in `allowed` (vocab_size flags).
  void AllowedTokens(const JsonMatcher& matcher, std::vector<uint8_t>* allowed) const;
  int vocab_size() const { return static_cast<int>(texts_.size()); }

 private:
  struct TrieNode {
    uint32_t first_edge = 0;  // edges [first_edge, first_edge + edges)
    uint32_t edges = 0;
    uint32_t first_token = 0;  // tokens ending here: sorted_[first_token, + tokens)
    uint32_t tokens = 0;
  };
  struct Edge {
    uint8_t byte;
    uint32_t child;
  };
  // A byte trie over the ids in `sorted` (sorted by text by BuildTrie).
  struct Trie {
    std::vector<TokenId> sorted;
    std::vector<TrieNode> nodes;
    std::vector<Edge> edges;
  };
  void BuildTrie(Trie* trie);
  uint32_t Build(Trie* trie, uint32_t lo, uint32_t hi, size_t depth);
  void Walk(const Trie& trie, uint32_t node, size_t depth, std::vector<JsonMatcher>& states,
            std::vector<uint8_t>* allowed) const;

  std::vector<std::string> texts_;  // by id; "" for control tokens
  std::vector<uint8_t> end_of_generation_;
  // Tokens whose text can continue any string between characters (printable,
  // no quote or backslash, whole UTF-8 characters): inside a string they are
  // allowed without a walk, which then covers only the other tokens. Most
  // of a vocabulary is such text, so this keeps in-string masks cheap.
  std::vector<uint8_t> plain_text_;
  Trie all_;    // every token with text
  Trie other_;  // those that are not plain text
  size_t longest_ = 0;
};

}  // namespace ragd::inference
