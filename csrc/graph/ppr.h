// csrc/graph/ppr.h
// Personalised PageRank over a directed, weighted graph kept as per-node edge lists
// that take appends and weight updates (chitta/recall/graph_lane.py applies each
// fact or association change as a delta), on the subgraph a bounded BFS from the
// seeds reaches.
//
// The fixed point is networkx's pagerank on that induced subgraph:
//   x = alpha * (x M + d(x) p) + (1 - alpha) * p
// with M the out-weight-normalised adjacency, p uniform over the seeds and d(x)
// the mass on nodes without an out-edge inside the subgraph (given back to p).
// It is reached by Gauss-Seidel sweeps over in-edges (each node uses the values
// already updated this sweep; d from the previous sweep), ~30% fewer sweeps than
// networkx's Jacobi iteration; stops when a sweep moves the L1 total by < tol.
//
// Edge order: each node's out-edges are kept sorted by their targets' order keys
// (kind, key), parallel edges in arrival order, so the BFS (and the node cap) sees
// the same order however the graph was assembled, incrementally or at once.
// An edge of weight 0 is a tombstone: kept (its slot may be set again), never followed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chitta/status.h"

namespace chitta::graph {

inline constexpr uint32_t kNoParent = 0xFFFFFFFFu;

struct Edge {
  double w;
  uint32_t dst;
  uint32_t slot;  // the edge's id, stable while the list is re-sorted
};

class DirectedGraph {
 public:
  // n nodes (order key = id) and edges (src[i] -> dst[i], weight w[i]); node ids < n,
  // weights finite and >= 0. Parallel edges add up. Edge i gets slot i.
  static Status Build(uint32_t n, const uint32_t* src, const uint32_t* dst, const double* w,
                      size_t m, DirectedGraph* out);
  // Appends k nodes with order keys (kinds[i], keys[i]); *first = the first new id.
  Status AddNodes(const uint8_t* kinds, const uint64_t* keys, size_t k, uint32_t* first);
  // Appends m edges (checked as in Build); they get slots *first .. *first + m - 1.
  Status AddEdges(const uint32_t* src, const uint32_t* dst, const double* w, size_t m,
                  uint64_t* first);
  // Sets the weight of each slot (0: a tombstone); checked before anything changes.
  Status SetWeights(const uint64_t* slots, const double* w, size_t m);
  // The edges of weight > 0 between the given nodes (the induced subgraph), as
  // (src, dst, weight) by source in the given order; ids must be < nodes() (checked).
  Status EdgesAmong(const uint32_t* ids, size_t n_ids, std::vector<uint32_t>* src,
                    std::vector<uint32_t>* dst, std::vector<double>* w) const;
  uint32_t nodes() const { return static_cast<uint32_t>(adj_.size()); }
  size_t edges() const { return slot_src_.size(); }  // slots, tombstones included
  const std::vector<Edge>& out(uint32_t u) const { return adj_[u]; }
  uint8_t kind(uint32_t u) const { return kind_[u]; }
  uint64_t key(uint32_t u) const { return key_[u]; }

 private:
  Status Check(const uint32_t* src, const uint32_t* dst, const double* w, size_t m) const;
  bool Before(uint32_t a, uint32_t b) const {
    return kind_[a] != kind_[b] ? kind_[a] < kind_[b] : key_[a] < key_[b];
  }
  std::vector<std::vector<Edge>> adj_;
  std::vector<uint8_t> kind_;
  std::vector<uint64_t> key_;
  std::vector<uint32_t> slot_src_;  // slot -> its source node
  std::vector<uint32_t> slot_at_;   // slot -> its index in adj_[source]
};

struct PprParams {
  double alpha = 0.85;   // the damping (seed 004, Module 6)
  int max_hops = 2;      // BFS depth from the seeds
  int max_iter = 100;    // power iterations at most
  double tol = 1e-10;    // stop when the L1 change is below this
  size_t max_nodes = 0;  // 0: no cap on the subgraph; else BFS stops adding at this many
  bool legacy = false;   // the code before D-069 (the benchmark's side-by-side baseline)
};

struct PprResult {
  std::vector<uint32_t> nodes;    // the subgraph's nodes in BFS order (seeds first)
  std::vector<double> scores;     // their PageRank (sums to 1)
  std::vector<uint32_t> parents;  // BFS predecessor (kNoParent for a seed)
  int iterations = 0;
};

// The lane's reading of a PageRank: the nodes of kind ``kind`` by score (ties by key),
// as (key, score), and the other nodes whose BFS parent is a seed, by id.
void Ranked(const DirectedGraph& g, const PprResult& r, uint8_t kind,
            std::vector<uint64_t>* keys, std::vector<double>* scores,
            std::vector<uint32_t>* hop);

// Seeds may repeat (counted once); each must be < g.nodes().
// PprLegacy: the code before D-069 (params.legacy routes Ppr to it), same results.
Status PprLegacy(const DirectedGraph& g, const uint32_t* seeds, size_t n_seeds,
                 const PprParams& params, PprResult* out);
Status Ppr(const DirectedGraph& g, const uint32_t* seeds, size_t n_seeds, const PprParams& params,
           PprResult* out);

}  // namespace chitta::graph
