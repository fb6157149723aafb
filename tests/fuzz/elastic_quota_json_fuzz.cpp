// SPDX-License-Identifier: Apache-2.0
// Fuzz: ElasticQuota / CompositeElasticQuota / Pod objects (elastic_quota_json.hpp).
// Properties: rejected documents throw typed errors only; accepted quotas
// build a set or get a typed validation_error; every pod of the same document
// is added (or refused with a typed error that leaves the totals unchanged);
// removing every added pod brings the used totals back to zero (conservation).
#include <quota/elastic_quota_json.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quota;
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  resource_registry reg;
  std::vector<elastic_quota_spec> specs;
  if (!fuzz::typed([&] { specs = load_elastic_quotas(*doc, reg); })) return 0;
  std::vector<elastic_loaded_pod> pods;
  if (!fuzz::typed([&] { pods = load_elastic_pods(*doc, reg); })) return 0;
  std::optional<elastic_quota_model> set;
  if (!fuzz::typed([&] { set.emplace(specs, elastic_options{}, &reg); })) return 0;
  std::vector<std::string> added;
  for (const auto& p : pods) {
    const resource_vector before = set->total_used();
    if (fuzz::typed([&] { set->add_pod(p.pod); }))
      added.push_back(p.pod.name);
    else
      fuzz::require(set->total_used() == before, "a refused pod changed the totals");
  }
  for (const auto& n : added) fuzz::require(fuzz::typed([&] { set->remove_pod(n); }), "remove of an added pod failed");
  fuzz::require(set->total_used().is_zero(), "usage left after every pod was removed");
  for (std::uint32_t q = 0; q < set->size(); ++q) fuzz::require(set->used(q).is_zero(), "quota usage left");
  return 0;
}
