// Byte counts in binary units everywhere in the app, as the CLI prints them.
#include "gui/time_format.h"

#include <gtest/gtest.h>

namespace bubblescope::gui {
namespace {

TEST(TimeFormat, BytesAreInBinaryUnits) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1024), "1.0 KiB");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  // 10^6 bytes is 976.6 KiB, not "1.0 MB".
  EXPECT_EQ(formatBytes(1000000), "976.6 KiB");
  EXPECT_EQ(formatBytes(3 * 1024 * 1024), "3.0 MiB");
  EXPECT_EQ(formatBytes(int64_t{5} * 1024 * 1024 * 1024 / 2), "2.50 GiB");
}

TEST(TimeFormat, DurationsPickTheirUnit) {
  EXPECT_EQ(formatDuration(850), "850 ns");
  EXPECT_EQ(formatDuration(12'345), QString::fromUtf8("12.3 µs"));
  EXPECT_EQ(formatDuration(4'560'000), "4.56 ms");
}

}  // namespace
}  // namespace bubblescope::gui
