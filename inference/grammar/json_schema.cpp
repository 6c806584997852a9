// Compiling a JSON schema (the subset json_grammar.h lists) into grammar nodes.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "inference/grammar/json_grammar.h"

namespace ragd::inference {

using SchemaJson = nlohmann::ordered_json;  // keeps the properties in the schema's order

JsonGrammar::JsonGrammar() {
  nodes_.resize(6);
  nodes_[kAnyValue].kind = Kind::kAny;
  nodes_[kAnyObject].kind = Kind::kObject;  // no properties: any keys and values
  nodes_[kAnyArray].kind = Kind::kArray;    // items -1: any values
  nodes_[kString].kind = Kind::kString;
  nodes_[kNumber].kind = Kind::kNumber;
  nodes_[kTrueFalseNull].kind = Kind::kLiterals;
  nodes_[kTrueFalseNull].literals = {"true", "false", "null"};
}

std::shared_ptr<const JsonGrammar> JsonGrammar::AnyObject() {
  static const std::shared_ptr<const JsonGrammar> kGrammar(new JsonGrammar());
  return kGrammar;
}

class SchemaCompiler {
 public:
  SchemaCompiler(JsonGrammar* grammar, const SchemaJson& root) : g_(*grammar), root_(root) {}

  Result<int> Compile(const SchemaJson& s, const std::string& where, int depth) {
    if (depth > 64) return Error("the schema nests too deeply", where);
    if (s.is_boolean()) {
      if (!s.get<bool>()) return Error("the schema false accepts nothing", where);
      return JsonGrammar::kAnyValue;
    }
    if (!s.is_object()) return Error("a schema must be an object", where);
    static const std::set<std::string> kKnown = {"type",    "properties",  "required", "additionalProperties",
                                                 "items",   "enum",        "const",    "anyOf",
                                                 "oneOf",   "$ref",        "$defs",    "definitions",
                                                 "title",   "description", "default",  "examples",
                                                 "$schema", "$id",         "$comment"};
    for (const auto& [key, value] : s.items()) {
      if (!kKnown.count(key)) return Error("'" + Clip(key) + "' is not supported", where);
    }
    if (auto it = s.find("$ref"); it != s.end()) return Reference(*it, where, depth);
    if (auto it = s.find("enum"); it != s.end()) {
      if (!it->is_array() || it->empty() || it->size() > JsonGrammar::kMaxChoices)
        return Error("'enum' must be an array of 1 to 64 values", where);
      return Literals(*it, where);
    }
    if (auto it = s.find("const"); it != s.end()) return Literals(SchemaJson::array({*it}), where);
    const bool any_of = s.contains("anyOf"), one_of = s.contains("oneOf");
    if (any_of || one_of) {
      if (any_of && one_of) return Error("'anyOf' beside 'oneOf' is not supported", where);
      if (s.contains("type")) return Error("'type' beside 'anyOf'/'oneOf' is not supported", where);
      const char* key = any_of ? "anyOf" : "oneOf";
      const SchemaJson& alts = s[key];
      if (!alts.is_array() || alts.empty() || alts.size() > JsonGrammar::kMaxChoices)
        return Error(std::string("'") + key + "' must be an array of 1 to 64 schemas", where);
      std::vector<int> nodes;
      for (size_t i = 0; i < alts.size(); ++i) {
        auto n = Compile(alts[i], where + "/" + key + "/" + std::to_string(i), depth + 1);
        if (!n.ok()) return n.status();
        nodes.push_back(*n);
      }
      return Union(std::move(nodes), where);
    }
    auto type = s.find("type");
    if (type == s.end()) {
      if (s.contains("properties")) return Object(s, where, depth);
      if (s.contains("items")) return Array(s, where, depth);
      return JsonGrammar::kAnyValue;
    }
    if (type->is_array()) {
      if (type->empty() || type->size() > 7) return Error("'type' must name 1 to 7 types", where);
      std::vector<int> nodes;
      for (const SchemaJson& t : *type) {
        SchemaJson one = s;
        one["type"] = t;
        auto n = Compile(one, where, depth + 1);
        if (!n.ok()) return n.status();
        nodes.push_back(*n);
      }
      return Union(std::move(nodes), where);
    }
    if (!type->is_string()) return Error("'type' must be a string or an array of strings", where);
    const std::string t = type->get<std::string>();
    if (t == "object") return Object(s, where, depth);
    if (t == "array") return Array(s, where, depth);
    if (t == "string") return JsonGrammar::kString;
    if (t == "number") return JsonGrammar::kNumber;
    if (t == "integer") return NewNode(JsonGrammar::Kind::kInteger, where);
    if (t == "boolean") return Literals(SchemaJson::array({true, false}), where);
    if (t == "null") return Literals(SchemaJson::array({nullptr}), where);
    return Error("type '" + Clip(t) + "' is not supported", where);
  }

 private:
  static std::string Clip(const std::string& s) { return s.size() > 64 ? s.substr(0, 64) + "..." : s; }

  static Status Error(const std::string& what, const std::string& where) {
    return Status::InvalidArgument(what + " (at #" + where + ")");
  }

  Result<int> NewNode(JsonGrammar::Kind kind, const std::string& where) {
    if (g_.nodes_.size() >= JsonGrammar::kMaxNodes)
      return Error("the schema has more than " + std::to_string(JsonGrammar::kMaxNodes) + " values", where);
    g_.nodes_.emplace_back();
    g_.nodes_.back().kind = kind;
    return static_cast<int>(g_.nodes_.size() - 1);
  }

  Result<int> Literals(const SchemaJson& values, const std::string& where) {
    auto n = NewNode(JsonGrammar::Kind::kLiterals, where);
    if (!n.ok()) return n.status();
    std::vector<std::string> literals;
    for (const SchemaJson& v : values) {
      std::string text = v.dump(-1, ' ', false, SchemaJson::error_handler_t::strict);
      if (text.size() > JsonGrammar::kMaxLiteral)
        return Error("an enum value longer than " + std::to_string(JsonGrammar::kMaxLiteral) +
                         " bytes is not supported",
                     where);
      literals.push_back(std::move(text));
    }
    g_.nodes_[*n].literals = std::move(literals);
    return n;
  }

  Result<int> Union(std::vector<int> nodes, const std::string& where) {
    if (nodes.size() == 1) return nodes[0];
    // The matcher picks an alternative by its first byte, so they must differ.
    for (int c = 0; c < 256; ++c) {
      int starts = 0;
      for (int a : nodes) starts += g_.CanStart(a, static_cast<uint8_t>(c)) ? 1 : 0;
      if (starts > 1) {
        return Error(std::string("alternatives that can both start with '") + static_cast<char>(c) +
                         "' are not supported (e.g. two object or two string schemas)",
                     where);
      }
    }
    auto n = NewNode(JsonGrammar::Kind::kUnion, where);
    if (!n.ok()) return n.status();
    g_.nodes_[*n].alternatives = std::move(nodes);
    return n;
  }

  Result<int> Object(const SchemaJson& s, const std::string& where, int depth) {
    const auto props = s.find("properties");
    const auto extra = s.find("additionalProperties");
    const bool closed = extra != s.end() && extra->is_boolean() && !extra->get<bool>();
    if (extra != s.end() && !extra->is_boolean() && !(extra->is_object() && props != s.end()))
      return Error("'additionalProperties' with a schema is not supported", where);
    if (props != s.end() && !props->is_object()) return Error("'properties' must be an object", where);
    std::set<std::string> required;
    if (auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) return Error("'required' must be an array of names", where);
      for (const SchemaJson& name : *r) {
        if (!name.is_string() || props == s.end() || !props->contains(name.get<std::string>()))
          return Error("'required' names a property that 'properties' does not define", where);
        required.insert(name.get<std::string>());
      }
    }
    if (props == s.end() || props->empty())
      return closed ? Literals(SchemaJson::array({SchemaJson::object()}), where) : JsonGrammar::kAnyObject;
    if (props->size() > JsonGrammar::kMaxChoices)
      return Error("an object with more than 64 properties is not supported", where);
    auto node = NewNode(JsonGrammar::Kind::kObject, where);
    if (!node.ok()) return node.status();
    std::vector<JsonGrammar::Property> list;
    for (const auto& [name, schema] : props->items()) {
      if (name.empty() || name.size() > JsonGrammar::kMaxLiteral)
        return Error("property names must be 1 to 200 bytes", where);
      for (unsigned char c : name) {
        if (c < 0x20 || c == '"' || c == '\\')
          return Error("property names with quotes, backslashes or control characters are not supported",
                       where);
      }
      auto child = Compile(schema, where + "/properties/" + Clip(name), depth + 1);
      if (!child.ok()) return child.status();
      list.push_back({name, *child, required.count(name) > 0});
    }
    JsonGrammar::Node& n = g_.nodes_[*node];
    n.properties = std::move(list);
    for (size_t i = 0; i < n.properties.size(); ++i)
      if (n.properties[i].required) n.last_required = static_cast<int>(i);
    return node;
  }

  Result<int> Array(const SchemaJson& s, const std::string& where, int depth) {
    const auto items = s.find("items");
    if (items == s.end()) return JsonGrammar::kAnyArray;
    auto child = Compile(*items, where + "/items", depth + 1);
    if (!child.ok()) return child.status();
    auto node = NewNode(JsonGrammar::Kind::kArray, where);
    if (!node.ok()) return node.status();
    g_.nodes_[*node].items = *child;
    return node;
  }

  // "#/$defs/Name" or "#/definitions/Name": compiled once, so recursive
  // schemas refer back to the node being built.
  Result<int> Reference(const SchemaJson& ref, const std::string& where, int depth) {
    if (!ref.is_string()) return Error("'$ref' must be a string", where);
    const std::string r = ref.get<std::string>();
    if (auto it = refs_.find(r); it != refs_.end()) return it->second;
    std::string section, name;
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      if (r.rfind(prefix, 0) == 0) {
        section = std::string(prefix).substr(2, std::string(prefix).size() - 3);
        name = r.substr(std::string(prefix).size());
      }
    }
    if (section.empty() || name.empty() || name.find('/') != std::string::npos)
      return Error("'$ref' other than \"#/$defs/Name\" is not supported", where);
    const auto defs = root_.find(section);
    if (defs == root_.end() || !defs->is_object() || !defs->contains(name))
      return Error("'$ref' names \"" + Clip(r) + "\", which the schema does not define", where);
    auto placeholder = NewNode(JsonGrammar::Kind::kAny, where);
    if (!placeholder.ok()) return placeholder.status();
    refs_[r] = *placeholder;
    auto target = Compile((*defs)[name], "/" + section + "/" + Clip(name), depth + 1);
    if (!target.ok()) return target.status();
    if (*target == *placeholder) return Error("'$ref' refers only to itself", where);
    g_.nodes_[*placeholder] = g_.nodes_[*target];
    return placeholder;
  }

  JsonGrammar& g_;
  const SchemaJson& root_;
  std::map<std::string, int> refs_;
};

Result<std::shared_ptr<const JsonGrammar>> JsonGrammar::FromSchema(std::string_view schema_json) {
  const SchemaJson schema = SchemaJson::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return Status::InvalidArgument("the schema is not valid JSON");
  std::shared_ptr<JsonGrammar> g(new JsonGrammar());
  SchemaCompiler compiler(g.get(), schema);
  auto root = compiler.Compile(schema, "", 0);
  if (!root.ok()) return root.status();
  g->root_ = *root;
  return std::shared_ptr<const JsonGrammar>(std::move(g));
}

}  // namespace ragd::inference
