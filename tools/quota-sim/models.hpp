// The models quota-sim can compose, registered by name. Each entry builds a
// model from a scenario's policies[] entry (the upstream objects exactly as
// kubectl prints them, plus options) and can synthesize a policy entry for
// generated scenarios.
#pragma once

#include "simulator.hpp"

namespace quota::sim {

inline void register_models() {
  auto& k = model_kinds();
  if (!k.empty()) return;
}

/// The model entries of a scenario, built in order; unknown names and bad
/// objects are reported all at once, with their JSON paths.
inline std::vector<model_instance> build_models(scenario& sc) {
  register_models();
  std::vector<model_instance> out;
  diagnostics diag;
  for (const auto& ps : sc.policies) {
    auto it = model_kinds().find(ps.model);
    if (it == model_kinds().end()) {
      std::string known;
      for (const auto& [name, kind] : model_kinds()) known += (known.empty() ? "" : ", ") + name;
      diag.add(ps.path + ".model", "unknown model '" + ps.model + "' (known: " + (known.empty() ? "none" : known) + ")");
      continue;
    }
    try {
      out.push_back(it->second.make(ps, sc));
    } catch (const validation_error& e) {
      for (const auto& p : e.problems()) diag.add(ps.path + ": " + p.path, p.message);
    } catch (const error& e) {
      diag.add(ps.path, e.what());
    }
  }
  diag.throw_if_any();
  return out;
}

}  // namespace quota::sim
