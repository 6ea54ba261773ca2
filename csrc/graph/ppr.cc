// csrc/graph/ppr.cc
#include "graph/ppr.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace chitta::graph {

Status DirectedGraph::Build(uint32_t n, const uint32_t* src, const uint32_t* dst, const double* w,
                            size_t m, DirectedGraph* out) {
  DirectedGraph g;
  g.list_.resize(n);
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
  if (list_.size() + k >= kNoParent) {
    return Status::InvalidArgument("the graph would pass 2**32 - 1 nodes; split the field");
  }
  *first = nodes();
  list_.resize(list_.size() + k);
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

void DirectedGraph::Reserve(uint32_t u, uint32_t extra) {
  List& l = list_[u];
  if (l.len + extra <= l.cap) return;
  // A first list gets exactly its size (a build at once is packed); a growing one doubles.
  const uint32_t cap = l.cap == 0 ? extra : std::max(l.len + extra, 2 * l.cap);
  const uint64_t off = dst_.size();
  dst_.resize(off + cap);
  w_.resize(off + cap);
  slot_.resize(off + cap);
  std::copy_n(dst_.begin() + static_cast<std::ptrdiff_t>(l.off), l.len,
              dst_.begin() + static_cast<std::ptrdiff_t>(off));
  std::copy_n(w_.begin() + static_cast<std::ptrdiff_t>(l.off), l.len,
              w_.begin() + static_cast<std::ptrdiff_t>(off));
  std::copy_n(slot_.begin() + static_cast<std::ptrdiff_t>(l.off), l.len,
              slot_.begin() + static_cast<std::ptrdiff_t>(off));
  used_ += cap - l.cap;
  l.off = off;
  l.cap = cap;
}

void DirectedGraph::Pack(double slack) {
  std::vector<uint32_t> dst, slot;
  std::vector<double> w;
  size_t total = 0;
  for (const List& l : list_) total += l.len + static_cast<size_t>(l.len * slack);
  dst.resize(total);
  w.resize(total);
  slot.resize(total);
  uint64_t at = 0;
  for (List& l : list_) {
    const auto from = static_cast<std::ptrdiff_t>(l.off);
    std::copy_n(dst_.begin() + from, l.len, dst.begin() + static_cast<std::ptrdiff_t>(at));
    std::copy_n(w_.begin() + from, l.len, w.begin() + static_cast<std::ptrdiff_t>(at));
    std::copy_n(slot_.begin() + from, l.len, slot.begin() + static_cast<std::ptrdiff_t>(at));
    l.off = at;
    l.cap = l.len + static_cast<uint32_t>(l.len * slack);
    at += l.cap;
  }
  dst_ = std::move(dst);
  w_ = std::move(w);
  slot_ = std::move(slot);
  used_ = total;
}

Status DirectedGraph::AddEdges(const uint32_t* src, const uint32_t* dst, const double* w,
                               size_t m, uint64_t* first) {
  Status st = Check(src, dst, w, m);
  if (!st.ok()) return st;
  *first = slot_src_.size();
  if (m == 0) return Status::OK();
  // The batch grouped by source, arrival order kept within a source: a counting sort
  // for a large batch, a stable sort of the indices for a small one (a delta).
  std::vector<uint32_t> order(m);
  if (m >= nodes() / 16) {
    std::vector<uint32_t> start(static_cast<size_t>(nodes()) + 1, 0);
    for (size_t i = 0; i < m; ++i) ++start[src[i] + 1];
    for (uint32_t u = 0; u < nodes(); ++u) start[u + 1] += start[u];
    for (size_t i = 0; i < m; ++i) order[start[src[i]]++] = static_cast<uint32_t>(i);
  } else {
    for (size_t i = 0; i < m; ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(),
                     [src](uint32_t a, uint32_t b) { return src[a] < src[b]; });
  }
  if (dst_.capacity() < dst_.size() + m) {  // room for a burst of deltas, no reallocation
    const size_t want = dst_.size() + m + (dst_.size() + m) / 4;
    dst_.reserve(want);
    w_.reserve(want);
    slot_.reserve(want);
  }
  slot_src_.resize(slot_src_.size() + m);
  slot_at_.resize(slot_at_.size() + m);
  auto by_key = [this](const Edge& a, const Edge& b) { return Before(a.dst, b.dst); };
  std::vector<Edge> list;
  for (size_t g0 = 0; g0 < m;) {
    const uint32_t u = src[order[g0]];
    size_t g1 = g0;
    while (g1 < m && src[order[g1]] == u) ++g1;
    Reserve(u, static_cast<uint32_t>(g1 - g0));
    List& l = list_[u];
    const uint32_t old = l.len;
    for (size_t k = g0; k < g1; ++k) {
      const uint32_t i = order[k];
      const uint64_t at = l.off + l.len;
      const auto slot = static_cast<uint32_t>(*first + i);
      dst_[at] = dst[i];
      w_[at] = w[i];
      slot_[at] = slot;
      slot_src_[slot] = u;
      slot_at_[slot] = l.len++;
    }
    g0 = g1;
    // Re-sort only a list whose new part is out of order (appending in key order is the
    // common case): sort the new tail, then merge it in (both stable: equal keys keep
    // arrival order); only the edges from the first one the merge moves get a new index.
    const uint32_t* d = dst_.data() + l.off;
    bool sorted = true;
    for (uint32_t k = old ? old : 1; k < l.len && sorted; ++k) sorted = !Before(d[k], d[k - 1]);
    if (sorted) continue;
    list.resize(l.len);
    for (uint32_t k = 0; k < l.len; ++k) {
      list[k] = Edge{w_[l.off + k], dst_[l.off + k], slot_[l.off + k]};
    }
    const auto mid = list.begin() + old;
    std::stable_sort(mid, list.end(), by_key);
    const auto moved = std::upper_bound(list.begin(), mid, *mid, by_key) - list.begin();
    std::inplace_merge(list.begin(), mid, list.end(), by_key);
    for (auto k = static_cast<uint32_t>(moved); k < l.len; ++k) {
      dst_[l.off + k] = list[k].dst;
      w_[l.off + k] = list[k].w;
      slot_[l.off + k] = list[k].slot;
      slot_at_[list[k].slot] = k;
    }
  }
  if (dst_.size() - used_ > used_) Pack(0.25);  // the holes passed the live room
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
  for (size_t i = 0; i < m; ++i) {
    w_[list_[slot_src_[slots[i]]].off + slot_at_[slots[i]]] = w[i];
  }
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
    const OutEdges e = out(u);
    for (uint32_t k = 0; k < e.size; ++k) {
      if (e.w[k] <= 0 || !in[e.dst[k]]) continue;
      src->push_back(u);
      dst->push_back(e.dst[k]);
      w->push_back(e.w[k]);
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
  std::vector<const double*> hitw;  // Ppr: the weight of each induced edge, by address
  std::vector<uint64_t> bits;  // the fast path's membership bitset (all zero between calls)
  // The reduced system (Ppr): core index of each node (kNoParent: a leaf), its rows.
  std::vector<uint32_t> core, group, tag, g0, g1, gk, rtouched;
  std::vector<uint64_t> goff, roff, rioff;
  std::vector<uint32_t> rdst, risrc;
  std::vector<double> ocoef, gm, dg, gc, rval, ricoef, racc, delta, xc, y;
};

}  // namespace

// The code before D-069 (on today's edge layout), kept for the benchmark's side-by-side
// run and as a second implementation the tests compare with (PprParams::legacy).
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
      const OutEdges e = g.out(u);
      for (uint32_t k = 0; k < e.size; ++k) {
        if (e.w[k] > 0) add(e.dst[k], u);
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
    const OutEdges e = g.out(out->nodes[i]);
    for (uint32_t k = 0; k < e.size; ++k) {
      const uint32_t v = local[e.dst[k]];
      if (v == kNoParent || e.w[k] <= 0) continue;
      s.ldst.push_back(v);
      s.lw.push_back(e.w[k]);
      s.outw[i] += e.w[k];
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

// Solves for the scores on the subgraph in s (out-CSR loff/ldst/lw, outw; n nodes, the
// first n_seed the seeds) into x.
//
// Leaves: non-seed nodes in groups of one or two (a group: joined to no other leaf; a
// pair: joined to each other), chosen greedily from the last node back: at this density
// nearly the whole last hop (a fact's entity and memory, both one hop past a hop-1 entity,
// form a pair). A group's values are x_g = u_g G, G = (I - A_gg)^-1 (2 x 2 at most), u_g
// its in-flow from the core, so putting it in the rows of the core nodes that feed it
// gives the core's own fixed point exactly: R = A_cc + A_cg G A_gc, and the mass a
// dangling leaf takes back to the seeds, delta_i = [i dangling] + (A_cg G)_i,dangling.
// The reduced Jacobi map is still an alpha-contraction in L1 (a row of R plus delta sums
// to <= alpha), so Gauss-Seidel sweeps on it converge (SOR sweeps, with a fall-back to
// Gauss-Seidel: D-077); the stop is certified: with r = T(x) - x for networkx's (Jacobi)
// map T on the whole subgraph, an alpha-contraction in L1, ||x - x*||_1 <= ||r||_1 /
// (1 - alpha), and at the leaves filled in from the core, r is the reduced map's residual
// on the core (0 on the leaves). The leaves are filled in once, at the end.
constexpr double kOmega = 1.4;  // the over-relaxation of the core sweeps (D-077)

void SolveReduced(Scratch& s, size_t n, size_t n_seed, const PprParams& params,
                  std::vector<double>* xout, int* iterations) {
  constexpr uint32_t kMany = kNoParent - 1;
  const double alpha = params.alpha;
  const double p = 1.0 / static_cast<double>(n_seed);
  const size_t m = s.ldst.size();
  const uint64_t* const loff = s.loff.data();
  const uint32_t* const ldst = s.ldst.data();
  const double* const outw = s.outw.data();
  // The coefficients a_ij = alpha w / W(i) on the out-edges.
  s.ocoef.resize(m);
  double* const ocoef = s.ocoef.data();
  for (size_t i = 0; i < n; ++i) {
    for (uint64_t e = loff[i]; e < loff[i + 1]; ++e) ocoef[e] = alpha * s.lw[e] / outw[i];
  }
  // Leaf groups: group[j] (kNoParent: core), members g0[g] and g1[g] (kNoParent: none);
  // tag[v]: the leaf group with an edge into v (kNoParent: none, kMany: more than one).
  s.group.assign(n, kNoParent);
  s.tag.assign(n, kNoParent);
  s.g0.clear();
  s.g1.clear();
  uint32_t* const group = s.group.data();
  uint32_t* const tag = s.tag.data();
  for (size_t j = n; j-- > n_seed;) {
    uint32_t with = tag[j];  // the one leaf group j touches
    bool ok = with != kMany && (with == kNoParent || s.g1[with] == kNoParent);
    for (uint64_t e = loff[j]; e < loff[j + 1] && ok; ++e) {
      const uint32_t gv = group[ldst[e]];
      if (ldst[e] == j || gv == kNoParent) continue;
      if (with == kNoParent) with = gv;
      ok = gv == with && s.g1[with] == kNoParent;
    }
    if (!ok) continue;
    if (with == kNoParent) {
      with = static_cast<uint32_t>(s.g0.size());
      s.g0.push_back(static_cast<uint32_t>(j));
      s.g1.push_back(kNoParent);
    } else {
      s.g1[with] = static_cast<uint32_t>(j);
    }
    group[j] = with;
    for (uint64_t e = loff[j]; e < loff[j + 1]; ++e) {
      uint32_t& t = tag[ldst[e]];
      t = t == kNoParent || t == with ? with : kMany;
    }
  }
  // The core numbered in order.
  s.core.assign(n, kNoParent);
  uint32_t* const core = s.core.data();
  uint32_t nc = 0;
  for (size_t i = 0; i < n; ++i) {
    if (group[i] == kNoParent) core[i] = nc++;
  }
  // Each group's G (row-major 2 x 2; a single's is G[0]) and, per member r, what a unit
  // of in-flow at r gives the core (sum_s G_rs a_sk) and the dangling mass (dg).
  const size_t ng = s.g0.size();
  s.gm.resize(4 * ng);
  s.dg.assign(2 * ng, 0.0);
  s.goff.resize(2 * ng + 1);
  s.goff[0] = 0;
  s.gk.clear();
  s.gc.clear();
  for (size_t g = 0; g < ng; ++g) {
    const uint32_t mem[2] = {s.g0[g], s.g1[g]};
    const int size = mem[1] == kNoParent ? 1 : 2;
    double a[2][2] = {{0, 0}, {0, 0}};
    for (int r = 0; r < size; ++r) {
      for (uint64_t e = loff[mem[r]]; e < loff[mem[r] + 1]; ++e) {
        if (ldst[e] == mem[0]) a[r][0] += ocoef[e];
        if (ldst[e] == mem[1]) a[r][1] += ocoef[e];
      }
    }
    double* G = &s.gm[4 * g];
    const double det = (1 - a[0][0]) * (1 - a[1][1]) - a[0][1] * a[1][0];
    G[0] = (1 - a[1][1]) / det;
    G[1] = a[0][1] / det;
    G[2] = a[1][0] / det;
    G[3] = (1 - a[0][0]) / det;
    for (int r = 0; r < 2; ++r) {
      for (int t = 0; t < size && r < size; ++t) {
        const double grt = G[2 * r + t];
        if (outw[mem[t]] == 0.0) s.dg[2 * g + r] += grt;
        for (uint64_t f = loff[mem[t]]; f < loff[mem[t] + 1]; ++f) {
          if (core[ldst[f]] == kNoParent) continue;
          s.gk.push_back(core[ldst[f]]);
          s.gc.push_back(grt * ocoef[f]);
        }
      }
      s.goff[2 * g + r + 1] = s.gk.size();
    }
  }
  // The reduced rows R (out-CSR over the core, each row's entries summed per target).
  s.roff.assign(nc + 1, 0);
  s.rdst.clear();
  s.rval.clear();
  s.racc.assign(nc, 0.0);
  s.rtouched.clear();
  s.delta.assign(nc, 0.0);
  double* const acc = s.racc.data();
  auto put = [&](uint32_t k, double v) {
    if (acc[k] == 0.0) s.rtouched.push_back(k);
    acc[k] += v;
  };
  for (size_t i = 0, ci = 0; i < n; ++i) {
    if (core[i] == kNoParent) continue;
    if (outw[i] == 0.0) s.delta[ci] = 1.0;
    for (uint64_t e = loff[i]; e < loff[i + 1]; ++e) {
      const uint32_t t = ldst[e];
      if (core[t] != kNoParent) {
        put(core[t], ocoef[e]);
        continue;
      }
      const size_t row = 2 * group[t] + (t == s.g0[group[t]] ? 0 : 1);
      s.delta[ci] += ocoef[e] * s.dg[row];
      for (uint64_t q = s.goff[row]; q < s.goff[row + 1]; ++q) put(s.gk[q], ocoef[e] * s.gc[q]);
    }
    for (uint32_t k : s.rtouched) {
      s.rdst.push_back(k);
      s.rval.push_back(acc[k]);
      acc[k] = 0.0;
    }
    s.rtouched.clear();
    s.roff[++ci] = s.rdst.size();
  }
  // Its in-CSR for the sweeps.
  const size_t rm = s.rdst.size();
  s.rioff.assign(nc + 1, 0);
  for (size_t e = 0; e < rm; ++e) ++s.rioff[s.rdst[e] + 1];
  for (size_t k = 0; k < nc; ++k) s.rioff[k + 1] += s.rioff[k];
  s.risrc.resize(rm);
  s.ricoef.resize(rm);
  for (uint32_t i = 0; i < nc; ++i) {
    for (uint64_t e = s.roff[i]; e < s.roff[i + 1]; ++e) {
      const uint64_t at = s.rioff[s.rdst[e]]++;
      s.risrc[at] = i;
      s.ricoef[at] = s.rval[e];
    }
  }
  for (size_t k = nc; k > 0; --k) s.rioff[k] = s.rioff[k - 1];
  s.rioff[0] = 0;
  const uint64_t* const rioff = s.rioff.data();
  const uint32_t* const risrc = s.risrc.data();
  const double* const ricoef = s.ricoef.data();
  const double* const delta = s.delta.data();
  s.xc.assign(nc, 0.0);
  double* const xc = s.xc.data();
  for (size_t i = 0; i < n_seed; ++i) xc[i] = p;  // the seeds are the core's first nodes
  double dangling = 0.0;
  for (uint32_t i = 0; i < nc; ++i) dangling += delta[i] * xc[i];
  std::vector<double>& x = *xout;
  x.assign(n, 0.0);
  s.y.resize(n);
  double* const y = s.y.data();
  // The whole subgraph's values from the core's: the core, then each group's x_g = u_g G
  // (u: the in-flow from the core, gathered in y).
  auto expand = [&] {
    for (size_t i = 0; i < n; ++i) {
      y[i] = 0.0;
      if (core[i] != kNoParent) x[i] = xc[core[i]];
    }
    for (size_t i = 0; i < n; ++i) {
      if (core[i] == kNoParent) continue;
      for (uint64_t e = loff[i]; e < loff[i + 1]; ++e) {
        if (core[ldst[e]] == kNoParent) y[ldst[e]] += x[i] * ocoef[e];
      }
    }
    for (size_t g = 0; g < ng; ++g) {
      const uint32_t j0 = s.g0[g], j1 = s.g1[g];
      const double u0 = y[j0], u1 = j1 == kNoParent ? 0.0 : y[j1];
      const double* G = &s.gm[4 * g];
      x[j0] = u0 * G[0] + u1 * G[2];
      if (j1 != kNoParent) x[j1] = u0 * G[1] + u1 * G[3];
    }
  };
  // The bound on ||x / sum(x) - x*||_1 from the Jacobi residual r = T(x) - x of the whole
  // subgraph at the expanded x: eps = ||r||_1 / (1 - alpha) bounds ||x - x*||_1, and
  // normalising at most doubles it. The leaves' rows of r are 0 (expand solves them
  // exactly) and a core row of T(x) is the reduced map's (R and delta are the leaves
  // substituted out), so ||r||_1 is the reduced Jacobi residual, one pass over the core.
  auto bound = [&] {
    double d = 0.0;
    for (uint32_t i = 0; i < nc; ++i) d += delta[i] * xc[i];
    const double back = (alpha * d + (1.0 - alpha)) * p;
    double r = 0.0;
    for (uint32_t k = 0; k < nc; ++k) {
      double v = k < n_seed ? back : 0.0;
      for (uint64_t e = rioff[k]; e < rioff[k + 1]; ++e) v += xc[risrc[e]] * ricoef[e];
      r += std::fabs(v - xc[k]);
    }
    const double eps = r / (1.0 - alpha);
    return eps < 0.5 ? 2.0 * eps / (1.0 - eps) : HUGE_VAL;
  };
  // Over-relaxed Gauss-Seidel (SOR, omega kOmega: ~30 sweeps on the lane's cores where
  // Gauss-Seidel takes ~45; D-077). SOR may converge slowly or not at all (a two-cycle of
  // seeds: rate ~0.995), so a sweep that changes more than 0.8 x the one before turns it
  // back to Gauss-Seidel (omega 1), which converges on any such system. A sweep's change
  // under tol (1 - alpha) / 2 (about where the bound meets tol) is checked against the
  // bound; failing, five times lower.
  double check_below = params.tol * (1.0 - alpha) * 0.5;
  double omega = kOmega, last_change = HUGE_VAL;
  bool done = false;
  for (int it = 1; it <= params.max_iter && !done; ++it) {
    double change = 0.0;
    const double back0 = (alpha * dangling + (1.0 - alpha)) * p;
    for (uint32_t k = 0; k < nc; ++k) {
      double v = k < n_seed ? back0 : 0.0;
      for (uint64_t e = rioff[k]; e < rioff[k + 1]; ++e) v += xc[risrc[e]] * ricoef[e];
      const double step = omega * (v - xc[k]);
      change += std::fabs(step);
      xc[k] += step;
    }
    dangling = 0.0;
    for (uint32_t i = 0; i < nc; ++i) dangling += delta[i] * xc[i];
    *iterations = it;
    if (change > 0.8 * last_change) omega = 1.0;
    last_change = change;
    if (change < check_below) {
      done = bound() <= params.tol;
      check_below = std::min(check_below, change) * 0.2;
    }
  }
  expand();
}

// The BFS records the induced out-edges of each node whose list it reads in full (all
// their targets are in the ball); the induced pass reads the rest. Membership is tested
// in a bitset (a 200K-node graph: 25 KB, cache-resident, where the id -> local table is
// 800 KB) and the lists (4-byte targets) are prefetched a few nodes ahead.
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
  s.loff.clear();
  s.loff.push_back(0);
  s.ldst.clear();
  s.lw.clear();
  s.outw.clear();
  // Bounded BFS along out-edges of weight > 0; nodes [0, done) have their edges recorded.
  size_t begin = 0, done = 0;
  bool full = out->nodes.size() >= cap;
  for (int hop = 0; hop < params.max_hops && !full; ++hop) {
    const size_t end = out->nodes.size();
    for (size_t i = begin; i < end && !full; ++i) {
      const uint32_t u = out->nodes[i];
      const OutEdges e = g.out(u);
      double sum = 0.0;
      for (uint32_t k = 0; k < e.size; ++k) {
        const double w = e.w[k];
        if (w <= 0) continue;
        add(e.dst[k], u);
        if (out->nodes.size() >= cap) {
          full = true;  // u's list is cut short: the induced pass reads it again
          break;
        }
        s.ldst.push_back(local[e.dst[k]]);
        s.lw.push_back(w);
        sum += w;
      }
      if (full) {
        s.ldst.resize(s.loff.back());
        s.lw.resize(s.loff.back());
        break;
      }
      s.outw.push_back(sum);
      s.loff.push_back(s.ldst.size());
      done = i + 1;
    }
    begin = end;
  }
  // The induced edges of the rest: first the targets (4 bytes each, streamed; a hit's
  // weight only noted by address), then the weights of the hits, gathered in one pass of
  // independent loads, tombstones dropped.
  const size_t n = out->nodes.size();
  const uint32_t* const ball = out->nodes.data();
  s.loff.resize(n + 1);
  s.outw.resize(n);
  s.hitw.clear();
  const size_t recorded = s.ldst.size();
  size_t cnt = recorded;  // s.ldst's entries in use (it runs ahead, written branch-free)
  constexpr size_t kAhead = 8, kDAhead = 4;  // headers 8 nodes ahead, targets 4
  for (size_t i = done; i < std::min(n, done + kAhead); ++i) {
    __builtin_prefetch(g.list_header(ball[i]));
  }
  for (size_t i = done; i < std::min(n, done + kDAhead); ++i) {
    const OutEdges ahead = g.out(ball[i]);
    for (uint32_t k = 0; k < ahead.size; k += 16) __builtin_prefetch(ahead.dst + k);
  }
  for (size_t i = done; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(g.list_header(ball[i + kAhead]));
    if (i + kDAhead < n) {
      const OutEdges ahead = g.out(ball[i + kDAhead]);
      for (uint32_t k = 0; k < ahead.size; k += 16) __builtin_prefetch(ahead.dst + k);
    }
    // Branch-free: every target is written, the count moves on a member only.
    const OutEdges e = g.out(ball[i]);
    if (cnt + e.size > s.ldst.size()) {
      s.ldst.resize(std::max(2 * s.ldst.size(), cnt + e.size));
      s.hitw.resize(s.ldst.size() - recorded);
    }
    uint32_t* const hd = s.ldst.data() + cnt;
    const double** const hp = s.hitw.data() + (cnt - recorded);
    uint32_t hits = 0;
    for (uint32_t k = 0; k < e.size; ++k) {
      const uint32_t v = e.dst[k];
      hd[hits] = v;
      hp[hits] = e.w + k;
      hits += static_cast<uint32_t>(has(v));
    }
    cnt += hits;
    s.loff[i + 1] = cnt;
  }
  s.ldst.resize(cnt);
  s.hitw.resize(cnt - recorded);
  {
    const double* const* const hw = s.hitw.data();
    const size_t nh = s.hitw.size();
    constexpr size_t kGather = 16;
    for (size_t h = 0; h < std::min(nh, kGather); ++h) __builtin_prefetch(hw[h]);
    s.lw.resize(s.ldst.size());
    size_t at = recorded, h = 0;
    for (size_t i = done; i < n; ++i) {
      double sum = 0.0;
      for (const size_t end = s.loff[i + 1] - recorded; h < end; ++h) {
        if (h + kGather < nh) __builtin_prefetch(hw[h + kGather]);
        const double w = *hw[h];
        if (w <= 0) continue;
        s.ldst[at] = local[s.ldst[recorded + h]];  // the target's index in the subgraph
        s.lw[at++] = w;
        sum += w;
      }
      s.outw[i] = sum;
      s.loff[i + 1] = at;
    }
    s.ldst.resize(at);
    s.lw.resize(at);
  }
  for (size_t i = 0; i < n; ++i) bits[ball[i] >> 6] = 0;  // local[] is only read under a bit
  if (n_seed == 0) return Status::OK();
  std::vector<double> x;
  SolveReduced(s, n, n_seed, params, &x, &out->iterations);
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
