#include "storage/analysis/memory_copies.h"

#include <algorithm>

namespace bubblescope::analysis {

std::string memoryCopyKind(trace_model::EventKind kind, std::string_view name) {
  if (kind == trace_model::EventKind::kMemset) return "memset";
  if (kind != trace_model::EventKind::kMemcpy) return "";
  constexpr std::string_view kPrefix = "Memcpy ";
  if (name.substr(0, kPrefix.size()) != kPrefix) return "memcpy";
  std::string_view rest = name.substr(kPrefix.size());
  rest = rest.substr(0, rest.find(' '));
  return rest.empty() ? "memcpy" : std::string(rest);
}

void MemoryCopiesBuilder::add(const trace_model::Event& e) {
  std::string kind = memoryCopyKind(e.kind, e.name);
  if (kind.empty()) return;
  auto it = std::find_if(kinds_.begin(), kinds_.end(),
                         [&](const MemoryCopyKind& k) { return k.kind == kind; });
  if (it == kinds_.end()) {
    kinds_.push_back({std::move(kind), 0, std::nullopt, 0});
    it = kinds_.end() - 1;
  }
  ++it->count;
  it->ns += e.endNs - e.startNs;
  if (e.bytes > 0) it->bytes = it->bytes.value_or(0) + e.bytes;
}

void MemoryCopiesBuilder::merge(const MemoryCopiesBuilder& other) {
  for (const MemoryCopyKind& k : other.kinds_) {
    auto it = std::find_if(kinds_.begin(), kinds_.end(),
                           [&](const MemoryCopyKind& m) { return m.kind == k.kind; });
    if (it == kinds_.end()) {
      kinds_.push_back(k);
      continue;
    }
    it->count += k.count;
    it->ns += k.ns;
    if (k.bytes) it->bytes = it->bytes.value_or(0) + *k.bytes;
  }
}

std::vector<MemoryCopyKind> MemoryCopiesBuilder::finish() const {
  std::vector<MemoryCopyKind> out = kinds_;
  std::sort(out.begin(), out.end(),
            [](const MemoryCopyKind& a, const MemoryCopyKind& b) { return a.kind < b.kind; });
  return out;
}

}  // namespace bubblescope::analysis
