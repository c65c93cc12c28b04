#include "common/value_range.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace bubblescope {
namespace {

TEST(ValueRangeTest, AcceptsWholeNumbersInsideTheRange) {
  EXPECT_EQ(*parseInRange<int32_t>("--world", "4", 1, 64), 4);
  EXPECT_EQ(*parseInRange<int32_t>("--world", "+64", 1, 64), 64);
  EXPECT_EQ(*parseInRange<int64_t>("--seed", "-9223372036854775808"),
            std::numeric_limits<int64_t>::lowest());
  EXPECT_EQ(*parseInRange<uint64_t>("--seed", "18446744073709551615"),
            std::numeric_limits<uint64_t>::max());
  EXPECT_DOUBLE_EQ(*parseInRange<double>("--lr", "3e-4", 0.0, 1.0), 3e-4);
}

TEST(ValueRangeTest, OneMessageNamesFieldValueAndRange) {
  EXPECT_EQ(parseInRange<int32_t>("--world", "0", 1, 65536).status().message(),
            "--world: 0 is outside the allowed range 1 to 65536");
  EXPECT_EQ(parseInRange<int32_t>("--run", "-1", 1, std::numeric_limits<int32_t>::max())
                .status()
                .message(),
            "--run: -1 is outside the allowed range 1 to 2147483647");
  EXPECT_EQ(checkRange<double>("capacity_factor", 0.0, 0.5, 8.0).message(),
            "capacity_factor: 0 is outside the allowed range 0.5 to 8");
}

// A value too large for the type is reported as the user wrote it, never as
// the wrapped or infinite value a plain conversion gives.
TEST(ValueRangeTest, OverflowIsOutOfRangeWithTheTextAsWritten) {
  const Result<int32_t> wrapped = parseInRange<int32_t>("seq_len", "2147483648");
  ASSERT_FALSE(wrapped.isOk());
  EXPECT_EQ(wrapped.status().message(),
            "seq_len: 2147483648 is outside the allowed range -2147483648 to 2147483647");
  const Result<int64_t> huge =
      parseInRange<int64_t>("--hang-timeout", "18446744073709552", 0, int64_t{1} << 40);
  ASSERT_FALSE(huge.isOk());
  EXPECT_NE(huge.status().message().find("18446744073709552 is outside"), std::string::npos);
  const Result<double> inf = parseInRange<double>("--lr", "1e400");
  ASSERT_FALSE(inf.isOk());
  EXPECT_EQ(inf.status().message().rfind("--lr: 1e400 is outside the allowed range ", 0), 0u);
  EXPECT_FALSE(parseInRange<uint64_t>("--seed", "-1").isOk());
  EXPECT_LT(inf.status().message().size(), 100u);  // no 310-digit bound
}

TEST(ValueRangeTest, TextThatIsNotANumberSaysSo) {
  EXPECT_EQ(parseInRange<int32_t>("--dp", "abc").status().message(), "--dp: 'abc' is not a number");
  EXPECT_EQ(parseInRange<int32_t>("--dp", "2.5").status().message(),
            "--dp: '2.5' is not a whole number");
  EXPECT_EQ(parseInRange<int32_t>("--dp", "").status().message(), "--dp: '' is not a number");
  EXPECT_EQ(parseInRange<double>("--lr", "nan").status().message(), "--lr: 'nan' is not a number");
  EXPECT_FALSE(parseInRange<double>("--lr", "inf").isOk());
  EXPECT_FALSE(parseInRange<double>("--lr", "0x1p3").isOk());
  EXPECT_FALSE(parseInRange<int32_t>("--dp", "4 ").isOk());
}

TEST(ValueRangeTest, NanIsOutsideEveryRange) {
  EXPECT_FALSE(checkRange<double>("x", std::nan(""), -1e300, 1e300).isOk());
  EXPECT_TRUE(checkRange<double>("x", 1.0, 1.0, 1.0).isOk());
}

}  // namespace
}  // namespace bubblescope
