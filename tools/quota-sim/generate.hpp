// SPDX-License-Identifier: Apache-2.0
// quota-sim generate: synthetic scenarios of a chosen size, deterministic for
// a seed (its own integer generator: no std distribution, whose results
// differ between standard libraries).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <quota/json.hpp>

#include "models.hpp"

namespace quota::sim {

struct splitmix64 {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// uniform in [0, n)
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

struct generate_options {
  std::int64_t nodes = 16;
  std::int64_t tenants = 4;
  std::int64_t users = 16;
  std::int64_t jobs = 200;
  std::uint64_t seed = 1;
  std::string arrival = "poisson";
  std::vector<std::string> policies;
  double load = 1.3;  // offered GPU load relative to capacity
};

/// Builds the scenario JSON.
inline json generate_scenario(const generate_options& o) {
  register_models();
  splitmix64 rng{o.seed};
  json sc;
  sc["name"] =
      "generated-" + std::to_string(o.nodes) + "n-" + std::to_string(o.jobs) + "j-seed" + std::to_string(o.seed);
  sc["description"] = "synthetic scenario from quota-sim generate";
  sc["cluster"]["nodes"] =
      json::array({json{{"name", "gpu-node"},
                        {"count", o.nodes},
                        {"allocatable", {{"cpu", "96"}, {"memory", "768Gi"}, {"nvidia.com/gpu", 8}}},
                        {"labels", {{"gpu", "A100"}}}}});
  std::vector<std::string> tenants;
  for (std::int64_t t = 0; t < o.tenants; ++t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "team-%02lld", static_cast<long long>(t));
    tenants.emplace_back(buf);
  }
  // policies derived from capacity
  resource_registry reg;
  resource_vector capacity;
  capacity.set(resources::cpu, 96'000 * o.nodes);
  capacity.set(resources::memory, (768LL << 30) * o.nodes);
  capacity.set(resources::nvidia_gpu, 8 * o.nodes);
  sc["policies"] = json::array();
  std::vector<std::string> names;
  for (const auto& p : o.policies) {
    if (p != "all") {
      names.push_back(p);
      continue;
    }
    for (const auto& [name, kind] : model_kinds())
      if (kind.synthesize) names.push_back(name);
  }
  for (const auto& p : names) {
    auto it = model_kinds().find(p);
    if (it == model_kinds().end()) throw validation_error("--policy", "unknown model '" + p + "'");
    if (!it->second.synthesize) throw validation_error("--policy", "model '" + p + "' cannot synthesize a policy");
    sc["policies"].push_back(it->second.synthesize(tenants, capacity, reg));
  }
  // jobs: a mix of short inference jobs (1 GPU) and long training jobs (2-8 GPUs)
  const std::int64_t gpus = 8 * o.nodes;
  // mean GPU-ms per job ~ 0.7*1*20min + 0.3*4.5*3h ; pick the horizon so offered load ~ o.load
  const double mean_gpu_ms = 0.7 * 1 * 20 * 60'000.0 + 0.3 * 4.5 * 3 * 3'600'000.0;
  const double horizon = static_cast<double>(o.jobs) * mean_gpu_ms / (static_cast<double>(gpus) * o.load);
  const auto mean_gap = static_cast<std::uint64_t>(std::max(1.0, horizon / static_cast<double>(o.jobs)));
  json jobs = json::array();
  std::int64_t t = 0;
  for (std::int64_t i = 0; i < o.jobs; ++i) {
    if (o.arrival == "burst") {
      if (i % 50 == 0) t += static_cast<std::int64_t>(mean_gap * 50);
    } else {
      // exponential gap by inversion on a 1/1024 grid (integer-only)
      const std::uint64_t u = rng.below(1024) + 1;
      double g = 0;
      for (std::uint64_t k = u; k < 1025; k *= 2) g += 0.6931471805599453;  // ~ -ln(u/1024)
      t += static_cast<std::int64_t>(static_cast<double>(mean_gap) * g / 4.0) + 1;
    }
    const auto tenant = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(o.tenants)));
    const auto user = rng.below(static_cast<std::uint64_t>(std::max<std::int64_t>(1, o.users)));
    const bool training = rng.below(10) < 3;
    static const int sizes[] = {2, 4, 4, 8};
    const int g_per_pod = training ? sizes[rng.below(4)] : 1;
    const std::int64_t dur = training ? static_cast<std::int64_t>(3'600'000 + rng.below(4 * 3'600'000))
                                      : static_cast<std::int64_t>(300'000 + rng.below(1'800'000));
    json j;
    j["id"] = (training ? "train-" : "infer-") + std::to_string(i);
    j["submit"] = t;
    j["duration"] = dur;
    j["namespace"] = tenants[tenant];
    j["queue"] = tenants[tenant];
    j["user"] = "user-" + std::to_string(user);
    j["groups"] = json::array({tenants[tenant]});
    j["priority"] = training ? 100 : 200;
    j["request"] = {{"cpu", std::to_string(8 * g_per_pod)},
                    {"memory", std::to_string(64 * g_per_pod) + "Gi"},
                    {"nvidia.com/gpu", g_per_pod}};
    jobs.push_back(std::move(j));
  }
  sc["jobs"] = std::move(jobs);
  sc["expect"] = json::array();
  return sc;
}

/// Ranges of quota-sim generate's options (--jobs: the job limit of scenarios).
constexpr std::uint64_t generate_max_nodes = 100'000, generate_max_tenants = 10'000, generate_max_users = 1'000'000;

inline int cmd_generate(const std::vector<std::string>& args) {
  static const char* help =
      "quota-sim generate [--nodes N] [--tenants N] [--users N] [--jobs N] [--seed S]\n"
      "                   [--arrival poisson|burst] [--policy a,b] [--load X] [-o FILE]\n"
      "\n"
      "Writes a synthetic scenario (8-GPU nodes, tenants team-00.., a mix of 1-GPU\n"
      "inference and 2-8 GPU training jobs) to stdout or FILE. The same options and\n"
      "seed give the same file. --policy names models (quota-sim models) whose\n"
      "policies are derived from the cluster capacity; --policy all takes every one that can.\n";
  generate_options o;
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    // an integer option within [lo, hi], or a message naming the option and the range
    auto count = [&](std::uint64_t lo, std::uint64_t hi) -> std::int64_t {
      const std::string v = val();
      const auto n = parse_count(v, lo, hi);
      if (!n)
        throw std::invalid_argument(a + " expects an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                    ", got '" + v + "'");
      return static_cast<std::int64_t>(*n);
    };
    try {
      if (a == "--help" || a == "-h") {
        std::cout << help;
        return 0;
      } else if (a == "--nodes")
        o.nodes = count(1, generate_max_nodes);
      else if (a == "--tenants")
        o.tenants = count(1, generate_max_tenants);
      else if (a == "--users")
        o.users = count(1, generate_max_users);
      else if (a == "--jobs")
        o.jobs = count(0, default_limits().max_jobs);
      else if (a == "--seed")
        o.seed = static_cast<std::uint64_t>(count(0, UINT64_MAX));
      else if (a == "--load") {
        const std::string v = val();
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || !(x > 0) || !(x <= 100))
          throw std::invalid_argument("--load expects a number above 0 and at most 100, got '" + v + "'");
        o.load = x;
      } else if (a == "--arrival") {
        o.arrival = val();
        if (o.arrival != "poisson" && o.arrival != "burst") throw std::invalid_argument("--arrival: poisson or burst");
      } else if (a == "--policy") {
        std::stringstream ss(val());
        std::string p;
        while (std::getline(ss, p, ','))
          if (!p.empty()) o.policies.push_back(p);
      } else if (a == "-o")
        out = val();
      else
        throw std::invalid_argument("unknown option " + a);
    } catch (const std::exception& e) {
      std::cerr << "quota-sim generate: " << e.what() << "\n" << help;
      return 64;
    }
  }
  try {
    const std::string text = generate_scenario(o).dump(1) + "\n";
    if (out.empty()) {
      std::cout << text;
    } else {
      std::ofstream f(out, std::ios::binary);
      f << text;
      if (!f) {
        std::cerr << "quota-sim generate: cannot write " << out << "\n";
        return 64;
      }
    }
    return 0;
  } catch (const quota::error& e) {
    std::cerr << "quota-sim generate: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace quota::sim
