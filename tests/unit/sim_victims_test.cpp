// SPDX-License-Identifier: Apache-2.0
// quota-sim's volcano_capacity adapter keeps its own list of running tasks in
// allocation order (capacity_queues::running_tasks() walks every task ever
// allocated). Its victims must be the library's reclaimable() over
// running_tasks(), also after the release-and-recommit of a failed
// preemption trial.
#include <quota_catch.hpp>

#include <string>
#include <vector>

#include "models/volcano_capacity.hpp"

namespace {

using quota::json;

quota::job gpu_job(std::string id, std::string queue, quota::amount gpus) {
  quota::job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.request.set(quota::resources::nvidia_gpu, gpus);
  j.preemptible = true;
  return j;
}

json queue_object(const std::string& name, int deserved_gpus) {
  return json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "Queue"},
              {"metadata", {{"name", name}}},
              {"spec", {{"reclaimable", true}, {"deserved", {{"nvidia.com/gpu", deserved_gpus}}}}}};
}

// The library's answer on the adapter's own queues.
std::vector<std::string> library_victims(const quota::sim::detail::volcano_capacity_sim_policy& p,
                                         const quota::job& j) {
  std::vector<quota::victim> out;
  const auto& q = p.queues();
  if (q.preemptive(q.index(j.queue), j.request).allowed())
    q.reclaimable(j.queue, j.request, q.victim_order(j.queue, q.running_tasks()), out);
  std::vector<std::string> ids;
  for (const auto& v : out) ids.push_back(v.job_id);
  return ids;
}

std::vector<std::string> adapter_victims(const quota::sim::detail::volcano_capacity_sim_policy& p,
                                         const quota::job& j) {
  std::vector<quota::victim> out;
  p.victims(j, out);
  std::vector<std::string> ids;
  for (const auto& v : out) ids.push_back(v.job_id);
  return ids;
}

}  // namespace

TEST_CASE("sim victims: volcano_capacity victims follow allocation order across releases and re-commits") {
  quota::resource_registry reg;
  quota::resource_vector total;
  total.set(quota::resources::nvidia_gpu, 16);
  const json objects = json::array({queue_object("a", 4), queue_object("b", 8), queue_object("c", 4)});
  quota::sim::detail::volcano_capacity_sim_policy p(quota::load_capacity_queues(objects, reg, total), reg);

  for (int i = 0; i < 6; ++i) p.commit(gpu_job("a-" + std::to_string(i), "a", 1));
  for (int i = 0; i < 5; ++i) p.commit(gpu_job("c-" + std::to_string(i), "c", 1));
  const quota::job reclaimer = gpu_job("b-0", "b", 3);

  const auto first = adapter_victims(p, reclaimer);
  REQUIRE_FALSE(first.empty());  // a and c are over their deserved share
  CHECK(first == library_victims(p, reclaimer));

  // a failed trial: the first victims are released and committed again (they move to the end)
  p.release(first[0]);
  p.release(first[1]);
  CHECK(adapter_victims(p, reclaimer) == library_victims(p, reclaimer));
  p.commit(gpu_job(first[1], first[1].substr(0, 1), 1));
  p.commit(gpu_job(first[0], first[0].substr(0, 1), 1));
  const auto after = adapter_victims(p, reclaimer);
  CHECK(after == library_victims(p, reclaimer));
  CHECK(after != first);  // the order moved with the re-commits

  // finished tasks leave; new ones join at the end
  p.release("a-3");
  p.release("c-4");
  p.commit(gpu_job("a-9", "a", 2));
  CHECK(adapter_victims(p, reclaimer) == library_victims(p, reclaimer));

  // an unknown task is an error and changes nothing
  CHECK_THROWS_AS(p.release("nope"), quota::unknown_entity_error);
  CHECK(adapter_victims(p, reclaimer) == library_victims(p, reclaimer));
}
