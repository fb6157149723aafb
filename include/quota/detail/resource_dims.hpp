// SPDX-License-Identifier: Apache-2.0
// quota/detail/resource_dims.hpp — what several models do with resource ids:
// a request as a dense array over the model's dimensions, and a resource's
// name for messages and reasons.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <quota/error.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota::detail {

/// `v` as one amount per dimension of `dims` (every dimension naming a
/// resource gets its amount; dimensions `v` does not name are 0). A negative
/// amount is a validation_error at queue/<owner>/<id>; a non-zero amount of a
/// resource outside `dims` is an unknown_resource error.
[[nodiscard]] inline std::vector<std::int64_t> dense_amounts(std::span<const resource_id> dims,
                                                             const resource_vector& v, std::string_view owner) {
  std::vector<std::int64_t> out(dims.size(), 0);
  for (const auto& e : v) {
    if (e.value < 0)
      throw validation_error("queue/" + std::string(owner) + "/" + std::to_string(e.id), "negative amount");
    bool found = false;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (dims[d] == e.id) {
        out[d] = e.value;
        found = true;
      }
    if (!found && e.value != 0)
      throw unknown_entity_error(error_id::unknown_resource, "resource", std::to_string(e.id));
  }
  return out;
}

/// A resource's name for messages: the registry's (when it knows the id),
/// else the well-known name, else "resource#<id>".
[[nodiscard]] inline std::string resource_label(const resource_registry* reg, resource_id id) {
  if (reg && id < reg->size()) return std::string(reg->name(id));
  const auto n = resources::well_known_name(id);
  return n.empty() ? "resource#" + std::to_string(id) : std::string(n);
}

/// The same name as a view into the registry or the well-known names; empty
/// for an id neither knows.
[[nodiscard]] inline std::string_view resource_label_view(const resource_registry* reg, resource_id id) noexcept {
  if (reg && id < reg->size()) return reg->name(id);
  return resources::well_known_name(id);
}

}  // namespace quota::detail
