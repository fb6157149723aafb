// SPDX-License-Identifier: Apache-2.0
// quota-sim: a deterministic replay of a scenario through a reference host
// scheduler (the same loop as examples/custom_scheduler) and the composed
// quota engine.
// Docs: docs/scenario-format.md ("The replay")
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <quota/duration.hpp>
#include <quota/engine.hpp>
#include <quota/json.hpp>

#include "model_registry.hpp"
#include "scenario.hpp"

namespace quota::sim {

enum class job_state : std::uint8_t { waiting, pending, running, finished, requeued, deleted };

inline const char* state_name(job_state s) {
  switch (s) {
    case job_state::waiting:
      return "waiting";
    case job_state::pending:
      return "pending";
    case job_state::running:
      return "running";
    case job_state::finished:
      return "finished";
    case job_state::requeued:
      return "pending";
    case job_state::deleted:
      return "deleted";
  }
  return "?";
}

struct failed_expectation {
  std::string path;
  std::int64_t at_ms;
  std::string expected;
  std::string actual;
};

struct run_result {
  json report;
  std::vector<failed_expectation> failures;
  std::size_t events = 0;
};

/// Options of simulator::run beyond the time limit.
struct run_options {
  /// After every instant: the pods placed on each node fit its allocatable and
  /// no GPU device is shared beyond 1000 thousandths; at the end: every
  /// submitted job ran or has a pending reason. Violations become failures
  /// (path "invariant") with the instant they were found.
  bool check_invariants = false;
  /// The report's `peak_contention.models`: every model's state at the
  /// instant of peak contention, taken by a second replay up to that instant.
  bool peak_snapshot = false;
};

namespace detail {
class simulator_impl;
}

/// The replay of one scenario. The state lives in detail::simulator_impl
/// (simulator_impl.hpp), compiled once into the quota_sim library.
class simulator {
 public:
  simulator(scenario sc, std::vector<model_instance> models);
  simulator(simulator&&) noexcept;
  simulator& operator=(simulator&&) noexcept;
  simulator(const simulator&) = delete;
  simulator& operator=(const simulator&) = delete;
  ~simulator();

  /// Replays the scenario up to `until_ms` (or its end). `progress` is called
  /// now and then with (done events, total events).
  run_result run(std::int64_t until_ms = -1, const std::function<void(std::size_t, std::size_t)>& progress = {});
  run_result run(std::int64_t until_ms, const std::function<void(std::size_t, std::size_t)>& progress,
                 const run_options& opt);

  [[nodiscard]] const engine& quota_engine() const noexcept;
  /// Running jobs with a declared end: (end time, job id), earliest first (for quota-sim explain).
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::string>> scheduled_finishes() const;
  /// (time, chart resource in use) and (time, capacity) over the replay.
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> usage_over_time() const;
  [[nodiscard]] std::int64_t end_ms() const noexcept;
  [[nodiscard]] std::int64_t capacity_now() const;
  [[nodiscard]] const scenario& spec() const noexcept;
  /// The chart as SVG: chart-resource usage per tenant over time (steps),
  /// dashed reference lines, cluster capacity, preemptions marked in red.
  [[nodiscard]] std::string svg() const;

 private:
  std::unique_ptr<detail::simulator_impl> impl_;
};

/// Text for the SVG (XML 1.0): markup escaped, control characters as \xNN.
[[nodiscard]] inline std::string svg_text(const std::string& in) {
  std::string o;
  for (char c : in) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '"')
      o += "&quot;";
    else if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      o += "\\x";
      o += hex[u >> 4];
      o += hex[u & 0xf];
    } else
      o += c;
  }
  return o;
}

/// The step between time ticks of a chart `t_end_ms` long: a round duration
/// (1s, 5s, 10s, 30s, 1m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d, 2d, 7d,
/// 30d, then whole multiples of 30d) giving at most 12 ticks.
[[nodiscard]] inline std::int64_t time_tick_ms(std::int64_t t_end_ms) {
  static constexpr std::int64_t s = 1000, m = 60 * s, h = 60 * m, d = 24 * h;
  static constexpr std::int64_t steps[] = {s, 5 * s, 10 * s, 30 * s, m,      5 * m, 10 * m, 15 * m, 30 * m,
                                           h, 2 * h, 3 * h,  6 * h,  12 * h, d,     2 * d,  7 * d,  30 * d};
  for (const auto step : steps)
    if (t_end_ms / step <= 12) return step;
  return (t_end_ms / (12 * 30 * d) + 1) * 30 * d;
}

/// A time tick's label: the duration in its largest units ("1h30m", "2d").
[[nodiscard]] inline std::string time_tick_label(std::int64_t ms) {
  return ms == 0 ? "0" : format_duration(ms);
}

/// What one unit of the chart's y axis is, for a resource shown divided by
/// 10^scale (cpu in cores, memory in bytes, GPU devices, GPU thousandths).
[[nodiscard]] inline std::string chart_unit(std::string_view resource) {
  if (resource == "cpu") return "cores";
  if (resource == "memory" || resource == "ephemeral-storage") return "bytes";
  if (resource.size() >= 5 && resource.substr(resource.size() - 5) == "milli") return "thousandths of a GPU";
  if (resource.size() >= 3 && resource.substr(resource.size() - 3) == "gpu") return "GPUs";
  return "units";
}

/// A number for SVG attributes: one decimal, without the locale.
[[nodiscard]] inline std::string svg_num(double v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 1).ptr);
}

}  // namespace quota::sim
