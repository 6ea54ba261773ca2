// csrc/recall/candidates_test.cc
#include "recall/candidates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace chitta::recall {
namespace {

// Five memories (ids 100..104, rows 0..4); row 2 is dead. The index knows
// ids 100, 101, 103 (rows 0..2), with id 101 staged and 103 without a vector.
struct Organs {
  util::RowMap mem_map, idx_map;
  std::vector<uint8_t> dead = {0, 0, 1, 0, 0};
  std::vector<int64_t> created = {10, 20, 30, 40, 50};
  std::vector<double> confidence = {1.0, 0.5, 1.0, 0.25, 1.0};
  std::vector<double> strength = {1.0, 1.0, 1.0, 2.0, 0.0};
  std::vector<int64_t> tier = {0, 1, 0, 0, 2};
  std::vector<uint32_t> kind = {0, 1, 0, 2, 1};
  std::vector<double> kind_weight = {1.0, 1.1, 0.9};
  std::vector<uint8_t> staged = {0, 1, 0};
  std::vector<int64_t> vrow = {7, 3, -1};

  Organs() {
    const uint64_t mem_ids[] = {100, 101, 102, 103, 104};
    std::vector<uint8_t> fresh(5);
    EXPECT_TRUE(mem_map.Add(mem_ids, 5, fresh.data()).ok());
    const uint64_t idx_ids[] = {100, 101, 103};
    EXPECT_TRUE(idx_map.Add(idx_ids, 3, fresh.data()).ok());
  }
  MemoryColumns Mem() const {
    return {&mem_map, dead.size(), dead.data(), created.data(), confidence.data(), strength.data(),
            tier.data(), kind.data(), kind_weight.data(), kind_weight.size()};
  }
  IndexColumns Idx() const { return {&idx_map, staged.size(), staged.data(), vrow.data()}; }
};

TEST(Gather, FusesThenKeepsTheLiveCandidatesWithTheirState) {
  Organs o;
  // 999 is unknown to the memories organ, 102 is dead.
  const uint64_t a[] = {101, 102, 103, 999};
  const uint64_t b[] = {104, 101, 100};
  const std::vector<fusion::RankedList> lists = {{a, 4}, {b, 3}};
  Gathered g;
  ASSERT_TRUE(GatherCandidates(lists, {1.0, 0.5}, 20.0, 0, o.Mem(), o.Idx(), CosineInputs{}, &g).ok());
  fusion::FusedResult want;
  ASSERT_TRUE(fusion::RrfFuse(lists, {1.0, 0.5}, 20.0, 0, true, &want).ok());
  EXPECT_EQ(g.ids, want.ids);
  EXPECT_EQ(g.fused, want.scores);
  EXPECT_EQ(g.ranks, want.ranks);
  ASSERT_EQ(g.kept_ids.size(), 4u);
  for (size_t j = 0; j < g.keep.size(); ++j) {
    EXPECT_EQ(g.kept_ids[j], g.ids[g.keep[j]]);
    EXPECT_EQ(g.kept_fused[j], g.fused[g.keep[j]]);
    const uint64_t id = g.kept_ids[j];
    EXPECT_NE(id, 102u);
    EXPECT_NE(id, 999u);
    const size_t row = id - 100;
    EXPECT_EQ(g.created_ms[j], o.created[row]);
    EXPECT_EQ(g.confidence[j], o.confidence[row]);
    EXPECT_EQ(g.strength[j], o.strength[row]);
    EXPECT_EQ(g.tier[j], o.tier[row]);
    EXPECT_EQ(g.kind_weight[j], o.kind_weight[o.kind[row]]);
    const int64_t irow = o.idx_map.Row(id);
    EXPECT_EQ(g.staged[j], irow >= 0 ? o.staged[irow] : 0);
    EXPECT_EQ(g.vector_row[j], irow >= 0 ? o.vrow[irow] : -1);
  }
}

TEST(Gather, LimitKeepsTheBestFused) {
  Organs o;
  const uint64_t a[] = {104, 103, 101, 100};
  Gathered g;
  ASSERT_TRUE(GatherCandidates({{a, 4}}, {}, 20.0, 2, o.Mem(), o.Idx(), CosineInputs{}, &g).ok());
  EXPECT_EQ(g.ids, (std::vector<uint64_t>{104, 103}));
  EXPECT_EQ(g.kept_ids, (std::vector<uint64_t>{104, 103}));
}

TEST(Gather, RefusesRowsAndCodesPastTheirColumns) {
  Organs o;
  const uint64_t a[] = {104};
  Gathered g;
  MemoryColumns short_mem = o.Mem();
  short_mem.rows = 4;  // row 4 (id 104) is past the columns
  EXPECT_EQ(GatherCandidates({{a, 1}}, {}, 20.0, 0, short_mem, o.Idx(), CosineInputs{}, &g).code(), Code::kInvalidArgument);
  MemoryColumns few_kinds = o.Mem();
  few_kinds.kinds = 1;  // id 104 has kind code 1
  EXPECT_EQ(GatherCandidates({{a, 1}}, {}, 20.0, 0, few_kinds, o.Idx(), CosineInputs{}, &g).code(), Code::kInvalidArgument);
  const uint64_t b[] = {103};
  IndexColumns short_idx = o.Idx();
  short_idx.rows = 2;  // index row 2 (id 103) is past the columns
  EXPECT_EQ(GatherCandidates({{b, 1}}, {}, 20.0, 0, o.Mem(), short_idx, CosineInputs{}, &g).code(), Code::kInvalidArgument);
  MemoryColumns no_map = o.Mem();
  no_map.map = nullptr;
  EXPECT_EQ(GatherCandidates({{b, 1}}, {}, 20.0, 0, no_map, o.Idx(), CosineInputs{}, &g).code(), Code::kInvalidArgument);
  EXPECT_EQ(GatherCandidates({{b, 1}}, {-1.0}, 20.0, 0, o.Mem(), o.Idx(), CosineInputs{}, &g).code(), Code::kInvalidArgument);
}

float PlainDot(int64_t n, const float* x, int64_t incx, const float* y, int64_t incy) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += x[i * incx] * y[i * incy];
  return sum;
}

TEST(Gather, CosinesByTheGivenDotAndRankUsesThem) {
  Organs o;
  // Unit rows 0..7 of width 3; ids 100 -> row 7, 101 -> row 3, 103: none, 104: unknown to the index.
  std::vector<float> units(8 * 3);
  for (size_t i = 0; i < units.size(); ++i) units[i] = 0.1f * static_cast<float>(i) - 1.0f;
  const float query[] = {0.6f, -0.8f, 0.0f};
  CosineInputs cos{&PlainDot, query, 3, units.data(), 8};
  const uint64_t a[] = {100, 101, 103, 104};
  Gathered g;
  ASSERT_TRUE(GatherCandidates({{a, 4}}, {}, 20.0, 0, o.Mem(), o.Idx(), cos, &g).ok());
  ASSERT_EQ(g.cosine.size(), 4u);
  for (size_t j = 0; j < 4; ++j) {
    const int64_t vrow = g.vector_row[j];
    if (vrow < 0) {
      EXPECT_TRUE(std::isnan(g.cosine[j]));
    } else {
      EXPECT_EQ(g.cosine[j], static_cast<double>(PlainDot(3, units.data() + vrow * 3, 1, query, 1)));
    }
  }
  std::vector<double> with, given;
  std::vector<uint32_t> top;
  ASSERT_TRUE(Rank(g, RankInputs{}, g.fused[0], 0, scoring::Weights{}, 4, &with, &top).ok());
  RankInputs in;
  in.cosine = g.cosine.data();
  ASSERT_TRUE(Rank(g, in, g.fused[0], 0, scoring::Weights{}, 4, &given, &top).ok());
  EXPECT_EQ(with, given);
  cos.rows = 7;  // id 100's row 7 is past the matrix
  EXPECT_EQ(GatherCandidates({{a, 4}}, {}, 20.0, 0, o.Mem(), o.Idx(), cos, &g).code(), Code::kInvalidArgument);
}

// Rank's scores are ScoreCandidates' on the same columns (creation time first
// in each access trace), and its order numpy's lexsort((ids, -scores)).
TEST(Rank, ScoresAsScoreCandidatesAndOrdersByScoreThenId) {
  Organs o;
  const uint64_t a[] = {100, 101, 103, 104};
  Gathered g;
  ASSERT_TRUE(GatherCandidates({{a, 4}}, {}, 20.0, 0, o.Mem(), o.Idx(), CosineInputs{}, &g).ok());
  const size_t n = g.kept_ids.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> cosine = {0.5, nan, -0.2, 0.9};
  const std::vector<int64_t> trace_off = {0, 2, 2, 3, 3};
  const std::vector<int64_t> trace = {5000, 7000, 9000};
  RankInputs in;
  in.cosine = cosine.data();
  in.trace_offsets = trace_off.data();
  in.trace_ms = trace.data();
  in.trace_len = trace.size();
  scoring::Weights w;
  std::vector<double> scores;
  std::vector<uint32_t> top;
  ASSERT_TRUE(Rank(g, in, g.fused[0], 10'000, w, 10, &scores, &top).ok());
  // The same candidates through ScoreCandidates with the traces spelled out.
  std::vector<int64_t> offsets = {0}, access;
  for (size_t i = 0; i < n; ++i) {
    access.push_back(g.created_ms[i]);
    for (int64_t t = trace_off[i]; t < trace_off[i + 1]; ++t) access.push_back(trace[t]);
    offsets.push_back(static_cast<int64_t>(access.size()));
  }
  const std::vector<double> ones(n, 1.0);
  scoring::Candidates c{n, g.kept_fused.data(), cosine.data(), g.created_ms.data(), offsets.data(),
                        access.data(), access.size(), g.confidence.data(), g.strength.data(), g.staged.data(),
                        g.tier.data(), g.kind_weight.data(), ones.data()};
  std::vector<double> want(n);
  ASSERT_TRUE(ScoreCandidates(c, g.fused[0], 10'000, w, want.data()).ok());
  EXPECT_EQ(scores, want);
  ASSERT_EQ(top.size(), n);
  for (size_t r = 1; r < n; ++r) {
    const double x = scores[top[r - 1]], y = scores[top[r]];
    EXPECT_TRUE(x > y || (x == y && g.kept_ids[top[r - 1]] < g.kept_ids[top[r]]));
  }
}

TEST(Rank, TiesGoToTheSmallerIdNanLastAndKCaps) {
  Organs o;
  const uint64_t a[] = {104, 103, 101, 100};
  Gathered g;
  ASSERT_TRUE(GatherCandidates({{a, 4}}, {}, 20.0, 0, o.Mem(), o.Idx(), CosineInputs{}, &g).ok());
  // Equal fused scores for all (the override), no other differences but suppression.
  const std::vector<double> fused(4, 0.05);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> supp = {1.0, nan, 1.0, 1.0};
  // Make the state equal: one kind, confidence, strength, tier.
  g.confidence.assign(4, 1.0);
  g.strength.assign(4, 1.0);
  g.tier.assign(4, 0);
  g.kind_weight.assign(4, 1.0);
  g.staged.assign(4, 0);
  g.created_ms.assign(4, 0);
  RankInputs in;
  in.fused = fused.data();
  in.suppressed = supp.data();
  std::vector<double> scores;
  std::vector<uint32_t> top;
  ASSERT_TRUE(Rank(g, in, 0.05, 1000, scoring::Weights{}, 3, &scores, &top).ok());
  ASSERT_EQ(top.size(), 3u);
  // kept ids in fused order: 104, 103, 101, 100; 103 scores NaN -> last (cut by k = 3).
  EXPECT_EQ(g.kept_ids[top[0]], 100u);
  EXPECT_EQ(g.kept_ids[top[1]], 101u);
  EXPECT_EQ(g.kept_ids[top[2]], 104u);
  ASSERT_TRUE(Rank(g, in, 0.05, 1000, scoring::Weights{}, 10, &scores, &top).ok());
  ASSERT_EQ(top.size(), 4u);
  EXPECT_EQ(g.kept_ids[top[3]], 103u);
}

TEST(Rank, RefusesMalformedTraces) {
  Organs o;
  const uint64_t a[] = {100, 101};
  Gathered g;
  ASSERT_TRUE(GatherCandidates({{a, 2}}, {}, 20.0, 0, o.Mem(), o.Idx(), CosineInputs{}, &g).ok());
  const std::vector<int64_t> trace = {1, 2};
  std::vector<double> scores;
  std::vector<uint32_t> top;
  for (const std::vector<int64_t>& off : {std::vector<int64_t>{1, 1, 2}, std::vector<int64_t>{0, 2, 1},
                                          std::vector<int64_t>{0, 1, 3}}) {
    RankInputs in;
    in.trace_offsets = off.data();
    in.trace_ms = trace.data();
    in.trace_len = trace.size();
    EXPECT_EQ(Rank(g, in, g.fused[0], 0, scoring::Weights{}, 2, &scores, &top).code(), Code::kInvalidArgument);
  }
}

TEST(Rank, NoCandidatesRankNothing) {
  Organs o;
  const uint64_t a[] = {102, 999};  // dead, unknown
  Gathered g;
  ASSERT_TRUE(GatherCandidates({{a, 2}}, {}, 20.0, 0, o.Mem(), o.Idx(), CosineInputs{}, &g).ok());
  EXPECT_TRUE(g.kept_ids.empty());
  std::vector<double> scores;
  std::vector<uint32_t> top;
  ASSERT_TRUE(Rank(g, RankInputs{}, 0.0, 0, scoring::Weights{}, 5, &scores, &top).ok());
  EXPECT_TRUE(top.empty() && scores.empty());
}

}  // namespace
}  // namespace chitta::recall
