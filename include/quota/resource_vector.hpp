// SPDX-License-Identifier: Apache-2.0
// quota/resource_vector.hpp — exact vectors of resource amounts: basic_resource_vector
// and its aliases, whose type says what an absent dimension means.
// Docs: docs/resources.md
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/container/small_vector.hpp>

#include <quota/detail/checked.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/resource.hpp>
#include <quota/resource_concepts.hpp>

namespace quota {

/// The default amount: a signed 64-bit count of the resource's base unit.
using amount = std::int64_t;

template <class Amount>
struct resource_entry {
  resource_id id;
  Amount value;
  friend bool operator==(const resource_entry&, const resource_entry&) = default;
};

namespace detail {

template <class Amount, class Set>
class vector_storage;

// Dynamic set: entries sorted by id, inline up to 8 dimensions.
template <class Amount>
class vector_storage<Amount, dynamic_resources> {
 public:
  using entry = resource_entry<Amount>;
  using container = boost::container::small_vector<entry, 8>;
  using const_iterator = typename container::const_iterator;

  [[nodiscard]] const Amount* find(resource_id id) const noexcept {
    auto it = lower(id);
    return (it != items_.end() && it->id == id) ? &it->value : nullptr;
  }
  [[nodiscard]] Amount* find(resource_id id) noexcept {
    auto it =
        std::lower_bound(items_.begin(), items_.end(), id, [](const entry& e, resource_id i) { return e.id < i; });
    return (it != items_.end() && it->id == id) ? &it->value : nullptr;
  }
  void set(resource_id id, Amount v) {
    auto it =
        std::lower_bound(items_.begin(), items_.end(), id, [](const entry& e, resource_id i) { return e.id < i; });
    if (it != items_.end() && it->id == id)
      it->value = std::move(v);
    else
      items_.insert(it, entry{id, std::move(v)});
  }
  /// set(id, v) in O(1) when `id` is above every present id (filling a
  /// vector in ascending id order); any other id goes through set.
  void push_back(resource_id id, Amount v) {
    if (items_.empty() || items_.back().id < id)
      items_.push_back(entry{id, std::move(v)});
    else
      set(id, std::move(v));
  }
  void erase(resource_id id) noexcept {
    auto it =
        std::lower_bound(items_.begin(), items_.end(), id, [](const entry& e, resource_id i) { return e.id < i; });
    if (it != items_.end() && it->id == id) items_.erase(it);
  }
  void clear() noexcept { items_.clear(); }
  void reserve(std::size_t n) { items_.reserve(n); }
  /// this += o (Sub: this -= o) over the union of ids, checked, in one
  /// lockstep walk of both sorted lists. Strong guarantee: on overflow
  /// (overflow_error) or allocation failure nothing is changed. In place,
  /// without allocating, when every id of `o` is already present.
  template <bool Sub>
  void combine(const vector_storage& o) {
    if constexpr (is_builtin_integer_v<Amount>) {
      if (combines_in_place<Sub>(o)) {
        auto a = items_.begin();
        for (const entry& e : o.items_) {
          while (a->id < e.id) ++a;
          a->value = static_cast<Amount>(Sub ? a->value - e.value : a->value + e.value);  // no overflow: checked
          ++a;
        }
        return;
      }
    }
    // merged aside: an overflow (or an amount of arbitrary precision that
    // throws while written) leaves this vector as it was
    container merged;
    merged.reserve(items_.size() + o.items_.size());
    auto a = items_.begin();
    const auto ae = items_.end();
    for (const entry& e : o.items_) {
      for (; a != ae && a->id < e.id; ++a) merged.push_back(*a);
      if (a != ae && a->id == e.id) {
        merged.push_back(entry{e.id, Sub ? checked_sub(a->value, e.value) : checked_add(a->value, e.value)});
        ++a;
      } else {
        merged.push_back(entry{e.id, Sub ? checked_sub(Amount(0), e.value) : e.value});
      }
    }
    for (; a != ae; ++a) merged.push_back(*a);
    items_ = std::move(merged);
  }
  /// Whether combine<Sub>(o) writes only entries already present, without
  /// overflow, so that it cannot throw (built-in integer amounts only).
  template <bool Sub>
  [[nodiscard]] bool combines_in_place(const vector_storage& o) const noexcept {
    if constexpr (!is_builtin_integer_v<Amount>) {
      return false;
    } else {
      auto a = items_.begin();
      const auto ae = items_.end();
      for (const entry& e : o.items_) {
        while (a != ae && a->id < e.id) ++a;
        if (a == ae || a->id != e.id) return false;
        Amount r{};
        if (Sub ? __builtin_sub_overflow(a->value, e.value, &r) : __builtin_add_overflow(a->value, e.value, &r))
          return false;
      }
      return true;
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  [[nodiscard]] const_iterator begin() const noexcept { return items_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return items_.end(); }
  friend bool operator==(const vector_storage&, const vector_storage&) = default;

 private:
  [[nodiscard]] const_iterator lower(resource_id id) const noexcept {
    // small vectors: a linear scan beats binary search up to about 16 entries
    if (items_.size() > 16)
      return std::lower_bound(items_.begin(), items_.end(), id, [](const entry& e, resource_id i) { return e.id < i; });
    auto it = items_.begin();
    while (it != items_.end() && it->id < id) ++it;
    return it;
  }
  container items_;
};

// Fixed set: dense array plus presence mask.
template <class Amount, fixed_string... Names>
class vector_storage<Amount, fixed_resources<Names...>> {
  static constexpr std::size_t N = sizeof...(Names);

 public:
  using entry = resource_entry<Amount>;

  class const_iterator {
   public:
    using value_type = entry;
    using difference_type = std::ptrdiff_t;
    const_iterator() = default;
    const_iterator(const vector_storage* s, std::uint64_t rest) : s_(s), rest_(rest) {}
    entry operator*() const {
      const auto i = static_cast<std::size_t>(std::countr_zero(rest_));
      return entry{static_cast<resource_id>(i), s_->values_[i]};
    }
    const_iterator& operator++() {
      rest_ &= rest_ - 1;
      return *this;
    }
    const_iterator operator++(int) {
      auto t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.rest_ == b.rest_; }

   private:
    const vector_storage* s_ = nullptr;
    std::uint64_t rest_ = 0;
  };

  [[nodiscard]] const Amount* find(resource_id id) const noexcept {
    return (id < N && (mask_ >> id) & 1U) ? &values_[id] : nullptr;
  }
  [[nodiscard]] Amount* find(resource_id id) noexcept {
    return (id < N && (mask_ >> id) & 1U) ? &values_[id] : nullptr;
  }
  void set(resource_id id, Amount v) {
    if (id >= N) throw unknown_entity_error(error_id::unknown_resource, "resource id", std::to_string(id));
    values_[id] = std::move(v);
    mask_ |= (std::uint64_t{1} << id);
  }
  void push_back(resource_id id, Amount v) { set(id, std::move(v)); }
  void erase(resource_id id) noexcept {
    if (id < N) {
      mask_ &= ~(std::uint64_t{1} << id);
      values_[id] = Amount(0);
    }
  }
  void clear() noexcept {
    mask_ = 0;
    values_.fill(Amount(0));
  }
  void reserve(std::size_t) noexcept {}
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(std::popcount(mask_)); }
  [[nodiscard]] const_iterator begin() const noexcept { return const_iterator(this, mask_); }
  [[nodiscard]] const_iterator end() const noexcept { return const_iterator(this, 0); }
  [[nodiscard]] std::uint64_t mask() const noexcept { return mask_; }
  [[nodiscard]] const std::array<Amount, N>& values() const noexcept { return values_; }
  friend bool operator==(const vector_storage&, const vector_storage&) = default;

 private:
  std::array<Amount, N> values_{};
  std::uint64_t mask_ = 0;
};

template <class T>
[[nodiscard]] std::string amount_to_string(const T& v) {
  if constexpr (std::is_integral_v<T>)
    return std::to_string(v);
  else
    return v.str();
}

}  // namespace detail

/// A vector of exact amounts, one per present resource. See the file comment.
template <amount_type Amount, resource_set Set = dynamic_resources, absent_means Absent = absent_means::zero>
class basic_resource_vector {
  using storage = detail::vector_storage<Amount, Set>;

 public:
  using amount_type = Amount;
  using resource_set_type = Set;
  using entry = resource_entry<Amount>;
  using const_iterator = typename storage::const_iterator;
  static constexpr absent_means absent = Absent;

  basic_resource_vector() = default;
  basic_resource_vector(std::initializer_list<std::pair<resource_id, Amount>> init) {
    s_.reserve(init.size());
    for (const auto& [id, v] : init) s_.set(id, v);
  }

  /// Is the dimension present (explicitly, possibly with value 0)?
  [[nodiscard]] bool has(resource_id id) const noexcept { return s_.find(id) != nullptr; }
  /// The stored amount, or nullptr when absent.
  [[nodiscard]] const Amount* find(resource_id id) const noexcept { return s_.find(id); }

  /// The amount of `id`; an absent dimension is 0. Only for vectors whose
  /// absent dimensions mean zero (usage, requests, strict limits).
  [[nodiscard]] Amount get(resource_id id) const requires(Absent == absent_means::zero) {
    const Amount* p = s_.find(id);
    return p ? *p : Amount(0);
  }
  /// The bound for `id`: nullopt means unlimited. For zero-absent vectors an
  /// absent dimension is a bound of 0.
  [[nodiscard]] std::optional<Amount> bound(resource_id id) const {
    const Amount* p = s_.find(id);
    if (p) return *p;
    if constexpr (Absent == absent_means::unlimited)
      return std::nullopt;
    else
      return Amount(0);
  }

  void set(resource_id id, Amount v) { s_.set(id, std::move(v)); }
  /// The same as set(id, v); constant time when `id` is above every present
  /// id, so filling a vector in ascending id order does no search or shift.
  void push_back(resource_id id, Amount v) { s_.push_back(id, std::move(v)); }
  void erase(resource_id id) noexcept { s_.erase(id); }
  void clear() noexcept { s_.clear(); }
  void reserve(std::size_t n) { s_.reserve(n); }

  /// Adds `v` to dimension `id` (checked).
  void add(resource_id id, const Amount& v) {
    if (Amount* p = s_.find(id))
      *p = detail::checked_add(*p, v);
    else
      s_.set(id, v);
  }

  /// Number of present dimensions.
  [[nodiscard]] std::size_t size() const noexcept { return s_.size(); }
  [[nodiscard]] bool empty() const noexcept { return s_.size() == 0; }
  [[nodiscard]] const_iterator begin() const noexcept { return s_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return s_.end(); }

  /// True when every present amount is 0 (or nothing is present).
  [[nodiscard]] bool is_zero() const noexcept {
    for (const auto& e : *this)
      if (e.value != Amount(0)) return false;
    return true;
  }
  /// True when some present amount is below 0.
  [[nodiscard]] bool any_negative() const noexcept {
    for (const auto& e : *this)
      if (e.value < Amount(0)) return true;
    return false;
  }
  /// Drops explicitly present zero dimensions (no change of meaning for
  /// zero-absent vectors).
  void drop_zeros() requires(Absent == absent_means::zero) {
    boost::container::small_vector<resource_id, 8> zeros;
    for (const auto& e : *this)
      if (e.value == Amount(0)) zeros.push_back(e.id);
    for (auto id : zeros) s_.erase(id);
  }

  /// Checked element-wise addition over the union of dimensions. Strong
  /// guarantee: on overflow nothing is changed.
  basic_resource_vector& operator+=(const basic_resource_vector& o) {
    add_in_place(o);
    return *this;
  }
  /// Checked element-wise subtraction (results may go negative; use
  /// clamped_sub for max(0, a - b)). Strong guarantee on overflow.
  basic_resource_vector& operator-=(const basic_resource_vector& o) {
    sub_in_place(o);
    return *this;
  }
  [[nodiscard]] friend basic_resource_vector operator+(basic_resource_vector a, const basic_resource_vector& b) {
    a += b;
    return a;
  }
  [[nodiscard]] friend basic_resource_vector operator-(basic_resource_vector a, const basic_resource_vector& b) {
    a -= b;
    return a;
  }

  /// The same as operator+=: checks every dimension first (strong guarantee);
  /// allocation-free when the dimensions of `o` are already present (dynamic
  /// sets walk both sorted lists in lockstep).
  void add_in_place(const basic_resource_vector& o) {
    if constexpr (!Set::is_fixed) {
      s_.template combine<false>(o.s_);
    } else {
      for (const auto& e : o) {
        const Amount* p = s_.find(e.id);
        Amount r{};
        if (p && !detail::try_add(*p, e.value, r)) detail::throw_overflow("resource vector addition");
      }
      for (const auto& e : o) add(e.id, e.value);
    }
  }
  /// Whether add_in_place(o) (sub_in_place(o)) would change only dimensions
  /// already present, without overflow, so that it cannot throw: a hot path
  /// asks this of several sums before applying them all. Always false for
  /// amounts other than built-in integers.
  [[nodiscard]] bool can_add_in_place(const basic_resource_vector& o) const noexcept {
    return can_combine_in_place<false>(o);
  }
  [[nodiscard]] bool can_sub_in_place(const basic_resource_vector& o) const noexcept {
    return can_combine_in_place<true>(o);
  }

  /// In-place subtract, strong guarantee on overflow.
  void sub_in_place(const basic_resource_vector& o) {
    if constexpr (!Set::is_fixed) {
      s_.template combine<true>(o.s_);
    } else {
      for (const auto& e : o) {
        const Amount* p = s_.find(e.id);
        if constexpr (detail::is_builtin_integer_v<Amount>) {
          Amount r{};
          if (__builtin_sub_overflow(p ? *p : Amount(0), e.value, &r))
            detail::throw_overflow("resource vector subtraction");
        }
      }
      for (const auto& e : o) sub_one(e.id, e.value);
    }
  }

  /// Equality. For zero-absent vectors an absent dimension equals an explicit
  /// 0; for unlimited-absent vectors presence must match exactly.
  friend bool operator==(const basic_resource_vector& a, const basic_resource_vector& b) {
    if constexpr (Absent == absent_means::zero) {
      for (const auto& e : a)
        if (b.get(e.id) != e.value) return false;
      for (const auto& e : b)
        if (a.get(e.id) != e.value) return false;
      return true;
    } else {
      return a.s_ == b.s_;
    }
  }

  /// The same amounts, reinterpreted with another absent-dimension meaning.
  template <absent_means To>
  [[nodiscard]] basic_resource_vector<Amount, Set, To> as() const {
    basic_resource_vector<Amount, Set, To> r;
    r.reserve(size());
    for (const auto& e : *this) r.set(e.id, e.value);
    return r;
  }

  /// Access to the storage (fixed sets expose their dense array and mask).
  [[nodiscard]] const storage& raw() const noexcept { return s_; }

 private:
  template <bool Sub>
  [[nodiscard]] bool can_combine_in_place(const basic_resource_vector& o) const noexcept {
    if constexpr (!Set::is_fixed) {
      return s_.template combines_in_place<Sub>(o.s_);
    } else if constexpr (!detail::is_builtin_integer_v<Amount>) {
      return false;
    } else {
      for (const auto& e : o) {
        const Amount* p = s_.find(e.id);
        Amount r{};
        if (!p || (Sub ? __builtin_sub_overflow(*p, e.value, &r) : __builtin_add_overflow(*p, e.value, &r)))
          return false;
      }
      return true;
    }
  }
  void sub_one(resource_id id, const Amount& v) {
    if (Amount* p = s_.find(id))
      *p = detail::checked_sub(*p, v);
    else
      s_.set(id, detail::checked_sub(Amount(0), v));
  }
  storage s_;
};

// ---- the common aliases -----------------------------------------------------

/// Usage, requests, allocations: absent dimensions are 0.
using resource_vector = basic_resource_vector<amount, dynamic_resources, absent_means::zero>;
/// Limits (max, capability): absent dimensions are unlimited.
using limit_vector = basic_resource_vector<amount, dynamic_resources, absent_means::unlimited>;
/// Limits where a dimension that is not listed allows nothing.
using resource_vector = basic_resource_vector<amount, dynamic_resources, absent_means::zero>;
/// A usage vector over a fixed, compile-time set of resources.
template <fixed_string... Names>
using fixed_resource_vector = basic_resource_vector<amount, fixed_resources<Names...>, absent_means::zero>;
/// A limit vector over a fixed set (absent = unlimited).
template <fixed_string... Names>
using fixed_limit_vector = basic_resource_vector<amount, fixed_resources<Names...>, absent_means::unlimited>;

// ---- comparisons ------------------------------------------------------------

/// The first dimension in which a request exceeds a limit.
template <class Amount>
struct excess {
  resource_id resource = no_resource;
  Amount requested{};
  /// The limit in that dimension (0 for a zero-absent limit that lacks it).
  Amount limit{};
};

namespace detail {
template <class A, class S, absent_means AL>
[[nodiscard]] constexpr bool within(const A& req, const basic_resource_vector<A, S, AL>& lim, resource_id id,
                                    A& bound_out) noexcept {
  const A* l = lim.find(id);
  if (!l) {
    bound_out = A(0);
    return AL == absent_means::unlimited;
  }
  bound_out = *l;
  return !(*l < req);
}
}  // namespace detail

/// Does `request` fit within `limit` in every dimension the request asks for
/// (a positive amount)? Dimensions absent from the limit follow its type:
/// unlimited, or zero. Dimensions absent from the request are not asked for.
template <class A, class S, absent_means AL>
[[nodiscard]] bool fits(const basic_resource_vector<A, S, absent_means::zero>& request,
                        const basic_resource_vector<A, S, AL>& limit) noexcept {
  if constexpr (S::is_fixed) {
    const auto& rv = request.raw().values();
    const auto& lv = limit.raw().values();
    const std::uint64_t lm = limit.raw().mask();
    for (std::uint64_t m = request.raw().mask(); m; m &= m - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(m));
      if (!(A(0) < rv[i])) continue;
      if ((lm >> i) & 1U) {
        if (lv[i] < rv[i]) return false;
      } else if constexpr (AL == absent_means::zero) {
        return false;
      }
    }
    return true;
  } else {
    // merge walk over two sorted entry lists, in lockstep while their ids
    // agree (the usual case: a request over the resources its limit lists)
    auto ri = request.begin();
    const auto re = request.end();
    auto li = limit.begin();
    const auto le = limit.end();
    for (; ri != re && li != le && ri->id == li->id; ++ri, ++li)
      if (li->value < ri->value && A(0) < ri->value) return false;
    for (; ri != re; ++ri) {
      if (!(A(0) < ri->value)) continue;
      while (li != le && li->id < ri->id) ++li;
      if (li != le && li->id == ri->id) {
        if (li->value < ri->value) return false;
      } else if constexpr (AL == absent_means::zero) {
        return false;
      }
    }
    return true;
  }
}

/// fits(used + request, limit) without building the sum (no allocation).
/// Overflowing sums do not fit.
template <class A, class S, absent_means AL>
[[nodiscard]] bool fits_with(const basic_resource_vector<A, S, absent_means::zero>& used,
                             const basic_resource_vector<A, S, absent_means::zero>& request,
                             const basic_resource_vector<A, S, AL>& limit) noexcept {
  if constexpr (S::is_fixed) {
    for (const auto& e : request) {
      if (!(A(0) < e.value)) continue;
      A total{};
      if (!detail::try_add(used.get(e.id), e.value, total)) return false;
      A b{};
      if (!detail::within(total, limit, e.id, b)) return false;
    }
    return true;
  } else {
    // merge walk over three sorted entry lists
    auto ui = used.begin();
    const auto ue = used.end();
    auto li = limit.begin();
    const auto le = limit.end();
    for (const auto& e : request) {
      if (!(A(0) < e.value)) continue;
      while (ui != ue && (*ui).id < e.id) ++ui;
      A total = e.value;
      if (ui != ue && (*ui).id == e.id && !detail::try_add((*ui).value, e.value, total)) return false;
      while (li != le && (*li).id < e.id) ++li;
      if (li != le && (*li).id == e.id) {
        if ((*li).value < total) return false;
      } else if constexpr (AL == absent_means::zero) {
        return false;
      }
    }
    return true;
  }
}

/// The first dimension (lowest id) where `request` exceeds `limit`, if any.
template <class A, class S, absent_means AL>
[[nodiscard]] std::optional<excess<A>> first_excess(const basic_resource_vector<A, S, absent_means::zero>& request,
                                                    const basic_resource_vector<A, S, AL>& limit) {
  for (const auto& e : request) {
    if (!(A(0) < e.value)) continue;
    A b{};
    if (!detail::within(e.value, limit, e.id, b)) return excess<A>{e.id, e.value, b};
  }
  return std::nullopt;
}

/// Does any dimension of `v` exceed `limit`? (the negation of fits)
template <class A, class S, absent_means AL>
[[nodiscard]] bool any_exceeds(const basic_resource_vector<A, S, absent_means::zero>& v,
                               const basic_resource_vector<A, S, AL>& limit) noexcept {
  return !fits(v, limit);
}

/// a <= b in every dimension, both zero-absent (absent = 0 on both sides).
template <class A, class S>
[[nodiscard]] bool less_equal(const basic_resource_vector<A, S, absent_means::zero>& a,
                              const basic_resource_vector<A, S, absent_means::zero>& b) noexcept {
  for (const auto& e : a)
    if (b.get(e.id) < e.value) return false;
  for (const auto& e : b)
    if (e.value < A(0) && !a.has(e.id)) return false;  // 0 <= negative fails
  return true;
}

/// Element-wise minimum over the union of dimensions, respecting the absent
/// meaning of the type (min(unlimited, x) = x; min(0, x) = min(0, x)).
template <class A, class S, absent_means AB>
[[nodiscard]] basic_resource_vector<A, S, AB> elementwise_min(const basic_resource_vector<A, S, AB>& a,
                                                              const basic_resource_vector<A, S, AB>& b) {
  basic_resource_vector<A, S, AB> r;
  for (const auto& e : a) {
    const A* o = b.find(e.id);
    if (o)
      r.set(e.id, std::min(e.value, *o));
    else if constexpr (AB == absent_means::unlimited)
      r.set(e.id, e.value);
    else
      r.set(e.id, std::min(e.value, A(0)));
  }
  for (const auto& e : b) {
    if (a.has(e.id)) continue;
    if constexpr (AB == absent_means::unlimited)
      r.set(e.id, e.value);
    else
      r.set(e.id, std::min(e.value, A(0)));
  }
  return r;
}

/// Element-wise maximum over the union of dimensions (max(unlimited, x) is
/// unlimited: the dimension stays absent).
template <class A, class S, absent_means AB>
[[nodiscard]] basic_resource_vector<A, S, AB> elementwise_max(const basic_resource_vector<A, S, AB>& a,
                                                              const basic_resource_vector<A, S, AB>& b) {
  basic_resource_vector<A, S, AB> r;
  for (const auto& e : a) {
    const A* o = b.find(e.id);
    if (o)
      r.set(e.id, std::max(e.value, *o));
    else if constexpr (AB == absent_means::zero)
      r.set(e.id, std::max(e.value, A(0)));
  }
  if constexpr (AB == absent_means::zero)
    for (const auto& e : b)
      if (!a.has(e.id)) r.set(e.id, std::max(e.value, A(0)));
  return r;
}

/// max(0, a - b) per dimension of a (usage-like vectors).
template <class A, class S>
[[nodiscard]] basic_resource_vector<A, S, absent_means::zero> clamped_sub(
    const basic_resource_vector<A, S, absent_means::zero>& a,
    const basic_resource_vector<A, S, absent_means::zero>& b) {
  basic_resource_vector<A, S, absent_means::zero> r;
  for (const auto& e : a) {
    const A o = b.get(e.id);
    r.set(e.id, o < e.value ? detail::checked_sub(e.value, o) : A(0));
  }
  return r;
}

/// Rounding for exact scaling.
enum class rounding : std::uint8_t { floor, ceil };

/// v * f per dimension, exact, rounded as asked (int64 amounts).
template <class S, absent_means AB>
[[nodiscard]] basic_resource_vector<amount, S, AB> scale(const basic_resource_vector<amount, S, AB>& v,
                                                         const fraction& f, rounding r = rounding::floor) {
  basic_resource_vector<amount, S, AB> out;
  out.reserve(v.size());
  for (const auto& e : v) out.set(e.id, r == rounding::floor ? f.apply_floor(e.value) : f.apply_ceil(e.value));
  return out;
}

/// A share of one resource: which one, and how much of the total.
struct share {
  resource_id resource = no_resource;
  fraction value{};
};

/// Dominant share of `usage` against `total`: the maximum over dimensions of
/// usage/total. A dimension with total 0 and positive usage is an infinite
/// share; dimensions with no usage are skipped. Ties go to the lowest id.
template <class S>
[[nodiscard]] share dominant_share(const basic_resource_vector<amount, S, absent_means::zero>& usage,
                                   const basic_resource_vector<amount, S, absent_means::zero>& total) {
  share best{};
  for (const auto& e : usage) {
    if (!(0 < e.value)) continue;
    const fraction f(e.value, total.get(e.id));
    if (best.resource == no_resource || best.value < f) best = share{e.id, f};
  }
  if (best.resource == no_resource) best.value = fraction(0);
  return best;
}

/// Converts a vector to another amount type (e.g. to quota::big_int for wide sums).
template <class To, class From, class S, absent_means AB>
[[nodiscard]] basic_resource_vector<To, S, AB> convert(const basic_resource_vector<From, S, AB>& v) {
  basic_resource_vector<To, S, AB> r;
  r.reserve(v.size());
  for (const auto& e : v) r.set(e.id, To(e.value));
  return r;
}

}  // namespace quota
