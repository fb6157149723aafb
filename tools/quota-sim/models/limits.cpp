// quota-sim's limits model, compiled once into the quota_sim library.
#include "limits.hpp"

namespace quota::sim {

void register_limits_model(std::map<std::string, model_kind>& kinds) {
  kinds["yunikorn_limits"] = model_kind{
      "YuniKorn user and group limits (maxresources, maxapplications per user and group at every queue level, "
      "wildcards, cumulative group pool): {\"config\": {\"partitions\": [{\"queues\": [{\"name\": \"root\", "
      "\"limits\": [...], \"queues\": [...]}]}]}, \"options\": {\"partition\": \"default\", \"vcoreAsCpu\": true}}",
      detail::yunikorn_limits_make, detail::yunikorn_limits_synthesize};
}

}  // namespace quota::sim
