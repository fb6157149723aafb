// SPDX-License-Identifier: Apache-2.0
// quota/json.hpp — opt-in nlohmann/json integration.
//
// * to_json for decisions, reasons, victims, diagnostics, quantities;
// * resource lists ({"cpu": "2", "memory": "4Gi"}) to and from vectors,
//   through a resource_registry, with errors that name the JSON path;
// * helpers the upstream-object loaders share: iterate a single object, a
//   Kubernetes List or a JSON array; read typed fields with path-named errors;
//   read a file with the position of a syntax error.
// Docs: docs/architecture.md
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include <quota/decision.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/quantity.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

using json = nlohmann::json;

// ---- serializers (found by ADL) ---------------------------------------------

inline void to_json(json& j, const reason& r) {
  j = json{{"model", r.model}, {"rule", r.rule}};
  if (!r.entity.empty()) j["entity"] = r.entity;
  if (r.resource != no_resource) {
    j["resource"] =
        r.resource_name.empty() ? std::string(resources::well_known_name(r.resource)) : std::string(r.resource_name);
    j["requested"] = r.requested;
    j["used"] = r.used;
    j["limit"] = r.limit;
  }
  if (!r.message.empty()) j["message"] = r.message.str();
}

inline void to_json(json& j, const decision& d) {
  j = json{{"allowed", d.allowed()}, {"reasons", json::array()}};
  for (const auto& r : d.reasons()) j["reasons"].push_back(r);
}

inline void to_json(json& j, const victim& v) {
  j = json{{"job", v.job_id}, {"model", v.model}, {"rule", v.rule}};
  if (!v.entity.empty()) j["entity"] = v.entity;
  if (!v.upstream_reason.empty()) j["upstream_reason"] = v.upstream_reason;
}

inline void to_json(json& j, const diagnostic& d) {
  j = json{{"path", d.path}, {"message", d.message}};
}

inline void to_json(json& j, const quantity& q) {
  j = q.to_string();
}
inline void from_json(const json& j, quantity& q) {
  if (j.is_string())
    q = quantity::parse(j.get_ref<const std::string&>());
  else if (j.is_number_integer())
    q = quantity::from_base(j.get<std::int64_t>(), 0);
  else
    throw parse_error(error_id::parse_wrong_type,
                      "a quantity must be a string or an integer, got " + std::string(j.type_name()));
}

// ---- paths -------------------------------------------------------------------

namespace detail {
[[nodiscard]] inline std::string join_path(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  std::string s(base);
  s.push_back('.');
  s.append(key);
  return s;
}
[[nodiscard]] inline std::string index_path(std::string_view base, std::size_t i) {
  std::string s(base);
  s.push_back('[');
  s.append(std::to_string(i));
  s.push_back(']');
  return s;
}
}  // namespace detail

// ---- introspection -------------------------------------------------------------

/// What a model's introspection shows for a bound it tracks that is absent
/// (no capability, no max, no limit): the string "unlimited"
/// (docs/architecture.md, "Introspection").
inline constexpr std::string_view unlimited_text = "unlimited";

/// The key naming resource `id` in introspection: its registered name (the
/// registry the model names resources with), else its well-known name. An id
/// neither knows has no name to show: unknown_entity_error (301), never a
/// made-up key.
[[nodiscard]] inline std::string introspection_name(const resource_registry* reg, resource_id id) {
  if (reg && id < reg->size()) return std::string(reg->name(id));
  const auto n = resources::well_known_name(id);
  if (n.empty())
    throw unknown_entity_error(error_id::unknown_resource, "resource id (no registry names it)", std::to_string(id));
  return std::string(n);
}

// ---- resource lists ------------------------------------------------------------

/// One quantity value (a string, or a JSON number) as a quantity; a negative
/// one unless allowed -> parse_error (as are text and type problems).
[[nodiscard]] inline quantity parse_quantity_value(const json& v, bool allow_negative = false) {
  quantity q;
  if (v.is_string())
    q = quantity::parse(v.get_ref<const std::string&>());
  else if (v.is_number_integer() && (!v.is_number_unsigned() ||
                                     v.get<std::uint64_t>() <= std::uint64_t{std::numeric_limits<std::int64_t>::max()}))
    q = quantity::from_base(v.get<std::int64_t>(), 0);
  else if (v.is_number()) {
    // JSON numbers with a fraction or beyond int64: parse their shortest text exactly
    q = quantity::parse(v.dump());
  } else
    throw parse_error(error_id::parse_wrong_type,
                      "expected a quantity (string or number), got " + std::string(v.type_name()));
  if (q.is_negative() && !allow_negative)
    throw parse_error(error_id::parse_negative_quantity, "quantity '" + q.to_string() + "' is negative");
  return q;
}

/// Parses one quantity value (string or integer) of resource `id` to base units.
/// Problems go to `diag` (returning 0) when given, else throw parse_error.
inline amount parse_resource_amount(const json& v, resource_id id, const resource_registry& reg,
                                    const std::string& path, diagnostics* diag = nullptr, bool allow_negative = false) {
  try {
    return parse_quantity_value(v, allow_negative).to_base(reg.scale(id));
  } catch (const error& e) {
    if (!diag) throw parse_error(static_cast<error_id>(e.id()), path + ": " + e.what());
    diag->add(path, e.what());
    return 0;
  }
}

/// Parses {"cpu": "2", "memory": "4Gi", ...} into a vector, interning names.
/// `path` names the object in errors ("spec.min"). With `diag`, every problem
/// is recorded and parsing goes on; without, the first problem throws.
template <class Vector = resource_vector>
[[nodiscard]] Vector parse_resource_list(const json& j, resource_registry& reg, const std::string& path,
                                         diagnostics* diag = nullptr, bool allow_negative = false) {
  Vector out;
  if (j.is_null()) return out;
  if (!j.is_object()) {
    const std::string msg = "expected an object of resource quantities, got " + std::string(j.type_name());
    if (!diag) throw parse_error(error_id::parse_wrong_type, path + ": " + msg);
    diag->add(path, msg);
    return out;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = detail::join_path(path, it.key());
    resource_id id = no_resource;
    try {
      id = reg.intern(it.key());
    } catch (const error& e) {
      if (!diag) throw parse_error(error_id::parse_invalid_name, p + ": " + e.what());
      diag->add(p, e.what());
      continue;
    }
    out.set(id, parse_resource_amount(it.value(), id, reg, p, diag, allow_negative));
  }
  return out;
}

/// Like parse_resource_list, but every name must already be registered
/// (unknown resource -> unknown_entity_error 301, or a diagnostic).
template <class Vector = resource_vector>
[[nodiscard]] Vector parse_known_resource_list(const json& j, const resource_registry& reg, const std::string& path,
                                               diagnostics* diag = nullptr) {
  Vector out;
  if (j.is_null()) return out;
  if (!j.is_object()) {
    const std::string msg = "expected an object of resource quantities";
    if (!diag) throw parse_error(error_id::parse_wrong_type, path + ": " + msg);
    diag->add(path, msg);
    return out;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = detail::join_path(path, it.key());
    const auto id = reg.find(it.key());
    if (!id) {
      if (!diag) throw unknown_entity_error(error_id::unknown_resource, "resource", it.key());
      diag->add(p, "unknown resource '" + it.key() + "'");
      continue;
    }
    out.set(*id, parse_resource_amount(it.value(), *id, reg, p, diag));
  }
  return out;
}

/// A vector as {"name": "canonical quantity"}; memory-like resources (scale 0,
/// name memory/storage/hugepages) in binary SI, everything else decimal SI.
template <class A, absent_means AB>
[[nodiscard]] json resource_list_to_json(const basic_resource_vector<A, dynamic_resources, AB>& v,
                                         const resource_registry& reg) {
  json j = json::object();
  for (const auto& e : v) {
    const auto& info = reg.info(e.id);
    const bool bytes =
        info.name == "memory" || info.name == "ephemeral-storage" || info.name.rfind("hugepages-", 0) == 0;
    j[info.name] = format_amount(static_cast<std::int64_t>(e.value), info.scale,
                                 bytes ? quantity_format::binary_si : quantity_format::decimal_si);
  }
  return j;
}

/// A vector as {"name": integer base units} (for reports: exact, machine-friendly).
template <class A, absent_means AB>
[[nodiscard]] json resource_amounts_to_json(const basic_resource_vector<A, dynamic_resources, AB>& v,
                                            const resource_registry& reg) {
  json j = json::object();
  for (const auto& e : v) j[std::string(reg.name(e.id))] = e.value;
  return j;
}

// ---- documents ------------------------------------------------------------------

/// Reads and parses a JSON file; a syntax error names the file and byte offset.
[[nodiscard]] inline json load_json_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw parse_error(error_id::parse_malformed_document, "cannot open '" + file + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw parse_error(error_id::parse_malformed_document,
                      file + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

/// Parses JSON text; a syntax error names `what` and the byte offset.
[[nodiscard]] inline json parse_json_text(std::string_view text, std::string_view what = "document") {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw parse_error(error_id::parse_malformed_document,
                      std::string(what) + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

/// Calls fn(object, path) for each object of a document that is a single
/// object, a Kubernetes List ({"kind": "...List", "items": [...]}) or an array.
inline void for_each_object(const json& doc, const std::function<void(const json&, const std::string&)>& fn,
                            const std::string& base = "") {
  if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) fn(doc[i], detail::index_path(base.empty() ? "" : base, i));
    return;
  }
  if (doc.is_object() && doc.contains("items") && doc["items"].is_array() &&
      (!doc.contains("kind") || (doc["kind"].is_string() && doc["kind"].get<std::string>().ends_with("List")))) {
    const auto& items = doc["items"];
    for (std::size_t i = 0; i < items.size(); ++i)
      fn(items[i], detail::index_path(detail::join_path(base, "items"), i));
    return;
  }
  if (doc.is_object()) {
    fn(doc, base);
    return;
  }
  throw parse_error(error_id::parse_malformed_document, (base.empty() ? std::string("document") : base) +
                                                            ": expected an object, a List or an array, got " +
                                                            std::string(doc.type_name()));
}

/// `metadata.name` (and namespace) of a Kubernetes object, with path-named errors.
[[nodiscard]] inline std::string object_name(const json& obj, const std::string& path) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object() ||
      !obj["metadata"].contains("name") || !obj["metadata"]["name"].is_string())
    throw parse_error(error_id::parse_missing_field,
                      detail::join_path(path, "metadata.name") + ": missing or not a string");
  return obj["metadata"]["name"].get<std::string>();
}
[[nodiscard]] inline std::string object_namespace(const json& obj, const std::string& fallback = "default") {
  if (obj.is_object() && obj.contains("metadata") && obj["metadata"].is_object() &&
      obj["metadata"].contains("namespace") && obj["metadata"]["namespace"].is_string())
    return obj["metadata"]["namespace"].get<std::string>();
  return fallback;
}

/// The object at `key` of `obj`: nullptr when the field is absent or null,
/// and also when it is there but not an object, which is then a problem added
/// to `diag` at path.key (a section of the wrong shape is reported, never
/// silently read as empty).
[[nodiscard]] inline const json* object_section(const json& obj, const char* key, const std::string& path,
                                                diagnostics& diag) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return nullptr;
  if (!obj[key].is_object()) {
    diag.add(detail::join_path(path, key), std::string("expected an object, got ") + obj[key].type_name());
    return nullptr;
  }
  return &obj[key];
}

/// Optional typed field access: returns `def` when absent, throws parse_error
/// naming path.key when present with the wrong type.
template <class T>
[[nodiscard]] T field_or(const json& obj, const char* key, T def, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return def;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    if (obj[key].is_number()) {
      // nlohmann converts any number to any integer type: 3000000000 would wrap
      // into an int32 and 1.5 would truncate. Only exact integers in range pass.
      const json& v = obj[key];
      const bool in_range =
          (v.is_number_unsigned() &&
           v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) ||
          (v.is_number_integer() && !v.is_number_unsigned() &&
           v.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
           (v.get<std::int64_t>() < 0 || static_cast<std::uint64_t>(v.get<std::int64_t>()) <=
                                             static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
      if (!in_range)
        throw parse_error(error_id::parse_wrong_type, detail::join_path(path, key) + ": expected an integer in [" +
                                                          std::to_string(std::numeric_limits<T>::min()) + ", " +
                                                          std::to_string(std::numeric_limits<T>::max()) + "], got " +
                                                          v.dump());
      return v.get<T>();
    }
  try {
    return obj[key].get<T>();
  } catch (const json::exception&) {
    throw parse_error(error_id::parse_wrong_type,
                      detail::join_path(path, key) + ": wrong type (" + std::string(obj[key].type_name()) + ")");
  }
}

}  // namespace quota
