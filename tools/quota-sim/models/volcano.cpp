// quota-sim's volcano model, compiled once into the quota_sim library.
#include "volcano.hpp"

namespace quota::sim {

void register_volcano_model(std::map<std::string, model_kind>& kinds) {
  kinds["volcano"] = model_kind{
      "Volcano Queues (proportion plugin): {\"objects\": [Queue ...], \"options\": {\"plugin\": \"proportion\", "
      "\"enqueue\": false, \"overcommitFactor\": 1.2}}",
      detail::volcano_make, detail::volcano_synthesize};
  kinds["volcano_capacity"] = model_kind{
      "Volcano Queues (capacity plugin, flat or hierarchical): {\"objects\": [Queue ...], \"options\": "
      "{\"hierarchy\": true, \"ancestorReclaimLevel\": 0}}",
      detail::volcano_capacity_make, detail::volcano_capacity_synthesize};
}

}  // namespace quota::sim
