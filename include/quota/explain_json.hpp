// SPDX-License-Identifier: Apache-2.0
// quota/explain_json.hpp — opt-in JSON of a what-if explanation (nlohmann/json).
//
//   quota::json doc = engine.explain(job);
//   {"job": "...", "allowed": false, "already_admitted": false, "denied_by": ["kueue"],
//    "models": [{"model": "kueue", "allowed": false, "reasons": [...], "victims": [...],
//                "earliest_admission_ms": 14400000}, ...],
//    "victims": [...], "earliest_admission_ms": 14400000}
// earliest_admission_ms is present only when known.
// Docs: docs/architecture.md
#pragma once

#include <quota/explain.hpp>
#include <quota/json.hpp>

namespace quota {

inline void to_json(json& j, const model_explanation& m) {
  j = json{{"model", m.model}, {"allowed", m.allowed()}, {"reasons", json::array()}, {"victims", json::array()}};
  for (const auto& r : m.verdict.reasons()) j["reasons"].push_back(r);
  for (const auto& v : m.victims) j["victims"].push_back(v);
  if (m.earliest_ms) j["earliest_admission_ms"] = *m.earliest_ms;
}

inline void to_json(json& j, const explanation& x) {
  j = json{{"job", x.job_id},
           {"allowed", x.allowed()},
           {"already_admitted", x.already_admitted},
           {"denied_by", json::array()},
           {"models", json::array()},
           {"victims", json::array()}};
  for (const auto& m : x.denied_by()) j["denied_by"].push_back(std::string(m));
  for (const auto& m : x.models) j["models"].push_back(m);
  for (const auto& v : x.victims()) j["victims"].push_back(v);
  if (const auto t = x.earliest_ms()) j["earliest_admission_ms"] = *t;
  if (!x.partial_counts.empty()) j["partial_counts"] = x.partial_counts;
}

}  // namespace quota
