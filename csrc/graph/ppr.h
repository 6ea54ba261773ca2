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
// Ppr (D-073) first eliminates a set of "leaves" (non-seed nodes no two of which
// share an edge: at this density nearly every node of the last hop) exactly, so the
// sweeps (over-relaxed Gauss-Seidel, D-077) run on the small reduced system of the rest;
// it stops when a bound on the L1 distance from the exact fixed point, from the full
// Jacobi residual r: ||x - x*||_1 <= ||r||_1 / (1 - alpha), is below tol (r is computed
// on the core: at the leaves, solved exactly, it is 0). PprLegacy (the code
// before D-069) sweeps the whole subgraph and stops when a sweep moves the L1 total
// by < tol.
//
// Layout: the lists live in three shared arenas (targets, weights, slots), each
// list contiguous with room to grow; a list that outgrows its room moves to the end,
// and the arenas are packed again once the holes pass the live edges. A build at
// once is packed (CSR). The BFS and the induced subgraph stream 4-byte targets.
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

// One node's out-edges, read in place (valid until the graph changes).
struct OutEdges {
  const uint32_t* dst;
  const double* w;
  const uint32_t* slot;
  uint32_t size;
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
  uint32_t nodes() const { return static_cast<uint32_t>(list_.size()); }
  size_t edges() const { return slot_src_.size(); }  // slots, tombstones included
  OutEdges out(uint32_t u) const {
    const List& l = list_[u];
    return OutEdges{dst_.data() + l.off, w_.data() + l.off, slot_.data() + l.off, l.len};
  }
  // Where node u's list header lives (for prefetching).
  const void* list_header(uint32_t u) const { return &list_[u]; }
  uint8_t kind(uint32_t u) const { return kind_[u]; }
  uint64_t key(uint32_t u) const { return key_[u]; }

 private:
  Status Check(const uint32_t* src, const uint32_t* dst, const double* w, size_t m) const;
  bool Before(uint32_t a, uint32_t b) const {
    return kind_[a] != kind_[b] ? kind_[a] < kind_[b] : key_[a] < key_[b];
  }
  struct List {
    uint64_t off = 0;  // first entry in the arenas
    uint32_t len = 0, cap = 0;
  };
  // Makes room for `extra` more edges at the end of node u's list (moving it if needed).
  void Reserve(uint32_t u, uint32_t extra);
  // Rewrites the arenas with each list packed (cap = len + slack), in node order.
  void Pack(double slack);
  std::vector<List> list_;
  std::vector<uint32_t> dst_;   // arenas, indexed by List::off + position
  std::vector<double> w_;
  std::vector<uint32_t> slot_;
  size_t used_ = 0;             // arena entries in some list's room (cap), the rest is holes
  std::vector<uint8_t> kind_;
  std::vector<uint64_t> key_;
  std::vector<uint32_t> slot_src_;  // slot -> its source node
  std::vector<uint32_t> slot_at_;   // slot -> its position in its source's list
};

struct PprParams {
  double alpha = 0.85;   // the damping (seed 004, Module 6)
  int max_hops = 2;      // BFS depth from the seeds
  int max_iter = 100;    // power iterations at most
  double tol = 1e-10;    // Ppr: stop when the bound on the L1 error is below this;
                         // PprLegacy: when a sweep's L1 change is below this
  size_t max_nodes = 0;  // 0: no cap on the subgraph; else BFS stops adding at this many
  bool legacy = false;   // the code before D-069 (the benchmark's side-by-side baseline)
};

struct PprResult {
  std::vector<uint32_t> nodes;    // the subgraph's nodes in BFS order (seeds first)
  std::vector<double> scores;     // their PageRank (sums to 1)
  std::vector<uint32_t> parents;  // BFS predecessor (kNoParent for a seed)
  int iterations = 0;             // sweeps (Ppr: of the reduced system)
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
