// Link classes (planning/link_class.h): which groups cross hosts where
// mpirun places a layout's ranks, and the prediction using each link's fit.
#include "planning/link_class.h"

#include <gtest/gtest.h>

#include "planning/prediction.h"

namespace bubblescope::layout {
namespace {

TEST(LinkClass, RanksFillEachHostsSlotsInOrder) {
  Layout l;
  l.dp = 2;
  l.pp = 2;
  l.hosts = {"a:3", "b"};
  EXPECT_EQ(placedHosts(l), (std::vector<std::string>{"a", "a", "a", "b"}));
  l.hosts = {"a", "b"};  // one slot each: the world wraps around
  EXPECT_EQ(placedHosts(l), (std::vector<std::string>{"a", "b", "a", "b"}));
  l.hosts.clear();
  EXPECT_EQ(placedHosts(l), (std::vector<std::string>(4, "")));
}

TEST(LinkClass, AGroupSpanningHostsCrossesTheOtherHostLink) {
  Layout l;
  l.dp = 2;
  l.pp = 2;  // ranks (dp, pp): 0 (0,0), 1 (0,1), 2 (1,0), 3 (1,1)
  const std::vector<std::string> byNode = {"a", "b", "a", "b"};
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(linkClass(l, byNode, r, "pp"), kOtherHost) << r;
    EXPECT_EQ(linkClass(l, byNode, r, "dp"), kSameHost) << r;
    EXPECT_EQ(linkClass(l, byNode, r, "zero"), kSameHost) << r;
  }
  EXPECT_EQ(worldLinkClass(l, {"a", "a", "b", "b"}, "dp"), kOtherHost);
  EXPECT_EQ(worldLinkClass(l, {"a", "a", "b", "b"}, "pp"), kSameHost);
  // A rank whose host is unknown is not on a known host's link.
  EXPECT_EQ(linkClass(l, {"a", "a"}, 0, "dp"), kOtherHost);
  // Expert parallel groups: ep neighbouring dp coordinates.
  Layout e;
  e.model.experts = 4;
  e.dp = 4;
  e.ep = 2;
  EXPECT_EQ(dimGroup(e, 1, "ep"), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(dimGroup(e, 2, "ep"), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(worldLinkClass(e, {"a", "a", "b", "b"}, "ep"), kSameHost);
  EXPECT_EQ(worldLinkClass(e, {"a", "b", "a", "b"}, "ep"), kOtherHost);
  EXPECT_TRUE(dimGroup(e, 0, "nonsense").empty());
}

TEST(LinkClass, PredictionTakesTheFitOfTheLinkTheLayoutsHostsCross) {
  Calibration c;
  c.model = defaultLayoutModel();
  for (const char* part : {"block", "embedding", "head"}) {
    c.ops.push_back({part, "forward", 1, 1, 0, 0, 1});
    c.ops.push_back({part, "backward", 1, 1, 0, 0, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, 0, 0, 1});
  c.links.push_back({"dp", kSameHost, "allreduce", 2, 1000, 0, 1, 8, 8});
  c.links.push_back({"dp", kOtherHost, "allreduce", 2, 50000, 0, 1, 8, 8});
  Layout l;
  l.dp = 2;
  auto local = predictLayout(l, c);
  ASSERT_TRUE(local.isOk()) << local.status().message();
  // Compute is free: one bucket's all-reduce and the loss's (8 bytes).
  EXPECT_NEAR(local->stepNs, 2 * 1000, 1e-6);
  l.hosts = {"node1:1", "node2:1"};
  auto spread = predictLayout(l, c);
  ASSERT_TRUE(spread.isOk()) << spread.status().message();
  EXPECT_NEAR(spread->stepNs, 2 * 50000, 1e-6);
  EXPECT_TRUE(spread->warnings.empty());
  // Only the same-host link measured: it stands in, and the prediction says so.
  c.links.pop_back();
  auto standIn = predictLayout(l, c);
  ASSERT_TRUE(standIn.isOk());
  EXPECT_NEAR(standIn->stepNs, 2 * 1000, 1e-6);
  ASSERT_EQ(standIn->warnings.size(), 1u);
  EXPECT_EQ(standIn->warnings[0],
            "no other_host allreduce fit in the calibration: costed as same_host");
}

}  // namespace
}  // namespace bubblescope::layout
