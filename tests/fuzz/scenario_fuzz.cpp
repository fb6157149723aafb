// SPDX-License-Identifier: Apache-2.0
// Fuzz: the quota-sim scenario loader (tools/quota-sim/scenario.hpp), from the
// bytes of a file: the bounded JSON parser (numbers out of range such as
// 1e400, duplicate keys, depth, value and string limits), the YAML reader
// (aliases, duplicate keys, UTF-8) on the same bytes, then the loader with its
// size limits (counts, pods, names, times) and the object-field checks.
// Properties: every rejection is a typed error (quota::error), never another
// exception; parsing and loading are deterministic (same document, same
// result or same message); an accepted scenario stays within the limits.
// The limits are lowered so that no input can spend seconds expanding copies.
#include "scenario.hpp"

#include "fuzz_common.hpp"

namespace {

quota::sim::input_limits fuzz_limits() {
  quota::sim::input_limits lim;
  lim.max_file_bytes = 1 << 16;
  lim.max_values = 20'000;
  lim.max_jobs = 2'000;
  lim.max_nodes = 200;
  lim.max_pods = 1'000;
  lim.max_events = 2'000;
  lim.max_expanded_bytes = 4 << 20;
  return lim;
}

// "ok <summary>" or the error's message; any other exception is a property failure.
std::string load_text(std::string_view text, bool yaml, const quota::sim::input_limits& lim) {
  using namespace quota;
  try {
    const json doc = yaml ? sim::parse_scenario_yaml(std::string(text), "f.yaml", lim)
                          : sim::parse_scenario_text(text, "f.json", lim);
    const auto sc = sim::load_scenario(doc, lim);
    fuzz::require(sc.jobs.size() <= lim.max_jobs && sc.nodes.size() <= lim.max_nodes, "limits passed");
    for (const auto& j : sc.jobs) {
      fuzz::require(!j.id.empty() && j.pods >= 1 && j.pods <= lim.max_pods, "job fields out of range");
      fuzz::require(j.submit_ms >= 0 && j.submit_ms <= lim.max_time_ms, "submit time out of range");
    }
    return "ok " + sc.name + " " + std::to_string(sc.jobs.size()) + " " + std::to_string(sc.nodes.size()) + " " +
           std::to_string(sc.policies.size()) + " " + std::to_string(sc.warnings.size());
  } catch (const quota::error& e) {
    return e.what();
  } catch (const std::exception& e) {
    fuzz::fail(std::string("untyped exception: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quota;
  static const sim::input_limits lim = fuzz_limits();
  const std::string_view text = fuzz::as_text(data, size);
  if (text.size() > lim.max_file_bytes) return 0;
  for (bool yaml : {false, true}) {
#ifndef QUOTA_SIM_HAVE_YAML
    if (yaml) break;
#endif
    const std::string first = load_text(text, yaml, lim);
    const std::string second = load_text(text, yaml, lim);
    fuzz::require(first == second, "scenario loading is not deterministic");
  }
  return 0;
}
