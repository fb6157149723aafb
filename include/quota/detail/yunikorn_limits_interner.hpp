// SPDX-License-Identifier: Apache-2.0
// quota/detail/yunikorn_limits_interner.hpp — interned names of a yunikorn_limits_model (quota/yunikorn_limits.hpp):
// users, groups, applications and queue paths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <quota/detail/name_hash.hpp>
#include <quota/error.hpp>

namespace quota::detail {

/// Capacity for n elements, growing geometrically: reserve(size() + 1) on
/// every insert would copy the whole vector each time (quadratic).
template <class V>
void reserve_at_least(V& v, std::size_t n) {
  if (v.capacity() < n) v.reserve(std::max(n, 2 * v.capacity()));
}

inline constexpr std::uint32_t limits_none = 0xFFFFFFFFU;
/// Eight and four bytes of a name, loaded as one word (fixed-size loads: no
/// call into memcpy or memcmp on the hot path).
[[nodiscard, gnu::always_inline]] inline std::uint64_t limits_load8(const char* p) noexcept { return name_load8(p); }
[[nodiscard, gnu::always_inline]] inline std::uint32_t limits_load4(const char* p) noexcept { return name_load4(p); }

/// The hash of a short name (user, group, application, queue path).
[[nodiscard]] inline std::uint64_t limits_hash(std::string_view s) noexcept {
  return name_hash(s);
}

/// Equality of two names with fixed-size loads (no call into memcmp for the
/// short names of users, applications and queue paths).
[[nodiscard, gnu::always_inline]] inline bool limits_eq(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      if (limits_load8(p + i) != limits_load8(q + i)) return false;
    return limits_load8(p + n - 8) == limits_load8(q + n - 8);
  }
  if (n >= 4) return limits_load4(p) == limits_load4(q) && limits_load4(p + n - 4) == limits_load4(q + n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

/// Interned names: an open-addressing table (linear probing, backward-shift
/// deletion) looked up by string_view without a temporary std::string. Ids
/// are dense; a forgotten id is reused by a later name.
class limits_interner {
 public:
  limits_interner() : table_(16, slot{0, limits_none}) {}
  /// A copy owns its names (the pointers are rebuilt) and the same reserved
  /// room, so forget() never allocates in it either.
  limits_interner(const limits_interner& o)
      : table_(o.table_), names_(o.names_), alive_(o.alive_), live_(o.live_), count_(o.count_) {
    ptrs_.reserve(std::max(o.ptrs_.capacity(), names_.size()));
    for (const auto& n : names_) ptrs_.push_back(&n);
    free_.reserve(std::max(o.free_.capacity(), names_.size()));
    free_ = o.free_;
    alive_.reserve(std::max(o.alive_.capacity(), names_.size()));
  }
  limits_interner& operator=(const limits_interner&) = delete;
  limits_interner(limits_interner&&) noexcept = default;
  limits_interner& operator=(limits_interner&&) noexcept = default;
  ~limits_interner() = default;

  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view n) const noexcept {
    const std::uint32_t id = lookup(n, limits_hash(n));
    if (id == limits_none) return std::nullopt;
    return id;
  }
  std::uint32_t intern(std::string_view n) {
    const std::uint64_t h = limits_hash(n);
    if (const auto id = lookup(n, h); id != limits_none) return id;
    if ((live_ + 1) * 2 > table_.size()) grow();
    std::uint32_t id = 0;
    if (!free_.empty()) {
      id = free_.back();
      names_[id].assign(n.data(), n.size());  // may throw: nothing changed yet
      free_.pop_back();
    } else {
      if (names_.size() >= 0xFFFFFFF0U) throw overflow_error("too many interned names");
      id = count_;
      detail::reserve_at_least(free_, names_.size() + 1);  // forget() never allocates
      detail::reserve_at_least(alive_, names_.size() + 1);
      detail::reserve_at_least(ptrs_, names_.size() + 1);
      names_.emplace_back(n);
      ptrs_.push_back(&names_.back());  // capacity reserved above
      alive_.push_back(0);
      ++count_;
    }
    alive_[id] = 1;
    place(static_cast<std::uint32_t>(h), id);
    ++live_;
    return id;
  }
  /// Drops a name; its id may be handed out again.
  void forget(std::uint32_t id) noexcept {
    if (id >= count_ || !alive_[id]) return;
    const std::size_t mask = table_.size() - 1;
    std::size_t i = static_cast<std::uint32_t>(limits_hash(names_[id])) & mask;
    while (table_[i].id != id) {
      if (table_[i].id == limits_none) return;
      i = (i + 1) & mask;
    }
    // backward shift: later entries of the probe run move into the hole
    for (std::size_t j = (i + 1) & mask; table_[j].id != limits_none; j = (j + 1) & mask) {
      const std::size_t home = table_[j].tag & mask;
      const bool move = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (move) {
        table_[i] = table_[j];
        i = j;
      }
    }
    table_[i] = slot{0, limits_none};
    names_[id].clear();
    // a short name's buffer stays for the next name given this id (no
    // allocation when an application is checked, admitted and released again)
    if (names_[id].capacity() > kept_capacity) names_[id].shrink_to_fit();
    alive_[id] = 0;
    free_.push_back(id);  // capacity reserved by intern
    --live_;
  }
  [[nodiscard]] const std::string& name(std::uint32_t id) const noexcept { return *ptrs_[id]; }
  /// One past the largest id handed out.
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  /// Names currently interned.
  [[nodiscard]] std::size_t live() const noexcept { return live_; }
  [[nodiscard]] bool alive(std::uint32_t id) const noexcept { return id < alive_.size() && alive_[id] != 0; }

 private:
  struct slot {
    std::uint32_t tag;  // low 32 bits of the hash (also the home index)
    std::uint32_t id;   // limits_none: empty
  };
  [[nodiscard]] std::uint32_t lookup(std::string_view n, std::uint64_t h) const noexcept {
    const std::size_t mask = table_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(h);
    for (std::size_t i = tag & mask;; i = (i + 1) & mask) {
      const slot& s = table_[i];
      if (s.id == limits_none) return limits_none;
      if (s.tag == tag && limits_eq(*ptrs_[s.id], n)) return s.id;
    }
  }
  void place(std::uint32_t tag, std::uint32_t id) noexcept {
    const std::size_t mask = table_.size() - 1;
    std::size_t i = tag & mask;
    while (table_[i].id != limits_none) i = (i + 1) & mask;
    table_[i] = slot{tag, id};
  }
  void grow() {
    std::vector<slot> old(table_.size() * 2, slot{0, limits_none});
    old.swap(table_);
    for (const auto& s : old)
      if (s.id != limits_none) place(s.tag, s.id);
  }
  static constexpr std::size_t kept_capacity = 256;
  std::vector<slot> table_;               // power-of-two size, at most half full
  std::deque<std::string> names_;         // stable addresses
  std::vector<const std::string*> ptrs_;  // names_[id], without the deque's index arithmetic
  std::vector<std::uint8_t> alive_;
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
  std::uint32_t count_ = 0;  // names_.size(), without the deque's arithmetic
};

}  // namespace quota::detail
