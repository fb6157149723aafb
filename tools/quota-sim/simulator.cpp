// SPDX-License-Identifier: Apache-2.0
// quota-sim's replay, compiled once: the simulator forwards to its
// detail::simulator_impl (simulator_impl.hpp, defined in sim_*.hpp).
#include "simulator.hpp"

#include "sim_invariants.hpp"
#include "sim_placement.hpp"
#include "sim_reload.hpp"
#include "sim_replay.hpp"
#include "sim_report.hpp"
#include "simulator_impl.hpp"

namespace quota::sim {

simulator::simulator(scenario sc, std::vector<model_instance> models)
    : impl_(std::make_unique<detail::simulator_impl>(std::move(sc), std::move(models))) {}
simulator::simulator(simulator&&) noexcept = default;
simulator& simulator::operator=(simulator&&) noexcept = default;
simulator::~simulator() = default;

run_result simulator::run(std::int64_t until_ms, const std::function<void(std::size_t, std::size_t)>& progress) {
  return impl_->run(until_ms, progress);
}
run_result simulator::run(std::int64_t until_ms, const std::function<void(std::size_t, std::size_t)>& progress,
                          const run_options& opt) {
  return impl_->run(until_ms, progress, opt);
}
const engine& simulator::quota_engine() const noexcept {
  return impl_->quota_engine();
}
std::vector<std::pair<std::int64_t, std::string>> simulator::scheduled_finishes() const {
  return impl_->scheduled_finishes();
}
std::vector<std::pair<std::int64_t, std::int64_t>> simulator::usage_over_time() const {
  return impl_->usage_over_time();
}
std::int64_t simulator::end_ms() const noexcept {
  return impl_->end_ms();
}
std::int64_t simulator::capacity_now() const {
  return impl_->capacity_now();
}
const scenario& simulator::spec() const noexcept {
  return impl_->spec();
}
std::string simulator::svg() const {
  return impl_->svg();
}

}  // namespace quota::sim
