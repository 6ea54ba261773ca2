// csrc/recall/word_index.cc
// WordIndex (word_index.h): exact scan up to the limit (word_scan.h), HNSW
// graph above, searches under a shared lock, adds under the exclusive one.
#include "recall/word_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include "hnsw/distance.h"
#include "hnsw/hnsw.h"
#include "recall/word_scan.h"

namespace chitta::recall {
namespace {

// a ranks before b: higher cosine, then the smaller row.
bool Better(const WordHit& a, const WordHit& b) {
  return a.cosine > b.cosine || (a.cosine == b.cosine && a.row < b.row);
}

// Below this many rows one f32 dot per row is as cheap as the quantized pass.
constexpr size_t kQuantizedFrom = 256;

// The graph's options: inner product over the rows (zero rows allowed).
hnsw::Options GraphOptions(const WordIndexOptions& o) {
  hnsw::Options g;
  g.dim = o.dim;
  g.M = o.M;
  g.ef_construction = o.ef_construction;
  g.metric = hnsw::Metric::kInnerProduct;
  g.seed = o.seed;
  return g;
}

}  // namespace

struct WordIndex::Table {
  WordIndexOptions options;
  hnsw::DotFn dot = hnsw::ChosenDot();
  mutable std::shared_mutex mu;  // rows, n and graph: searches shared, adds exclusive
  std::mutex add_mu;             // one Add at a time (it reads rows outside mu)
  std::vector<float> rows;
  QuantRows quant;  // their int8 form, for the exact scan's first pass (word_scan.h)
  size_t n = 0;
  std::unique_ptr<hnsw::HnswIndex> graph;  // set once n > exact_limit

  const float* Row(size_t i) const { return rows.data() + i * options.dim; }

  // The caller holds mu (shared or exclusive); q is a unit query.
  void SearchLocked(const float* q, size_t want, std::vector<WordHit>* out) const {
    out->clear();
    const size_t dim = options.dim;
    const size_t k = std::min(want, n);
    if (k == 0) return;
    if (graph == nullptr) {
      if (n < kQuantizedFrom) {
        ScanTopK(rows.data(), n, dim, dot, q, k, out);
      } else {
        ExactTopK(quant, rows.data(), n, dot, q, k, out);
      }
      return;
    }
    std::vector<hnsw::Hit> hits;
    graph->SearchPrepared(q, k, std::max(options.ef, k), nullptr, &hits);
    out->reserve(hits.size());
    for (const auto& hit : hits) {  // the cosine as the exact scan computes it
      const size_t row = static_cast<size_t>(hit.second);
      out->push_back({static_cast<uint32_t>(row), dot(q, Row(row), dim)});
    }
    std::sort(out->begin(), out->end(), Better);
  }
};

WordIndex::WordIndex(const WordIndexOptions& options)
    : options_(options), table_(std::make_shared<Table>()) {
  table_->options = options;
  table_->quant = QuantRows(options.dim);
}

WordIndex::~WordIndex() = default;

Result<std::unique_ptr<WordIndex>> WordIndex::Create(const WordIndexOptions& options) {
  if (options.dim == 0 || options.dim > hnsw::kMaxDim) {
    return Status::InvalidArgument("dim must be in [1, " + std::to_string(hnsw::kMaxDim) +
                                   "], got " + std::to_string(options.dim));
  }
  if (options.ef == 0) return Status::InvalidArgument("ef must be positive");
  if (options.exact_limit >= (size_t{1} << 32)) {
    return Status::InvalidArgument("exact_limit must be below 2^32");
  }
  CHITTA_RETURN_IF_ERROR(hnsw::ValidateOptions(GraphOptions(options)));
  return std::unique_ptr<WordIndex>(new WordIndex(options));
}

Status WordIndex::Add(const float* rows, size_t n) {
  if (n == 0) return Status::OK();
  if (rows == nullptr) return Status::InvalidArgument("null rows");
  const size_t dim = options_.dim;
  for (size_t i = 0; i < n * dim; ++i) {
    if (!std::isfinite(rows[i])) {
      return Status::InvalidArgument("row " + std::to_string(i / dim) +
                                     " has a NaN or infinite value");
    }
  }
  Table& t = *table_;
  std::lock_guard<std::mutex> adding(t.add_mu);
  const size_t old_n = t.n;
  const size_t new_n = old_n + n;
  if (new_n >= (size_t{1} << 32)) return Status::InvalidArgument("a word index holds < 2^32 rows");
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = old_n + i;
  std::unique_ptr<hnsw::HnswIndex> built;
  if ((new_n > options_.exact_limit || options_.graph_now) && t.graph == nullptr) {
    // The first graph, built outside the lock over the rows so far (only Add
    // writes them, and we hold add_mu) and the new ones: searches go on.
    built = std::make_unique<hnsw::HnswIndex>(GraphOptions(options_));
    std::vector<uint64_t> old_ids(old_n);
    for (size_t i = 0; i < old_n; ++i) old_ids[i] = i;
    built->AddPrepared(old_ids.data(), t.rows.data(), old_n, 1);
    built->AddPrepared(ids.data(), rows, n, 1);
  }
  std::unique_lock<std::shared_mutex> lock(t.mu);
  t.rows.insert(t.rows.end(), rows, rows + n * dim);
  t.quant.Append(rows, n);
  t.n = new_n;
  if (built != nullptr) {
    t.graph = std::move(built);
  } else if (t.graph != nullptr) {
    t.graph->AddPrepared(ids.data(), rows, n, 1);
  }
  return Status::OK();
}

Status WordIndex::Prepare(const float* query, size_t want, std::vector<float>* unit) const {
  if (want < 1) return Status::InvalidArgument("want must be >= 1");
  if (query == nullptr) return Status::InvalidArgument("null query");
  const size_t dim = options_.dim;
  double norm2 = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    if (!std::isfinite(query[i])) {
      return Status::InvalidArgument("the query has a NaN or infinite value");
    }
    norm2 += static_cast<double>(query[i]) * query[i];
  }
  if (!(norm2 > 0.0)) return Status::InvalidArgument("the query is zero: it has no direction");
  const double inv = 1.0 / std::sqrt(norm2);
  unit->resize(dim);
  for (size_t i = 0; i < dim; ++i) (*unit)[i] = static_cast<float>(query[i] * inv);
  return Status::OK();
}

Status WordIndex::Search(const float* query, size_t want, std::vector<WordHit>* out) const {
  std::vector<float> q;
  CHITTA_RETURN_IF_ERROR(Prepare(query, want, &q));
  std::shared_lock<std::shared_mutex> lock(table_->mu);
  table_->SearchLocked(q.data(), want, out);
  return Status::OK();
}

Result<std::shared_ptr<WordSearch>> WordIndex::Start(const float* query, size_t want) const {
  std::vector<float> q;
  CHITTA_RETURN_IF_ERROR(Prepare(query, want, &q));
  auto hits = std::make_shared<std::vector<WordHit>>();
  auto ticket = hnsw::ProcessSearchWorker().Submit(
      [table = table_, q = std::move(q), want, hits] {
        std::shared_lock<std::shared_mutex> lock(table->mu);
        table->SearchLocked(q.data(), want, hits.get());
        return Status::OK();
      });
  return std::make_shared<WordSearch>(std::move(ticket), std::move(hits));
}

Result<size_t> WordIndex::SaveGraph(const std::string& path) const {
  std::shared_lock<std::shared_mutex> lock(table_->mu);
  if (table_->graph == nullptr) return Status::InvalidArgument("the word index has no graph to save");
  CHITTA_RETURN_IF_ERROR(table_->graph->Save(path));
  return table_->graph->node_count();
}

Result<std::unique_ptr<WordIndex>> WordIndex::LoadGraph(const WordIndexOptions& options,
                                                        const float* rows, size_t n,
                                                        const std::string& path) {
  auto made = Create(options);
  CHITTA_RETURN_IF_ERROR(made.status());
  std::unique_ptr<WordIndex> index = std::move(made.value());
  auto loaded = hnsw::HnswIndex::Load(path);
  CHITTA_RETURN_IF_ERROR(loaded.status());
  std::unique_ptr<hnsw::HnswIndex> graph = std::move(loaded.value());
  auto unlike = [&](const std::string& what) {
    return Status::Corruption(path + ": not this word table's graph: " + what);
  };
  const hnsw::Options& g = graph->options();
  if (g.dim != options.dim || g.metric != hnsw::Metric::kInnerProduct || g.M != options.M ||
      g.ef_construction != options.ef_construction) {
    return unlike("dim " + std::to_string(g.dim) + ", M " + std::to_string(g.M) +
                  ", ef_construction " + std::to_string(g.ef_construction) + ", metric " +
                  std::to_string(static_cast<int>(g.metric)) + " (want dim " +
                  std::to_string(options.dim) + ", M " + std::to_string(options.M) +
                  ", ef_construction " + std::to_string(options.ef_construction) +
                  ", inner product)");
  }
  const size_t m = graph->node_count();
  if (m == 0 || m > n || graph->size() != m) {
    return unlike(std::to_string(m) + " nodes (" + std::to_string(graph->size()) +
                  " live) for a table of " + std::to_string(n) + " rows");
  }
  if (rows == nullptr) return Status::InvalidArgument("null rows");
  const size_t dim = options.dim;
  size_t node = 0;
  bool same = true;
  graph->ForEachLive([&](uint64_t label, const float* v) {
    same = same && label == node && std::memcmp(v, rows + node * dim, dim * sizeof(float)) == 0;
    ++node;
  });
  if (!same) return unlike("a node's label is not its row, or its vector is not that row's");
  Table& t = *index->table_;
  t.rows.assign(rows, rows + m * dim);
  t.quant.Append(rows, m);
  t.n = m;
  t.graph = std::move(graph);
  return index;
}

size_t WordIndex::size() const {
  std::shared_lock<std::shared_mutex> lock(table_->mu);
  return table_->n;
}

bool WordIndex::has_graph() const {
  std::shared_lock<std::shared_mutex> lock(table_->mu);
  return table_->graph != nullptr;
}

}  // namespace chitta::recall
