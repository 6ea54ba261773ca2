// csrc/graph/ppr.cc
#include "graph/ppr.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace chitta::graph {

Status DirectedGraph::Build(uint32_t n, const uint32_t* src, const uint32_t* dst, const double* w,
                            size_t m, DirectedGraph* out) {
  DirectedGraph g;
  g.adj_.resize(n);
  g.kind_.assign(n, 0);
  g.key_.resize(n);
  for (uint32_t u = 0; u < n; ++u) g.key_[u] = u;
  uint64_t first = 0;
  Status st = g.AddEdges(src, dst, w, m, &first);
  if (!st.ok()) return st;
  *out = std::move(g);
  return Status::OK();
}

Status DirectedGraph::AddNodes(const uint8_t* kinds, const uint64_t* keys, size_t k,
                               uint32_t* first) {
  if (adj_.size() + k >= kNoParent) {
    return Status::InvalidArgument("the graph would pass 2**32 - 1 nodes; split the field");
  }
  *first = nodes();
  adj_.resize(adj_.size() + k);
  kind_.insert(kind_.end(), kinds, kinds + k);
  key_.insert(key_.end(), keys, keys + k);
  return Status::OK();
}

Status DirectedGraph::Check(const uint32_t* src, const uint32_t* dst, const double* w,
                            size_t m) const {
  const uint32_t n = nodes();
  for (size_t i = 0; i < m; ++i) {
    if (src[i] >= n || dst[i] >= n) {
      return Status::InvalidArgument("edge " + std::to_string(i) + " names a node >= " +
                                     std::to_string(n) + "; give node ids below the node count");
    }
    if (!std::isfinite(w[i]) || w[i] < 0) {
      return Status::InvalidArgument("edge " + std::to_string(i) +
                                     " has a weight that is negative or not finite");
    }
  }
  if (slot_src_.size() + m >= kNoParent) {
    return Status::InvalidArgument("the graph would pass 2**32 - 1 edges; split the field");
  }
  return Status::OK();
}

Status DirectedGraph::AddEdges(const uint32_t* src, const uint32_t* dst, const double* w,
                               size_t m, uint64_t* first) {
  Status st = Check(src, dst, w, m);
  if (!st.ok()) return st;
  *first = slot_src_.size();
  // Append, remembering where each touched list's new part starts; then re-sort only
  // the lists whose new part is out of order (appending in key order is the common case).
  std::vector<std::pair<uint32_t, uint32_t>> touched;  // (node, old size)
  for (size_t i = 0; i < m; ++i) {
    auto& list = adj_[src[i]];
    if (touched.empty() || touched.back().first != src[i]) {
      touched.emplace_back(src[i], static_cast<uint32_t>(list.size()));
    }
    const auto slot = static_cast<uint32_t>(slot_src_.size());
    slot_src_.push_back(src[i]);
    slot_at_.push_back(static_cast<uint32_t>(list.size()));
    list.push_back(Edge{w[i], dst[i], slot});
  }
  std::sort(touched.begin(), touched.end());
  auto by_key = [this](const Edge& a, const Edge& b) { return Before(a.dst, b.dst); };
  for (size_t t = 0; t < touched.size(); ++t) {
    if (t && touched[t].first == touched[t - 1].first) continue;  // the smallest start first
    auto& list = adj_[touched[t].first];
    const auto old = static_cast<std::ptrdiff_t>(touched[t].second);
    const auto mid = list.begin() + old;
    if (std::is_sorted(old ? mid - 1 : mid, list.end(), by_key)) continue;
    // Sort the new tail, then merge it in (both stable: equal keys keep arrival order);
    // only the edges from the first one the merge moves get a new index.
    std::stable_sort(mid, list.end(), by_key);
    const auto moved = std::upper_bound(list.begin(), mid, *mid, by_key) - list.begin();
    std::inplace_merge(list.begin(), mid, list.end(), by_key);
    for (size_t i = static_cast<size_t>(moved); i < list.size(); ++i) {
      slot_at_[list[i].slot] = static_cast<uint32_t>(i);
    }
  }
  return Status::OK();
}

Status DirectedGraph::SetWeights(const uint64_t* slots, const double* w, size_t m) {
  for (size_t i = 0; i < m; ++i) {
    if (slots[i] >= slot_src_.size()) {
      return Status::InvalidArgument("slot " + std::to_string(slots[i]) +
                                     " is not an edge of the graph; use a slot add_edges gave");
    }
    if (!std::isfinite(w[i]) || w[i] < 0) {
      return Status::InvalidArgument("weight " + std::to_string(i) +
                                     " is negative or not finite; give a weight >= 0");
    }
  }
  for (size_t i = 0; i < m; ++i) adj_[slot_src_[slots[i]]][slot_at_[slots[i]]].w = w[i];
  return Status::OK();
}

Status DirectedGraph::EdgesAmong(const uint32_t* ids, size_t n_ids, std::vector<uint32_t>* src,
                                 std::vector<uint32_t>* dst, std::vector<double>* w) const {
  std::vector<uint8_t> in(nodes(), 0);
  for (size_t i = 0; i < n_ids; ++i) {
    if (ids[i] >= nodes()) {
      return Status::InvalidArgument("node " + std::to_string(ids[i]) + " >= n");
    }
    in[ids[i]] = 1;
  }
  for (size_t i = 0; i < n_ids; ++i) {
    const uint32_t u = ids[i];
    if (in[u] != 1) continue;  // listed twice
    in[u] = 2;
    for (const Edge& e : adj_[u]) {
      if (e.w <= 0 || !in[e.dst]) continue;
      src->push_back(u);
      dst->push_back(e.dst);
      w->push_back(e.w);
    }
  }
  return Status::OK();
}

namespace {

// Per-thread scratch, kept between calls so a query allocates nothing once warm.
struct Scratch {
  std::vector<uint32_t> local;  // global id -> index in the subgraph (kNoParent: not in it)
  std::vector<uint64_t> loff, ioff;
  std::vector<uint32_t> ldst, isrc;
  std::vector<double> lw, outw, icoef;
  std::vector<uint64_t> bits;  // the fast path's membership bitset (all zero between calls)
  std::vector<uint32_t> dang;  // the subgraph's nodes without an out-edge in it
};

}  // namespace

// The code before D-069, kept for the benchmark's side-by-side run and as a second
// implementation the tests compare with (PprParams::legacy).
Status PprLegacy(const DirectedGraph& g, const uint32_t* seeds, size_t n_seeds,
                 const PprParams& params, PprResult* out) {
  if (!(params.alpha >= 0 && params.alpha < 1)) {
    return Status::InvalidArgument("alpha must be in [0, 1)");
  }
  if (params.max_hops < 0 || params.max_iter < 1 || !(params.tol > 0)) {
    return Status::InvalidArgument("max_hops must be >= 0, max_iter >= 1 and tol > 0");
  }
  out->nodes.clear();
  out->scores.clear();
  out->parents.clear();
  out->iterations = 0;
  for (size_t i = 0; i < n_seeds; ++i) {
    if (seeds[i] >= g.nodes()) {
      return Status::InvalidArgument("seed " + std::to_string(seeds[i]) +
                                     " is not a node of the graph");
    }
  }
  thread_local Scratch s;
  if (s.local.size() < g.nodes()) s.local.resize(g.nodes(), kNoParent);
  std::vector<uint32_t>& local = s.local;
  auto add = [&](uint32_t node, uint32_t parent) {
    if (local[node] != kNoParent) return;
    local[node] = static_cast<uint32_t>(out->nodes.size());
    out->nodes.push_back(node);
    out->parents.push_back(parent);
  };
  const size_t cap = params.max_nodes ? params.max_nodes : SIZE_MAX;
  for (size_t i = 0; i < n_seeds && out->nodes.size() < cap; ++i) add(seeds[i], kNoParent);
  const size_t n_seed = out->nodes.size();
  // Bounded BFS along out-edges of weight > 0.
  size_t begin = 0;
  for (int hop = 0; hop < params.max_hops && out->nodes.size() < cap; ++hop) {
    const size_t end = out->nodes.size();
    for (size_t i = begin; i < end && out->nodes.size() < cap; ++i) {
      const uint32_t u = out->nodes[i];
      for (const Edge& e : g.out(u)) {
        if (e.w > 0) add(e.dst, u);
        if (out->nodes.size() >= cap) break;
      }
    }
    begin = end;
  }
  // The induced subgraph in local CSR.
  const size_t n = out->nodes.size();
  s.loff.assign(n + 1, 0);
  s.ldst.clear();
  s.lw.clear();
  s.outw.assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (const Edge& e : g.out(out->nodes[i])) {
      const uint32_t v = local[e.dst];
      if (v == kNoParent || e.w <= 0) continue;
      s.ldst.push_back(v);
      s.lw.push_back(e.w);
      s.outw[i] += e.w;
    }
    s.loff[i + 1] = s.ldst.size();
  }
  for (uint32_t node : out->nodes) local[node] = kNoParent;
  if (n_seed == 0) return Status::OK();
  const double p = 1.0 / static_cast<double>(n_seed);
  const double alpha = params.alpha;
  // Gauss-Seidel over in-edges: the local CSR transposed, coefficients alpha w / W(src).
  s.ioff.assign(n + 1, 0);
  for (uint32_t v : s.ldst) ++s.ioff[v + 1];
  for (size_t i = 0; i < n; ++i) s.ioff[i + 1] += s.ioff[i];
  s.isrc.resize(s.ldst.size());
  s.icoef.resize(s.ldst.size());
  for (size_t i = 0; i < n; ++i) {
    for (uint64_t e = s.loff[i]; e < s.loff[i + 1]; ++e) {
      const uint64_t at = s.ioff[s.ldst[e]]++;  // ioff[v] walks to ioff[v + 1]
      s.isrc[at] = static_cast<uint32_t>(i);
      s.icoef[at] = alpha * s.lw[e] / s.outw[i];
    }
  }
  for (size_t i = n; i > 0; --i) s.ioff[i] = s.ioff[i - 1];  // shift back
  s.ioff[0] = 0;
  std::vector<double> x(n, 0.0);
  for (size_t i = 0; i < n_seed; ++i) x[i] = p;
  double dangling = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (s.outw[i] == 0.0) dangling += x[i];
  }
  for (int it = 1; it <= params.max_iter; ++it) {
    double change = 0.0;
    const double back0 = (alpha * dangling + (1.0 - alpha)) * p;
    double new_dangling = 0.0;
    for (size_t j = 0; j < n; ++j) {
      double v = j < n_seed ? back0 : 0.0;
      for (uint64_t e = s.ioff[j]; e < s.ioff[j + 1]; ++e) v += x[s.isrc[e]] * s.icoef[e];
      change += std::fabs(v - x[j]);
      x[j] = v;
      if (s.outw[j] == 0.0) new_dangling += v;
    }
    dangling = new_dangling;
    out->iterations = it;
    if (change < params.tol) break;
  }
  double total = 0.0;  // 1 at the fixed point; removes the sweeps' rounding drift
  for (double v : x) total += v;
  for (double& v : x) v /= total;
  out->scores = std::move(x);
  return Status::OK();
}

// The BFS and the induced subgraph test membership in a bitset (a 200K-node graph: 25 KB,
// cache-resident, where the id -> local table is 800 KB) and prefetch the edge lists of the
// nodes a few places ahead (each list is its own allocation: a miss per node otherwise).
Status Ppr(const DirectedGraph& g, const uint32_t* seeds, size_t n_seeds, const PprParams& params,
           PprResult* out) {
  if (params.legacy) return PprLegacy(g, seeds, n_seeds, params, out);
  if (!(params.alpha >= 0 && params.alpha < 1)) {
    return Status::InvalidArgument("alpha must be in [0, 1)");
  }
  if (params.max_hops < 0 || params.max_iter < 1 || !(params.tol > 0)) {
    return Status::InvalidArgument("max_hops must be >= 0, max_iter >= 1 and tol > 0");
  }
  out->nodes.clear();
  out->scores.clear();
  out->parents.clear();
  out->iterations = 0;
  for (size_t i = 0; i < n_seeds; ++i) {
    if (seeds[i] >= g.nodes()) {
      return Status::InvalidArgument("seed " + std::to_string(seeds[i]) +
                                     " is not a node of the graph");
    }
  }
  thread_local Scratch s;
  if (s.local.size() < g.nodes()) s.local.resize(g.nodes(), kNoParent);
  if (s.bits.size() * 64 < g.nodes()) s.bits.resize((g.nodes() + 63) / 64, 0);
  uint32_t* const local = s.local.data();
  uint64_t* const bits = s.bits.data();
  auto has = [bits](uint32_t u) { return (bits[u >> 6] >> (u & 63)) & 1u; };
  auto add = [&](uint32_t node, uint32_t parent) {
    if (has(node)) return;
    bits[node >> 6] |= uint64_t{1} << (node & 63);
    local[node] = static_cast<uint32_t>(out->nodes.size());
    out->nodes.push_back(node);
    out->parents.push_back(parent);
  };
  const size_t cap = params.max_nodes ? params.max_nodes : SIZE_MAX;
  if (params.max_nodes) {
    out->nodes.reserve(params.max_nodes);
    out->parents.reserve(params.max_nodes);
  }
  for (size_t i = 0; i < n_seeds && out->nodes.size() < cap; ++i) add(seeds[i], kNoParent);
  const size_t n_seed = out->nodes.size();
  // Bounded BFS along out-edges of weight > 0.
  size_t begin = 0;
  for (int hop = 0; hop < params.max_hops && out->nodes.size() < cap; ++hop) {
    const size_t end = out->nodes.size();
    for (size_t i = begin; i < end && out->nodes.size() < cap; ++i) {
      const uint32_t u = out->nodes[i];
      for (const Edge& e : g.out(u)) {
        if (e.w > 0) add(e.dst, u);
        if (out->nodes.size() >= cap) break;
      }
    }
    begin = end;
  }
  // The induced subgraph in local CSR.
  const size_t n = out->nodes.size();
  const uint32_t* const ball = out->nodes.data();
  s.loff.resize(n + 1);
  s.loff[0] = 0;
  s.ldst.clear();
  s.lw.clear();
  s.outw.assign(n, 0.0);
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < std::min(n, kAhead); ++i) __builtin_prefetch(&g.out(ball[i]));
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&g.out(ball[i + kAhead]));
    if (i + kAhead / 2 < n) {
      const auto& ahead = g.out(ball[i + kAhead / 2]);
      if (!ahead.empty()) {
        __builtin_prefetch(ahead.data());
        __builtin_prefetch(reinterpret_cast<const char*>(ahead.data()) + 64);
      }
    }
    double sum = 0.0;
    for (const Edge& e : g.out(ball[i])) {
      if (!has(e.dst) || e.w <= 0) continue;
      s.ldst.push_back(local[e.dst]);
      s.lw.push_back(e.w);
      sum += e.w;
    }
    s.outw[i] = sum;
    s.loff[i + 1] = s.ldst.size();
  }
  for (size_t i = 0; i < n; ++i) bits[ball[i] >> 6] = 0;  // local[] is only read under a bit
  if (n_seed == 0) return Status::OK();
  const double p = 1.0 / static_cast<double>(n_seed);
  const double alpha = params.alpha;
  // Gauss-Seidel over in-edges: the local CSR transposed, coefficients alpha w / W(src).
  const size_t m = s.ldst.size();
  s.ioff.assign(n + 1, 0);
  for (size_t e = 0; e < m; ++e) ++s.ioff[s.ldst[e] + 1];
  for (size_t i = 0; i < n; ++i) s.ioff[i + 1] += s.ioff[i];
  s.isrc.resize(m);
  s.icoef.resize(m);
  for (size_t i = 0; i < n; ++i) {
    for (uint64_t e = s.loff[i]; e < s.loff[i + 1]; ++e) {
      const uint64_t at = s.ioff[s.ldst[e]]++;  // ioff[v] walks to ioff[v + 1]
      s.isrc[at] = static_cast<uint32_t>(i);
      s.icoef[at] = alpha * s.lw[e] / s.outw[i];
    }
  }
  for (size_t i = n; i > 0; --i) s.ioff[i] = s.ioff[i - 1];  // shift back
  s.ioff[0] = 0;
  std::vector<double> x(n, 0.0);
  for (size_t i = 0; i < n_seed; ++i) x[i] = p;
  // The dangling nodes (no out-edge in the subgraph), listed once.
  s.dang.clear();
  for (size_t i = 0; i < n; ++i) {
    if (s.outw[i] == 0.0) s.dang.push_back(static_cast<uint32_t>(i));
  }
  double dangling = 0.0;
  for (uint32_t j : s.dang) dangling += x[j];
  const uint64_t* const ioff = s.ioff.data();
  const uint32_t* const isrc = s.isrc.data();
  const double* const icoef = s.icoef.data();
  double* const xs = x.data();
  for (int it = 1; it <= params.max_iter; ++it) {
    double change = 0.0;
    const double back0 = (alpha * dangling + (1.0 - alpha)) * p;
    for (size_t j = 0; j < n; ++j) {
      double v = j < n_seed ? back0 : 0.0;
      for (uint64_t e = ioff[j]; e < ioff[j + 1]; ++e) v += xs[isrc[e]] * icoef[e];
      change += std::fabs(v - xs[j]);
      xs[j] = v;
    }
    dangling = 0.0;
    for (uint32_t j : s.dang) dangling += xs[j];
    out->iterations = it;
    if (change < params.tol) break;
  }
  double total = 0.0;  // 1 at the fixed point; removes the sweeps' rounding drift
  for (double v : x) total += v;
  for (double& v : x) v /= total;
  out->scores = std::move(x);
  return Status::OK();
}

void Ranked(const DirectedGraph& g, const PprResult& r, uint8_t kind,
            std::vector<uint64_t>* keys, std::vector<double>* scores,
            std::vector<uint32_t>* hop) {
  std::vector<std::pair<double, uint64_t>> found;
  size_t n_seed = 0;
  while (n_seed < r.nodes.size() && r.parents[n_seed] == kNoParent) ++n_seed;  // seeds first
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const uint32_t u = r.nodes[i];
    if (g.kind(u) == kind) {
      found.emplace_back(-r.scores[i], g.key(u));
    } else if (r.parents[i] != kNoParent &&
               std::find(r.nodes.begin(), r.nodes.begin() + static_cast<std::ptrdiff_t>(n_seed),
                         r.parents[i]) != r.nodes.begin() + static_cast<std::ptrdiff_t>(n_seed)) {
      hop->push_back(u);
    }
  }
  std::sort(found.begin(), found.end());
  std::sort(hop->begin(), hop->end());
  keys->reserve(found.size());
  scores->reserve(found.size());
  for (const auto& [neg, key] : found) {
    keys->push_back(key);
    scores->push_back(-neg);
  }
}

}  // namespace chitta::graph
