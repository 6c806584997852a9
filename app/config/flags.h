// A small command-line flag parser for the subcommands.
//
// Flags are declared up front with a help line; Parse() accepts "--name value",
// "--name=value", boolean "--name", short aliases ("-n"), and positional
// arguments. Unknown flags and missing values are errors naming the flag.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ragd::app {

class Flags {
 public:
  Flags(std::string usage, std::string description)
      : usage_(std::move(usage)), description_(std::move(description)) {}

  // Declares a flag taking a value ("--port 8080"); `alias` may be "" or "-p".
  void Value(const std::string& name, const std::string& alias, const std::string& help,
             bool repeatable = false);
  // Declares a boolean flag ("--chat").
  void Bool(const std::string& name, const std::string& alias, const std::string& help);

  Status Parse(const std::vector<std::string>& args);

  bool help_requested() const { return Has("--help"); }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  std::string HelpText() const;

 private:
  struct Spec {
    std::string name, alias, help;
    bool takes_value = false;
    bool repeatable = false;
  };
  const Spec* Find(const std::string& arg) const;

  std::string usage_, description_;
  std::vector<Spec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// Runs Parse and handles --help and errors the same way for every command:
// returns an exit code to return at once, or nullopt to go on.
std::optional<int> ParseOrExit(Flags& flags, const std::vector<std::string>& args);

}  // namespace ragd::app
