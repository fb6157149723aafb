// SPDX-License-Identifier: Apache-2.0
// The composed engine path: admit + release of one job with all eleven models
// of quota-sim's `--policy all` composed, through basic_engine (the model
// types known at compile time) and through the type-erased engine, on a
// cluster already half full. Allowed and denied paths; allocations counted.
// Figures and targets: docs/performance.md.
//   engine_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>

#include <quota/running_limits.hpp>
#include "../tools/quota-sim/explain.hpp"
#include "../tools/quota-sim/generate.hpp"
#include "../tools/quota-sim/models.hpp"
#include "../tools/quota-sim/models/budget.hpp"
#include "../tools/quota-sim/models/elastic_quota.hpp"
#include "../tools/quota-sim/models/kai_claims.hpp"
#include "../tools/quota-sim/models/kai_fair_share.hpp"
#include "../tools/quota-sim/models/kueue.hpp"
#include "../tools/quota-sim/models/priority_class_quota.hpp"
#include "../tools/quota-sim/models/sharing_pools.hpp"
#include "../tools/quota-sim/models/volcano.hpp"
#include "../tools/quota-sim/models/volcano_capacity.hpp"
#include "../tools/quota-sim/models/yunikorn_limits.hpp"
#include "../tools/quota-sim/simulator.hpp"
#include "alloc_counter.hpp"

namespace {

namespace qs = quota::sim;

// The eleven models in the order `generate --policy all` lists them.
using model_types =
    std::tuple<qs::sim_budget, qs::sim_elastic_quota, quota::kai_claims_policy, quota::kai_fair_share_policy,
               quota::kueue_policy, qs::registry_bound<quota::priority_class_quota_policy>, quota::running_limits_policy,
               qs::registry_bound<quota::sharing_pools_policy>, qs::detail::volcano_sim_policy,
               qs::detail::volcano_capacity_sim_policy, qs::detail::sim_yunikorn_limits>;

template <class Tuple>
struct engine_of;
template <class... Ps>
struct engine_of<std::tuple<Ps...>> {
  using type = quota::basic_engine<Ps...>;
};
using all_models = engine_of<model_types>::type;

template <class T>
const T& model_at(const std::vector<qs::model_instance>& ms, std::size_t i) {
  const T* p = ms.at(i).policy.target<T>();
  if (p == nullptr) throw std::logic_error("engine_bench: model " + std::to_string(i) + " is not of the listed type");
  return *p;
}

template <std::size_t... I>
all_models make_static(const std::vector<qs::model_instance>& ms, std::index_sequence<I...>) {
  return all_models(model_at<std::tuple_element_t<I, model_types>>(ms, I)...);
}

// A generated cluster of 64 nodes and 8 tenants, its models, and the jobs.
struct fixture {
  std::vector<qs::model_instance> models;
  std::vector<quota::job> jobs;

  fixture() {
    qs::generate_options o;
    o.jobs = 400;
    o.nodes = 64;
    o.tenants = 8;
    o.users = 32;
    o.load = 0.9;
    qs::register_models();
    for (const auto& [name, kind] : qs::model_kinds())
      if (kind.synthesize) o.policies.push_back(name);
    auto sc = qs::load_scenario(qs::generate_scenario(o));
    models = qs::build_models(sc);
    for (const auto& js : sc.jobs) jobs.push_back(qs::job_of(js, 0));
  }
};

const fixture& shared_fixture() {
  static const fixture f;
  return f;
}

// Admits every job the engine allows, in submission order, until half the
// jobs ran through: the models hold realistic usage. Returns the first job
// left out that the engine allows (the allowed path) and a copy of it asking
// for a thousand times its request (the denied path).
template <class E>
std::pair<quota::job, quota::job> warm(E& e, const std::vector<quota::job>& jobs) {
  quota::job allowed;
  bool found = false;
  for (const auto& j : jobs) e.pending_added(j);  // every job is submitted and waits
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i < jobs.size() / 2) {
      (void)e.admit(jobs[i]);
    } else if (!found && e.check(jobs[i]).allowed()) {
      allowed = jobs[i];
      found = true;
    }
  }
  if (!found) {
    std::string why;
    std::size_t admitted = e.admitted_count();
    for (std::size_t i = jobs.size() / 2; i < jobs.size() && why.empty(); ++i) why = to_string(e.check(jobs[i]));
    throw std::logic_error("engine_bench: no job is left that the engine allows (" + std::to_string(admitted) +
                           " admitted; " + why + ")");
  }
  quota::job denied = allowed;
  denied.id += "-huge";
  quota::resource_vector big;
  for (const auto& [r, v] : allowed.request) big.set(r, v * 1000);
  denied.request = big;
  return {allowed, denied};
}

// One call per admission: callgrind's call count of this function divides the
// instructions of admit_release into a figure per admit + release (the
// engine's own functions are partly inlined or tail-called, so their call
// counts are not the number of admissions).
[[gnu::noinline]] void admission_mark() { benchmark::ClobberMemory(); }

// not inlined: callgrind counts this function alone (--toggle-collect='*admit_release<*')
template <class E>
[[gnu::noinline]] void admit_release(benchmark::State& state, E& e, const quota::job& j) {
  admission_mark();
  if (!e.admit(j).allowed()) {
    state.SkipWithError("the job is not allowed");
    return;
  }
  e.release(j.id);
  const auto before = quota_bench::allocation_count();
  std::size_t denied = 0;
  for (auto _ : state) {
    admission_mark();
    auto d = e.admit(j);
    denied += d.denied() ? 1 : 0;
    benchmark::DoNotOptimize(d);
    if (d.allowed()) e.release(j.id);
  }
  if (denied != 0) state.SkipWithError("a repeated admission was denied");
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.counters["models"] = static_cast<double>(e.model_count());
}

template <class E>
[[gnu::noinline]] void denial(benchmark::State& state, E& e, const quota::job& j) {
  const auto first = e.admit(j);
  if (first.allowed()) {
    state.SkipWithError("the job is allowed");
    return;
  }
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    auto d = e.admit(j);
    benchmark::DoNotOptimize(d);
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.counters["reasons"] = static_cast<double>(first.reasons().size());
}

struct static_setup {
  all_models e;
  quota::job allowed, denied;
  std::vector<const quota::job*> admitted;  // the jobs warm() admitted, in order
  static_setup() : e(make_static(shared_fixture().models, std::make_index_sequence<std::tuple_size_v<model_types>>{})) {
    e.sync_charges();
    std::tie(allowed, denied) = warm(e, shared_fixture().jobs);
    for (const auto& j : shared_fixture().jobs)
      if (e.is_admitted(j.id)) admitted.push_back(&j);
  }
};
static_setup& composed() {
  static static_setup s;
  return s;
}

struct erased_setup {
  quota::engine e;
  quota::job allowed, denied;
  erased_setup() {
    for (const auto& m : shared_fixture().models) e.add(m.policy);
    e.sync_charges();
    std::tie(allowed, denied) = warm(e, shared_fixture().jobs);
  }
};

void bm_engine_admit_release_static(benchmark::State& state) {
  admit_release(state, composed().e, composed().allowed);
}
BENCHMARK(bm_engine_admit_release_static);

void bm_engine_admit_release_erased(benchmark::State& state) {
  static erased_setup s;
  admit_release(state, s.e, s.allowed);
}
BENCHMARK(bm_engine_admit_release_erased);

void bm_engine_denied_static(benchmark::State& state) {
  denial(state, composed().e, composed().denied);
}
BENCHMARK(bm_engine_denied_static);

void bm_engine_denied_erased(benchmark::State& state) {
  static erased_setup s;
  denial(state, s.e, s.denied);
}
BENCHMARK(bm_engine_denied_erased);

// One model alone, in the state the composed engine left it (the same jobs
// admitted, every job pending): what each model adds to the composed path.
template <std::size_t I>
void bm_model_admit_release(benchmark::State& state) {
  using model_t = std::tuple_element_t<I, model_types>;
  static quota::basic_engine<model_t> e = [] {
    quota::basic_engine<model_t> one(model_at<model_t>(shared_fixture().models, I));
    one.sync_charges();
    for (const auto& j : shared_fixture().jobs) one.pending_added(j);
    for (const auto* j : composed().admitted) (void)one.admit(*j);
    return one;
  }();
  state.SetLabel(std::string(e.template model<0>().policy_name()));
  admit_release(state, e, composed().allowed);
}
template <std::size_t... I>
void register_models(std::index_sequence<I...>) {
  (benchmark::RegisterBenchmark(("bm_model_admit_release/" + std::to_string(I)).c_str(), bm_model_admit_release<I>),
   ...);
}
const int registered = (register_models(std::make_index_sequence<std::tuple_size_v<model_types>>{}), 0);

}  // namespace

BENCHMARK_MAIN();
