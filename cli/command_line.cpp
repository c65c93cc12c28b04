// The one translation unit (with main.cpp, which parses) that compiles
// CLI11's inline definitions: command_line.h's commands and options on
// CLI::App, and the range check of every number option.
#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include "common/value_range.h"

namespace bubblescope::cli {

// The allowed range of one number option, shared by its validator and its
// Option handle (range() narrows it before parsing). Long double holds every
// 32-bit bound exactly and the 64-bit type bounds as the type's own.
struct NumberBounds {
  long double lo = 0, hi = 0;
  bool loOpen = false;  // positive doubles: lo itself is outside
};

namespace {

template <class T>
T clip(long double v) {
  if (v <= static_cast<long double>(lowestValue<T>())) return lowestValue<T>();
  if (v >= static_cast<long double>(highestValue<T>())) return highestValue<T>();
  return static_cast<T>(v);
}

// "" when `text` is a T inside `b`, else the message (without the option's
// name: CLI11 puts "--flag: " before it).
template <class T>
std::string checkNumberText(const std::string& text, const NumberBounds& b) {
  const T lo = clip<T>(b.lo), hi = clip<T>(b.hi);
  Result<T> value = parseInRange<T>("", text, lo, hi);
  if (!value.isOk()) return value.status().message();
  if (b.loOpen && *value == lo) {
    return outOfRangeMessage("", text, "greater than " + rangeBoundText(lo));
  }
  return "";
}

std::string checkByKind(Option::Kind kind, const std::string& text, const NumberBounds& b) {
  switch (kind) {
    case Option::Kind::kInt32:
      return checkNumberText<int32_t>(text, b);
    case Option::Kind::kInt64:
      return checkNumberText<int64_t>(text, b);
    case Option::Kind::kUint64:
      return checkNumberText<uint64_t>(text, b);
    case Option::Kind::kDouble:
      return checkNumberText<double>(text, b);
    default:
      return "";
  }
}

template <class T>
NumberBounds typeBounds() {
  return {static_cast<long double>(lowestValue<T>()), static_cast<long double>(highestValue<T>()),
          false};
}

NumberBounds boundsOfKind(Option::Kind kind) {
  switch (kind) {
    case Option::Kind::kInt32:
      return typeBounds<int32_t>();
    case Option::Kind::kInt64:
      return typeBounds<int64_t>();
    case Option::Kind::kUint64:
      return typeBounds<uint64_t>();
    default:
      return typeBounds<double>();
  }
}

// Adds the range validator of a number option; `index` >= 0 applies it to
// that value of a multi-value option only.
Option numberOption(CLI::Option* o, Option::Kind kind, int index = -1) {
  auto bounds = std::make_shared<NumberBounds>(boundsOfKind(kind));
  CLI::Validator v([kind, bounds](std::string& text) { return checkByKind(kind, text, *bounds); },
                   "", "range");
  if (index >= 0) v.application_index(index);
  o->check(v);
  return Option(o, kind, bounds);
}

// A text option given an empty value ("--trace ''") is a usage error: no
// option of the commands means anything by an empty name (an empty --trace
// used to run untraced without a word).
Option textOption(CLI::Option* o) {
  o->check(CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("the value is empty") : ""; }, "",
      "not empty"));
  return Option(o, Option::Kind::kText);
}

}  // namespace

void failUsage(const std::string& message) {
  throw CLI::ValidationError(message);
}

Option& Option::required() {
  option_->required();
  return *this;
}

Option& Option::showDefault() {
  option_->capture_default_str();
  return *this;
}

Option& Option::hidden() {
  option_->group("");
  return *this;
}

Option& Option::delimiter(char separator) {
  option_->delimiter(separator);
  return *this;
}

Option& Option::needs(const Option& other) {
  option_->needs(other.option_);
  return *this;
}

Option& Option::excludes(const Option& other) {
  option_->excludes(other.option_);
  return *this;
}

Option& Option::oneOf(const std::vector<std::string>& names) {
  option_->check(CLI::IsMember(names));
  return *this;
}

Option& Option::existingFile() {
  option_->check(CLI::ExistingFile);
  return *this;
}

Option& Option::range(long double lo, long double hi) {
  if (bounds_) *bounds_ = {lo, hi, false};
  return *this;
}

Option& Option::positive() {
  if (!bounds_) return *this;
  if (kind_ == Kind::kDouble) {
    bounds_->lo = 0;
    bounds_->loOpen = true;
  } else {
    bounds_->lo = 1;
  }
  return *this;
}

Option& Option::nonNegative() {
  if (bounds_) bounds_->lo = 0;
  return *this;
}

bool Option::given() const {
  return option_->count() > 0;
}

std::string Option::name() const {
  return option_->get_name();
}

Command Command::subcommand(const std::string& name, const std::string& help) {
  return Command(app_->add_subcommand(name, help));
}

void Command::requireSubcommand() {
  app_->require_subcommand(1);
}

void Command::hidden() {
  app_->group("");
}

void Command::callback(std::function<void()> onParsed) {
  app_->callback(std::move(onParsed));
}

Option Command::option(const std::string& names, std::string& target, const std::string& help) {
  return textOption(app_->add_option(names, target, help));
}

Option Command::option(const std::string& names, std::vector<std::string>& target,
                       const std::string& help) {
  return textOption(app_->add_option(names, target, help));
}

Option Command::option(const std::string& names, std::optional<std::string>& target,
                       const std::string& help) {
  return textOption(app_->add_option(names, target, help));
}

Option Command::option(const std::string& names, int32_t& target, const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kInt32);
}

Option Command::option(const std::string& names, int64_t& target, const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kInt64);
}

Option Command::option(const std::string& names, uint64_t& target, const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kUint64);
}

Option Command::option(const std::string& names, double& target, const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kDouble);
}

Option Command::option(const std::string& names, std::vector<int64_t>& target,
                       const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kInt64);
}

Option Command::option(const std::string& names, std::optional<int32_t>& target,
                       const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kInt32);
}

Option Command::option(const std::string& names, std::optional<int64_t>& target,
                       const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kInt64);
}

Option Command::option(const std::string& names, std::optional<double>& target,
                       const std::string& help) {
  return numberOption(app_->add_option(names, target, help), Option::Kind::kDouble);
}

Option Command::option(const std::string& names, std::pair<int64_t, std::string>& target,
                       const std::string& help) {
  CLI::Option* o = app_->add_option(names, target, help);
  // The second value is a name; an option there means the first was missing
  // (`--dump-batch FILE --steps 1` would otherwise take "--steps" as FILE).
  CLI::Validator notAnOption(
      [](std::string& text) {
        return text.rfind("-", 0) == 0 && text.size() > 1
                   ? "expects two values, got the option " + text + " as the second"
                   : std::string();
      },
      "", "second value");
  o->check(notAnOption.application_index(1));
  return numberOption(o, Option::Kind::kInt64, 0);
}

Option Command::flag(const std::string& names, bool& target, const std::string& help) {
  return Option(app_->add_flag(names, target, help), Option::Kind::kFlag);
}

}  // namespace bubblescope::cli
