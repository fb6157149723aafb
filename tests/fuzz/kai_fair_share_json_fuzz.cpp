// SPDX-License-Identifier: Apache-2.0
// Fuzz: KAI Queue objects (kai_fair_share_json.hpp).
// Properties: typed errors only; a rejected document leaves the registry
// unchanged (strong guarantee); accepted queues build a tree or get a typed
// validation_error; with a capacity, no queue's fair share is negative or
// above its parent's share (the capacity for top-level queues).
#include <quota/kai_fair_share_json.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quota;
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  resource_registry reg;
  reg.intern("run.ai/gpu-milli", 3);
  kai_fair_share_json_options opts;
  opts.gpu_resource = "run.ai/gpu-milli";
  const std::size_t reg_before = reg.size();
  std::vector<kai_fair_share_queue_spec> specs;
  if (!fuzz::typed([&] { specs = load_kai_fair_share_queues(*doc, reg, opts); })) {
    fuzz::require(reg.size() == reg_before, "a rejected document changed the registry");
    return 0;
  }
  std::optional<kai_fair_share_model> tree;
  if (!fuzz::typed([&] { tree.emplace(std::move(specs)); })) return 0;
  resource_vector cap;
  cap.set(resources::cpu, 64000);
  cap.set(resources::memory, 256000);
  cap.set(reg.at("run.ai/gpu-milli"), 16000);
  if (!fuzz::typed([&] {
        tree->set_capacity(cap);
        for (std::size_t q = 0; q < tree->size(); ++q) tree->set_request(q, cap);
        tree->compute();
      }))
    return 0;
  // deserved quotas may oversubscribe (docs/kai-fair-share.md), but no queue
  // deserves more than its parent's share (top level: the capacity), nor less than 0
  for (const auto r : tree->resources())
    for (std::size_t q = 0; q < tree->size(); ++q) {
      const amount mine = tree->fair_share(q, r);
      const auto p = tree->parent(q);
      fuzz::require(mine >= 0, "negative fair share");
      fuzz::require(mine <= (p == kai_fair_share_model::npos ? tree->capacity(r) : tree->fair_share(p, r)),
                    "a queue deserves more than its parent's share");
    }
  (void)kai_fair_share_to_json(*tree, reg).dump();
  return 0;
}
