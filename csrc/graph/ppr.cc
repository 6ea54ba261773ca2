// csrc/graph/ppr.cc
#include "graph/ppr.h"

#include <cmath>
#include <string>

namespace chitta::graph {

Status DirectedGraph::Build(uint32_t n, const uint32_t* src, const uint32_t* dst, const double* w,
                            size_t m, DirectedGraph* out) {
  DirectedGraph g;
  g.n_ = n;
  std::vector<uint64_t> count(static_cast<size_t>(n) + 1, 0);
  for (size_t i = 0; i < m; ++i) {
    if (src[i] >= n || dst[i] >= n) {
      return Status::InvalidArgument("edge " + std::to_string(i) + " names a node >= " +
                                     std::to_string(n) + "; give node ids below the node count");
    }
    if (!std::isfinite(w[i]) || w[i] < 0) {
      return Status::InvalidArgument("edge " + std::to_string(i) +
                                     " has a weight that is negative or not finite");
    }
    if (w[i] > 0) ++count[src[i] + 1];
  }
  for (uint32_t u = 0; u < n; ++u) count[u + 1] += count[u];
  g.off_ = count;
  g.dst_.resize(count[n]);
  g.w_.resize(count[n]);
  std::vector<uint64_t> pos(count.begin(), count.end() - 1);
  for (size_t i = 0; i < m; ++i) {
    if (w[i] <= 0) continue;
    const uint64_t at = pos[src[i]]++;
    g.dst_[at] = dst[i];
    g.w_[at] = w[i];
  }
  *out = std::move(g);
  return Status::OK();
}

Status DirectedGraph::EdgesAmong(const uint32_t* ids, size_t n_ids, std::vector<uint32_t>* src,
                                 std::vector<uint32_t>* dst, std::vector<double>* w) const {
  std::vector<uint8_t> in(n_, 0);
  for (size_t i = 0; i < n_ids; ++i) {
    if (ids[i] >= n_) return Status::InvalidArgument("node " + std::to_string(ids[i]) + " >= n");
    in[ids[i]] = 1;
  }
  for (uint32_t u = 0; u < n_; ++u) {
    if (!in[u]) continue;
    for (uint64_t e = off_[u]; e < off_[u + 1]; ++e) {
      if (!in[dst_[e]]) continue;
      src->push_back(u);
      dst->push_back(dst_[e]);
      w->push_back(w_[e]);
    }
  }
  return Status::OK();
}

Status Ppr(const DirectedGraph& g, const uint32_t* seeds, size_t n_seeds, const PprParams& params,
           PprResult* out) {
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
  const uint64_t* off = g.offsets();
  const uint32_t* dst = g.targets();
  const double* w = g.weights();
  for (size_t i = 0; i < n_seeds; ++i) {
    if (seeds[i] >= g.nodes()) {
      return Status::InvalidArgument("seed " + std::to_string(seeds[i]) +
                                     " is not a node of the graph");
    }
  }
  // Global id -> index in out->nodes (kNoParent: not in the subgraph). Reused across calls on
  // this thread and reset before returning, so a query costs what it touches, not the graph.
  thread_local std::vector<uint32_t> local;
  if (local.size() < g.nodes()) local.assign(g.nodes(), kNoParent);
  auto add = [&](uint32_t node, uint32_t parent) {
    if (local[node] != kNoParent) return;
    local[node] = static_cast<uint32_t>(out->nodes.size());
    out->nodes.push_back(node);
    out->parents.push_back(parent);
  };
  const size_t cap = params.max_nodes ? params.max_nodes : SIZE_MAX;
  for (size_t i = 0; i < n_seeds && out->nodes.size() < cap; ++i) add(seeds[i], kNoParent);
  const size_t n_seed = out->nodes.size();
  // Bounded BFS along out-edges.
  size_t begin = 0;
  for (int hop = 0; hop < params.max_hops && out->nodes.size() < cap; ++hop) {
    const size_t end = out->nodes.size();
    for (size_t i = begin; i < end && out->nodes.size() < cap; ++i) {
      const uint32_t u = out->nodes[i];
      for (uint64_t e = off[u]; e < off[u + 1] && out->nodes.size() < cap; ++e) add(dst[e], u);
    }
    begin = end;
  }
  // The induced subgraph in local CSR.
  const size_t n = out->nodes.size();
  std::vector<uint64_t> loff(n + 1, 0);
  std::vector<uint32_t> ldst;
  std::vector<double> lw;
  std::vector<double> outw(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = out->nodes[i];
    for (uint64_t e = off[u]; e < off[u + 1]; ++e) {
      const uint32_t v = local[dst[e]];
      if (v == kNoParent) continue;
      ldst.push_back(v);
      lw.push_back(w[e]);
      outw[i] += w[e];
    }
    loff[i + 1] = ldst.size();
  }
  for (uint32_t node : out->nodes) local[node] = kNoParent;
  if (n_seed == 0) return Status::OK();
  const double p = 1.0 / static_cast<double>(n_seed);
  const double alpha = params.alpha;
  // Gauss-Seidel over in-edges: the local CSR transposed, coefficients w / W(src).
  std::vector<uint64_t> ioff(n + 1, 0);
  for (uint32_t v : ldst) ++ioff[v + 1];
  for (size_t i = 0; i < n; ++i) ioff[i + 1] += ioff[i];
  std::vector<uint32_t> isrc(ldst.size());
  std::vector<double> icoef(ldst.size());
  {
    std::vector<uint64_t> pos(ioff.begin(), ioff.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      for (uint64_t e = loff[i]; e < loff[i + 1]; ++e) {
        const uint64_t at = pos[ldst[e]]++;
        isrc[at] = static_cast<uint32_t>(i);
        icoef[at] = lw[e] / outw[i];
      }
    }
  }
  std::vector<double> x(n, 0.0);
  for (size_t i = 0; i < n_seed; ++i) x[i] = p;
  double dangling = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (outw[i] == 0.0) dangling += x[i];
  }
  for (int it = 1; it <= params.max_iter; ++it) {
    double change = 0.0;
    const double back0 = (alpha * dangling + (1.0 - alpha)) * p;
    double new_dangling = 0.0;
    for (size_t j = 0; j < n; ++j) {
      double v = j < n_seed ? back0 : 0.0;
      for (uint64_t e = ioff[j]; e < ioff[j + 1]; ++e) v += alpha * x[isrc[e]] * icoef[e];
      change += std::fabs(v - x[j]);
      x[j] = v;
      if (outw[j] == 0.0) new_dangling += v;
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

}  // namespace chitta::graph
