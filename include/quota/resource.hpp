// SPDX-License-Identifier: Apache-2.0
// quota/resource.hpp — resource names interned to small integer ids
// (resource_registry), with the well-known resources at fixed ids and a base unit per
// resource.
// Docs: docs/resources.md
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <quota/detail/name_hash.hpp>
#include <quota/error.hpp>

namespace quota {

using resource_id = std::uint16_t;
inline constexpr resource_id no_resource = 0xFFFF;

/// Ids of the resources every registry knows from the start.
namespace resources {
inline constexpr resource_id cpu = 0;
inline constexpr resource_id memory = 1;
inline constexpr resource_id pods = 2;
inline constexpr resource_id nvidia_gpu = 3;
inline constexpr resource_id ephemeral_storage = 4;
inline constexpr resource_id gpu_memory = 5;  // nos.nebuly.com/gpu-memory, in GB
inline constexpr resource_id count_well_known = 6;

/// Name of a well-known resource id, or an empty view.
[[nodiscard]] constexpr std::string_view well_known_name(resource_id id) noexcept {
  switch (id) {
    case cpu:
      return "cpu";
    case memory:
      return "memory";
    case pods:
      return "pods";
    case nvidia_gpu:
      return "nvidia.com/gpu";
    case ephemeral_storage:
      return "ephemeral-storage";
    case gpu_memory:
      return "nos.nebuly.com/gpu-memory";
    default:
      return {};
  }
}
}  // namespace resources

/// What the registry knows about one resource.
struct resource_info {
  std::string name;
  /// Base unit = 10^-scale of one unit of the Kubernetes quantity
  /// (cpu: 3, so "1" cpu = 1000 base units).
  int scale = 0;
};

namespace detail {
/// Kubernetes resource names: an optional DNS-subdomain prefix and '/', then a
/// name of [A-Za-z0-9._-] starting and ending alphanumeric. We accept that
/// shape; anything with spaces, control characters or empty parts is rejected.
[[nodiscard]] constexpr bool valid_resource_name(std::string_view n) noexcept {
  if (n.empty() || n.size() > 253) return false;
  const auto slash = n.find('/');
  std::string_view prefix = slash == std::string_view::npos ? std::string_view{} : n.substr(0, slash);
  std::string_view name = slash == std::string_view::npos ? n : n.substr(slash + 1);
  if (slash != std::string_view::npos && (prefix.empty() || name.find('/') != std::string_view::npos)) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  auto part_ok = [&](std::string_view p) {
    if (p.empty() || !alnum(p.front()) || !alnum(p.back())) return false;
    for (char c : p)
      if (!alnum(c) && c != '-' && c != '.' && c != '_') return false;
    return true;
  };
  return part_ok(name) && (prefix.empty() || part_ok(prefix));
}

/// Transparent string hash (detail::name_hash: a job's id, queue and user
/// are hashed by every model's maps on every admission). Not noexcept on
/// purpose: libstdc++ then keeps each node's hash code, so a lookup walks a
/// bucket comparing stored codes instead of hashing every key it passes again.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return static_cast<std::size_t>(name_hash(s)); }
};
}  // namespace detail

/// Default scale for a resource name: cpu is in millicores, everything else
/// in whole units of its quantity (bytes, devices, pods). Register a resource
/// with another scale to count it in finer units (e.g. fractional GPUs).
[[nodiscard]] constexpr int default_scale(std::string_view name) noexcept {
  return name == "cpu" ? 3 : 0;
}

/// Interns resource names to dense ids. A value type: copy it to snapshot.
class resource_registry {
 public:
  resource_registry() {
    for (resource_id id = 0; id < resources::count_well_known; ++id) {
      const auto n = resources::well_known_name(id);
      add(n, default_scale(n));
    }
  }
  resource_registry(const resource_registry& o) : infos_(o.infos_) { reindex(); }
  resource_registry& operator=(const resource_registry& o) {
    if (this != &o) {
      resource_registry copy(o);
      swap(copy);
    }
    return *this;
  }
  resource_registry(resource_registry&& o) noexcept = default;
  resource_registry& operator=(resource_registry&& o) noexcept = default;
  ~resource_registry() = default;

  void swap(resource_registry& o) noexcept {
    infos_.swap(o.infos_);
    ids_.swap(o.ids_);
  }

  /// The id of `name`, registering it with its default scale if new.
  /// Throws parse_error (108) for a name Kubernetes would not accept.
  resource_id intern(std::string_view name) {
    if (auto id = find(name)) return *id;
    return add_checked(name, default_scale(name));
  }
  /// The id of `name`, registering it with `scale` if new; throws
  /// validation_error if it exists with another scale.
  resource_id intern(std::string_view name, int scale) {
    if (auto id = find(name)) {
      if (infos_[*id].scale != scale)
        throw validation_error(std::string(name), "resource already registered with scale " +
                                                      std::to_string(infos_[*id].scale) + ", not " +
                                                      std::to_string(scale));
      return *id;
    }
    return add_checked(name, scale);
  }

  /// Registers `name` with `scale`, or gives a registered resource (a
  /// well-known one included) this scale. Amounts already converted keep the
  /// old unit: declare a resource before any amount of it is read. Throws
  /// parse_error (108) for an invalid name, validation_error for a scale
  /// outside 0..9.
  resource_id declare(std::string_view name, int scale) {
    if (scale < 0 || scale > 9) throw validation_error(std::string(name), "resource scale must be within 0..9");
    if (auto id = find(name)) {
      infos_[*id].scale = scale;
      return *id;
    }
    return add_checked(name, scale);
  }

  [[nodiscard]] std::optional<resource_id> find(std::string_view name) const noexcept {
    auto it = ids_.find(name);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  /// The id of a registered name; throws unknown_entity_error (301) otherwise.
  [[nodiscard]] resource_id at(std::string_view name) const {
    if (auto id = find(name)) return *id;
    throw unknown_entity_error(error_id::unknown_resource, "resource", name);
  }
  [[nodiscard]] const resource_info& info(resource_id id) const {
    if (id >= infos_.size()) throw unknown_entity_error(error_id::unknown_resource, "resource id", std::to_string(id));
    return infos_[id];
  }
  /// The name of id; the view stays valid as long as the registry lives.
  [[nodiscard]] std::string_view name(resource_id id) const { return info(id).name; }
  [[nodiscard]] int scale(resource_id id) const { return info(id).scale; }
  [[nodiscard]] std::size_t size() const noexcept { return infos_.size(); }

 private:
  resource_id add_checked(std::string_view name, int scale) {
    if (!detail::valid_resource_name(name))
      throw parse_error(error_id::parse_invalid_name, "invalid resource name '" + std::string(name) + "'");
    if (infos_.size() >= no_resource) throw overflow_error("too many resources registered");
    if (scale < 0 || scale > 9) throw validation_error(std::string(name), "resource scale must be within 0..9");
    return add(name, scale);
  }
  resource_id add(std::string_view name, int scale) {
    const auto id = static_cast<resource_id>(infos_.size());
    infos_.push_back({std::string(name), scale});  // deque: references stay valid
    try {
      ids_.emplace(infos_.back().name, id);
    } catch (...) {
      infos_.pop_back();
      throw;
    }
    return id;
  }
  void reindex() {
    ids_.clear();
    for (std::size_t i = 0; i < infos_.size(); ++i) ids_.emplace(infos_[i].name, static_cast<resource_id>(i));
  }

  std::deque<resource_info> infos_;
  std::unordered_map<std::string_view, resource_id, detail::string_hash, std::equal_to<>> ids_;
};

}  // namespace quota
