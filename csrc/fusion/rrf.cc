// csrc/fusion/rrf.cc
// RrfFuse: one hash pass over all lists, then a sort by (score, best rank, id).
#include "fusion/rrf.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

namespace chitta::fusion {

Status RrfFuse(const std::vector<RankedList>& lists, const std::vector<double>& weights, double k,
               size_t limit, bool want_ranks, FusedResult* out) {
  if (!std::isfinite(k) || k < 0) {
    return Status::InvalidArgument("k must be finite and >= 0, got " + std::to_string(k));
  }
  if (!weights.empty() && weights.size() != lists.size()) {
    return Status::InvalidArgument("got " + std::to_string(weights.size()) + " weights for " +
                                   std::to_string(lists.size()) + " lists");
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0) {
      return Status::InvalidArgument("weight " + std::to_string(i) +
                                     " must be finite and >= 0, got " +
                                     std::to_string(weights[i]));
    }
  }
  size_t total = 0;
  for (const RankedList& l : lists) {
    if (l.size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      return Status::InvalidArgument("a ranked list is longer than 2^31 - 1 entries");
    }
    total += l.size;
  }
  const size_t n_lists = lists.size();

  std::unordered_map<uint64_t, uint32_t> slot_of;
  slot_of.reserve(total);
  std::vector<uint64_t> ids;
  std::vector<double> scores;
  std::vector<int32_t> best;
  std::vector<uint32_t> last_list;  // last list that scored the slot, to skip repeats
  std::vector<int32_t> ranks;       // [slot x n_lists] when wanted
  for (size_t li = 0; li < n_lists; ++li) {
    const double w = weights.empty() ? 1.0 : weights[li];
    const RankedList& l = lists[li];
    for (size_t pos = 0; pos < l.size; ++pos) {
      const uint64_t id = l.ids[pos];
      if (id == kPadId) continue;
      const auto rank = static_cast<int32_t>(pos + 1);
      auto [it, inserted] = slot_of.try_emplace(id, static_cast<uint32_t>(ids.size()));
      const uint32_t slot = it->second;
      if (inserted) {
        ids.push_back(id);
        scores.push_back(0.0);
        best.push_back(rank);
        last_list.push_back(static_cast<uint32_t>(li));
        if (want_ranks) ranks.resize(ranks.size() + n_lists, 0);
      } else if (last_list[slot] == li) {
        continue;  // repeated within this list: the first position counts
      } else {
        last_list[slot] = static_cast<uint32_t>(li);
        best[slot] = std::min(best[slot], rank);
      }
      if (want_ranks) ranks[size_t{slot} * n_lists + li] = rank;
      scores[slot] += w / (k + static_cast<double>(rank));
    }
  }
  std::vector<uint32_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0u);
  auto better = [&](uint32_t x, uint32_t y) {
    if (scores[x] != scores[y]) return scores[x] > scores[y];
    if (best[x] != best[y]) return best[x] < best[y];
    return ids[x] < ids[y];
  };
  const size_t m = (limit == 0 || limit > order.size()) ? order.size() : limit;
  if (m < order.size()) {
    std::partial_sort(order.begin(), order.begin() + m, order.end(), better);
    order.resize(m);
  } else {
    std::sort(order.begin(), order.end(), better);
  }
  out->ids.resize(m);
  out->scores.resize(m);
  out->ranks.assign(want_ranks ? m * n_lists : 0, 0);
  for (size_t r = 0; r < m; ++r) {
    const uint32_t s = order[r];
    out->ids[r] = ids[s];
    out->scores[r] = scores[s];
    if (want_ranks) {
      std::copy_n(ranks.begin() + size_t{s} * n_lists, n_lists, out->ranks.begin() + r * n_lists);
    }
  }
  return Status::OK();
}

}  // namespace chitta::fusion
