#include "storage/analysis/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bubblescope::analysis {

std::string TextTable::render(bool markdown) const {
  std::vector<size_t> width(header.size(), 0);
  auto left = [&](size_t i) { return i == 0 || (lastColumnLeft && i + 1 == width.size()); };
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = markdown ? "|" : "";
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(width[i] - cell.size(), ' ');
      if (markdown) out += ' ';
      if (!markdown && i > 0) out += "  ";
      out += left(i) ? cell + pad : pad + cell;
      if (markdown) out += " |";
    }
    if (!markdown) out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out = line(header);
  if (markdown) {
    std::string rule = "|";
    for (size_t i = 0; i < width.size(); ++i) {
      const size_t dashes = std::max<size_t>(width[i], 3);
      rule += ' ';
      rule.append(left(i) ? dashes : dashes - 1, '-');
      rule += left(i) ? " |" : ": |";
    }
    out += rule + "\n";
  } else {
    size_t total = 0;
    for (size_t w : width) total += w + 2;
    out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  }
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string formatPercent(std::optional<double> share) {
  if (!share) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", *share * 100.0);
  return text;
}

std::string formatMs(std::optional<double> ns) {
  if (!ns) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", *ns / 1e6);
  return text;
}

std::string formatBytes(std::optional<double> bytes) {
  if (!bytes) return "-";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = *bytes;
  int u = 0;
  while (std::fabs(v) >= 1024.0 && u < 4) v /= 1024.0, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return text;
}

std::string formatNumber(std::optional<double> v, int decimals) {
  if (!v) return "-";
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, *v);
  return text;
}

std::string formatHeading(const std::string& title, bool markdown) {
  return markdown ? "\n### " + title + "\n\n" : "\n" + title + "\n";
}

}  // namespace bubblescope::analysis
