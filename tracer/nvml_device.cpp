#include "tracer/nvml_device.h"

#include <cctype>
#include <cstdio>

namespace bubblescope::tracer {
namespace {

// Hex digits of s[from, to), at least one and at most `most`; the value.
bool hexField(const std::string& s, size_t from, size_t to, size_t most,
              unsigned long long& value) {
  if (to <= from || to - from > most) return false;
  value = 0;
  for (size_t i = from; i < to; ++i) {
    const int c = std::tolower(static_cast<unsigned char>(s[i]));
    if (!std::isxdigit(c)) return false;
    value = value * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return true;
}

}  // namespace

Result<std::string> normalisedPciBusId(const std::string& busId) {
  const size_t colon1 = busId.find(':');
  const size_t colon2 = colon1 == std::string::npos ? colon1 : busId.find(':', colon1 + 1);
  const size_t dot = colon2 == std::string::npos ? colon2 : busId.find('.', colon2 + 1);
  unsigned long long domain = 0, bus = 0, device = 0, function = 0;
  if (dot == std::string::npos || !hexField(busId, 0, colon1, 8, domain) ||
      !hexField(busId, colon1 + 1, colon2, 2, bus) ||
      !hexField(busId, colon2 + 1, dot, 2, device) || device > 0x1f ||
      !hexField(busId, dot + 1, busId.size(), 1, function) || function > 7) {
    return Status::invalidArgument("not a PCI bus id (domain:bus:device.function): '" + busId +
                                   "'");
  }
  char out[32];
  std::snprintf(out, sizeof out, "%08llX:%02llX:%02llX.%llX", domain, bus, device, function);
  return std::string(out);
}

std::string nvmlUuidOf(const std::array<uint8_t, 16>& b) {
  std::string out = "GPU-";
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0xf];
  }
  return out;
}

Result<NvmlHandle> nvmlDeviceOf(const GpuIdentity& gpu, const NvmlLookup& lookup) {
  std::string why;
  if (!gpu.pciBusId.empty()) {
    auto busId = normalisedPciBusId(gpu.pciBusId);
    if (busId.isOk()) {
      auto handle = lookup.byPciBusId(*busId);
      if (handle.isOk()) return handle;
      why = "PCI bus id " + *busId + ": " + handle.status().message();
    } else {
      why = busId.status().message();
    }
  } else {
    why = "no PCI bus id";
  }
  if (!gpu.uuid.empty()) {
    auto handle = lookup.byUuid(gpu.uuid);
    if (handle.isOk()) return handle;
    why += "; UUID " + gpu.uuid + ": " + handle.status().message();
  } else {
    why += "; no UUID";
  }
  return Status::notFound("NVML does not know this CUDA device (" + why + ")");
}

}  // namespace bubblescope::tracer
