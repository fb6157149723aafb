// SPDX-License-Identifier: Apache-2.0
// Fuzz: Kueue objects (kueue_json.hpp) appended to the objects of
// tests/data/kueue/borrowing.json.
// Properties: typed errors only; a rejected document leaves the registry and
// the loaded objects unchanged (the model built from them serialises to the
// same JSON); accepted objects build a model or get a typed error.
#include <quota/kueue_json.hpp>
#include <quota/kueue.hpp>

#include "fuzz_common.hpp"

namespace {
using namespace quota;

struct state {
  resource_registry reg;
  kueue_objects objs;
};

const state& seeded() {
  static const state s = [] {
    state x;
    load_kueue_objects(load_json_file(std::string(QUOTA_SOURCE_DIR) + "/tests/data/kueue/borrowing.json"), x.reg,
                       x.objs);
    return x;
  }();
  return s;
}

json model_json(const kueue_objects& o, const resource_registry& reg) {
  json j;
  if (!fuzz::typed([&] { j = kueue_model(o.config, reg); })) j = "invalid";
  return j;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  state s = seeded();
  const std::size_t reg_before = s.reg.size();
  const std::size_t wl_before = s.objs.workloads.size();
  const std::size_t cq_before = s.objs.config.cluster_queues.size();
  if (!fuzz::typed([&] { load_kueue_objects(*doc, s.reg, s.objs); })) {
    fuzz::require(s.reg.size() == reg_before, "a rejected document changed the registry");
    fuzz::require(s.objs.workloads.size() == wl_before && s.objs.config.cluster_queues.size() == cq_before,
                  "a rejected document changed the loaded objects");
    fuzz::require(model_json(s.objs, s.reg) == model_json(seeded().objs, seeded().reg),
                  "a rejected document changed the model");
    return 0;
  }
  (void)model_json(s.objs, s.reg).dump();
  return 0;
}
