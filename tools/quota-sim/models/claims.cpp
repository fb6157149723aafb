// quota-sim's claims model, compiled once into the quota_sim library.
#include "claims.hpp"

namespace quota::sim {

void register_claims_model(std::map<std::string, model_kind>& kinds) {
  kinds["kai_claims"] = model_kind{
      "shared DRA ResourceClaims with one owning queue per claim (KAI's claim-sharing design, or KAI today with "
      "mode kai_strict): {\"objects\": [ResourceClaim, DeviceClass ...], \"pods\": [Pod ...], \"options\": "
      "{\"locking\": \"deny_foreign\", \"orphans\": \"deduct\", \"opt_out\": [...]}}; jobs name claims in `claims`",
      detail::claims_make,
      // claims cannot be synthesized: an entry with no claims (every job without claims is allowed)
      [](const std::vector<std::string>&, const resource_vector&, const resource_registry&) {
        return json{{"model", "kai_claims"}, {"objects", json::array()}};
      }};
}

}  // namespace quota::sim
