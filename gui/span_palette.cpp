#include "gui/span_palette.h"

#include <array>

namespace bubblescope::gui {

namespace {

using trace_model::EventKind;

struct KindStyle {
  EventKind kind;
  const char* label;
  QRgb rgb;
};

// Legend order. Compute kinds are warm/green, collectives blue/purple,
// point-to-point teal, the wait kind grey, GPU copies brown.
constexpr std::array<KindStyle, trace_model::kEventKindCount> kStyles = {{
    {EventKind::kForward, "forward", 0x4caf50},
    {EventKind::kBackward, "backward", 0xff9800},
    {EventKind::kBackwardInput, "backward (input)", 0xffb74d},
    {EventKind::kBackwardWeight, "backward (weight)", 0xe65100},
    {EventKind::kRecompute, "recompute", 0xcddc39},
    {EventKind::kOptimizer, "optimizer", 0xe53935},
    {EventKind::kKernel, "GPU kernel", 0x8d6e63},
    {EventKind::kAllReduce, "all-reduce", 0x1e88e5},
    {EventKind::kReduceScatter, "reduce-scatter", 0x5e35b1},
    {EventKind::kAllGather, "all-gather", 0x8e24aa},
    {EventKind::kBroadcast, "broadcast", 0x3949ab},
    {EventKind::kReduce, "reduce", 0x0288d1},
    {EventKind::kAllToAll, "all-to-all", 0xc2185b},
    {EventKind::kSend, "send", 0x00897b},
    {EventKind::kRecv, "receive", 0x26c6da},
    {EventKind::kWait, "wait (bubble)", 0x9e9e9e},
    {EventKind::kDataLoad, "data load", 0xfdd835},
    {EventKind::kMemcpy, "memcpy", 0x6d4c41},
    {EventKind::kMemset, "memset", 0xa1887f},
    {EventKind::kOther, "other", 0x78909c},
}};

const KindStyle& styleOf(EventKind kind) {
  for (const KindStyle& s : kStyles) {
    if (s.kind == kind) return s;
  }
  return kStyles.back();
}

}  // namespace

QColor colourOf(trace_model::EventKind kind) {
  return QColor::fromRgb(styleOf(kind).rgb);
}

QString labelOf(trace_model::EventKind kind) {
  return QString::fromUtf8(styleOf(kind).label);
}

std::vector<LegendEntry> legendEntries() {
  std::vector<LegendEntry> entries;
  entries.reserve(kStyles.size());
  for (const KindStyle& s : kStyles) {
    entries.push_back({s.kind, QString::fromUtf8(s.label), QColor::fromRgb(s.rgb)});
  }
  return entries;
}

namespace {

// In KernelCategory order. Collectives keep their kind's colour (a CPU
// all-reduce and a GPU one read alike); computation is green (GEMM, attention),
// amber (elementwise), red (optimizer, as the optimizer kind) and olive;
// memory is coral and yellow; the rest greys.
constexpr std::array<QRgb, trace_model::kKernelCategoryCount> kCategoryRgb = {{
    0x2e7d32,  // GEMM / conv
    0x9ccc65,  // attention
    0xffb300,  // elementwise / norm
    0xe53935,  // optimizer
    0x827717,  // other kernel (olive: not the kernel kind's brown)
    0x1e88e5,  // all-reduce
    0x8e24aa,  // all-gather
    0xce93d8,  // reduce-scatter
    0x3949ab,  // broadcast
    0x80deea,  // reduce
    0x00897b,  // send / recv
    0xc2185b,  // all-to-all
    0x546e7a,  // other collective
    0xff8a65,  // memcpy
    0xfff176,  // memset
    0xb0bec5,  // other
}};

}  // namespace

QColor colourOf(trace_model::KernelCategory category) {
  const auto i = static_cast<size_t>(category);
  return QColor::fromRgb(i < kCategoryRgb.size() ? kCategoryRgb[i] : kCategoryRgb.back());
}

QString labelOf(trace_model::KernelCategory category) {
  const std::string_view name = trace_model::toString(category);
  return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

QColor spanColour(trace_model::EventKind kind, int kernelCategory) {
  if (kernelCategory >= 0 && kernelCategory < trace_model::kKernelCategoryCount) {
    return colourOf(static_cast<trace_model::KernelCategory>(kernelCategory));
  }
  return colourOf(kind);
}

QColor eventColour(const trace_model::Event& e) {
  if (!trace_model::isGpuStreamLane(e.lane)) return colourOf(e.kind);
  return colourOf(trace_model::kernelCategoryOf(e.kind, e.name));
}

QString eventLabel(const trace_model::Event& e) {
  if (!trace_model::isGpuStreamLane(e.lane)) return labelOf(e.kind);
  return QStringLiteral("%1 · %2").arg(labelOf(trace_model::kernelCategoryOf(e.kind, e.name)),
                                       labelOf(e.kind));
}

QColor chunkShade(const QColor& kindColour, int32_t chunk) {
  if (chunk <= 0) return kindColour;
  return kindColour.darker(100 + 45 * ((chunk - 1) % 3 + 1));
}

QColor unindexedColour(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  return dark ? QColor(0x50, 0x50, 0x58) : QColor(0xd4, 0xd6, 0xdb);
}

QColor bubbleHatchColour() {
  return QColor(0xd3, 0x2f, 0x2f);
}

QColor arrowColour(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  return dark ? QColor(0xb0, 0xbe, 0xc5) : QColor(0x37, 0x47, 0x4f);
}

QColor stepMarkColour(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Window).lightness() < 128;
  return dark ? QColor(0x64, 0xb5, 0xf6) : QColor(0x15, 0x65, 0xc0);
}

}  // namespace bubblescope::gui
