#include "planning/ascii_render.h"

#include <gtest/gtest.h>

namespace bubblescope::layout {
namespace {

TEST(AsciiRender, OneFOneBTwoStagesThreeMicroBatches) {
  EXPECT_EQ(renderAscii(oneFOneB(2, 3).value()).value(),
            "stage 0 | F0 F1 .  B0 F2 B1 .  B2\n"
            "stage 1 | .  F0 B0 F1 B1 F2 B2 .\n");
}

TEST(AsciiRender, OneFOneBFourStagesEightMicroBatches) {
  // The picture in docs/schedules.md: p - 1 = 3 idle cells before stage 0's
  // first backward and 3 in its cool-down; (p-1)(t_F+t_B) = 6 per stage.
  EXPECT_EQ(renderAscii(oneFOneB(4, 8).value()).value(),
            "stage 0 | F0 F1 F2 F3 .  .  .  B0 F4 B1 F5 B2 F6 B3 F7 B4 .  B5 .  B6 .  B7\n"
            "stage 1 | .  F0 F1 F2 .  .  B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 .  B6 .  B7 .\n"
            "stage 2 | .  .  F0 F1 .  B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 .  B7 .  .\n"
            "stage 3 | .  .  .  F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 .  .  .\n");
}

TEST(AsciiRender, GPipeAndInterleavedAndZeroBubble) {
  EXPECT_EQ(renderAscii(gpipe(2, 2).value()).value(),
            "stage 0 | F0 F1 .  .  B0 B1\n"
            "stage 1 | .  F0 F1 B0 B1 .\n");
  EXPECT_EQ(renderAscii(interleaved(2, 2, 2).value()).value(),
            "stage 0 | F0a F1a F0b F1b .   B0b .   B1b B0a B1a\n"
            "stage 1 | .   F0a F1a F0b B0b F1b B1b B0a B1a .\n");
  EXPECT_EQ(renderAscii(zeroBubbleH1(2, 2).value()).value(),
            "stage 0 | F0 F1 .  B0 W0 B1 W1\n"
            "stage 1 | .  F0 B0 F1 B1 W0 W1\n");
}

}  // namespace
}  // namespace bubblescope::layout
