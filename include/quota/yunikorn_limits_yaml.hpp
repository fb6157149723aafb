// SPDX-License-Identifier: Apache-2.0
// quota/yunikorn_limits_yaml.hpp — YuniKorn queues.yaml for user and group limits (opt-in;
// needs yaml-cpp), read into the structure of quota/yunikorn_limits_json.hpp.
// Docs: docs/yunikorn-limits.md
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include <quota/error.hpp>
#include <quota/json.hpp>
#include <quota/yunikorn_limits_config.hpp>
#include <quota/yunikorn_limits_json.hpp>

namespace quota {

namespace detail {

[[nodiscard]] inline bool limits_yaml_name_field(std::string_view key) noexcept {
  return key == "name" || key == "limit" || key == "users" || key == "groups";
}

/// A plain scalar as JSON: integers, booleans and null keep their YAML meaning.
[[nodiscard]] inline json limits_yaml_scalar(const std::string& s) {
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const bool neg = !s.empty() && s[0] == '-';
  const std::size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (s.size() > start && s.size() - start <= 19 && s.find_first_not_of("0123456789", start) == std::string::npos) {
    errno = 0;
    if (neg) {
      const long long v = std::strtoll(s.c_str(), nullptr, 10);
      if (errno == 0) return static_cast<std::int64_t>(v);
    } else {
      const unsigned long long v = std::strtoull(s.c_str() + start, nullptr, 10);
      if (errno == 0) return static_cast<std::uint64_t>(v);
    }
  }
  return s;  // a quantity such as 25G or 0.5, or text
}

/// Bounds of a YuniKorn queues.yaml: the text read from a file, and the values
/// of the JSON tree. Aliases repeat the node they name, so a tree may hold at
/// most 16 values per byte of text (plus 10,000): a plain document stays far
/// below, an alias bomb ("billion laughs") stops at once (parse_error 105).
inline constexpr std::size_t limits_yaml_max_file_bytes = std::size_t{64} << 20;
[[nodiscard]] inline constexpr std::size_t limits_yaml_value_budget(std::size_t text_bytes) noexcept {
  return 16 * text_bytes + 10'000;
}

/// The JSON twin of a YAML node. `names`: scalars below stay strings;
/// `budget`: values this node and the rest of the document may still add.
[[nodiscard]] inline json limits_yaml_to_json(const YAML::Node& n, bool names, const std::string& path,
                                              std::size_t& budget) {
  if (budget == 0)
    throw parse_error(error_id::parse_malformed_document,
                      "limits yaml: " + (path.empty() ? std::string("document") : path) +
                          ": too many values once aliases are expanded (at most 16 per byte of YAML text)");
  --budget;
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // quoted scalars carry the tag "!": always strings
      if (names || n.Tag() == "!") return n.Scalar();
      return limits_yaml_scalar(n.Scalar());
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      std::size_t i = 0;
      for (const auto& c : n) arr.push_back(limits_yaml_to_json(c, names, index_path(path, i++), budget));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw parse_error(error_id::parse_malformed_document,
                            (path.empty() ? std::string("document") : path) + ": a map key must be a scalar");
        const std::string& key = kv.first.Scalar();
        obj[key] = limits_yaml_to_json(kv.second, limits_yaml_name_field(key), join_path(path, key), budget);
      }
      return obj;
    }
  }
  return nullptr;
}

}  // namespace detail

/// The JSON structure of a YuniKorn queues.yaml text (see the file comment);
/// parse_error (105) with line and column for a YAML syntax error.
[[nodiscard]] inline json limits_yaml_to_json(const std::string& text) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw parse_error(error_id::parse_malformed_document, "limits yaml: line " + std::to_string(e.mark.line + 1) +
                                                              ", column " + std::to_string(e.mark.column + 1) + ": " +
                                                              e.msg);
  }
  std::size_t budget = detail::limits_yaml_value_budget(text.size());
  return detail::limits_yaml_to_json(doc, false, "", budget);
}

/// Loads a limits configuration from YuniKorn queues.yaml text: the same
/// structure, rules and errors as load_yunikorn_limits_config (JSON).
[[nodiscard]] inline yunikorn_limits_config load_yunikorn_limits_config_yaml(const std::string& text, resource_registry& reg,
                                                           const yunikorn_limits_json_options& opt = {}) {
  return load_yunikorn_limits_config(limits_yaml_to_json(text), reg, opt);
}

/// load_yunikorn_limits_config_yaml of a file; parse_error (105) when it cannot be read
/// or is larger than limits_yaml_max_file_bytes (64 MiB; an endless file such as
/// /dev/zero stops there).
[[nodiscard]] inline yunikorn_limits_config load_yunikorn_limits_config_yaml_file(const std::string& file, resource_registry& reg,
                                                                const yunikorn_limits_json_options& opt = {}) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw parse_error(error_id::parse_malformed_document, "limits yaml: cannot read " + file);
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (text.size() + got > detail::limits_yaml_max_file_bytes)
      throw parse_error(
          error_id::parse_malformed_document,
          "limits yaml " + file + ": larger than " + std::to_string(detail::limits_yaml_max_file_bytes >> 20) + " MiB");
    text.append(buf, got);
  }
  if (in.bad() || (!in.eof() && in.fail()))
    throw parse_error(error_id::parse_malformed_document, "limits yaml: cannot read " + file);
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw parse_error(error_id::parse_malformed_document, "limits yaml " + file + ": line " +
                                                              std::to_string(e.mark.line + 1) + ", column " +
                                                              std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  std::size_t budget = detail::limits_yaml_value_budget(text.size());
  return load_yunikorn_limits_config(detail::limits_yaml_to_json(doc, false, "", budget), reg, opt);
}

}  // namespace quota
