// Fuzz: the quota-sim scenario loader (tools/quota-sim/scenario.hpp).
// Properties: a rejected scenario throws typed errors only (validation_error
// listing every problem); loading is deterministic (same document, same
// result or same message).
#include "scenario.hpp"

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quota;
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  std::string first, second;
  auto run = [&](std::string& msg) {
    try {
      const auto sc = sim::load_scenario(*doc);
      msg = "ok " + sc.name + " " + std::to_string(sc.jobs.size()) + " " + std::to_string(sc.nodes.size()) + " " +
            std::to_string(sc.policies.size());
    } catch (const quota::error& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      fuzz::fail(std::string("untyped exception: ") + e.what());
    }
  };
  run(first);
  run(second);
  fuzz::require(first == second, "scenario loading is not deterministic");
  return 0;
}
