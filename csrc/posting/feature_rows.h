// csrc/posting/feature_rows.h
// The posting index's per-ordinal feature rows (`active` sorted feature ids
// each), stored as u16 when every feature id fits (n_features <= 65536, the
// usual 16,384) and as u32 otherwise: half the bytes of the largest part of
// the index at the default size. Not thread-safe: the index holds the lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chitta::posting {

class FeatureRows {
 public:
  void Configure(uint32_t n_features, size_t active) {
    narrow_ = n_features <= 65536;
    a_ = active;
  }
  bool narrow() const { return narrow_; }

  // Appends n rows of `active` u32 feature ids (each below n_features).
  void Append(const uint32_t* rows, size_t n) {
    if (narrow_) {
      const size_t at = u16_.size();
      u16_.resize(at + n * a_);
      std::copy_n(rows, n * a_, u16_.begin() + static_cast<std::ptrdiff_t>(at));
    } else {
      u32_.insert(u32_.end(), rows, rows + n * a_);
    }
  }
  void ReserveRows(size_t n) { narrow_ ? u16_.reserve(n * a_) : u32_.reserve(n * a_); }
  void ResizeRows(size_t n) { narrow_ ? u16_.resize(n * a_) : u32_.resize(n * a_); }
  void SetRow(size_t row, const uint32_t* in) {
    if (narrow_) {
      std::copy_n(in, a_, u16_.begin() + static_cast<std::ptrdiff_t>(row * a_));
    } else {
      std::copy_n(in, a_, u32_.begin() + static_cast<std::ptrdiff_t>(row * a_));
    }
  }
  // Copies row `from` over row `to` (compaction, to <= from).
  void MoveRow(size_t from, size_t to) {
    if (narrow_) {
      std::copy_n(u16_.begin() + static_cast<std::ptrdiff_t>(from * a_), a_,
                  u16_.begin() + static_cast<std::ptrdiff_t>(to * a_));
    } else {
      std::copy_n(u32_.begin() + static_cast<std::ptrdiff_t>(from * a_), a_,
                  u32_.begin() + static_cast<std::ptrdiff_t>(to * a_));
    }
  }
  void Truncate(size_t n_rows) {
    ResizeRows(n_rows);
    u16_.shrink_to_fit();
    u32_.shrink_to_fit();
  }
  void Read(size_t row, uint32_t* out) const {
    if (narrow_) {
      std::copy_n(u16_.begin() + static_cast<std::ptrdiff_t>(row * a_), a_, out);
    } else {
      std::copy_n(u32_.begin() + static_cast<std::ptrdiff_t>(row * a_), a_, out);
    }
  }
  // f(const uint16_t*) or f(const uint32_t*) with the row's `active` ids.
  template <typename F>
  auto With(size_t row, F&& f) const {
    return narrow_ ? f(u16_.data() + row * a_) : f(u32_.data() + row * a_);
  }
  size_t MemoryBytes() const {
    return u16_.capacity() * sizeof(uint16_t) + u32_.capacity() * sizeof(uint32_t);
  }

 private:
  bool narrow_ = true;
  size_t a_ = 0;
  std::vector<uint16_t> u16_;
  std::vector<uint32_t> u32_;
};

}  // namespace chitta::posting
