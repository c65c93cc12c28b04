// Interval algebra: exact answers on hand-made sets, and a randomised check
// against a brute-force bitmap.
#include "trace_model/interval_set.h"

#include <gtest/gtest.h>

#include <random>

namespace bubblescope::trace_model {
namespace {

using V = std::vector<Interval>;

IntervalSet set(V v) {
  return IntervalSet::fromUnsorted(std::move(v));
}

TEST(IntervalSetTest, NormalisesUnsortedOverlappingTouchingAndEmpty) {
  const IntervalSet s = set({{30, 40}, {0, 10}, {5, 12}, {12, 15}, {20, 20}, {50, 45}, {38, 39}});
  EXPECT_EQ(s.intervals(), (V{{0, 15}, {30, 40}}));
  EXPECT_EQ(s.totalNs(), 25);
  EXPECT_TRUE(set({}).empty());
  EXPECT_EQ(set({}).totalNs(), 0);
}

TEST(IntervalSetTest, UnionIntersectionDifference) {
  const IntervalSet a = set({{0, 10}, {20, 30}, {40, 50}});
  const IntervalSet b = set({{5, 25}, {45, 60}});
  EXPECT_EQ(a.unite(b).intervals(), (V{{0, 30}, {40, 60}}));
  EXPECT_EQ(a.intersect(b).intervals(), (V{{5, 10}, {20, 25}, {45, 50}}));
  EXPECT_EQ(a.subtract(b).intervals(), (V{{0, 5}, {25, 30}, {40, 45}}));
  EXPECT_EQ(b.subtract(a).intervals(), (V{{10, 20}, {50, 60}}));
  EXPECT_EQ(a.intersect(IntervalSet()).totalNs(), 0);
  EXPECT_EQ(a.subtract(IntervalSet()), a);
  EXPECT_EQ(IntervalSet().unite(a), a);
}

TEST(IntervalSetTest, DisjointAndNestedSets) {
  const IntervalSet outer = set({{0, 100}});
  const IntervalSet inner = set({{10, 20}, {30, 40}});
  EXPECT_EQ(outer.subtract(inner).intervals(), (V{{0, 10}, {20, 30}, {40, 100}}));
  EXPECT_EQ(inner.subtract(outer).totalNs(), 0);
  EXPECT_EQ(outer.intersect(inner), inner);
  const IntervalSet far = set({{200, 300}});
  EXPECT_EQ(outer.intersect(far).totalNs(), 0);
  EXPECT_EQ(outer.unite(far).totalNs(), 200);
}

TEST(IntervalSetTest, Clip) {
  const IntervalSet a = set({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_EQ(a.clip(5, 45).intervals(), (V{{5, 10}, {20, 30}, {40, 45}}));
  EXPECT_EQ(a.clip(10, 20).totalNs(), 0);
  EXPECT_EQ(a.clip(-100, 100), a);
}

TEST(IntervalSetTest, MatchesBruteForceOnRandomSets) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pos(0, 199), len(0, 15), count(0, 25);
  auto randomList = [&] {
    V v;
    for (int i = count(rng); i > 0; --i) {
      const int s = pos(rng);
      v.push_back({s, s + len(rng)});
    }
    return v;
  };
  auto bitmap = [](const V& v) {
    std::vector<bool> bits(256);
    for (const Interval& i : v) {
      for (int64_t t = i.startNs; t < i.endNs; ++t) bits[t] = true;
    }
    return bits;
  };
  for (int trial = 0; trial < 500; ++trial) {
    const V va = randomList(), vb = randomList();
    const auto ba = bitmap(va), bb = bitmap(vb);
    int64_t u = 0, i = 0, d = 0, na = 0;
    for (int t = 0; t < 256; ++t) {
      u += ba[t] || bb[t];
      i += ba[t] && bb[t];
      d += ba[t] && !bb[t];
      na += ba[t];
    }
    const IntervalSet a = set(va), b = set(vb);
    ASSERT_EQ(a.totalNs(), na);
    ASSERT_EQ(a.unite(b).totalNs(), u);
    ASSERT_EQ(a.intersect(b).totalNs(), i);
    ASSERT_EQ(a.subtract(b).totalNs(), d);
    ASSERT_EQ(a.unite(b), set(a.subtract(b).unite(b).intervals()));
  }
}

}  // namespace
}  // namespace bubblescope::trace_model
