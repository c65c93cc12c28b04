// LinkCosts: the fit a dimension's communication is costed with, its
// stand-ins and what is said about them.
#include "planning/link_costs.h"

#include <gtest/gtest.h>

#include "planning/link_class.h"

namespace bubblescope::layout {
namespace {

TEST(LinkCosts, PredictTheLinksOwnFitThenAStandInSaidThenHalfAnAllReduce) {
  Layout l;
  l.dp = 4;
  Calibration c;
  c.links.push_back({"dp", kSameHost, "allreduce", 4, 100, 2.0, 8, 8, 1 << 20});
  c.links.push_back({"dp", kSharedCores, "allreduce", 4, 1000, 4.0, 8, 8, 1 << 20});
  c.links.push_back({"zero", kSameHost, kMicroBatchReduceScatter, 4, 7, 1.0, 8, 8, 1 << 20});
  std::vector<std::string> said;
  const std::vector<std::string> placed(4, "");
  LinkCosts shared(l, c, placed, /*sharedCores=*/true, [&](std::string w) { said.push_back(w); });
  // Between compute ops the link's own fit; at the step's end the shared-cores one.
  EXPECT_DOUBLE_EQ(shared.collectiveNs("dp", "allreduce", 10, 1, false), 100 + 20);
  EXPECT_DOUBLE_EQ(shared.collectiveNs("dp", "allreduce", 10, 1, true), 1000 + 40);
  EXPECT_TRUE(said.empty());
  // A reduce-scatter without a fit: half the all-reduce, said.
  EXPECT_DOUBLE_EQ(shared.collectiveNs("dp", "reduce_scatter", 10, 1, false), (100 + 20) / 2.0);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("costed as half the dp allreduce fit"), std::string::npos) << said[0];
  // Another dimension's fit stands in, said unless asked not to.
  said.clear();
  EXPECT_DOUBLE_EQ(shared.collectiveNs("tp", "allreduce", 10, 1, false, false), 120);
  EXPECT_TRUE(said.empty());
  EXPECT_DOUBLE_EQ(shared.collectiveNs("tp", "allreduce", 10, 1, false), 120);
  ASSERT_EQ(said.size(), 1u);
  // ownFit: that dim, collective and link only.
  ASSERT_NE(shared.ownFit("zero", kMicroBatchReduceScatter), nullptr);
  EXPECT_EQ(shared.ownFit("dp", kMicroBatchReduceScatter), nullptr);
  // No p2p fit at all: 0, said.
  said.clear();
  EXPECT_EQ(shared.collectiveNs("pp", "p2p", 10, 1, false), 0.0);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], "no p2p time measured (dim pp): taken as 0");
}

}  // namespace
}  // namespace bubblescope::layout
