// quota-sim's kueue model, compiled once into the quota_sim library.
#include "kueue.hpp"

namespace quota::sim {

void register_kueue_model(std::map<std::string, model_kind>& kinds) {
  kinds["kueue"] = model_kind{
      "Kueue ClusterQueues in cohorts of any depth with flavors, nominal quota, borrowing and lending limits, "
      "preemption and fair sharing: {\"objects\": [ResourceFlavor, ClusterQueue, Cohort, LocalQueue ...], "
      "\"options\": {\"fairSharing\": false}}",
      detail::kueue_make, detail::kueue_synthesize};
}

}  // namespace quota::sim
