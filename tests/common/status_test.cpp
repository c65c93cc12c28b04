#include <gtest/gtest.h>

#include <memory>

#include "common/result.h"

namespace bubblescope {
namespace {

Result<int> parsePositive(int v) {
  if (v <= 0) return Status::invalidArgument("value must be positive, got " + std::to_string(v));
  return v;
}

Result<int> doubled(int v) {
  BS_ASSIGN_OR_RETURN(int x, parsePositive(v));
  return 2 * x;
}

Status check(int v) {
  BS_RETURN_IF_ERROR(parsePositive(v).status());
  return Status::ok();
}

TEST(StatusTest, OkAndErrorCarryCodeAndMessage) {
  EXPECT_TRUE(Status::ok().isOk());
  Status s = Status::notFound("no such run 7");
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no such run 7");
  EXPECT_EQ(s.withContext("report").message(), "report: no such run 7");
  EXPECT_TRUE(Status::ok().withContext("x").isOk());
}

TEST(ResultTest, PropagatesValuesAndErrors) {
  auto good = doubled(4);
  ASSERT_TRUE(good.isOk());
  EXPECT_EQ(*good, 8);
  auto bad = doubled(-1);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "value must be positive, got -1");
  EXPECT_TRUE(check(3).isOk());
  EXPECT_FALSE(check(0).isOk());
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.isOk());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 5);
}

}  // namespace
}  // namespace bubblescope
