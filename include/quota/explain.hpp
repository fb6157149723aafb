// SPDX-License-Identifier: Apache-2.0
// quota/explain.hpp — a live what-if: would this job be admitted now, and if not, why
// and what would make room? Nothing changes while it is answered.
// Docs: docs/architecture.md
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/duration.hpp>
#include <quota/policy.hpp>

namespace quota {

/// A model that can tell the earliest time it would allow a job it denies now.
template <class P>
concept earliest_admission_aware = requires(const P& p, const job& j) {
  { p.earliest_admission_ms(j) } -> std::convertible_to<std::optional<std::int64_t>>;
};

/// The earliest time `p` would allow `j`, when `p` can tell (else nullopt).
template <class P>
[[nodiscard]] std::optional<std::int64_t> earliest_admission_of(const P& p, const job& j) {
  if constexpr (earliest_admission_aware<P>)
    return std::optional<std::int64_t>(p.earliest_admission_ms(j));
  else
    return std::nullopt;
}

/// What one model says about a job.
struct model_explanation {
  /// The model's policy_name().
  std::string model;
  /// Its decision, with every reason (not cut short at the first).
  decision verdict;
  /// Running jobs it would preempt to make room, in its own order (only when it denies).
  std::vector<victim> victims;
  /// When it would allow the job, if it can tell (only when it denies).
  std::optional<std::int64_t> earliest_ms;

  [[nodiscard]] bool allowed() const noexcept { return verdict.allowed(); }
  friend bool operator==(const model_explanation&, const model_explanation&) = default;
};

/// The answer of a what-if for one job over one or more models.
struct explanation {
  std::string job_id;
  /// The job is admitted already (the engine would refuse to admit it twice).
  bool already_admitted = false;
  /// One entry per model, in the order the engine asks them.
  std::vector<model_explanation> models;
  /// When the job would be admitted partially (quota::partial_admission_aware):
  /// the pod counts it would run with (one per pod set), at which `models`
  /// are asked; empty: the job as submitted.
  std::vector<std::int32_t> partial_counts;

  /// Every model allows the job (and it is not admitted yet).
  [[nodiscard]] bool allowed() const noexcept {
    if (already_admitted) return false;
    for (const auto& m : models)
      if (m.verdict.denied()) return false;
    return true;
  }
  /// The reasons of every denying model, as the engine's check() gives them.
  [[nodiscard]] decision verdict() const {
    decision d;
    for (const auto& m : models) d.merge(m.verdict);
    return d;
  }
  /// The models that deny the job.
  [[nodiscard]] std::vector<std::string_view> denied_by() const {
    std::vector<std::string_view> out;
    for (const auto& m : models)
      if (m.verdict.denied()) out.emplace_back(m.model);
    return out;
  }
  /// Every victim any denying model names, first mention first, each job once.
  [[nodiscard]] std::vector<victim> victims() const {
    std::vector<victim> out;
    for (const auto& m : models)
      for (const auto& v : m.victims) {
        bool seen = false;
        for (const auto& o : out) seen = seen || o.job_id == v.job_id;
        if (!seen) out.push_back(v);
      }
    return out;
  }
  /// The earliest time every denying model would allow the job: the latest of
  /// their times. nullopt when none denies or one of them cannot tell.
  [[nodiscard]] std::optional<std::int64_t> earliest_ms() const {
    std::optional<std::int64_t> t;
    for (const auto& m : models) {
      if (m.verdict.allowed()) continue;
      if (!m.earliest_ms) return std::nullopt;
      if (!t || *m.earliest_ms > *t) t = m.earliest_ms;
    }
    return t;
  }
  friend bool operator==(const explanation&, const explanation&) = default;
};

namespace detail {
/// Fills `out` with what model `p` says about `j`. Const: changes nothing.
template <class P>
void explain_model(const P& p, const job& j, model_explanation& out) {
  out.model = std::string(p.policy_name());
  out.verdict = p.check(j);
  out.victims.clear();
  out.earliest_ms.reset();
  if (out.verdict.denied()) {
    p.victims(j, out.victims);
    out.earliest_ms = earliest_admission_of(p, j);
  }
}

}  // namespace detail

/// What-if for a single model (the engines have their own explain()).
template <policy P>
[[nodiscard]] explanation explain(const P& p, const job& j) {
  explanation x;
  x.job_id = j.id;
  x.models.emplace_back();
  detail::explain_model(p, j, x.models.back());
  return x;
}

/// Readable, multi-line text of an explanation.
[[nodiscard]] inline std::string to_string(const explanation& x) {
  std::string s = "job " + x.job_id + ": ";
  if (x.already_admitted)
    s += "already admitted";
  else if (x.allowed() && !x.partial_counts.empty()) {
    s += "would be admitted now with fewer pods (";
    for (std::size_t i = 0; i < x.partial_counts.size(); ++i) {
      if (i) s += ", ";
      s += std::to_string(x.partial_counts[i]);
    }
    s += ")";
  } else if (x.allowed())
    s += "would be admitted now";
  else {
    s += "would be denied now by ";
    const auto by = x.denied_by();
    for (std::size_t i = 0; i < by.size(); ++i) {
      if (i) s += ", ";
      s.append(by[i]);
    }
  }
  s += "\n";
  for (const auto& m : x.models) {
    s += "  " + m.model + ": " + (m.allowed() ? "allows" : "denies") + "\n";
    for (const auto& r : m.verdict.reasons()) s += "    reason: " + to_string(r) + "\n";
    if (m.verdict.denied()) {
      if (m.victims.empty())
        s += "    victims: none (preemption would not make room)\n";
      else {
        s += "    victims (" + std::to_string(m.victims.size()) + "):";
        for (const auto& v : m.victims) {
          s += " " + v.job_id + " (";
          s.append(v.rule);
          if (!v.entity.empty()) s += ", " + v.entity;
          s += ")";
        }
        s += "\n";
      }
      if (m.earliest_ms)
        s += "    earliest admission: " + std::to_string(*m.earliest_ms) + " ms (" + format_duration(*m.earliest_ms) +
             ")\n";
      else
        s += "    earliest admission: cannot tell\n";
    }
  }
  if (!x.allowed() && !x.already_admitted) {
    if (const auto t = x.earliest_ms())
      s += "earliest admission by every model: " + std::to_string(*t) + " ms (" + format_duration(*t) + ")\n";
  }
  return s;
}

}  // namespace quota
