// The user guide agrees with the code: every configuration key the code knows
// (ConfigFields) has a row in docs/sample/configuration.md giving its built-in
// default. The guide is also the default corpus, so a wrong default there
// becomes a wrong answer.
//
// A row reads | `key` | default | meaning |; the default cell starts with the
// value in backticks (a list as a JSON array), or with the word "empty".
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "app/config/config.h"
#include "tests/support/test_paths.h"

namespace ragd::app {
namespace {

const char* kGuide = "docs/sample/configuration.md";

// key -> the default cell of its row, for every table row of the guide.
const std::map<std::string, std::string>& DocumentedDefaults() {
  static const std::map<std::string, std::string> rows = [] {
    std::map<std::string, std::string> out;
    std::ifstream in(ragd::testing::SourceDir() + "/" + kGuide);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.starts_with("| `")) continue;
      std::vector<std::string> cells;
      std::stringstream ss(line.substr(1));
      for (std::string cell; std::getline(ss, cell, '|');) {
        const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
        cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      }
      if (cells.size() < 2 || cells[0].size() < 2) continue;
      out[cells[0].substr(1, cells[0].size() - 2)] = cells[1];
    }
    return out;
  }();
  return rows;
}

// The value a default cell states: the first `...` span, or "empty".
std::string StatedValue(const std::string& cell) {
  if (cell.starts_with("empty")) return "empty";
  const size_t open = cell.find('`');
  const size_t close = open == std::string::npos ? open : cell.find('`', open + 1);
  return close == std::string::npos ? cell : cell.substr(open + 1, close - open - 1);
}

// The built-in default of `field` written as the guide writes it.
std::string CodeDefault(const ConfigField& field) {
  Config defaults;
  const ConfigField::Target t = field.target(defaults);
  if (auto* s = std::get_if<std::string*>(&t)) return (*s)->empty() ? "empty" : **s;
  if (auto* i = std::get_if<int64_t*>(&t)) return std::to_string(**i);
  if (auto* b = std::get_if<bool*>(&t)) return **b ? "true" : "false";
  if (auto* d = std::get_if<double*>(&t)) return nlohmann::json(**d).dump();
  auto* list = std::get<std::vector<std::string>*>(t);
  return list->empty() ? "empty" : nlohmann::json(*list).dump();
}

class ConfigDocs : public ::testing::TestWithParam<std::string> {};

TEST_P(ConfigDocs, KeyIsDocumentedWithItsDefault) {
  const ConfigField* field = nullptr;
  for (const ConfigField& f : ConfigFields())
    if (f.key == GetParam()) field = &f;
  ASSERT_NE(field, nullptr);
  const auto& rows = DocumentedDefaults();
  auto row = rows.find(field->key);
  ASSERT_NE(row, rows.end()) << kGuide << " has no row | `" << field->key << "` | default | meaning |";
  std::string stated = StatedValue(row->second);
  const std::string expected = CodeDefault(*field);
  if (stated.starts_with("[")) {  // a JSON list: compare values, not spacing
    const auto parsed = nlohmann::json::parse(stated, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parsed.is_discarded()) << field->key << ": the default is not a JSON list: " << stated;
    stated = parsed.dump();
  }
  EXPECT_EQ(stated, expected) << kGuide << " gives `" << field->key << "` the default " << row->second
                              << "; the code's default is " << expected;
}

std::vector<std::string> AllKeys() {
  std::vector<std::string> keys;
  for (const ConfigField& f : ConfigFields()) keys.push_back(f.key);
  return keys;
}

INSTANTIATE_TEST_SUITE_P(EveryKey, ConfigDocs, ::testing::ValuesIn(AllKeys()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });

TEST(ConfigDocs, GuideIsReadable) {
  ASSERT_FALSE(DocumentedDefaults().empty()) << "no key rows found in " << kGuide;
}

}  // namespace
}  // namespace ragd::app
