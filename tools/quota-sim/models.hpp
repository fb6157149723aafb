// SPDX-License-Identifier: Apache-2.0
// The models quota-sim can compose, registered by name. Each entry builds a
// model from a scenario's policies[] entry (the upstream objects exactly as
// kubectl prints them, plus options) and can synthesize a policy entry for
// generated scenarios. The models (models/*.hpp) are compiled once, into the
// quota_sim library, through models.cpp.
#pragma once

#include <vector>

#include "model_registry.hpp"

namespace quota::sim {

/// Fills model_kinds() with every model (once).
void register_models();

/// The model entries of a scenario, built in order; unknown names and bad
/// objects are reported all at once, with their JSON paths.
std::vector<model_instance> build_models(scenario& sc);

}  // namespace quota::sim
