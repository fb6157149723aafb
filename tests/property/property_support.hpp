// SPDX-License-Identifier: Apache-2.0
// tests/property/property_support.hpp — seeded random numbers, a simple
// delta-debugging shrinker and the driver loop shared by the property tests.
#pragma once

#include <quota/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#ifndef QUOTA_PROPERTY_ARTIFACT_DIR
#define QUOTA_PROPERTY_ARTIFACT_DIR "property-artifacts"
#endif

namespace quota::prop {

/// splitmix64: small, fast, and the same sequence on every platform.
class rng {
 public:
  explicit rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi] (hi - lo small).
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }

 private:
  std::uint64_t s_;
};

/// Delta debugging (ddmin on chunks): the smallest sub-sequence of `ops` found
/// for which `fails` still holds. `fails(ops)` must hold on entry.
template <class Op>
std::vector<Op> shrink(std::vector<Op> ops, const std::function<bool(const std::vector<Op>&)>& fails) {
  std::size_t chunk = ops.size() / 2;
  while (chunk >= 1) {
    bool removed = false;
    for (std::size_t start = 0; start < ops.size();) {
      std::vector<Op> candidate;
      candidate.reserve(ops.size());
      for (std::size_t i = 0; i < ops.size(); ++i)
        if (i < start || i >= start + chunk) candidate.push_back(ops[i]);
      if (!candidate.empty() && fails(candidate)) {
        ops = std::move(candidate);
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) chunk /= 2;
  }
  return ops;
}

// ---- the driver ------------------------------------------------------------------------------------
//
// Every property test has the same loop: generate operations from a seed;
// apply each to the library and to the reference; compare the decision;
// compare the full state; check the invariants; on a divergence shrink the
// sequence and write it as a reproduction. `drive` and `check_model` are
// that loop. A harness H provides:
//
//   using op = ...;                                       one operation
//   X start() const;                                      a fresh (library, reference) pair
//   prop::step apply(X&, const op&, prop::tally&) const;  applies op to both, compares the decision
//   std::string snapshot(const X&) const;                 the library's full state, canonical text
//   std::string compare(const X&) const;                  library vs reference ("" = same)
//   std::string invariants(const X&) const;               "" = they hold
//   std::string describe(const op&) const;
//   json to_json(const op&) const;                        (optional) the op in the reproduction file
//
// After every step the driver also checks that a denied or failed call left
// the library's snapshot byte-identical. `check_model` runs seeds, replays
// each sequence a second time (determinism: same final snapshot), and on a
// divergence shrinks the prefix up to the diverging step and writes
// <artifact dir>/<model>_seed<N>.ops.json (the operations, exact) — plus,
// when the harness has `json scenario(const std::vector<op>&) const`, a
// quota-sim scenario <model>_seed<N>.scenario.json. `drive` also works
// alone (a test's own determinism or planted-fault checks).

enum class outcome { allowed, denied, error };
inline const char* name_of(outcome o) {
  return o == outcome::allowed ? "allowed" : o == outcome::denied ? "denied" : "error";
}

/// What one operation did in the library and in the reference.
struct step {
  outcome lib = outcome::allowed, ref = outcome::allowed;
  std::string divergence;  // set by apply when a decision (or anything it checks) differs
};

struct tally {
  std::size_t allowed = 0, denied = 0, errors = 0;
  std::map<std::string, std::size_t> extra;  // harness-specific counters (victim sets, reloads, ...)
  void add(const tally& o) {
    allowed += o.allowed;
    denied += o.denied;
    errors += o.errors;
    for (const auto& [k, v] : o.extra) extra[k] += v;
  }
};

struct run_result {
  std::string divergence;
  std::size_t step = 0;
  tally counts;
  std::string final_state;
};

template <class H>
run_result drive(const H& h, const std::vector<typename H::op>& ops) {
  run_result res;
  auto st = h.start();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    auto diverge = [&](const std::string& msg) {
      res.divergence = "step " + std::to_string(i) + " (" + h.describe(o) + "): " + msg;
      res.step = i;
      return res;
    };
    const std::string before = h.snapshot(st);
    const step s = h.apply(st, o, res.counts);
    (s.lib == outcome::allowed  ? res.counts.allowed
     : s.lib == outcome::denied ? res.counts.denied
                                : res.counts.errors)++;
    if (!s.divergence.empty()) return diverge(s.divergence);
    if (s.lib != s.ref) return diverge(std::string("library ") + name_of(s.lib) + ", reference " + name_of(s.ref));
    if (s.lib != outcome::allowed && h.snapshot(st) != before)
      return diverge("a denied or failed call changed the state");
    if (auto msg = h.compare(st); !msg.empty()) return diverge(msg);
    if (auto msg = h.invariants(st); !msg.empty()) return diverge("invariant: " + msg);
  }
  res.final_state = h.snapshot(st);
  return res;
}

struct model_totals {
  std::size_t ops = 0, runs = 0;
  tally counts;
  std::string failure;  // empty: no divergence
};

/// Runs `length` generated operations for every seed in [first, last]:
/// `make(seed)` gives the harness, `gen(h, seed, length)` the operations.
/// The first `replayed` seeds (default: all) are run a second time and must
/// end in the same snapshot.
template <class Make, class Gen>
model_totals check_model(const std::string& model, std::uint64_t first, std::uint64_t last, std::size_t length,
                         Make&& make, Gen&& gen, std::uint64_t replayed = ~std::uint64_t{0}) {
  model_totals t;
  for (std::uint64_t seed = first; seed <= last && t.failure.empty(); ++seed) {
    const auto h = make(seed);
    using H = std::decay_t<decltype(h)>;
    using op = typename H::op;
    const std::vector<op> ops = gen(h, seed, length);
    const run_result res = drive(h, ops);
    t.ops += ops.size();
    ++t.runs;
    t.counts.add(res.counts);
    if (res.divergence.empty()) {
      if (seed - first >= replayed) continue;
      const run_result again = drive(h, ops);
      if (!again.divergence.empty() || again.final_state != res.final_state)
        t.failure = "seed " + std::to_string(seed) + ": a replay of the same operations ends in another state";
      continue;
    }
    std::vector<op> prefix(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(res.step) + 1);
    const auto small = shrink<op>(prefix, [&](const std::vector<op>& c) { return !drive(h, c).divergence.empty(); });
    const std::string last_msg = drive(h, small).divergence;
    namespace fs = std::filesystem;
    const fs::path dir = QUOTA_PROPERTY_ARTIFACT_DIR;
    fs::create_directories(dir);
    const std::string base = (dir / (model + "_seed" + std::to_string(seed))).string();
    json list = json::array();
    for (const auto& o : small) {
      if constexpr (requires { h.to_json(o); })
        list.push_back(json{{"op", h.describe(o)}, {"data", h.to_json(o)}});
      else
        list.push_back(h.describe(o));
    }
    std::ofstream(base + ".ops.json")
        << json{{"model", model}, {"seed", seed}, {"divergence", last_msg}, {"operations", list}}.dump(2) << "\n";
    std::ostringstream s;
    s << model << " seed " << seed << ": " << res.divergence << "\nshrunk to " << small.size() << " operations:\n";
    for (const auto& o : small) s << "  " << h.describe(o) << "\n";
    s << "  -> " << last_msg << "\nreproduction: " << base << ".ops.json";
    if constexpr (requires { h.scenario(small); }) {
      std::ofstream(base + ".scenario.json") << h.scenario(small).dump(2) << "\n";
      s << "\n              " << base << ".scenario.json";
    }
    t.failure = s.str();
  }
  return t;
}

}  // namespace quota::prop
