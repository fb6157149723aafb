// SPDX-License-Identifier: Apache-2.0
// Fuzz: ResourceClaim / DeviceClass / Pod objects (kai_claims_json.hpp) loaded
// into a model that already holds the claims of tests/data/kai_claims.
// Properties: typed errors only; a rejected document leaves the model
// byte-identical (to_json before == after); an accepted one serialises.
#include <fstream>
#include <sstream>

#include <quota/kai_claims_json.hpp>

#include "fuzz_common.hpp"

namespace {
using namespace quota;

const kai_claims_model& seeded() {
  static const kai_claims_model m = [] {
    kai_claims_model s;
    const std::string dir = std::string(QUOTA_SOURCE_DIR) + "/tests/data/kai_claims";
    load_device_classes(s, load_json_file(dir + "/deviceclasses.json"));
    (void)load_resource_claims(s, load_json_file(dir + "/claims.json"));
    return s;
  }();
  return m;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  kai_claims_model m = seeded();
  const json before = m;
  if (!fuzz::typed([&] { (void)load_device_classes(m, *doc); }))
    fuzz::require(json(m) == before, "a rejected DeviceClass document changed the model");
  const json mid = m;
  if (!fuzz::typed([&] { (void)load_resource_claims(m, *doc); }))
    fuzz::require(json(m) == mid, "a rejected ResourceClaim document changed the model");
  const json after = m;
  (void)fuzz::typed([&] { (void)load_claim_pods(m, *doc); });
  fuzz::require(json(m) == after, "load_claim_pods changed the model");
  return 0;
}
