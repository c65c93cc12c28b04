// The project's own light face of CLI11: commands and their options as the
// command files register them. Only command_line.cpp (and main.cpp, which
// parses) include <CLI/CLI.hpp>; every command file includes this header,
// which forward-declares CLI11's two classes, so that CLI11's 100,000 lines
// of inline definitions are compiled once instead of in every command.
//
// Contract: a Command wraps a CLI::App the parser owns; an Option wraps one
// of its options. Both are cheap handles, valid as long as the top-level
// app. Every number option is range-checked where its text is parsed
// (common/value_range.h): by default against its type's range (a double
// must be finite), narrowed by range()/positive()/nonNegative(); a value
// outside is one usage error "--flag: VALUE is outside the allowed range LO
// to HI" (exit 2, main.cpp), never a wrapped or infinite value. A text
// option given an empty value is "--flag: the value is empty".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace bubblescope::cli {

struct NumberBounds;  // command_line.cpp: a number option's allowed range

class Option {
 public:
  enum class Kind { kText, kInt32, kInt64, kUint64, kDouble, kFlag };
  // `bounds`: those the option's range validator reads (numbers), else null.
  Option(CLI::Option* option, Kind kind, std::shared_ptr<NumberBounds> bounds = nullptr)
      : option_(option), kind_(kind), bounds_(std::move(bounds)) {}

  Option& required();
  Option& showDefault();  // the help shows the target's value at registration
  Option& hidden();       // left out of --help (internal options)
  Option& delimiter(char separator);
  Option& needs(const Option& other);
  Option& excludes(const Option& other);
  Option& oneOf(const std::vector<std::string>& names);
  Option& existingFile();
  // Numbers: narrows the allowed range to [lo, hi] (bounds outside the
  // target type's range are clipped to it).
  Option& range(long double lo, long double hi);
  Option& positive();     // integers >= 1, doubles > 0
  Option& nonNegative();  // >= 0

  // After parsing: the option was given on the command line.
  bool given() const;
  // Its first name as given at registration, e.g. "--steps".
  std::string name() const;

 private:
  CLI::Option* option_;
  Kind kind_;
  std::shared_ptr<NumberBounds> bounds_;
};

// Thrown from a command's callback (or through checkUsage) for a usage error
// found after parsing; main() prints it like CLI11's own (exit 2).
void failUsage(const std::string& message);

class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}

  Command subcommand(const std::string& name, const std::string& help);
  void requireSubcommand();
  void hidden();  // left out of the parent's --help
  // Runs once parsing of this command succeeded (sets the CommandRunner).
  void callback(std::function<void()> onParsed);

  Option option(const std::string& names, std::string& target, const std::string& help = "");
  Option option(const std::string& names, std::vector<std::string>& target,
                const std::string& help = "");
  Option option(const std::string& names, std::optional<std::string>& target,
                const std::string& help = "");
  Option option(const std::string& names, int32_t& target, const std::string& help = "");
  Option option(const std::string& names, int64_t& target, const std::string& help = "");
  Option option(const std::string& names, uint64_t& target, const std::string& help = "");
  Option option(const std::string& names, double& target, const std::string& help = "");
  Option option(const std::string& names, std::vector<int64_t>& target,
                const std::string& help = "");
  Option option(const std::string& names, std::optional<int32_t>& target,
                const std::string& help = "");
  Option option(const std::string& names, std::optional<int64_t>& target,
                const std::string& help = "");
  Option option(const std::string& names, std::optional<double>& target,
                const std::string& help = "");
  // Two values, "NUMBER TEXT" (e.g. --dump-batch STEP FILE).
  Option option(const std::string& names, std::pair<int64_t, std::string>& target,
                const std::string& help = "");
  Option flag(const std::string& names, bool& target, const std::string& help = "");

 private:
  CLI::App* app_;
};

}  // namespace bubblescope::cli
