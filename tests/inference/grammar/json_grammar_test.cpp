// The JSON grammar: which texts a schema's matcher accepts whole, which
// prefixes it refuses, which schemas it refuses to compile, and the token
// masks it gives over the real Qwen2.5 vocabulary.
#include "inference/grammar/json_grammar.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/inference/tokenizer/qwen_fixture.h"

namespace ragd::inference {
namespace {

const char* kPerson = R"({"type":"object","properties":{
  "name":{"type":"string"},"age":{"type":"integer"},"score":{"type":"number"},
  "tags":{"type":"array","items":{"type":"string"}},"ok":{"type":"boolean"},
  "colour":{"enum":["red","green",3]},"pet":{"anyOf":[{"$ref":"#/$defs/Pet"},{"type":"null"}]}},
  "required":["name","age"],"additionalProperties":false,
  "$defs":{"Pet":{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"]}}})";

std::shared_ptr<const JsonGrammar> Compile(const char* schema) {
  auto g = JsonGrammar::FromSchema(schema);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : JsonGrammar::AnyObject();
}

// Whether the whole text is accepted and may end there.
bool Accepts(const std::shared_ptr<const JsonGrammar>& g, const std::string& text) {
  JsonMatcher m(g);
  return m.Feed(text) && m.CanEnd();
}

struct Case {
  const char* text;
  bool accepted;
};

class PersonSchema : public ::testing::TestWithParam<Case> {};

TEST_P(PersonSchema, AcceptsExactlyTheValidTexts) {
  EXPECT_EQ(Accepts(Compile(kPerson), GetParam().text), GetParam().accepted) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Texts, PersonSchema,
    ::testing::Values(Case{R"({"name":"Ann","age":31})", true},
                      Case{"{ \"name\" : \"A\\u00e9\\n\" ,\n  \"age\": -0 }", true},
                      Case{R"({"name":"Ann","age":31,"score":1.5e-3,"tags":["a","b"],"ok":false})", true},
                      Case{R"({"name":"x","age":1,"colour":"green","pet":{"kind":"cat"}})", true},
                      Case{R"({"name":"x","age":1,"colour":3,"pet":null})", true},
                      Case{R"({"name":"é😀","age":1,"tags":[]} )", true},
                      Case{R"({"age":31,"name":"Ann"})", false},           // schema order
                      Case{R"({"name":"Ann"})", false},                    // age required
                      Case{R"({"name":"Ann","age":3.5})", false},          // integer
                      Case{R"({"name":"Ann","age":01})", false},           // leading zero
                      Case{R"({"name":"Ann","age":1,"extra":1})", false},  // not a property
                      Case{R"({"name":"Ann","age":1,"colour":"blue"})", false},
                      Case{R"({"name":"Ann","age":1,"pet":{}})", false},  // kind required
                      Case{R"({"name":"a\qb","age":1})", false},          // bad escape
                      Case{"{\"name\":\"a\x01\",\"age\":1}", false},      // control character
                      Case{"{\"name\":\"\xC3\",\"age\":1}", false},       // cut UTF-8
                      Case{R"({"name":"Ann","age":1,})", false},          // trailing comma
                      Case{R"({"name":"Ann","age":1}x)", false},          // text after the value
                      Case{R"({"name":"Ann","age":1)", false}));          // not closed

TEST(JsonGrammar, AnyObjectTakesAnyObjectOnly) {
  const auto g = JsonGrammar::AnyObject();
  EXPECT_TRUE(Accepts(g, R"({"a":[1,{"b":null},true,"x"],"c":{}})"));
  EXPECT_TRUE(Accepts(g, "{}\n"));
  EXPECT_FALSE(Accepts(g, "[1]"));
  EXPECT_FALSE(Accepts(g, "\"text\""));
  EXPECT_FALSE(Accepts(g, R"({"a":tru})"));
}

TEST(JsonGrammar, LimitsNestingWhitespaceAndNumbers) {
  const auto g = JsonGrammar::AnyObject();
  std::string deep = "{\"a\":";
  for (int i = 0; i < JsonGrammar::kMaxDepth; ++i) deep += "[";
  JsonMatcher m(g);
  EXPECT_FALSE(m.Feed(deep));
  JsonMatcher spaces(g);
  EXPECT_FALSE(spaces.Feed("{" + std::string(JsonGrammar::kMaxWhitespace + 1, ' ')));
  JsonMatcher digits(g);
  EXPECT_FALSE(digits.Feed("{\"a\":" + std::string(JsonGrammar::kMaxNumberBytes + 1, '1')));
}

TEST(JsonGrammar, TopLevelNumberMayEndWhereItIsComplete) {
  const auto g = Compile(R"({"type":"number"})");
  JsonMatcher m(g);
  ASSERT_TRUE(m.Feed("12"));
  EXPECT_TRUE(m.CanEnd());
  ASSERT_TRUE(m.Feed("."));
  EXPECT_FALSE(m.CanEnd());
}

TEST(JsonGrammar, EnumPrefixesOfEachOther) {
  const auto g = Compile(R"({"type":"object","properties":{"n":{"enum":[1,10]}},"required":["n"]})");
  EXPECT_TRUE(Accepts(g, R"({"n":1})"));
  EXPECT_TRUE(Accepts(g, R"({"n":10})"));
  EXPECT_FALSE(Accepts(g, R"({"n":100})"));
}

TEST(JsonGrammar, RecursiveReference) {
  const auto g = Compile(R"({"$ref":"#/$defs/T","$defs":{"T":{"type":"object",
      "properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/T"}}},
      "required":["v"]}}})");
  EXPECT_TRUE(Accepts(g, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[]}]})"));
  EXPECT_FALSE(Accepts(g, R"({"v":1,"kids":[{}]})"));
}

struct Refusal {
  const char* schema;
  const char* message;  // a part of the error
};

class RefusedSchema : public ::testing::TestWithParam<Refusal> {};

TEST_P(RefusedSchema, NamesWhatIsUnsupported) {
  auto g = JsonGrammar::FromSchema(GetParam().schema);
  ASSERT_FALSE(g.ok()) << GetParam().schema;
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find(GetParam().message), std::string::npos) << g.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Schemas, RefusedSchema,
    ::testing::Values(Refusal{R"({"type":"string","pattern":"a+"})", "'pattern' is not supported"},
                      Refusal{R"({"type":"object","properties":{"s":{"type":"string","minLength":2}}})",
                              "'minLength' is not supported (at #/properties/s)"},
                      Refusal{R"({"type":"string","format":"date-time"})", "'format'"},
                      Refusal{R"({"type":"array","items":{"type":"string"},"maxItems":3})", "'maxItems'"},
                      Refusal{R"({"anyOf":[{"type":"string"},{"enum":["a"]}]})", "start with '\"'"},
                      Refusal{R"({"type":"object","additionalProperties":{"type":"integer"}})",
                              "'additionalProperties' with a schema"},
                      Refusal{R"({"$ref":"http://example.com/s.json"})", "'$ref' other than"},
                      Refusal{R"({"$ref":"#/$defs/Missing"})", "does not define"},
                      Refusal{R"({"type":"object","properties":{"a":{}},"required":["b"]})", "'required'"},
                      Refusal{R"({"type":"tuple"})", "type 'tuple'"}, Refusal{R"({"allOf":[]})", "'allOf'"},
                      Refusal{"not json", "not valid JSON"}));

// Masks over the real vocabulary agree with feeding each token's text.
TEST(GrammarVocabulary, MaskAgreesWithFeedingEachToken) {
  const Tokenizer* tok = qwen::Get();
  ASSERT_NE(tok, nullptr);
  GrammarVocabulary vocab(*tok);
  const auto g = Compile(kPerson);
  for (const char* prefix :
       {"", "{", "{\"na", "{\"name\":\"Ann", "{\"name\":\"Ann\",\"age\":3", "{\"name\":\"Ann\",\"age\":3}"}) {
    JsonMatcher m(g);
    ASSERT_TRUE(m.Feed(std::string(prefix)));
    std::vector<uint8_t> allowed;
    vocab.AllowedTokens(m, &allowed);
    size_t n = 0;
    for (TokenId id = 0; id < tok->vocab_size(); ++id) {
      ASSERT_EQ(allowed[id] != 0, vocab.Allows(m, id)) << "prefix " << prefix << " token " << id;
      n += allowed[id];
    }
    EXPECT_GT(n, 0u) << prefix;
    if (std::string(prefix).ends_with("}")) {  // complete: only the end of generation (and whitespace)
      EXPECT_TRUE(allowed[tok->eos_id()]);
      EXPECT_FALSE(allowed[tok->Encode("a")->at(0)]);
    }
  }
}

// Not a timed assertion: prints what one full mask costs, for the record.
TEST(GrammarVocabulary, ReportsMaskTime) {
  const Tokenizer* tok = qwen::Get();
  ASSERT_NE(tok, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  GrammarVocabulary vocab(*tok);
  const auto t1 = std::chrono::steady_clock::now();
  JsonMatcher in_string(Compile(kPerson));
  ASSERT_TRUE(in_string.Feed("{\"name\":\"An"));
  JsonMatcher after_key(Compile(kPerson));
  ASSERT_TRUE(after_key.Feed("{\"name\":\"Ann\","));
  std::vector<uint8_t> allowed;
  for (const JsonMatcher* m : {&in_string, &after_key}) {
    const auto a = std::chrono::steady_clock::now();
    vocab.AllowedTokens(*m, &allowed);
    const auto b = std::chrono::steady_clock::now();
    std::printf("mask of %d tokens: %.2f ms\n", tok->vocab_size(),
                std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::printf("vocabulary index: %.0f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
}

}  // namespace
}  // namespace ragd::inference
