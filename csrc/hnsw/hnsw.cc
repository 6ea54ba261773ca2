// csrc/hnsw/hnsw.cc
// HNSW construction: storage, level draw, insertion (Alg. 1), layer search for
// insertion (Alg. 2), the neighbour heuristic (Alg. 4), deletion marks.
// Query-time search lives in hnsw_search.cc, persistence in hnsw_io.cc.
#include "hnsw/hnsw.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <queue>
#include <unordered_set>

#include "hnsw/parallel.h"

namespace chitta::hnsw {

Status ValidateOptions(const Options& o) {
  if (o.dim == 0 || o.dim > kMaxDim) {
    return Status::InvalidArgument("dim must be in [1, " + std::to_string(kMaxDim) + "], got " +
                                   std::to_string(o.dim));
  }
  if (o.M < 2 || o.M > kMaxM) {
    return Status::InvalidArgument("M must be in [2, " + std::to_string(kMaxM) + "], got " +
                                   std::to_string(o.M));
  }
  if (o.ef_construction < 1 || o.ef_construction > 100000) {
    return Status::InvalidArgument("ef_construction must be in [1, 100000], got " +
                                   std::to_string(o.ef_construction));
  }
  if (o.metric != Metric::kCosine && o.metric != Metric::kInnerProduct) {
    return Status::InvalidArgument("unknown metric");
  }
  return Status::OK();
}

HnswIndex::HnswIndex(const Options& options)
    : options_(options),
      M_(options.M),
      level_mult_(1.0 / std::log(static_cast<double>(options.M))),
      dot_(ChosenDot()),
      links0_bytes_(sizeof(uint32_t) * (1 + 2 * static_cast<size_t>(options.M))),
      block_bytes_(links0_bytes_ + sizeof(float) * options.dim),
      rng_state_(options.seed),
      stripes_(new std::mutex[kStripes]) {}

Result<std::unique_ptr<HnswIndex>> HnswIndex::Create(const Options& options) {
  Status st = ValidateOptions(options);
  if (!st.ok()) return st;
  return std::make_unique<HnswIndex>(options);
}

void HnswIndex::Reserve(size_t n) {
  if (n <= capacity_) return;
  size_t cap = std::max(n, capacity_ + capacity_ / 2);
  auto block = std::make_unique<char[]>(cap * block_bytes_);
  if (count_ > 0) std::memcpy(block.get(), level0_.get(), count_ * block_bytes_);
  level0_ = std::move(block);
  labels_.resize(cap);
  levels_.resize(cap);
  deleted_.resize(cap);
  upper_.resize(cap);
  capacity_ = cap;
  visited_pool_.Clear();
}

// splitmix64 step, then -ln(u) * mL with u uniform in (0, 1].
int HnswIndex::DrawLevel() {
  uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = (static_cast<double>(z >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  const double level = -std::log(u) * level_mult_;
  return static_cast<int>(std::min(level, static_cast<double>(kMaxLevel)));
}

Status HnswIndex::CheckAdd(const uint64_t* ids, const float* vectors, size_t n) const {
  if (n == 0) return Status::OK();
  if (ids == nullptr || vectors == nullptr) return Status::InvalidArgument("null input");
  if (count_ + n >= std::numeric_limits<uint32_t>::max()) {
    return Status::InvalidArgument("index would exceed 2^32-1 nodes");
  }
  std::unordered_set<uint64_t> seen;
  seen.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == kNoId) {
      return Status::InvalidArgument("id 2^64-1 is reserved (it pads missing results)");
    }
    if (!seen.insert(ids[i]).second) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " appears twice in the batch");
    }
    if (label_to_node_.count(ids[i]) != 0) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " is already in the index");
    }
  }
  return CheckVectors(options_.metric, vectors, n, options_.dim);
}

Status HnswIndex::Add(const uint64_t* ids, const float* vectors, size_t n, int num_threads) {
  CHITTA_RETURN_IF_ERROR(CheckAdd(ids, vectors, n));
  if (n == 0) return Status::OK();
  const size_t dim = options_.dim;
  Reserve(count_ + n);
  for (size_t i = 0; i < n; ++i) {
    // Cannot fail: CheckAdd checked every row.
    (void)PrepareVector(options_.metric, vectors + i * dim, dim, MutableVector(count_ + i));
  }
  AddPrepared(ids, nullptr, n, num_threads);
  return Status::OK();
}

void HnswIndex::AddPrepared(const uint64_t* ids, const float* vectors, size_t n,
                            int num_threads) {
  if (n == 0) return;
  Reserve(count_ + n);
  const uint32_t first = static_cast<uint32_t>(count_);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t node = first + static_cast<uint32_t>(i);
    if (vectors != nullptr) {
      std::memcpy(MutableVector(node), vectors + i * options_.dim, options_.dim * sizeof(float));
    }
    Links0(node)[0] = 0;
    labels_[node] = ids[i];
    deleted_[node] = 0;
    const int level = DrawLevel();
    levels_[node] = static_cast<uint8_t>(level);
    upper_[node].reset();
    if (level > 0) {
      const size_t words = static_cast<size_t>(level) * (M_ + 1);
      upper_[node].reset(new uint32_t[words]());
    }
    label_to_node_[ids[i]] = node;
  }
  count_ += n;
  if (num_threads == 1 || n == 1) {
    for (size_t i = 0; i < n; ++i) InsertNode(first + static_cast<uint32_t>(i));
    return;
  }
  batch_done_.reset(new std::atomic<uint8_t>[n]);
  for (size_t i = 0; i < n; ++i) batch_done_[i].store(0, std::memory_order_relaxed);
  batch_first_ = first;
  ParallelFor(n, num_threads, [&](size_t i) {
    InsertNode(first + static_cast<uint32_t>(i));
    batch_done_[i].store(1, std::memory_order_release);
  });
  batch_first_ = std::numeric_limits<uint32_t>::max();
  batch_done_.reset();
}

uint32_t HnswIndex::GreedyDescend(const float* q, uint32_t ep, int from_level, int to_level,
                                  bool locked) const {
  uint32_t cur = ep;
  float cur_d = Dist(q, cur);
  std::vector<uint32_t> buf(M_ + 1);
  for (int lc = from_level; lc > to_level; --lc) {
    bool changed = true;
    while (changed) {
      changed = false;
      const uint32_t* l = Links(cur, lc);
      if (locked) {
        std::lock_guard<std::mutex> g(LockFor(cur));
        std::memcpy(buf.data(), l, sizeof(uint32_t) * (l[0] + 1));
        l = buf.data();
      }
      for (uint32_t j = 1; j <= l[0]; ++j) {
        if (locked && !Ready(l[j])) continue;
        const float d = Dist(q, l[j]);
        if (d < cur_d) {
          cur_d = d;
          cur = l[j];
          changed = true;
        }
      }
    }
  }
  return cur;
}

std::vector<HnswIndex::Candidate> HnswIndex::SearchLayerForInsert(const float* q, uint32_t ep,
                                                                  int level, uint32_t self,
                                                                  VisitedList* visited) const {
  const size_t ef = options_.ef_construction;
  std::priority_queue<Candidate, std::vector<Candidate>, Closer> cand;
  std::priority_queue<Candidate, std::vector<Candidate>, Farther> res;
  visited->Begin(count_);
  visited->TestAndSet(self);
  visited->TestAndSet(ep);
  const float d0 = Dist(q, ep);
  cand.push({d0, ep});
  res.push({d0, ep});
  std::vector<uint32_t> buf(2 * M_ + 1);
  while (!cand.empty()) {
    const Candidate c = cand.top();
    if (c.dist > res.top().dist && res.size() >= ef) break;
    cand.pop();
    {
      std::lock_guard<std::mutex> g(LockFor(c.id));
      const uint32_t* l = Links(c.id, level);
      std::memcpy(buf.data(), l, sizeof(uint32_t) * (l[0] + 1));
    }
    const uint32_t cnt = buf[0];
    if (cnt > 0) __builtin_prefetch(VectorOf(buf[1]));
    for (uint32_t j = 1; j <= cnt; ++j) {
      const uint32_t nb = buf[j];
      if (j < cnt) __builtin_prefetch(VectorOf(buf[j + 1]));
      if (visited->TestAndSet(nb)) continue;
      const float d = Dist(q, nb);
      if (res.size() < ef || d < res.top().dist) {
        cand.push({d, nb});
        res.push({d, nb});
        if (res.size() > ef) res.pop();
      }
    }
  }
  std::vector<Candidate> out(res.size());
  for (size_t i = out.size(); i-- > 0;) {
    out[i] = res.top();
    res.pop();
  }
  return out;
}

// Alg. 4 without candidate extension: walk candidates nearest first and keep
// one only if it is closer to the base than to every neighbour kept so far.
void HnswIndex::SelectNeighbors(std::vector<Candidate>* sorted, size_t m) const {
  if (sorted->size() <= m) return;
  std::vector<Candidate> kept;
  kept.reserve(m);
  for (const Candidate& e : *sorted) {
    if (kept.size() >= m) break;
    bool good = true;
    for (const Candidate& r : kept) {
      if (Dist(VectorOf(e.id), r.id) < e.dist) {
        good = false;
        break;
      }
    }
    if (good) kept.push_back(e);
  }
  sorted->swap(kept);
}

void HnswIndex::Connect(uint32_t from, uint32_t to, int level) {
  std::lock_guard<std::mutex> g(LockFor(from));
  uint32_t* l = Links(from, level);
  const uint32_t cnt = l[0];
  for (uint32_t j = 1; j <= cnt; ++j) {
    if (l[j] == to) return;
  }
  const uint32_t cap = MaxLinks(level);
  if (cnt < cap) {
    l[cnt + 1] = to;
    l[0] = cnt + 1;
    return;
  }
  const float* base = VectorOf(from);
  std::vector<Candidate> cands;
  cands.reserve(cnt + 1);
  cands.push_back({Dist(base, to), to});
  for (uint32_t j = 1; j <= cnt; ++j) cands.push_back({Dist(base, l[j]), l[j]});
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& a, const Candidate& b) { return a.dist < b.dist; });
  SelectNeighbors(&cands, cap);
  l[0] = static_cast<uint32_t>(cands.size());
  for (size_t j = 0; j < cands.size(); ++j) l[j + 1] = cands[j].id;
}

// Writes a new node's neighbours at one level. Under concurrent inserts
// another thread may already have linked to this node here (it can reach the
// node through a higher level before this level is written): keep those
// links too, shrinking with the heuristic if the union overflows.
void HnswIndex::SetOwnLinks(uint32_t node, int level, const std::vector<Candidate>& chosen) {
  std::lock_guard<std::mutex> g(LockFor(node));
  uint32_t* l = Links(node, level);
  const uint32_t before = l[0];
  if (before == 0) {
    l[0] = static_cast<uint32_t>(chosen.size());
    for (size_t j = 0; j < chosen.size(); ++j) l[j + 1] = chosen[j].id;
    return;
  }
  std::vector<Candidate> all = chosen;
  const float* base = VectorOf(node);
  for (uint32_t j = 1; j <= before; ++j) {
    bool dup = false;
    for (const Candidate& c : chosen) dup = dup || c.id == l[j];
    if (!dup) all.push_back({Dist(base, l[j]), l[j]});
  }
  std::sort(all.begin(), all.end(),
            [](const Candidate& a, const Candidate& b) { return a.dist < b.dist; });
  SelectNeighbors(&all, MaxLinks(level));
  l[0] = static_cast<uint32_t>(all.size());
  for (size_t j = 0; j < all.size(); ++j) l[j + 1] = all[j].id;
}

void HnswIndex::InsertNode(uint32_t node) {
  const float* q = VectorOf(node);
  const int level = levels_[node];
  std::unique_lock<std::mutex> top(entry_mu_);
  if (max_level_ < 0) {
    entry_point_ = node;
    max_level_ = level;
    return;
  }
  const uint32_t ep = entry_point_;
  const int top_level = max_level_;
  // A node that raises the top level keeps the entry lock for its whole
  // insertion, so two such nodes cannot race to become the entry point.
  if (level <= top_level) top.unlock();
  auto visited = visited_pool_.Acquire(count_);
  uint32_t cur = GreedyDescend(q, ep, top_level, level, /*locked=*/true);
  for (int lc = std::min(level, top_level); lc >= 0; --lc) {
    std::vector<Candidate> cands = SearchLayerForInsert(q, cur, lc, node, visited.get());
    SelectNeighbors(&cands, M_);
    SetOwnLinks(node, lc, cands);
    for (const Candidate& c : cands) Connect(c.id, node, lc);
    // Enter the next level at the nearest neighbour that is fully linked.
    for (const Candidate& c : cands) {
      if (Ready(c.id)) {
        cur = c.id;
        break;
      }
    }
  }
  if (level > top_level) {
    entry_point_ = node;
    max_level_ = level;
  }
}

Status HnswIndex::CheckMarkDeleted(const uint64_t* ids, size_t n) const {
  if (n > 0 && ids == nullptr) return Status::InvalidArgument("null input");
  std::unordered_set<uint64_t> seen;
  seen.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!seen.insert(ids[i]).second) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " appears twice in the batch");
    }
    if (label_to_node_.count(ids[i]) == 0) {
      return Status::NotFound("id " + std::to_string(ids[i]) + " is not in the index");
    }
  }
  return Status::OK();
}

Status HnswIndex::MarkDeleted(const uint64_t* ids, size_t n) {
  CHITTA_RETURN_IF_ERROR(CheckMarkDeleted(ids, n));
  for (size_t i = 0; i < n; ++i) {
    auto it = label_to_node_.find(ids[i]);
    deleted_[it->second] = 1;
    label_to_node_.erase(it);
  }
  return Status::OK();
}

}  // namespace chitta::hnsw
