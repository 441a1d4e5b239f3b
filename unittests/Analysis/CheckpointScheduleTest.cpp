//===- CheckpointScheduleTest.cpp - sqrt segments and Revolve schedules ---===//

#include "memopt/Analysis/CheckpointSchedule.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

using namespace memopt;

namespace {

/// Replays a schedule the way the backward pass consumes it: stages are
/// reversed last to first, each exactly once (by an action, or stored), and
/// an action's source must be a cut version still reachable. Returns the
/// order in which stages were reversed.
std::vector<int64_t> reversalOrder(const CheckpointSchedule &s, int64_t n) {
  std::vector<int64_t> order;
  for (const StageAction &a : s.actions)
    if (a.reverse)
      order.push_back(a.stage);
  return order;
}

TEST(CheckpointSchedule, SqrtSegmentsRecomputeEachStageOnce) {
  // 9 stages, checkpoints after stages 2 and 5: segments [0,2], [3,5] are
  // recomputed (latest first), [6,8] stored.
  CheckpointSchedule s = sqrtSchedule({2, 5}, 9);
  EXPECT_EQ(verifyCheckpointSchedule(s, 9), "");
  ASSERT_EQ(s.actions.size(), 6u);
  EXPECT_EQ(reversalOrder(s, 9), (std::vector<int64_t>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(s.actions[0].source, -1); // from the checkpoint after stage 2
  EXPECT_EQ(s.actions[1].source, 0);  // from the clone's output cut
  EXPECT_TRUE(s.actions[1].produceCut);
  EXPECT_FALSE(s.actions[2].produceCut); // stage 5's output is a checkpoint
}

TEST(CheckpointSchedule, BalancedBoundariesSplitByWeight) {
  // Uniform weights: 16 stages in 4 segments of 4.
  std::vector<int64_t> uniform(16, 10);
  auto b = balancedBoundaries(uniform, 16, 4);
  EXPECT_EQ(std::vector<int64_t>(b.begin(), b.end()),
            (std::vector<int64_t>{3, 7, 11}));
  // One heavy stage ends a segment on its own.
  std::vector<int64_t> heavy = {1, 1, 100, 1, 1, 1};
  auto h = balancedBoundaries(heavy, 6, 2);
  EXPECT_EQ(std::vector<int64_t>(h.begin(), h.end()),
            (std::vector<int64_t>{2}));
  EXPECT_TRUE(balancedBoundaries(uniform, 16, 1).empty());
}

/// The recurrence by plain recursion with memoisation (no tables), for
/// cross-checking the table.
struct Reference {
  int64_t a = 1, r = 1;
  std::map<std::pair<int64_t, int64_t>, int64_t> innerMemo, topMemo;
  int64_t inner(int64_t l, int64_t s) {
    if (l <= 0)
      return 0;
    if (l == 1)
      return r;
    if (s == 0)
      return l * r + a * l * (l - 1) / 2;
    auto key = std::make_pair(l, s);
    if (auto it = innerMemo.find(key); it != innerMemo.end())
      return it->second;
    int64_t best = inner(l, s - 1);
    for (int64_t m = 1; m < l; ++m)
      best = std::min(best, m * a + inner(l - m, s - 1) + inner(m, s));
    return innerMemo[key] = best;
  }
  int64_t top(int64_t l, int64_t s) {
    if (l <= 1)
      return 0;
    if (s == 0)
      return inner(l - 1, 0);
    auto key = std::make_pair(l, s);
    if (auto it = topMemo.find(key); it != topMemo.end())
      return it->second;
    int64_t best = top(l, s - 1);
    for (int64_t m = 1; m < l; ++m)
      best = std::min(best, top(l - m, s - 1) + inner(m, s));
    return topMemo[key] = best;
  }
};

TEST(CheckpointSchedule, RevolveTableMatchesRecurrenceAndSchedules) {
  RevolveTable table(40, 8);
  Reference ref;
  for (int64_t n = 1; n <= 40; ++n)
    for (int64_t s = 0; s <= 8; ++s) {
      ASSERT_EQ(table.cost(n, s), ref.top(n, s)) << n << " " << s;
      CheckpointSchedule schedule = table.schedule(n, s);
      ASSERT_EQ(verifyCheckpointSchedule(schedule, n), "") << n << " " << s;
      // One action per stage execution: the schedule realises the cost.
      ASSERT_EQ(schedule.stageRecomputes(), table.cost(n, s));
      // Every stage but the last is reversed, last first.
      std::vector<int64_t> order = reversalOrder(schedule, n);
      std::vector<int64_t> expected;
      for (int64_t j = n - 2; j >= 0; --j)
        expected.push_back(j);
      ASSERT_EQ(order, expected) << n << " " << s;
      if (s > 0) {
        ASSERT_LE(table.cost(n, s), table.cost(n, s - 1));
      }
    }
}

TEST(CheckpointSchedule, RevolveWithStageCosts) {
  // Unequal advance and reverse costs, including Griewank's classic setting
  // (reversal free once the input is there).
  for (auto [a, r] : {std::pair<int64_t, int64_t>{3, 0}, {1, 5}, {7, 2}}) {
    RevolveTable table(30, 6, a, r);
    Reference ref;
    ref.a = a;
    ref.r = r;
    for (int64_t n = 1; n <= 30; ++n)
      for (int64_t s = 0; s <= 6; ++s) {
        ASSERT_EQ(table.cost(n, s), ref.top(n, s)) << a << r << n << s;
        CheckpointSchedule schedule = table.schedule(n, s);
        ASSERT_EQ(verifyCheckpointSchedule(schedule, n), "");
        int64_t cost = 0;
        for (const StageAction &action : schedule.actions)
          cost += action.reverse ? r : a;
        ASSERT_EQ(cost, table.cost(n, s)) << a << r << n << s;
      }
  }
  // Griewank's binomial bound: with free reversal and every stage advanced
  // at most once more, s slots reverse C(s+2, 2) stages; 200 stages need
  // about sqrt(2·200) = 20 slots, where sqrt segments hold 2·sqrt(200) = 28.
  RevolveTable classic(200, 40, 1, 0);
  int64_t slots = classic.minSlotsWithin(200, 199);
  EXPECT_GE(slots, 17);
  EXPECT_LE(slots, 20);
  EXPECT_LE(classic.cost(200, slots), 199);
  EXPECT_GT(classic.cost(200, slots - 1), 199);
}

TEST(CheckpointSchedule, RevolveBisectionMatchesTheFullScan) {
  // The table bisects for each split, relying on the cost being convex in
  // it; the same table with every split tried must agree everywhere, to
  // the schedule, including on ties. Costs like those StageChain derives
  // (advance 1000, reverse a fraction of it) and extremes.
  for (auto [a, r] : {std::pair<int64_t, int64_t>{1000, 372},
                      {1000, 0},
                      {1, 1},
                      {13, 1000},
                      {1000, 1000},
                      {577, 61}}) {
    const int64_t stages = 700, slots = 36;
    RevolveTable fast(stages, slots, a, r);
    RevolveTable full(stages, slots, a, r, /*exhaustive=*/true);
    for (int64_t n = 1; n <= stages; n += (n < 80 ? 1 : 37))
      for (int64_t s = 0; s <= slots; ++s) {
        ASSERT_EQ(fast.cost(n, s), full.cost(n, s))
            << a << " " << r << " " << n << " " << s;
        CheckpointSchedule x = fast.schedule(n, s), y = full.schedule(n, s);
        ASSERT_EQ(x.actions.size(), y.actions.size());
        for (size_t i = 0; i < x.actions.size(); ++i) {
          const StageAction &p = x.actions[i], &q = y.actions[i];
          ASSERT_TRUE(p.stage == q.stage && p.source == q.source &&
                      p.reverse == q.reverse && p.produceCut == q.produceCut)
              << a << " " << r << " " << n << " " << s << " action " << i;
        }
      }
  }
}

TEST(CheckpointSchedule, RevolveActionsStreamUntilTheVisitorStops) {
  RevolveTable table(60, 5, 4, 1);
  for (int64_t s = 0; s <= 5; ++s) {
    CheckpointSchedule whole = table.schedule(60, s);
    for (size_t stopAfter : {size_t(1), size_t(7), whole.actions.size()}) {
      std::vector<StageAction> seen;
      table.forEachAction(60, s, [&](const StageAction &action) {
        seen.push_back(action);
        return seen.size() < stopAfter;
      });
      // The visitor sees the schedule's first actions, and none after it
      // said stop.
      ASSERT_EQ(seen.size(), std::min(stopAfter, whole.actions.size()));
      for (size_t i = 0; i < seen.size(); ++i)
        ASSERT_TRUE(seen[i].stage == whole.actions[i].stage &&
                    seen[i].source == whole.actions[i].source &&
                    seen[i].reverse == whole.actions[i].reverse &&
                    seen[i].produceCut == whole.actions[i].produceCut)
            << s << " " << i;
    }
  }
}

TEST(CheckpointSchedule, RevolveKnownValues) {
  RevolveTable table(100, 30);
  // No slots: each stage re-advanced from the input.
  EXPECT_EQ(table.cost(10, 0), 45);
  // Enough slots: every stage but the last recomputed once.
  EXPECT_EQ(table.cost(10, 9), 9);
  // With reversal costing a recomputation, one pass over 100 stages needs a
  // slot for nearly every cut.
  EXPECT_EQ(table.minSlotsWithin(100, 99), -1);
  EXPECT_EQ(table.cost(100, 30) > 99, true);
}

TEST(CheckpointSchedule, VerifierRejectsMalformedSchedules) {
  CheckpointSchedule bad;
  bad.actions.push_back({3, -1, true, false});
  EXPECT_NE(verifyCheckpointSchedule(bad, 3), ""); // out of range
  bad.actions = {{1, 0, true, false}};
  EXPECT_NE(verifyCheckpointSchedule(bad, 3), ""); // source after itself
  bad.actions = {{0, -1, true, false}, {1, 0, true, false}};
  EXPECT_NE(verifyCheckpointSchedule(bad, 3), ""); // source yields no cut
  bad.actions = {{0, -1, true, false}, {0, -1, true, false}};
  EXPECT_NE(verifyCheckpointSchedule(bad, 3), ""); // reversed twice
  bad.actions = {{2, -1, false, true}};
  EXPECT_NE(verifyCheckpointSchedule(bad, 3), ""); // last stage has no cut
}

} // namespace
