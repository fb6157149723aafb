// SPDX-License-Identifier: Apache-2.0
// quota/detail/node_pool.hpp — spare nodes of a node-based map, so that an
// admission followed by a release allocates nothing once warm
// (docs/performance.md).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace quota::detail {

/// Keeps the nodes of erased entries of a std::map / std::unordered_map (or set)
/// (at most `kept` of them) and reuses them for the next insertions: the key
/// is assigned into the spare node (a string key keeps its capacity). A copy
/// starts empty: spare nodes are memory, not state.
template <class Map, std::size_t kept = 64>
class node_pool {
 public:
  using iterator = typename Map::iterator;

  node_pool() = default;
  node_pool(const node_pool&) noexcept {}
  node_pool(node_pool&&) noexcept = default;
  node_pool& operator=(const node_pool&) noexcept {
    spare_.clear();
    return *this;
  }
  node_pool& operator=(node_pool&&) noexcept = default;
  ~node_pool() = default;

  /// m.try_emplace(key, value), with a spare node when there is one (a key
  /// already present: nothing changes, but `value` may have been moved from).
  template <class K, class V>
  std::pair<iterator, bool> emplace(Map& m, const K& key, V&& value) {
    if (spare_.empty()) return m.try_emplace(typename Map::key_type(key), std::forward<V>(value));
    auto n = std::move(spare_.back());
    spare_.pop_back();
    n.key() = key;
    n.mapped() = std::forward<V>(value);
    return insert_node(m, std::move(n));
  }

  /// m.try_emplace(key) with a spare node when there is one. A spare node
  /// keeps the mapped value of the entry it held (its strings and vectors
  /// keep their capacity, and their contents): the caller assigns every
  /// field before it is read. A new node's value is value-initialized.
  template <class K>
  std::pair<iterator, bool> emplace_key(Map& m, const K& key) {
    if (spare_.empty()) return m.try_emplace(typename Map::key_type(key));
    auto n = std::move(spare_.back());
    spare_.pop_back();
    n.key() = key;
    return insert_node(m, std::move(n));
  }

  /// m.insert(key) for a set, with a spare node when there is one.
  template <class K>
  std::pair<iterator, bool> insert(Map& m, const K& key) {
    if (spare_.empty()) return m.emplace(key);
    auto n = std::move(spare_.back());
    spare_.pop_back();
    n.value() = key;
    return insert_node(m, std::move(n));
  }

  /// m.erase(it), keeping the node (up to `kept` of them).
  void erase(Map& m, iterator it) {
    if (spare_.size() >= kept) {
      m.erase(it);
      return;
    }
    if (spare_.capacity() == 0) {
      try {
        spare_.reserve(kept);
      } catch (...) {  // a release never fails: without room for spares, erase
        m.erase(it);
        return;
      }
    }
    spare_.push_back(m.extract(it));  // within the reserved capacity: no throw
  }

  [[nodiscard]] std::size_t spare() const noexcept { return spare_.size(); }

 private:
  // One lookup: a key already present gives the node back to the spares
  // (the slot it left is still reserved: no throw).
  std::pair<iterator, bool> insert_node(Map& m, typename Map::node_type&& n) {
    auto r = m.insert(std::move(n));
    if (!r.inserted) spare_.push_back(std::move(r.node));
    return {r.position, r.inserted};
  }
  std::vector<typename Map::node_type> spare_;
};

}  // namespace quota::detail
