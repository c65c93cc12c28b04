// --grad-compression specs and the factory's checks.
#include "engine/parallel/grad_compressor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace bubblescope::engine {
namespace {

TEST(GradCompressorTest, ParsesEverySpecAndRejectsBadOnesByName) {
  for (const char* text : {"none", "fp16", "bf16", "int8", "topk:0.01", "topk:1", "powersgd:4"}) {
    auto spec = parseGradCompression(text);
    ASSERT_TRUE(spec.isOk()) << text << ": " << spec.status().toString();
  }
  EXPECT_EQ(parseGradCompression("topk:0.25")->ratio, 0.25);
  EXPECT_EQ(parseGradCompression("topk:0.25")->toString(), "topk:0.25");
  EXPECT_EQ(parseGradCompression("powersgd:4")->rank, 4);
  EXPECT_EQ(parseGradCompression("powersgd:4")->kind, GradCompression::kPowerSgd);
  for (const char* text :
       {"topk", "topk:0", "topk:1.5", "topk:x", "powersgd:0", "powersgd:", "fp16:2", "int4", ""}) {
    auto spec = parseGradCompression(text);
    ASSERT_FALSE(spec.isOk()) << text;
    EXPECT_NE(spec.status().toString().find("grad compression '" + std::string(text) + "'"),
              std::string::npos)
        << spec.status().toString();
  }
}

TEST(GradCompressorTest, FactoryChecksShapesAndNoneSendsFourBytesAnElement) {
  const GradCompressionSpec powerSgd{GradCompression::kPowerSgd, 1.0, 2};
  EXPECT_TRUE(makeGradCompressor(powerSgd, {12, 3, 4}).isOk());
  EXPECT_FALSE(makeGradCompressor(powerSgd, {12, 0, 0}).isOk());  // a vector
  EXPECT_FALSE(makeGradCompressor(powerSgd, {12, 4, 4}).isOk());  // 16 != 12
  EXPECT_FALSE(makeGradCompressor({GradCompression::kPowerSgd, 1.0, 4}, {12, 3, 4}).isOk());
  EXPECT_FALSE(makeGradCompressor({GradCompression::kTopK, 0.0, 0}, {12, 0, 0}).isOk());

  auto none = makeGradCompressor({}, {3, 0, 0});
  ASSERT_TRUE(none.isOk());
  const std::vector<float> g = {1.5f, -0.0f, NAN};
  CompressedGrad packed;
  ASSERT_TRUE((*none)->compress(g, packed).isOk());
  EXPECT_EQ(packed.bytes(), 12);
  std::vector<float> d(3);
  ASSERT_TRUE((*none)->decompress(packed, d).isOk());
  EXPECT_EQ(d[0], 1.5f);
  EXPECT_TRUE(std::signbit(d[1]));
  EXPECT_TRUE(std::isnan(d[2]));
}

}  // namespace
}  // namespace bubblescope::engine
