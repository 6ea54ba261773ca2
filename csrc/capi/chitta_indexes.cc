// csrc/capi/chitta_indexes.cc
// The C API of the native indexes: posting (sparse codes), Hamming (binary
// codes) and tiered HNSW. Thin wrappers over csrc/posting, csrc/hamming and
// csrc/hnsw; each entry point checks pointers and sizes, then lets the class
// check values, inside Guard().
#include <memory>
#include <string>

#include "capi/capi_util.h"
#include "chitta/chitta_field.h"
#include "hamming/hamming_index.h"
#include "hnsw/tiered.h"
#include "posting/posting_index.h"

struct cf_posting {
  std::unique_ptr<chitta::posting::PostingIndex> index;
};
struct cf_hamming {
  std::unique_ptr<chitta::hamming::HammingIndex> index;
};
struct cf_hnsw {
  std::unique_ptr<chitta::hnsw::TieredIndex> index;
};

namespace {

using chitta::capi::CountFits;
using chitta::capi::Fail;
using chitta::capi::Guard;
using chitta::capi::Invalid;

// An array of n rows of width elements must be non-NULL unless empty, and its
// element count must not overflow.
cf_status CheckRows(const char* fn, const char* name, const void* p, size_t n, size_t width) {
  if (!CountFits(n, width)) return Invalid(fn, std::string(name) + ": row count overflows");
  if (p == nullptr && n != 0 && width != 0) return Invalid(fn, std::string(name) + " is NULL");
  return CF_OK;
}

template <typename H>
cf_status CheckHandle(const char* fn, const H* h) {
  if (h == nullptr || !h->index) return Invalid(fn, "index handle is NULL");
  return CF_OK;
}

cf_status CheckOut(const char* fn, const void* out) {
  return out == nullptr ? Invalid(fn, "out is NULL") : CF_OK;
}

}  // namespace

extern "C" {

// ---- posting ------------------------------------------------------------------

CF_API cf_status cf_posting_new(uint32_t n_features, uint32_t active, cf_posting_t** out) {
  return Guard("cf_posting_new", [&]() -> cf_status {
    if (cf_status s = CheckOut("cf_posting_new", out)) return s;
    chitta::posting::Options o;
    if (n_features != 0) o.n_features = n_features;
    if (active != 0) o.active = active;
    auto r = chitta::posting::PostingIndex::Create(o);
    if (!r.ok()) return Fail(r.status());
    auto p = std::make_unique<cf_posting>();
    p->index = std::move(r.value());
    *out = p.release();
    return CF_OK;
  });
}

CF_API void cf_posting_free(cf_posting_t* p) { delete p; }

CF_API cf_status cf_posting_add(cf_posting_t* p, const uint64_t* ids, size_t n,
                                const uint32_t* features, const float* activations) {
  return Guard("cf_posting_add", [&]() -> cf_status {
    const char* fn = "cf_posting_add";
    if (cf_status s = CheckHandle(fn, p)) return s;
    const size_t active = p->index->active();
    if (cf_status s = CheckRows(fn, "ids", ids, n, 1)) return s;
    if (cf_status s = CheckRows(fn, "features", features, n, active)) return s;
    return Fail(p->index->Add(ids, n, features, activations));
  });
}

CF_API cf_status cf_posting_remove(cf_posting_t* p, const uint64_t* ids, size_t n) {
  return Guard("cf_posting_remove", [&]() -> cf_status {
    const char* fn = "cf_posting_remove";
    if (cf_status s = CheckHandle(fn, p)) return s;
    if (cf_status s = CheckRows(fn, "ids", ids, n, 1)) return s;
    return Fail(p->index->Remove(ids, n));
  });
}

CF_API cf_status cf_posting_search(const cf_posting_t* p, const uint32_t* queries,
                                   size_t n_queries, size_t width, size_t k,
                                   const uint64_t* allowed, size_t n_allowed, unsigned num_threads,
                                   uint64_t* out_ids, uint32_t* out_counts) {
  return Guard("cf_posting_search", [&]() -> cf_status {
    const char* fn = "cf_posting_search";
    if (cf_status s = CheckHandle(fn, p)) return s;
    if (k == 0) return Invalid(fn, "k must be at least 1");
    if (width == 0) return Invalid(fn, "width must be at least 1");
    if (cf_status s = CheckRows(fn, "queries", queries, n_queries, width)) return s;
    if (cf_status s = CheckRows(fn, "out_ids", out_ids, n_queries, k)) return s;
    if (cf_status s = CheckRows(fn, "out_counts", out_counts, n_queries, k)) return s;
    if (allowed == nullptr && n_allowed != 0) return Invalid(fn, "allowed is NULL with n_allowed > 0");
    chitta::posting::AllowedIds filter{allowed, n_allowed};
    return Fail(p->index->Search(queries, n_queries, width, k, allowed ? &filter : nullptr,
                                 out_ids, out_counts, num_threads));
  });
}

CF_API cf_status cf_posting_size(const cf_posting_t* p, size_t* out) {
  return Guard("cf_posting_size", [&]() -> cf_status {
    if (cf_status s = CheckHandle("cf_posting_size", p)) return s;
    if (cf_status s = CheckOut("cf_posting_size", out)) return s;
    *out = p->index->size();
    return CF_OK;
  });
}

// ---- Hamming ------------------------------------------------------------------

CF_API cf_status cf_hamming_new(size_t bits, cf_hamming_t** out) {
  return Guard("cf_hamming_new", [&]() -> cf_status {
    if (cf_status s = CheckOut("cf_hamming_new", out)) return s;
    auto r = chitta::hamming::HammingIndex::Create(bits);
    if (!r.ok()) return Fail(r.status());
    auto h = std::make_unique<cf_hamming>();
    h->index = std::move(r.value());
    *out = h.release();
    return CF_OK;
  });
}

CF_API void cf_hamming_free(cf_hamming_t* h) { delete h; }

CF_API cf_status cf_hamming_add(cf_hamming_t* h, const uint64_t* ids, const uint64_t* codes,
                                size_t n) {
  return Guard("cf_hamming_add", [&]() -> cf_status {
    const char* fn = "cf_hamming_add";
    if (cf_status s = CheckHandle(fn, h)) return s;
    if (cf_status s = CheckRows(fn, "ids", ids, n, 1)) return s;
    if (cf_status s = CheckRows(fn, "codes", codes, n, h->index->words())) return s;
    return Fail(h->index->Add(ids, codes, n));
  });
}

CF_API cf_status cf_hamming_remove(cf_hamming_t* h, const uint64_t* ids, size_t n) {
  return Guard("cf_hamming_remove", [&]() -> cf_status {
    if (cf_status s = CheckHandle("cf_hamming_remove", h)) return s;
    if (cf_status s = CheckRows("cf_hamming_remove", "ids", ids, n, 1)) return s;
    return Fail(h->index->Remove(ids, n));
  });
}

CF_API cf_status cf_hamming_search(const cf_hamming_t* h, const uint64_t* queries, size_t nq,
                                   size_t k, uint64_t* out_ids, uint32_t* out_dist) {
  return Guard("cf_hamming_search", [&]() -> cf_status {
    const char* fn = "cf_hamming_search";
    if (cf_status s = CheckHandle(fn, h)) return s;
    if (k == 0) return Invalid(fn, "k must be at least 1");
    if (cf_status s = CheckRows(fn, "queries", queries, nq, h->index->words())) return s;
    if (cf_status s = CheckRows(fn, "out_ids", out_ids, nq, k)) return s;
    if (cf_status s = CheckRows(fn, "out_dist", out_dist, nq, k)) return s;
    return Fail(h->index->Search(queries, nq, k, out_ids, out_dist));
  });
}

CF_API cf_status cf_hamming_size(const cf_hamming_t* h, size_t* out) {
  return Guard("cf_hamming_size", [&]() -> cf_status {
    if (cf_status s = CheckHandle("cf_hamming_size", h)) return s;
    if (cf_status s = CheckOut("cf_hamming_size", out)) return s;
    *out = h->index->size();
    return CF_OK;
  });
}

// ---- HNSW ---------------------------------------------------------------------

CF_API cf_status cf_hnsw_new(uint32_t dim, int32_t metric, uint32_t M, uint32_t ef_construction,
                             uint64_t seed, cf_hnsw_t** out) {
  return Guard("cf_hnsw_new", [&]() -> cf_status {
    const char* fn = "cf_hnsw_new";
    if (cf_status s = CheckOut(fn, out)) return s;
    chitta::hnsw::TieredOptions o;
    o.graph.dim = dim;
    if (M != 0) o.graph.M = M;
    if (ef_construction != 0) o.graph.ef_construction = ef_construction;
    o.graph.seed = seed;
    switch (metric) {
      case CF_METRIC_COSINE: o.graph.metric = chitta::hnsw::Metric::kCosine; break;
      case CF_METRIC_INNER_PRODUCT: o.graph.metric = chitta::hnsw::Metric::kInnerProduct; break;
      default: return Invalid(fn, "metric " + std::to_string(metric) + " is not a cf_metric");
    }
    auto r = chitta::hnsw::TieredIndex::Create(o);
    if (!r.ok()) return Fail(r.status());
    auto h = std::make_unique<cf_hnsw>();
    h->index = std::move(r.value());
    *out = h.release();
    return CF_OK;
  });
}

CF_API void cf_hnsw_free(cf_hnsw_t* h) { delete h; }

CF_API cf_status cf_hnsw_add(cf_hnsw_t* h, const uint64_t* ids, const float* vectors, size_t n,
                             int num_threads) {
  return Guard("cf_hnsw_add", [&]() -> cf_status {
    const char* fn = "cf_hnsw_add";
    if (cf_status s = CheckHandle(fn, h)) return s;
    if (num_threads < 0) return Invalid(fn, "num_threads must be >= 0");
    if (cf_status s = CheckRows(fn, "ids", ids, n, 1)) return s;
    if (cf_status s = CheckRows(fn, "vectors", vectors, n, h->index->options().graph.dim)) return s;
    if (n == 0) return CF_OK;
    return Fail(h->index->Add(ids, vectors, n, num_threads));
  });
}

CF_API cf_status cf_hnsw_remove(cf_hnsw_t* h, const uint64_t* ids, size_t n) {
  return Guard("cf_hnsw_remove", [&]() -> cf_status {
    if (cf_status s = CheckHandle("cf_hnsw_remove", h)) return s;
    if (cf_status s = CheckRows("cf_hnsw_remove", "ids", ids, n, 1)) return s;
    if (n == 0) return CF_OK;
    return Fail(h->index->MarkDeleted(ids, n));
  });
}

CF_API cf_status cf_hnsw_search(const cf_hnsw_t* h, const float* queries, size_t nq, size_t k,
                                size_t ef, const uint64_t* allowed, size_t n_allowed,
                                int num_threads, uint64_t* out_ids, float* out_dist) {
  return Guard("cf_hnsw_search", [&]() -> cf_status {
    const char* fn = "cf_hnsw_search";
    if (cf_status s = CheckHandle(fn, h)) return s;
    if (k == 0) return Invalid(fn, "k must be at least 1");
    if (num_threads < 0) return Invalid(fn, "num_threads must be >= 0");
    if (cf_status s = CheckRows(fn, "queries", queries, nq, h->index->options().graph.dim)) return s;
    if (cf_status s = CheckRows(fn, "out_ids", out_ids, nq, k)) return s;
    if (cf_status s = CheckRows(fn, "out_dist", out_dist, nq, k)) return s;
    if (allowed == nullptr && n_allowed != 0) return Invalid(fn, "allowed is NULL with n_allowed > 0");
    if (nq == 0) return CF_OK;
    if (ef == 0) ef = k > 64 ? k : 64;
    return Fail(h->index->Search(queries, nq, k, ef, allowed, n_allowed, allowed != nullptr,
                                 chitta::hnsw::MergeMode::kDistance, num_threads, out_ids,
                                 out_dist));
  });
}

CF_API cf_status cf_hnsw_size(const cf_hnsw_t* h, size_t* out) {
  return Guard("cf_hnsw_size", [&]() -> cf_status {
    if (cf_status s = CheckHandle("cf_hnsw_size", h)) return s;
    if (cf_status s = CheckOut("cf_hnsw_size", out)) return s;
    *out = h->index->size();
    return CF_OK;
  });
}

}  // extern "C"
