// SPDX-License-Identifier: Apache-2.0
// Property test: ownership and accounting of shared DRA claims
// (quota/kai_claims.hpp, owning_queue mode) against a plain reference. The reference
// keeps the list of live bindings and, per claim, the owner, how it was
// chosen, the orphan/pinned flags and where its charge went, updated by the
// rule text of docs/kai-claims.md (first binder owns, label owns, opt-out,
// deny-foreign / pin / transfer locking, consumer cap, charge leaves with the
// last reservation, deleted owner queue: deduct or transfer). Consumer counts
// and every queue's charge are recomputed from the bindings and claims on
// demand. Random bind (check, then bind), unbind, set_sharing, remove_queue,
// add_claim (valid, duplicate, malformed) and bad input (claims of another
// namespace, a claim listed twice, unknown claim ids, count 0, no queue,
// unknown bindings) are applied to both; after every step the decision and
// reasons, the host actions, and the library's whole JSON state
// (kai_claims_json.hpp) are compared with the reference's; a failed or denied
// call must leave the JSON byte-identical; charges are conserved
// (sum of queue charges + deducted = charges of claims in use).
#include <quota/kai_claims.hpp>
#include <quota/kai_claims_json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

const std::vector<std::string> queue_names{"qa", "qb", "qc", "qz"};  // qz: only as a label
const std::vector<std::string> ns_names{"n1", "n2"};
constexpr std::size_t n_slots = 14;  // pods (gangs) of the driver
constexpr std::uint32_t max_consumers = 5;
const std::string gpu_class = "gpu.nvidia.com", nic_class = "nic.example.com";

struct claim_gen {
  std::string ns, name, label;
  bool per_pod = false;
  std::int64_t gpus = 0;  // accounted class
  bool nic = false;       // non-accounted class
  bool bad = false;       // negative count: malformed
};

claim_spec spec_of(const claim_gen& g) {
  claim_spec s;
  s.ns = g.ns;
  s.name = g.name;
  s.queue_label = g.label;
  s.per_pod = g.per_pod;
  s.allocated = true;
  if (g.gpus > 0 || g.bad) {
    claim_device d{gpu_class, g.bad ? -1 : g.gpus, false, false, {}};
    s.requests.push_back(d);
    s.allocation.push_back(d);
  }
  if (g.nic) {
    claim_device d{nic_class, 1, false, false, {}};
    s.requests.push_back(d);
    s.allocation.push_back(d);
  }
  return s;
}

claim_gen random_claim(prop::rng& r, std::size_t index) {
  claim_gen g;
  g.ns = ns_names[r.below(2)];
  g.name = "c" + std::to_string(index);
  g.label = r.chance(30) ? queue_names[r.below(queue_names.size())] : "";
  g.per_pod = r.chance(15);
  g.gpus = r.range(0, 2);
  g.nic = r.chance(50);
  return g;
}

// ---- operations ------------------------------------------------------------------------------------

enum class kind { bind, unbind, sharing, remove_queue, add_claim };
struct op {
  kind k = kind::bind;
  std::size_t slot = 0, queue = 0, ns = 0;
  std::vector<std::size_t> claims;  // indexes into the claim list (may be unknown: >= count)
  std::uint32_t count = 1;
  bool preemptible = true, protected_ = false, no_queue = false, flag = false;
  claim_gen claim;  // add_claim
};

std::string describe(const op& o) {
  std::ostringstream s;
  switch (o.k) {
    case kind::bind:
      s << "bind slot" << o.slot << " queue " << (o.no_queue ? "<none>" : queue_names[o.queue]) << " ns "
        << ns_names[o.ns] << " claims";
      for (auto c : o.claims) s << " #" << c;
      s << " count " << o.count << (o.preemptible ? "" : " non-preemptible") << (o.protected_ ? " protected" : "");
      break;
    case kind::unbind:
      s << "unbind slot" << o.slot;
      break;
    case kind::sharing:
      s << "set_sharing " << queue_names[o.queue] << " " << o.flag;
      break;
    case kind::remove_queue:
      s << "remove_queue " << (o.queue < queue_names.size() ? queue_names[o.queue] : "qunknown");
      break;
    case kind::add_claim:
      s << "add_claim " << o.claim.ns << "/" << o.claim.name << " label '" << o.claim.label << "' gpus " << o.claim.gpus
        << (o.claim.nic ? " nic" : "") << (o.claim.per_pod ? " per-pod" : "") << (o.claim.bad ? " (malformed)" : "");
      break;
  }
  return s.str();
}

std::vector<op> random_ops(std::uint64_t seed, std::size_t n, const std::vector<claim_gen>& initial) {
  prop::rng r(seed);
  std::vector<op> ops;
  std::size_t next_claim = initial.size();
  std::vector<std::size_t> in_ns[2];  // claims of each namespace (mostly, pods name their own)
  for (std::size_t c = 0; c < initial.size(); ++c) in_ns[initial[c].ns == ns_names[0] ? 0 : 1].push_back(c);
  for (std::size_t i = 0; i < n; ++i) {
    op o;
    const auto p = r.below(100);
    o.k = p < 55   ? kind::bind
          : p < 87 ? kind::unbind
          : p < 92 ? kind::sharing
          : p < 96 ? kind::remove_queue
                   : kind::add_claim;
    o.slot = r.below(n_slots);
    o.queue = r.below(3);
    if (o.k == kind::remove_queue) o.queue = r.below(queue_names.size() + 1);
    o.ns = r.below(2);
    const std::size_t nc = 1 + r.below(2);
    for (std::size_t k = 0; k < nc; ++k) {
      if (!in_ns[o.ns].empty() && !r.chance(5))
        o.claims.push_back(in_ns[o.ns][r.below(in_ns[o.ns].size())]);
      else
        o.claims.push_back(r.below(next_claim + (r.chance(30) ? 3 : 0)));  // another namespace, or unknown
    }
    if (o.claims.size() == 2 && o.claims[0] == o.claims[1]) o.claims.pop_back();
    if (r.chance(3)) o.claims.push_back(o.claims.front());  // listed twice
    o.count = static_cast<std::uint32_t>(r.chance(2) ? 0 : r.range(1, 2));
    o.preemptible = !r.chance(20);
    o.protected_ = r.chance(10);
    o.no_queue = r.chance(2);
    o.flag = r.chance(50);
    if (o.k == kind::add_claim) {
      o.claim = random_claim(r, r.chance(20) ? r.below(next_claim) : next_claim);  // sometimes a duplicate
      o.claim.bad = r.chance(15);
      if (o.claim.name == "c" + std::to_string(next_claim) && !o.claim.bad) {
        in_ns[o.claim.ns == ns_names[0] ? 0 : 1].push_back(next_claim);
        ++next_claim;
      }
    }
    ops.push_back(o);
  }
  return ops;
}

// ---- the reference ------------------------------------------------------------------------------------------

struct ref_use {
  std::uint32_t count = 0;
  std::uint64_t first_seq = 0;
};
struct ref_claim {
  claim_gen gen;
  bool accounted = false;
  std::optional<std::string> owner;
  std::string source = "none";
  bool orphan = false, pinned = false;
  std::optional<std::string> target;  // charged queue; "" = deducted; nullopt = not charged
  std::map<std::string, ref_use> uses;
};
struct ref_queue {
  bool shares = true, live = true;
};
struct ref_binding {
  std::string queue;
  std::uint32_t count;
  std::vector<std::size_t> claims;
};
struct ref_action {
  std::string kind;
  std::size_t claim;
  std::string queue;
  bool operator==(const ref_action&) const = default;
};

class reference {
 public:
  explicit reference(claim_locking lock, claim_owner_deleted del) : lock_(lock), del_(del) {}
  std::vector<ref_claim> claims;
  std::map<std::string, ref_queue> queues;
  std::map<std::size_t, ref_binding> bindings;  // by slot
  std::uint64_t seq = 0;

  void touch(const std::string& q) { queues[q].live = true; }  // created or revived on use
  bool add_claim(const claim_gen& g) {
    if (g.bad) return false;
    for (const auto& c : claims)
      if (c.gen.ns == g.ns && c.gen.name == g.name) return false;
    ref_claim c;
    c.gen = g;
    c.accounted = g.gpus > 0;  // only the gpu class is accounted (a count of 0 still has no line)
    if (!g.label.empty() && !g.per_pod && c.accounted) {
      touch(g.label);
      c.owner = g.label;
      c.source = "label";
    }
    claims.push_back(c);
    return true;
  }
  std::uint32_t consumers(std::size_t c) const {
    std::uint32_t n = 0;
    for (const auto& [slot, b] : bindings)
      n += static_cast<std::uint32_t>(b.count * std::count(b.claims.begin(), b.claims.end(), c));
    return n;
  }

  /// Reasons for a pod of `queue` (nullopt: none) binding `cs`.
  std::vector<std::string> check(const std::optional<std::string>& queue, const op& o) const {
    std::vector<std::string> out;
    for (const auto c : o.claims) {
      const auto& cl = claims[c];
      if (consumers(c) + o.count > max_consumers) out.push_back("consumer_cap " + std::to_string(c));
      if (!cl.accounted || cl.gen.per_pod || !cl.owner || cl.owner == queue) continue;
      if (!queues.at(*cl.owner).shares) out.push_back("sharing_opted_out " + std::to_string(c));
      if (lock_ == claim_locking::deny_foreign && (!o.preemptible || o.protected_))
        out.push_back("foreign_non_preemptible " + std::to_string(c));
    }
    return out;
  }

  void bind(std::size_t slot, const std::string& q, const op& o, std::vector<ref_action>& acts) {
    ++seq;
    for (const auto c : o.claims) {
      auto& cl = claims[c];
      if (cl.accounted && consumers(c) == 0) cl.target = cl.owner ? *cl.owner : cl.orphan ? "" : q;  // rule 1
      if (cl.accounted && !cl.owner && !cl.orphan) {                                                 // rule 2
        cl.owner = q;
        cl.source = cl.gen.per_pod ? "per_pod" : "first_bind";
      }
      auto& u = cl.uses[q];
      if (u.count == 0) u.first_seq = seq;
      u.count += o.count;
      if (cl.pinned && cl.owner == q) {
        cl.pinned = false;
        acts.push_back({"unpinned", c, q});
      }
      if (cl.accounted && cl.owner && cl.source != "label") acts.push_back({"upsert_label", c, *cl.owner});
    }
    bindings[slot] = ref_binding{q, o.count, o.claims};
  }

  std::optional<std::string> earliest_other_use(const ref_claim& cl, const std::string& not_q) const {
    std::optional<std::string> best;
    std::uint64_t s = ~std::uint64_t{0};
    for (const auto& [q, u] : cl.uses)
      if (q != not_q && u.first_seq < s) {
        s = u.first_seq;
        best = q;
      }
    return best;
  }

  void unbind(std::size_t slot, std::vector<ref_action>& acts) {
    const ref_binding b = bindings.at(slot);
    bindings.erase(slot);
    for (const auto c : b.claims) {
      auto& cl = claims[c];
      if ((cl.uses[b.queue].count -= b.count) == 0) cl.uses.erase(b.queue);
      if (consumers(c) == 0) {  // rule 8: the charge leaves with the last reservation
        cl.target.reset();
        cl.orphan = false;
        if (cl.pinned) acts.push_back({"unpinned", c, cl.owner.value_or("")});
        cl.pinned = false;
        continue;
      }
      if (!cl.accounted || cl.gen.per_pod || !cl.owner || *cl.owner != b.queue || cl.uses.count(*cl.owner)) continue;
      if (lock_ == claim_locking::transfer) {  // rule 5: to the remaining queue that bound first
        const auto to = earliest_other_use(cl, *cl.owner);
        if (cl.target && !cl.target->empty()) cl.target = *to;
        cl.owner = *to;
        cl.source = "transferred";
        acts.push_back({"upsert_label", c, *to});
      } else if (!cl.pinned) {
        cl.pinned = true;
        acts.push_back({"pinned", c, *cl.owner});
      }
    }
  }

  bool remove_queue(const std::string& q, std::vector<ref_action>& acts) {
    if (!queues.count(q) || !queues[q].live) return false;
    for (std::size_t c = 0; c < claims.size(); ++c) {
      auto& cl = claims[c];
      if (cl.owner != q) continue;
      std::optional<std::string> to;
      if (del_ == claim_owner_deleted::transfer) to = earliest_other_use(cl, q);
      const bool charged = cl.target && !cl.target->empty();
      cl.pinned = false;
      if (!to) {
        cl.owner.reset();
        cl.source = "none";
        cl.orphan = consumers(c) > 0;
        if (charged) cl.target = "";
      } else {
        cl.owner = *to;
        cl.source = "transferred";
        if (charged) cl.target = *to;
        acts.push_back({"upsert_label", c, *to});
      }
    }
    queues[q].live = false;
    queues[q].shares = true;
    return true;
  }

  /// The expected JSON of kai_claims_json.hpp's to_json.
  json state() const {
    json j = json::object();
    j["mode"] = "owning_queue";
    json cs = json::object(), qs = json::object();
    std::map<std::string, std::int64_t> charge;
    std::int64_t deducted = 0;
    for (std::size_t c = 0; c < claims.size(); ++c) {
      const auto& cl = claims[c];
      json e = json::object();
      e["owner"] = cl.owner ? json(*cl.owner) : json(nullptr);
      e["owner_source"] = cl.source;
      e["accounted"] = cl.accounted;
      e["orphan"] = cl.orphan;
      e["pinned"] = cl.pinned;
      e["consumers"] = consumers(c);
      e["charge"] = cl.accounted ? json{{gpu_class, cl.gen.gpus}} : json::object();
      cs[cl.gen.ns + "/" + cl.gen.name] = e;
      if (cl.target && cl.target->empty()) deducted += cl.gen.gpus;
      if (cl.target && !cl.target->empty()) charge[*cl.target] += cl.gen.gpus;
    }
    for (const auto& [n, q] : queues) {
      json c = json::object();
      if (charge[n]) c[gpu_class] = charge[n];
      qs[n] = json{{"charge", c}, {"shares", q.shares}, {"live", q.live}};
    }
    j["claims"] = cs;
    j["queues"] = qs;
    j["deducted"] = deducted ? json{{gpu_class, deducted}} : json::object();
    return j;
  }

 private:
  claim_locking lock_;
  claim_owner_deleted del_;
};

std::vector<std::string> reasons_of(const decision& d, const kai_claims_model& m) {
  std::vector<std::string> out;
  for (const auto& r : d.reasons()) out.push_back(std::string(r.rule) + " " + std::to_string(m.claim_at(r.entity)));
  return out;
}

std::vector<ref_action> actions_of(const std::vector<claim_action>& acts, const kai_claims_model& m) {
  std::vector<ref_action> out;
  const char* names[] = {"upsert_label", "pinned", "unpinned"};
  for (const auto& a : acts)
    out.push_back(
        {names[static_cast<int>(a.kind)], a.claim, a.queue == claim_none ? "" : std::string(m.queue_name(a.queue))});
  return out;
}

// ---- the driver -----------------------------------------------------------------------------------------------

struct run_result {
  std::string divergence;
  std::size_t step = 0;
  std::size_t allowed = 0, denied = 0, errors = 0, transfers_or_pins = 0;
  std::string final_state;
};

struct setup {
  claim_locking lock;
  claim_owner_deleted del;
  std::vector<claim_gen> claims;
};

setup make_setup(std::uint64_t seed) {
  prop::rng r(seed * 131 + 3);
  setup s;
  const claim_locking locks[] = {claim_locking::deny_foreign, claim_locking::pin, claim_locking::transfer};
  s.lock = locks[r.below(3)];
  s.del = r.chance(50) ? claim_owner_deleted::deduct : claim_owner_deleted::transfer;
  for (std::size_t i = 0; i < 6; ++i) s.claims.push_back(random_claim(r, i));
  return s;
}

run_result run(const setup& su, const std::vector<op>& ops) {
  run_result res;
  kai_claims_config cfg;
  cfg.locking = su.lock;
  cfg.owner_deleted = su.del;
  cfg.max_consumers = max_consumers;
  kai_claims_model m(cfg);
  m.set_class_accounted(gpu_class, true);
  m.set_class_accounted(nic_class, false);
  reference ref(su.lock, su.del);
  for (const auto& g : su.claims) {
    m.add_claim(spec_of(g));
    REQUIRE(ref.add_claim(g));
  }
  std::map<std::size_t, claim_binding_id> slot_binding;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op& o = ops[i];
    auto diverge = [&](const std::string& msg) {
      res.divergence = "step " + std::to_string(i) + " (" + describe(o) + "): " + msg;
      res.step = i;
      return res;
    };
    std::vector<claim_action> acts;
    std::vector<ref_action> want_acts;
    bool lib_failed = false, ref_failed = false, denied = false;
    json before = json(m);
    switch (o.k) {
      case kind::bind: {
        // the host names the pod's queue (created or revived on use)
        const std::string qn = queue_names[o.queue];
        claim_pod p;
        const std::string id = "pod" + std::to_string(o.slot);
        p.id = id;
        p.ns = ns_names[o.ns];
        p.preemptible = o.preemptible;
        p.min_runtime_protected = o.protected_;
        p.count = o.count;
        if (!o.no_queue) {
          p.queue = m.queue(qn);
          ref.touch(qn);
          before = json(m);
        }
        std::vector<claim_id> ids;
        for (auto c : o.claims) ids.push_back(c < m.claim_count() ? static_cast<claim_id>(c) : claim_id{999});
        const bool occupied = slot_binding.count(o.slot) != 0;
        decision d;
        try {
          if (occupied) {
            d = m.check(p, ids);  // a pod binds once: check only
          } else {
            auto r = m.bind(p, ids, &acts);
            d = r.verdict;
            if (d.allowed()) slot_binding[o.slot] = r.binding;
          }
        } catch (const quota::error&) {
          lib_failed = true;
        }
        // reference
        bool bad = o.count == 0;
        for (std::size_t k = 0; k < o.claims.size(); ++k) {
          if (o.claims[k] >= ref.claims.size()) {
            bad = true;
            break;
          }
          if (ref.claims[o.claims[k]].gen.ns != ns_names[o.ns]) bad = true;
          for (std::size_t l = 0; l < k; ++l) bad = bad || o.claims[l] == o.claims[k];
        }
        if (bad) {
          ref_failed = true;
        } else {
          const auto want = ref.check(o.no_queue ? std::nullopt : std::optional<std::string>(qn), o);
          if (!lib_failed && reasons_of(d, m) != want) return diverge("decision: library " + to_string(d));
          denied = !want.empty();
          if (want.empty() && !occupied) {
            if (o.no_queue)
              ref_failed = true;  // allowed, but no queue to record
            else
              ref.bind(o.slot, qn, o, want_acts);
          }
        }
        break;
      }
      case kind::unbind: {
        const auto it = slot_binding.find(o.slot);
        try {
          m.unbind(it == slot_binding.end() ? claim_binding_id{4242} : it->second, &acts);
        } catch (const unknown_entity_error&) {
          lib_failed = true;
        }
        if (it != slot_binding.end()) slot_binding.erase(it);
        if (ref.bindings.count(o.slot))
          ref.unbind(o.slot, want_acts);
        else
          ref_failed = true;
        break;
      }
      case kind::sharing:
        m.set_sharing(queue_names[o.queue], o.flag);
        ref.touch(queue_names[o.queue]);
        ref.queues[queue_names[o.queue]].shares = o.flag;
        break;
      case kind::remove_queue: {
        const std::string qn = o.queue < queue_names.size() ? queue_names[o.queue] : "qunknown";
        try {
          m.remove_queue(qn, &acts);
        } catch (const unknown_entity_error&) {
          lib_failed = true;
        }
        ref_failed = !ref.remove_queue(qn, want_acts);
        break;
      }
      case kind::add_claim:
        try {
          m.add_claim(spec_of(o.claim));
        } catch (const state_error&) {
          lib_failed = true;
        } catch (const validation_error&) {
          lib_failed = true;
        }
        ref_failed = !ref.add_claim(o.claim);
        break;
    }
    (lib_failed ? res.errors : denied ? res.denied : res.allowed)++;
    if (lib_failed != ref_failed)
      return diverge(std::string("library ") + (lib_failed ? "failed" : "succeeded") + ", reference " +
                     (ref_failed ? "failed" : "succeeded"));
    const json after = json(m);
    if ((lib_failed || denied) && after != before) return diverge("a failed or denied call changed the state");
    if (actions_of(acts, m) != want_acts) return diverge("actions differ");
    for (const auto& a : want_acts) res.transfers_or_pins += a.kind != "upsert_label";
    if (const json want = ref.state(); after != want)
      return diverge("state differs:\nlibrary   " + after.dump() + "\nreference " + want.dump());
    if (m.live_bindings() != ref.bindings.size()) return diverge("live bindings differ");
    // conservation: queue charges + deducted = charges of the claims in use
    if (m.charged_total() != m.allocated_total()) return diverge("charges not conserved");
  }
  res.final_state = json(m).dump();
  return res;
}

}  // namespace

TEST_CASE("property: claim ownership matches the reference model over random operation sequences") {
  constexpr std::uint64_t seeds = 12;
  constexpr std::size_t length = 300;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t total = 0, allowed = 0, denied = 0, errors = 0, pins = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const setup su = make_setup(seed);
    const auto ops = random_ops(seed, length, su.claims);
    const run_result res = run(su, ops);
    total += ops.size();
    allowed += res.allowed;
    denied += res.denied;
    errors += res.errors;
    pins += res.transfers_or_pins;
    if (!res.divergence.empty()) {
      std::vector<op> prefix(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(res.step) + 1);
      const auto small =
          prop::shrink<op>(prefix, [&](const std::vector<op>& c) { return !run(su, c).divergence.empty(); });
      std::ostringstream s;
      s << "seed " << seed << ": " << res.divergence << "\nclaims:\n";
      for (const auto& g : su.claims) {
        op a;
        a.k = kind::add_claim;
        a.claim = g;
        s << "  " << describe(a) << "\n";
      }
      s << "shrunk to " << small.size() << " operations:\n";
      for (const auto& o : small) s << "  " << describe(o) << "\n";
      s << "  -> " << run(su, small).divergence;
      FAIL(s.str());
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "claims property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu pin/unpin actions), 0 divergences, "
      "%.2f s\n",
      total, allowed, denied, errors, pins, secs);
  CHECK(total == seeds * length);
  CHECK(allowed > total / 4);
  CHECK(denied > total / 100);
  CHECK(errors > total / 50);
  CHECK(pins > 0);
}

TEST_CASE("property: claim ownership replays deterministically") {
  for (std::uint64_t seed = 400; seed < 403; ++seed) {
    const setup su = make_setup(seed);
    const auto ops = random_ops(seed, 300, su.claims);
    const run_result a = run(su, ops), b = run(su, ops);
    REQUIRE(a.divergence.empty());
    CHECK(a.final_state == b.final_state);
  }
}
