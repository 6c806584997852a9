#include "app/config/flags.h"

#include <cstdio>

namespace ragd::app {

void Flags::Value(const std::string& name, const std::string& alias, const std::string& help,
                  bool repeatable) {
  specs_.push_back({name, alias, help, true, repeatable});
}

void Flags::Bool(const std::string& name, const std::string& alias, const std::string& help) {
  specs_.push_back({name, alias, help, false, false});
}

const Flags::Spec* Flags::Find(const std::string& arg) const {
  for (const Spec& s : specs_)
    if (arg == s.name || (!s.alias.empty() && arg == s.alias)) return &s;
  return nullptr;
}

Status Flags::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      values_["--help"].push_back("");
      continue;
    }
    if (a.size() < 2 || a[0] != '-' || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a, value;
    bool inline_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    const Spec* spec = Find(name);
    if (spec == nullptr) return Status::InvalidArgument("unknown option " + name);
    if (spec->takes_value && !inline_value) {
      if (i + 1 >= args.size()) return Status::InvalidArgument("option " + name + " needs a value");
      value = args[++i];
    } else if (!spec->takes_value && inline_value) {
      return Status::InvalidArgument("option " + name + " takes no value");
    }
    auto& slot = values_[spec->name];
    if (!slot.empty() && !spec->repeatable) return Status::InvalidArgument("option " + name + " given twice");
    slot.push_back(value);
  }
  return Status::Ok();
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string Flags::HelpText() const {
  std::string out = "usage: " + usage_ + "\n\n" + description_ + "\n\noptions:\n";
  for (const Spec& s : specs_) {
    std::string left =
        "  " + s.name + (s.alias.empty() ? "" : ", " + s.alias) + (s.takes_value ? " VALUE" : "");
    if (left.size() < 26) left.resize(26, ' ');
    out += left + " " + s.help + "\n";
  }
  out += "  --help, -h                 show this help\n";
  return out;
}

std::optional<int> ParseOrExit(Flags& flags, const std::vector<std::string>& args) {
  Status st = flags.Parse(args);
  if (!st.ok()) {
    std::fprintf(stderr, "ragd: %s\n%s", st.message().c_str(), flags.HelpText().c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::printf("%s", flags.HelpText().c_str());
    return 0;
  }
  return std::nullopt;
}

}  // namespace ragd::app
