// TextTable: rows of cells rendered as an aligned terminal table or as a
// Markdown table, plus the cell formatting every report shares.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bubblescope::analysis {

struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as wide as header
  bool lastColumnLeft = false;                 // left-align a trailing text column

  // Columns padded to their widest cell; the first column (and, with
  // lastColumnLeft, the last) left-aligned, the others right-aligned. Markdown: a GitHub pipe
  // table.
  std::string render(bool markdown) const;
};

// Formatting; std::nullopt renders as "-".
std::string formatPercent(std::optional<double> share);  // 0.123 -> "12.3%"
std::string formatMs(std::optional<double> ns);          // ns -> "12.345"
std::string formatBytes(std::optional<double> bytes);    // "1.50 MiB"
std::string formatNumber(std::optional<double> v, int decimals = 3);
// A section title: "\nTitle\n", or "\n### Title\n\n" in Markdown.
std::string formatHeading(const std::string& title, bool markdown);

}  // namespace bubblescope::analysis
