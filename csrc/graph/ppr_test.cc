// csrc/graph/ppr_test.cc
#include "graph/ppr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace chitta::graph {
namespace {

// Dense reference: the same fixed point by plain power iteration on a matrix,
// over the nodes within max_hops (computed by its own BFS).
std::map<uint32_t, double> Dense(uint32_t n, const std::vector<uint32_t>& s,
                                 const std::vector<uint32_t>& d, const std::vector<double>& w,
                                 const std::vector<uint32_t>& seeds, int hops, double alpha) {
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < s.size(); ++i) a[s[i]][d[i]] += w[i];
  std::set<uint32_t> in(seeds.begin(), seeds.end()), frontier = in;
  for (int h = 0; h < hops; ++h) {
    std::set<uint32_t> next;
    for (uint32_t u : frontier)
      for (uint32_t v = 0; v < n; ++v)
        if (a[u][v] > 0 && !in.count(v)) next.insert(v);
    in.insert(next.begin(), next.end());
    frontier = next;
  }
  std::set<uint32_t> seedset(seeds.begin(), seeds.end());
  std::map<uint32_t, double> x, p;
  for (uint32_t u : in) p[u] = seedset.count(u) ? 1.0 / seedset.size() : 0.0;
  for (uint32_t u : in) x[u] = 1.0 / in.size();
  for (int it = 0; it < 5000; ++it) {
    std::map<uint32_t, double> y;
    double dangling = 0;
    for (uint32_t u : in) {
      double out = 0;
      for (uint32_t v : in) out += a[u][v];
      if (out == 0) {
        dangling += x[u];
        continue;
      }
      for (uint32_t v : in) y[v] += alpha * x[u] * a[u][v] / out;
    }
    for (uint32_t u : in) y[u] += (alpha * dangling + 1 - alpha) * p[u];
    x = y;
  }
  return x;
}

TEST(Ppr, MatchesDenseReferenceOnRandomGraphs) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    const uint32_t n = 2 + rng() % 25;
    std::vector<uint32_t> s, d;
    std::vector<double> w;
    const size_t m = rng() % (3 * n);
    for (size_t i = 0; i < m; ++i) {
      s.push_back(rng() % n);
      d.push_back(rng() % n);
      w.push_back((rng() % 5) * 0.5);  // some zero weights: dropped
    }
    DirectedGraph g;
    ASSERT_TRUE(DirectedGraph::Build(n, s.data(), d.data(), w.data(), m, &g).ok());
    std::vector<uint32_t> seeds{static_cast<uint32_t>(rng() % n), static_cast<uint32_t>(rng() % n)};
    PprParams params;
    params.max_hops = static_cast<int>(rng() % 4);
    params.max_iter = 1000;
    params.tol = 1e-14;
    PprResult r;
    ASSERT_TRUE(Ppr(g, seeds.data(), seeds.size(), params, &r).ok());
    auto want = Dense(n, s, d, w, seeds, params.max_hops, params.alpha);
    ASSERT_EQ(r.nodes.size(), want.size());
    double total = 0;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      EXPECT_NEAR(r.scores[i], want[r.nodes[i]], 1e-10);
      total += r.scores[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
  }
}

TEST(Ppr, ParentsFollowEdgesAndCapHolds) {
  // A chain 0 -> 1 -> 2 -> 3: two hops from 0 reach 2, not 3.
  std::vector<uint32_t> s{0, 1, 2}, d{1, 2, 3};
  std::vector<double> w{1, 1, 1};
  DirectedGraph g;
  ASSERT_TRUE(DirectedGraph::Build(4, s.data(), d.data(), w.data(), 3, &g).ok());
  uint32_t seed = 0;
  PprResult r;
  ASSERT_TRUE(Ppr(g, &seed, 1, PprParams{}, &r).ok());
  ASSERT_EQ(r.nodes, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(r.parents, (std::vector<uint32_t>{kNoParent, 0, 1}));
  std::vector<uint32_t> ids{1, 2, 3}, es, ed;
  std::vector<double> ew;
  ASSERT_TRUE(g.EdgesAmong(ids.data(), ids.size(), &es, &ed, &ew).ok());
  EXPECT_EQ(es, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(ed, (std::vector<uint32_t>{2, 3}));
  uint32_t far = 4;
  EXPECT_FALSE(g.EdgesAmong(&far, 1, &es, &ed, &ew).ok());
  PprParams capped;
  capped.max_nodes = 2;
  ASSERT_TRUE(Ppr(g, &seed, 1, capped, &r).ok());
  EXPECT_EQ(r.nodes.size(), 2u);
}

// A graph assembled by deltas (nodes with shuffled order keys, edges in random batches,
// weights set again and to 0) equals one built at once from the final live edges: the
// same BFS order (so the same capped subgraph) and the dense reference's scores.
TEST(Ppr, DeltasEqualABuildAtOnce) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const uint32_t n = 3 + rng() % 30;
    std::vector<uint8_t> kinds(n);
    std::vector<uint64_t> keys(n);
    for (uint32_t u = 0; u < n; ++u) {
      kinds[u] = rng() % 2;
      keys[u] = rng() % 1000;
    }
    DirectedGraph live;
    uint32_t first = 0;
    ASSERT_TRUE(live.AddNodes(kinds.data(), keys.data(), n, &first).ok());
    std::vector<uint32_t> s, d;
    std::vector<double> w;
    for (int batch = 0; batch < 8; ++batch) {
      std::vector<uint32_t> bs, bd;
      std::vector<double> bw;
      for (size_t i = 0, m = rng() % (n + 1); i < m; ++i) {
        bs.push_back(rng() % n);
        bd.push_back(rng() % n);
        bw.push_back(1 + rng() % 4);
      }
      uint64_t slot0 = 0;
      ASSERT_TRUE(live.AddEdges(bs.data(), bd.data(), bw.data(), bs.size(), &slot0).ok());
      ASSERT_EQ(slot0, s.size());
      s.insert(s.end(), bs.begin(), bs.end());
      d.insert(d.end(), bd.begin(), bd.end());
      w.insert(w.end(), bw.begin(), bw.end());
      std::vector<uint64_t> slots;
      std::vector<double> ws;
      for (size_t i = 0; i < s.size() / 4; ++i) {
        slots.push_back(rng() % s.size());
        ws.push_back((rng() % 3) * 1.5);  // a third become tombstones
      }
      ASSERT_TRUE(live.SetWeights(slots.data(), ws.data(), slots.size()).ok());
      for (size_t i = 0; i < slots.size(); ++i) w[slots[i]] = ws[i];
    }
    std::vector<uint32_t> fs, fd;
    std::vector<double> fw;
    for (size_t i = 0; i < s.size(); ++i) {
      if (w[i] > 0) {
        fs.push_back(s[i]);
        fd.push_back(d[i]);
        fw.push_back(w[i]);
      }
    }
    DirectedGraph once;
    uint64_t slot0 = 0;
    ASSERT_TRUE(once.AddNodes(kinds.data(), keys.data(), n, &first).ok());
    ASSERT_TRUE(once.AddEdges(fs.data(), fd.data(), fw.data(), fs.size(), &slot0).ok());
    std::vector<uint32_t> seeds{static_cast<uint32_t>(rng() % n)};
    PprParams params;
    params.max_hops = 1 + static_cast<int>(rng() % 3);
    params.max_iter = 1000;
    params.tol = 1e-14;
    PprResult a, b;
    ASSERT_TRUE(Ppr(live, seeds.data(), 1, params, &a).ok());
    ASSERT_TRUE(Ppr(once, seeds.data(), 1, params, &b).ok());
    ASSERT_EQ(a.nodes, b.nodes);
    auto want = Dense(n, fs, fd, fw, seeds, params.max_hops, params.alpha);
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      EXPECT_NEAR(a.scores[i], b.scores[i], 1e-12);
      EXPECT_NEAR(a.scores[i], want[a.nodes[i]], 1e-10);
    }
    params.max_nodes = 1 + rng() % 5;  // the cap keeps the same nodes too
    ASSERT_TRUE(Ppr(live, seeds.data(), 1, params, &a).ok());
    ASSERT_TRUE(Ppr(once, seeds.data(), 1, params, &b).ok());
    EXPECT_EQ(a.nodes, b.nodes);
  }
  DirectedGraph g;
  uint64_t slot = 7;
  double bad = -1;
  EXPECT_EQ(g.SetWeights(&slot, &bad, 1).code(), Code::kInvalidArgument);
}

// Ranked: nodes of the asked kind by score (ties by key); the others whose parent is a seed.
TEST(Ppr, RankedReadsTheLanesOrder) {
  // 0 (seed, kind 0) -> 1 (kind 0) -> 3 (kind 1, key 9); 0 -> 2 (kind 1, key 5); 0 -> 4 (kind 1,
  // key 4): 2 and 4 tie, ordered by key.
  DirectedGraph g;
  std::vector<uint8_t> kinds{0, 0, 1, 1, 1};
  std::vector<uint64_t> keys{0, 1, 5, 9, 4};
  uint32_t first = 0;
  ASSERT_TRUE(g.AddNodes(kinds.data(), keys.data(), kinds.size(), &first).ok());
  std::vector<uint32_t> s{0, 0, 0, 1}, d{1, 2, 4, 3};
  std::vector<double> w{1, 1, 1, 1};
  uint64_t slot = 0;
  ASSERT_TRUE(g.AddEdges(s.data(), d.data(), w.data(), s.size(), &slot).ok());
  uint32_t seed = 0;
  PprResult r;
  ASSERT_TRUE(Ppr(g, &seed, 1, PprParams{}, &r).ok());
  std::vector<uint64_t> ks;
  std::vector<double> sc;
  std::vector<uint32_t> hop;
  Ranked(g, r, 1, &ks, &sc, &hop);
  EXPECT_EQ(ks, (std::vector<uint64_t>{4, 5, 9}));
  EXPECT_DOUBLE_EQ(sc[0], sc[1]);
  EXPECT_GT(sc[1], sc[2]);
  EXPECT_EQ(hop, (std::vector<uint32_t>{1}));
}

TEST(Ppr, FastPathEqualsLegacy) {
  // The fast path (D-069 ball, D-073 reduced solve) against the code before D-069: the
  // same ball and parents; scores within the bound both were run to.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const uint32_t n = 50 + rng() % 400;
    std::vector<uint32_t> s, d;
    std::vector<double> w;
    for (uint32_t i = 0; i < n * 6; ++i) {
      s.push_back(rng() % n);
      d.push_back(rng() % n);
      w.push_back(rng() % 5 == 0 ? 0.0 : 0.1 + (rng() % 100) / 10.0);
    }
    DirectedGraph g;
    ASSERT_TRUE(DirectedGraph::Build(n, s.data(), d.data(), w.data(), s.size(), &g).ok());
    std::vector<uint32_t> seeds{static_cast<uint32_t>(rng() % n), static_cast<uint32_t>(rng() % n)};
    PprParams p;
    p.max_nodes = trial % 2 ? 64 : 0;
    p.max_iter = 2000;
    p.tol = 1e-12;
    PprResult fast, old;
    ASSERT_TRUE(Ppr(g, seeds.data(), seeds.size(), p, &fast).ok());
    p.tol = 1e-15;
    ASSERT_TRUE(PprLegacy(g, seeds.data(), seeds.size(), p, &old).ok());
    ASSERT_EQ(fast.nodes, old.nodes);
    ASSERT_EQ(fast.parents, old.parents);
    double l1 = 0;
    for (size_t i = 0; i < fast.scores.size(); ++i) l1 += std::fabs(fast.scores[i] - old.scores[i]);
    EXPECT_LT(l1, 1e-11);
  }
}

// The lane's shape (D-073): entities and memories, each fact s -> o, o -> s (0.3 x) and
// s, o <-> its memory, so the last hop is made of joined (entity, memory) pairs; plus
// self-loops, dangling nodes and tombstones. The scores are within tol (L1) of the dense
// reference however loose tol is, and a loose tol stops sooner.
TEST(Ppr, ReducedSolveStaysWithinTol) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 12; ++trial) {
    const uint32_t ents = 8 + rng() % 16, mems = 4 + rng() % 14, n = ents + mems;
    std::vector<uint32_t> s, d;
    std::vector<double> w;
    auto edge = [&](uint32_t a, uint32_t b, double x) {
      s.push_back(a);
      d.push_back(b);
      w.push_back(x);
    };
    for (uint32_t f = 0, nf = 2 * ents; f < nf; ++f) {
      const uint32_t a = rng() % ents, b = rng() % ents, m = ents + rng() % mems;
      const double x = rng() % 7 == 0 ? 0.0 : 0.5 + (rng() % 4);  // some tombstones
      edge(a, b, x);
      edge(b, a, 0.3 * x);
      edge(a, m, x);
      edge(b, m, x);
      if (rng() % 5) edge(m, a, x);  // some memories dangle
      if (rng() % 5) edge(m, b, x);
    }
    for (int k = 0; k < 3; ++k) {
      const uint32_t u = rng() % n;
      edge(u, u, 1.0);  // self-loops
    }
    DirectedGraph g;
    ASSERT_TRUE(DirectedGraph::Build(n, s.data(), d.data(), w.data(), s.size(), &g).ok());
    std::vector<uint32_t> seeds{static_cast<uint32_t>(rng() % ents)};
    if (trial % 2) seeds.push_back(static_cast<uint32_t>(rng() % ents));
    const int hops = 1 + trial % 3;
    auto want = Dense(n, s, d, w, seeds, hops, 0.85);
    int tight_iters = 0;
    for (double tol : {1e-12, 1e-6, 1e-3}) {
      PprParams p;
      p.max_hops = hops;
      p.max_iter = 1000;
      p.tol = tol;
      PprResult r;
      ASSERT_TRUE(Ppr(g, seeds.data(), seeds.size(), p, &r).ok());
      ASSERT_EQ(r.nodes.size(), want.size());
      double l1 = 0, total = 0;
      for (size_t i = 0; i < r.nodes.size(); ++i) {
        l1 += std::fabs(r.scores[i] - want[r.nodes[i]]);
        total += r.scores[i];
      }
      EXPECT_LE(l1, tol) << "trial " << trial << " tol " << tol;
      EXPECT_NEAR(total, 1.0, 1e-12);
      if (tol == 1e-12) tight_iters = r.iterations;
      EXPECT_LE(r.iterations, tight_iters);
      EXPECT_LT(r.iterations, 1000);  // stopped by the bound, not by max_iter
    }
  }
}

// Two seeds, one feeding the other, which is dangling: over-relaxed sweeps decay at ~0.995
// here (they ran into max_iter 1e-3 off); the fall-back to Gauss-Seidel reaches the bound.
TEST(Ppr, OverRelaxationFallsBackWhereItStalls) {
  const std::vector<uint32_t> s{0}, d{1};
  const std::vector<double> w{2.0};
  DirectedGraph g;
  ASSERT_TRUE(DirectedGraph::Build(2, s.data(), d.data(), w.data(), 1, &g).ok());
  const std::vector<uint32_t> seeds{1, 0};
  PprParams params;
  params.max_iter = 1000;
  params.tol = 1e-12;
  PprResult r;
  ASSERT_TRUE(Ppr(g, seeds.data(), seeds.size(), params, &r).ok());
  EXPECT_LT(r.iterations, params.max_iter);  // stopped by the bound, not by the cap
  auto want = Dense(2, s, d, w, seeds, params.max_hops, params.alpha);
  double l1 = 0;
  for (size_t i = 0; i < r.nodes.size(); ++i) l1 += std::fabs(r.scores[i] - want[r.nodes[i]]);
  EXPECT_LE(l1, params.tol);
}

TEST(Ppr, RejectsBadInput) {
  std::vector<uint32_t> s{0}, d{5};
  std::vector<double> w{1};
  DirectedGraph g;
  EXPECT_EQ(DirectedGraph::Build(2, s.data(), d.data(), w.data(), 1, &g).code(),
            Code::kInvalidArgument);
  d[0] = 1;
  w[0] = -1;
  EXPECT_EQ(DirectedGraph::Build(2, s.data(), d.data(), w.data(), 1, &g).code(),
            Code::kInvalidArgument);
  w[0] = NAN;
  EXPECT_FALSE(DirectedGraph::Build(2, s.data(), d.data(), w.data(), 1, &g).ok());
  w[0] = 1;
  ASSERT_TRUE(DirectedGraph::Build(2, s.data(), d.data(), w.data(), 1, &g).ok());
  uint32_t bad = 9;
  PprResult r;
  EXPECT_EQ(Ppr(g, &bad, 1, PprParams{}, &r).code(), Code::kInvalidArgument);
  PprParams p;
  p.alpha = 1.0;
  uint32_t ok = 0;
  EXPECT_EQ(Ppr(g, &ok, 1, p, &r).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace chitta::graph
