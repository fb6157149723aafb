// SPDX-License-Identifier: Apache-2.0
// Fuzz: Volcano Queue / PodGroup objects (volcano_json.hpp).
// Properties: typed errors only; accepted queues build a tree (or a typed
// validation_error); adding each queue to an existing tree either works or
// leaves that tree unchanged (strong guarantee); deserved is within
// realCapability.
#include <quota/volcano_json.hpp>

#include "fuzz_common.hpp"

namespace {
using namespace quota;

std::vector<std::int64_t> snapshot(const volcano_model& t, std::size_t dims) {
  std::vector<std::int64_t> s{static_cast<std::int64_t>(t.size())};
  for (std::size_t q = 0; q < t.size(); ++q)
    for (std::size_t d = 0; d < dims; ++d) s.push_back(t.real_capability(q, d));
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  resource_registry reg;
  (void)fuzz::typed([&] { (void)parse_volcano_podgroups(*doc, reg); });
  std::vector<volcano_queue_spec> specs;
  if (!fuzz::typed([&] { specs = parse_volcano_queues(*doc, reg); })) return 0;
  const std::vector<resource_id> dims{resources::cpu, resources::memory, resources::nvidia_gpu};
  resource_vector total;
  total.set(resources::cpu, 64000);
  total.set(resources::memory, std::int64_t{1} << 40);
  total.set(resources::nvidia_gpu, 30);
  std::optional<volcano_model> tree;
  if (fuzz::typed([&] { tree.emplace(dims, total, specs); })) {
    for (std::size_t q = 0; q < tree->size(); ++q) {
      resource_vector demand;
      demand.set(resources::nvidia_gpu, 20);
      tree->set_pending(tree->spec(q).name, demand);
    }
    if (fuzz::typed([&] { tree->compute_deserved(); }))
      for (std::size_t q = 0; q < tree->size(); ++q)
        for (std::size_t d = 0; d < dims.size(); ++d)
          fuzz::require(tree->deserved_floor(q, d) <= tree->real_capability(q, d), "deserved above realCapability");
  }
  volcano_model base(dims, total, {volcano_queue_spec{.name = "default", .weight = 1}});
  for (auto& s : specs) {
    const auto before = snapshot(base, dims.size());
    if (!fuzz::typed([&] { base.add_queue(s); }))
      fuzz::require(snapshot(base, dims.size()) == before, "a rejected add_queue changed the tree");
  }
  return 0;
}
