// csrc/graph/ppr.h
// Personalised PageRank over a directed, weighted graph in CSR form, on the
// subgraph a bounded BFS from the seeds reaches (chitta/recall/graph_lane.py).
//
// The fixed point is networkx's pagerank on that induced subgraph:
//   x = alpha * (x M + d(x) p) + (1 - alpha) * p
// with M the out-weight-normalised adjacency, p uniform over the seeds and d(x)
// the mass on nodes without an out-edge inside the subgraph (given back to p).
// It is reached by Gauss-Seidel sweeps over in-edges (each node uses the values
// already updated this sweep; d from the previous sweep), ~30% fewer sweeps than
// networkx's Jacobi iteration; stops when a sweep moves the L1 total by < tol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chitta/status.h"

namespace chitta::graph {

inline constexpr uint32_t kNoParent = 0xFFFFFFFFu;

class DirectedGraph {
 public:
  // Edges (src[i] -> dst[i], weight w[i]); node ids < n, weights finite and >= 0
  // (0-weight edges are dropped). Parallel edges add up.
  static Status Build(uint32_t n, const uint32_t* src, const uint32_t* dst, const double* w,
                      size_t m, DirectedGraph* out);
  // The edges between the given nodes (the induced subgraph), as (src, dst, weight) in CSR
  // order; ids must be < nodes() (checked).
  Status EdgesAmong(const uint32_t* ids, size_t n_ids, std::vector<uint32_t>* src,
                    std::vector<uint32_t>* dst, std::vector<double>* w) const;
  uint32_t nodes() const { return n_; }
  size_t edges() const { return dst_.size(); }
  const uint64_t* offsets() const { return off_.data(); }
  const uint32_t* targets() const { return dst_.data(); }
  const double* weights() const { return w_.data(); }

 private:
  uint32_t n_ = 0;
  std::vector<uint64_t> off_{0};  // n + 1
  std::vector<uint32_t> dst_;
  std::vector<double> w_;
};

struct PprParams {
  double alpha = 0.85;     // the damping (seed 004, Module 6)
  int max_hops = 2;        // BFS depth from the seeds
  int max_iter = 100;      // power iterations at most
  double tol = 1e-10;      // stop when the L1 change is below this
  size_t max_nodes = 0;    // 0: no cap on the subgraph; else BFS stops adding at this many
};

struct PprResult {
  std::vector<uint32_t> nodes;    // the subgraph's nodes in BFS order (seeds first)
  std::vector<double> scores;     // their PageRank (sums to 1)
  std::vector<uint32_t> parents;  // BFS predecessor (kNoParent for a seed)
  int iterations = 0;
};

// Seeds may repeat (counted once); each must be < g.nodes().
Status Ppr(const DirectedGraph& g, const uint32_t* seeds, size_t n_seeds, const PprParams& params,
           PprResult* out);

}  // namespace chitta::graph
