// predictFromFile(): a stored calibration from another machine is used and
// said so (issue 15, "Bad input"); one from this machine is not.
#include "cli/prediction_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "storage/calibration_store.h"
#include "storage/process_identity.h"

namespace bubblescope::cli {
namespace {

layout::Calibration tinyCalibration(const std::string& host, int32_t cores) {
  layout::Calibration c;
  c.name = "test";
  c.host = host;
  c.cores = cores;
  c.ranksPerHost = 1;
  c.model = layout::defaultLayoutModel();
  for (const char* part : {"block", "embedding", "head"}) {
    c.ops.push_back({part, "forward", 1, 1, 1e6, 1e6, 1});
    c.ops.push_back({part, "backward", 1, 1, 2e6, 2e6, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, 1.0, 1.0, 1});
  return c;
}

bool saysOtherMachine(const layout::Prediction& p) {
  for (const std::string& w : p.warnings) {
    if (w.find("the calibration was measured on host ") == 0) return true;
  }
  return false;
}

TEST(PredictFromFile, ACalibrationFromAnotherMachineIsUsedAndSaidSo) {
  const std::string path =
      ::testing::TempDir() + "/prediction_text_test_" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  const std::string here = storage::currentHostName();
  const auto cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  auto other = storage::saveCalibration(path, tinyCalibration("elsewhere-" + here, cores + 6));
  ASSERT_TRUE(other.isOk()) << other.status().message();
  auto same = storage::saveCalibration(path, tinyCalibration(here, cores));
  ASSERT_TRUE(same.isOk()) << same.status().message();

  layout::Layout l;
  l.microBatches = 2;
  auto fromOther = predictFromFile(l, path, *other);
  ASSERT_TRUE(fromOther.isOk()) << fromOther.status().message();
  ASSERT_TRUE(saysOtherMachine(*fromOther));
  const std::string expected = "the calibration was measured on host elsewhere-" + here + " with " +
                               std::to_string(cores + 6) + " cores, this is " + here + " with " +
                               std::to_string(cores) + ": the prediction is for that machine";
  EXPECT_EQ(fromOther->warnings.back(), expected);
  EXPECT_NE(predictionToText(l, *fromOther).find("warning: " + expected + "\n"), std::string::npos);

  auto fromHere = predictFromFile(l, path, *same);
  ASSERT_TRUE(fromHere.isOk()) << fromHere.status().message();
  EXPECT_FALSE(saysOtherMachine(*fromHere));
  // Usable either way: the same costs give the same step.
  EXPECT_DOUBLE_EQ(fromOther->stepNs, fromHere->stepNs);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace bubblescope::cli
