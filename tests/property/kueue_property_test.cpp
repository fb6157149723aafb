// SPDX-License-Identifier: Apache-2.0
// Property test: the Kueue model (quota/kueue_cohorts.hpp,
// quota/kueue.hpp) against a plain reference written from
// docs/kueue.md ("Quota arithmetic", "Flavor assignment"). The reference
// keeps the configuration and the admitted workloads with their usage per
// (flavor, resource) and recomputes everything from them at every step:
// subtree quotas and guaranteed parts (recursively over a cohort tree of two
// levels), a cohort's usage (Σ children max(0, usage − guaranteed)),
// `available` of every ClusterQueue by the documented recursion, and the
// flavor each resource group gets (flavors in order; stop at a fit without
// borrowing, or at a fit with borrowing when whenCanBorrow is MayStopSearch;
// else the fit that borrows at the lowest borrowing level, the first of equals). Three flavors (f0, f1 for cpu+memory;
// f2 for nvidia.com/gpu), nominal quotas, borrowing and lending limits on
// ClusterQueues and cohorts.
//
// Random operations: admit (check, then admit when it fits; sometimes admit
// regardless, which must fail), finish, reload (update_config with new
// amounts: admitted work is kept, usage may end above the new quotas;
// sometimes invalid: a lending limit above the nominal quota), and bad input
// (unknown LocalQueue, negative request, duplicate workload, finish of an
// unknown workload). After every step: the decision and the chosen flavors,
// every node's usage, subtree quota and guaranteed part in every slot, every
// ClusterQueue's available amount and the admitted workloads are compared
// (prop::drive). Preemption is not among the operations: its reference (the
// candidate order and the minimal target set) would be as large as the
// library's; docs/kueue.md's worked examples and the unit tests cover it.
#include <quota/json.hpp>
#include <quota/kueue.hpp>

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

const std::vector<std::string> flavors{"f0", "f1", "f2"};
constexpr resource_id rids[] = {resources::cpu, resources::memory, resources::nvidia_gpu};
constexpr std::size_t n_cq = 5, n_workloads = 16;
// nodes of the reference: cq0..cq4, then cohorts
const std::vector<std::string> cohort_names{"root", "c1", "c2"};

struct limits {
  amount nominal = 0;
  std::optional<amount> borrowing, lending;
};
using slot_key = std::pair<std::size_t, std::size_t>;  // (flavor, resource index)

/// The shape of the configuration (fixed for a seed) and its amounts (redrawn at reload).
struct shape {
  std::vector<std::string> cq_cohort;                // per ClusterQueue ("" = none)
  std::vector<std::vector<std::size_t>> cq_flavors;  // group A flavors in order (subset of f0, f1)
  std::vector<bool> cq_gpu;                          // has group B (gpu in f2)
  std::vector<bool> cq_try_next;                     // whenCanBorrow = TryNextFlavor
  std::vector<std::string> cohort_parent;            // per cohort ("" = a root)
  std::vector<bool> cohort_quota;                    // the cohort has its own resource group
};

struct amounts {
  // per node (cq0..cq4, root, c1, c2), per slot
  std::vector<std::map<slot_key, limits>> q;
};

bool has_parent(const shape& sh, std::size_t node) {
  return node < n_cq ? !sh.cq_cohort[node].empty() : !sh.cohort_parent[node - n_cq].empty();
}

shape make_shape(std::uint64_t seed) {
  prop::rng r(seed * 6151 + 11);
  shape sh;
  for (std::size_t i = 0; i < n_cq; ++i) {
    const auto p = r.below(100);
    sh.cq_cohort.push_back(p < 35 ? "c1" : p < 65 ? "c2" : p < 85 ? "root" : "");
    std::vector<std::size_t> fl = r.chance(50) ? std::vector<std::size_t>{0, 1} : std::vector<std::size_t>{1, 0};
    if (r.chance(30)) fl.pop_back();
    sh.cq_flavors.push_back(fl);
    sh.cq_gpu.push_back(r.chance(70));
    sh.cq_try_next.push_back(r.chance(40));
  }
  sh.cohort_parent = {"", "root", r.chance(70) ? "root" : ""};
  for (std::size_t c = 0; c < cohort_names.size(); ++c) sh.cohort_quota.push_back(r.chance(50));
  return sh;
}

// amounts for every slot a node defines; `bad`: one lending limit above its nominal quota
amounts make_amounts(const shape& sh, prop::rng& r, bool bad) {
  amounts a;
  a.q.resize(n_cq + cohort_names.size());
  auto draw = [&](std::size_t node, std::size_t f, std::size_t k) {
    limits l;
    l.nominal = r.range(0, k == 2 ? 3 : 6);
    if (has_parent(sh, node)) {
      if (r.chance(35)) l.borrowing = r.range(0, 4);
      if (r.chance(35)) l.lending = r.range(0, l.nominal);
    }
    a.q[node][{f, k}] = l;
  };
  for (std::size_t i = 0; i < n_cq; ++i) {
    for (const auto f : sh.cq_flavors[i])
      for (std::size_t k = 0; k < 2; ++k) draw(i, f, k);
    if (sh.cq_gpu[i]) draw(i, 2, 2);
  }
  for (std::size_t c = 0; c < cohort_names.size(); ++c)
    if (sh.cohort_quota[c])
      for (std::size_t f = 0; f < 2; ++f)
        for (std::size_t k = 0; k < 2; ++k) draw(n_cq + c, f, k);
  if (bad) {
    for (std::size_t n = 0; n < a.q.size(); ++n)
      if (has_parent(sh, n) && !a.q[n].empty()) {
        auto& l = a.q[n].begin()->second;
        l.lending = l.nominal + 1;
        break;
      }
  }
  return a;
}

kueue_config to_config(const shape& sh, const amounts& a) {
  kueue_config cfg;
  cfg.resource_flavors = flavors;
  auto quota_of = [&](std::size_t node, std::size_t f, std::size_t k) {
    const limits& l = a.q[node].at({f, k});
    return kueue_resource_quota_spec{rids[k], l.nominal, l.borrowing, l.lending};
  };
  for (std::size_t i = 0; i < n_cq; ++i) {
    kueue_cluster_queue_spec c;
    c.name = "cq" + std::to_string(i);
    c.cohort = sh.cq_cohort[i];
    if (sh.cq_try_next[i]) c.fungibility.when_can_borrow = kueue_fungibility_action::try_next_flavor;
    kueue_resource_group_spec g;
    g.covered_resources = {rids[0], rids[1]};
    for (const auto f : sh.cq_flavors[i]) g.flavors.push_back({flavors[f], {quota_of(i, f, 0), quota_of(i, f, 1)}});
    c.resource_groups.push_back(g);
    if (sh.cq_gpu[i]) {
      kueue_resource_group_spec gg;
      gg.covered_resources = {rids[2]};
      gg.flavors.push_back({flavors[2], {quota_of(i, 2, 2)}});
      c.resource_groups.push_back(gg);
    }
    cfg.cluster_queues.push_back(c);
    cfg.local_queues.push_back({"ns", "lq" + std::to_string(i), c.name});
  }
  for (std::size_t c = 0; c < cohort_names.size(); ++c) {
    kueue_cohort_spec co;
    co.name = cohort_names[c];
    co.parent = sh.cohort_parent[c];
    if (sh.cohort_quota[c]) {
      kueue_resource_group_spec g;
      g.covered_resources = {rids[0], rids[1]};
      for (std::size_t f = 0; f < 2; ++f)
        g.flavors.push_back({flavors[f], {quota_of(n_cq + c, f, 0), quota_of(n_cq + c, f, 1)}});
      co.resource_groups.push_back(g);
    }
    cfg.cohorts.push_back(co);
  }
  return cfg;
}

// ---- operations -------------------------------------------------------------------------------------------

enum class kind { admit, finish, reload };
struct op {
  kind k = kind::admit;
  std::size_t wl = 0, queue = 0;  // queue == n_cq: unknown LocalQueue
  std::int32_t count = 1;
  std::int64_t per_pod[3] = {0, 0, 0};
  bool force = false, bad_reload = false;
  std::uint64_t reload_seed = 0;
};

kueue_workload workload_of(const op& o) {
  kueue_workload w;
  w.name = "w" + std::to_string(o.wl);
  w.ns = "ns";
  w.queue = "lq" + std::to_string(o.queue);
  kueue_pod_set p;
  p.count = o.count;
  for (std::size_t k = 0; k < 3; ++k)
    if (o.per_pod[k] != 0) p.per_pod.set(rids[k], o.per_pod[k]);
  w.pod_sets.push_back(p);
  return w;
}

// ---- the reference -----------------------------------------------------------------------------------------

struct ref_admitted {
  std::size_t cq;
  std::map<slot_key, amount> usage;
};

class reference {
 public:
  reference(const shape& s, amounts a) : sh(s), am(std::move(a)) {
    for (std::size_t n = 0; n < node_count(); ++n) kids.push_back(children_of(n));
    changed();
  }
  const shape& sh;
  amounts am;
  std::map<std::string, ref_admitted> admitted;
  std::vector<std::vector<std::size_t>> kids;
  // memoized results; changed() drops them after every change of `am` or `admitted`
  mutable std::vector<std::optional<amount>> subtree_memo, usage_memo;  // by node * 9 + flavor * 3 + resource
  void changed() {
    subtree_memo.assign(node_count() * 9, std::nullopt);
    usage_memo.assign(node_count() * 9, std::nullopt);
  }
  static std::size_t memo_index(std::size_t n, slot_key s) { return n * 9 + s.first * 3 + s.second; }

  std::size_t node_count() const { return n_cq + cohort_names.size(); }
  std::optional<std::size_t> parent(std::size_t n) const {
    const std::string& p = n < n_cq ? sh.cq_cohort[n] : sh.cohort_parent[n - n_cq];
    if (p.empty()) return std::nullopt;
    return n_cq +
           static_cast<std::size_t>(std::find(cohort_names.begin(), cohort_names.end(), p) - cohort_names.begin());
  }
  const std::vector<std::size_t>& children(std::size_t n) const { return kids[n]; }
  std::vector<std::size_t> children_of(std::size_t n) const {
    std::vector<std::size_t> c;
    for (std::size_t i = 0; i < node_count(); ++i)
      if (parent(i) == n) c.push_back(i);
    return c;
  }
  const limits* lim(std::size_t n, slot_key s) const {
    auto it = am.q[n].find(s);
    return it == am.q[n].end() ? nullptr : &it->second;
  }
  amount subtree(std::size_t n, slot_key s) const {
    if (const auto& m = subtree_memo[memo_index(n, s)]) return *m;
    amount v = lim(n, s) ? lim(n, s)->nominal : 0;
    for (const auto c : children(n)) v += subtree(c, s) - guaranteed(c, s);
    subtree_memo[memo_index(n, s)] = v;
    return v;
  }
  amount guaranteed(std::size_t n, slot_key s) const {
    const limits* l = lim(n, s);
    if (!l || !l->lending) return 0;
    return std::max<amount>(0, subtree(n, s) - *l->lending);
  }
  amount usage(std::size_t n, slot_key s) const {
    if (const auto& m = usage_memo[memo_index(n, s)]) return *m;
    amount u = 0;
    if (n < n_cq) {
      for (const auto& [name, w] : admitted)
        if (w.cq == n && w.usage.count(s)) u += w.usage.at(s);
    } else {
      for (const auto c : children(n)) u += std::max<amount>(0, usage(c, s) - guaranteed(c, s));
    }
    usage_memo[memo_index(n, s)] = u;
    return u;
  }
  // docs/kueue.md "borrowing level": 0 within the ClusterQueue's quota (or
  // without a cohort), else the height of the lowest cohort up the path whose
  // subtree holds what reaches it, else the root's height
  int height(std::size_t n) const {
    if (n < n_cq) return 0;
    int h = children(n).empty() ? 0 : 1;
    for (const auto c : children(n))
      if (c >= n_cq) h = std::max(h, height(c) + 1);
    return h;
  }
  int level(std::size_t cq, slot_key s, amount req) const {
    if (!parent(cq) || usage(cq, s) + req <= subtree(cq, s)) return 0;
    amount remaining = req - std::max<amount>(0, guaranteed(cq, s) - usage(cq, s));
    std::size_t top = cq;
    for (auto p = parent(cq); p; p = parent(*p)) {
      if (usage(*p, s) + remaining <= subtree(*p, s)) return height(*p);
      remaining -= std::max<amount>(0, guaranteed(*p, s) - usage(*p, s));
      top = *p;
    }
    return height(top);
  }
  amount available(std::size_t n, slot_key s) const {
    const auto p = parent(n);
    if (!p) return subtree(n, s) - usage(n, s);
    const amount g = guaranteed(n, s), u = usage(n, s);
    amount from_parent = available(*p, s);
    if (const limits* l = lim(n, s); l && l->borrowing)
      from_parent = std::min(from_parent, subtree(n, s) - g - std::max<amount>(0, u - g) + *l->borrowing);
    return std::max<amount>(0, g - u) + from_parent;
  }

  /// The usage the workload would get, or nullopt when it does not fit.
  std::optional<std::map<slot_key, amount>> assign(const op& o) const {
    const std::size_t cq = o.queue;
    std::map<slot_key, amount> out;
    amount req[3];
    for (std::size_t k = 0; k < 3; ++k) req[k] = o.per_pod[k] * o.count;
    if (req[2] != 0 && !sh.cq_gpu[cq]) return std::nullopt;  // not covered by a resource group
    auto group = [&](const std::vector<std::size_t>& fl, const std::vector<std::size_t>& ks) -> bool {
      bool any = false;
      for (const auto k : ks) any = any || req[k] != 0;
      if (!any) return true;
      std::optional<std::size_t> chosen, best_borrowing;
      int best_level = 0;
      for (const auto f : fl) {
        bool fit = true, borrow = false;
        int lv = 0;
        for (const auto k : ks) {
          if (req[k] == 0) continue;
          const slot_key s{f, k};
          if (req[k] > std::max<amount>(0, available(cq, s))) fit = false;
          if (usage(cq, s) + req[k] > subtree(cq, s)) borrow = true;
          lv = std::max(lv, level(cq, s, req[k]));
        }
        if (!fit) continue;
        if (!borrow || !sh.cq_try_next[cq]) {
          chosen = f;
          break;
        }
        if (!best_borrowing || lv < best_level) {  // the lowest borrowing level, the first of equals
          best_borrowing = f;
          best_level = lv;
        }
      }
      if (!chosen) chosen = best_borrowing;
      if (!chosen) return false;
      for (const auto k : ks)
        if (req[k] != 0) out[{*chosen, k}] = req[k];
      return true;
    };
    if (!group(sh.cq_flavors[cq], {0, 1})) return std::nullopt;
    if (sh.cq_gpu[cq] && !group({2}, {2})) return std::nullopt;
    return out;
  }
};

std::string slot_name(slot_key s) {
  return flavors[s.first] + "/" + std::string(resources::well_known_name(rids[s.second]));
}

struct harness {
  using op = ::op;
  shape sh;
  amounts initial;
  struct state {
    kueue_model lib;
    reference ref;
  };
  state start() const {
    return state{kueue_model(to_config(sh, initial), resource_registry{}), reference(sh, initial)};
  }

  std::string describe(const op& o) const {
    std::ostringstream s;
    if (o.k == kind::finish) return "finish w" + std::to_string(o.wl);
    if (o.k == kind::reload)
      return "reload amounts #" + std::to_string(o.reload_seed) + (o.bad_reload ? " (invalid)" : "");
    s << "admit w" << o.wl << " lq" << o.queue << " " << o.count << " x (cpu " << o.per_pod[0] << ", memory "
      << o.per_pod[1] << ", gpu " << o.per_pod[2] << ")" << (o.force ? " (forced)" : "");
    return s.str();
  }
  json to_json(const op& o) const {
    return json{{"kind", o.k == kind::admit    ? "admit"
                         : o.k == kind::finish ? "finish"
                                               : "reload"},
                {"workload", "w" + std::to_string(o.wl)},
                {"queue", "lq" + std::to_string(o.queue)},
                {"count", o.count},
                {"per_pod", {o.per_pod[0], o.per_pod[1], o.per_pod[2]}},
                {"force", o.force},
                {"reload_seed", o.reload_seed},
                {"bad_reload", o.bad_reload}};
  }

  std::vector<std::pair<std::size_t, std::optional<kueue_node_index>>> nodes(const kueue_model& m) const {
    std::vector<std::pair<std::size_t, std::optional<kueue_node_index>>> out;
    for (std::size_t i = 0; i < n_cq; ++i) out.emplace_back(i, m.forest().find_cluster_queue("cq" + std::to_string(i)));
    for (std::size_t c = 0; c < cohort_names.size(); ++c)
      out.emplace_back(n_cq + c, m.forest().find_cohort(cohort_names[c]));
    return out;
  }

  std::string snapshot(const state& s) const {
    const auto& f = s.lib.forest();
    std::ostringstream out;
    for (std::size_t n = 0; n < f.node_count(); ++n) {
      out << f.at(static_cast<kueue_node_index>(n)).name;
      for (kueue_fr_slot sl = 0; sl < f.slot_count(); ++sl)
        out << " " << quota::detail::int128_to_string(f.usage(static_cast<kueue_node_index>(n), sl)) << "/"
            << quota::detail::int128_to_string(f.subtree_quota(static_cast<kueue_node_index>(n), sl));
      out << "\n";
    }
    std::vector<std::string> adm;
    for (const auto& [name, w] : s.lib.admitted()) {
      std::ostringstream l;
      l << name << " " << f.at(w.cluster_queue).name;
      auto u = w.usage;
      std::sort(u.begin(), u.end());
      for (const auto& [sl, v] : u)
        l << " " << f.flavor_name(f.slot_flavor(sl)) << ":" << f.slot_resource(sl) << "=" << v;
      adm.push_back(l.str());
    }
    std::sort(adm.begin(), adm.end());
    for (const auto& a : adm) out << a << "\n";
    return out.str();
  }

  std::string compare(const state& s) const {
    const auto& f = s.lib.forest();
    const auto& ref = s.ref;
    for (const auto& node : nodes(s.lib)) {
      const std::size_t n = node.first;
      const std::optional<kueue_node_index> li = node.second;  // (not a structured binding: lambdas below use it)
      if (!li) return "node #" + std::to_string(n) + " is missing";
      for (std::size_t fl = 0; fl < flavors.size(); ++fl)
        for (std::size_t k = 0; k < 3; ++k) {
          const kueue_fr_slot sl = f.slot(static_cast<kueue_flavor_index>(fl), rids[k]);
          if (sl == kueue_no_slot) continue;
          const slot_key key{fl, k};
          auto differ = [&](const char* what, kueue_amount got, kueue_amount want) {
            return what + std::string(" of ") + f.at(*li).name + " " + slot_name(key) + ": library " +
                   quota::detail::int128_to_string(got) + ", reference " + quota::detail::int128_to_string(want);
          };
          if (f.usage(*li, sl) != ref.usage(n, key)) return differ("usage", f.usage(*li, sl), ref.usage(n, key));
          if (f.subtree_quota(*li, sl) != ref.subtree(n, key))
            return differ("subtree quota", f.subtree_quota(*li, sl), ref.subtree(n, key));
          if (f.guaranteed(*li, sl) != ref.guaranteed(n, key))
            return differ("guaranteed", f.guaranteed(*li, sl), ref.guaranteed(n, key));
          if (n < n_cq && f.available(*li, sl) != ref.available(n, key))
            return differ("available", f.available(*li, sl), ref.available(n, key));
        }
    }
    if (s.lib.admitted_count() != ref.admitted.size()) return "the number of admitted workloads differs";
    for (const auto& [name, w] : ref.admitted) {
      const auto* a = s.lib.find_admitted(name);
      if (!a) return name + " is not admitted in the library";
      if (f.at(a->cluster_queue).name != "cq" + std::to_string(w.cq)) return name + " is in another ClusterQueue";
      std::map<slot_key, amount> got;
      for (const auto& [sl, v] : a->usage)
        if (v != 0)
          got[{*f.find_flavor(f.flavor_name(f.slot_flavor(sl))),
               static_cast<std::size_t>(std::find(std::begin(rids), std::end(rids), f.slot_resource(sl)) -
                                        std::begin(rids))}] += v;
      if (got != w.usage) return "the usage of " + name + " differs";
    }
    return "";
  }

  // conservation: a ClusterQueue's usage is the sum of its workloads'; a
  // cohort's is what its children draw above their guaranteed parts
  std::string invariants(const state& s) const {
    const auto& f = s.lib.forest();
    for (kueue_node_index n = 0; n < f.node_count(); ++n)
      for (kueue_fr_slot sl = 0; sl < f.slot_count(); ++sl) {
        kueue_amount want = 0;
        if (!f.at(n).is_cohort) {
          for (const auto& [name, w] : s.lib.admitted())
            if (w.cluster_queue == n)
              for (const auto& [x, v] : w.usage)
                if (x == sl) want += v;
        } else {
          for (const auto c : f.at(n).children) want += std::max<kueue_amount>(0, f.usage(c, sl) - f.guaranteed(c, sl));
        }
        if (f.usage(n, sl) != want) return "usage of " + f.at(n).name + " is not conserved";
      }
    return "";
  }

  prop::step apply(state& s, const op& o, prop::tally& t) const {
    prop::step st;
    auto& ref = s.ref;
    const std::string name = "w" + std::to_string(o.wl);
    if (o.k == kind::finish) {
      try {
        s.lib.finish(name);
      } catch (const unknown_entity_error&) {
        st.lib = prop::outcome::error;
      }
      if (!ref.admitted.erase(name)) st.ref = prop::outcome::error;
      ref.changed();
      return st;
    }
    if (o.k == kind::reload) {
      prop::rng r(o.reload_seed);
      const amounts next = make_amounts(sh, r, o.bad_reload);
      try {
        s.lib.update_config(to_config(sh, next));
      } catch (const validation_error&) {
        st.lib = prop::outcome::error;
      }
      if (o.bad_reload)
        st.ref = prop::outcome::error;
      else
        ref.am = next;
      ref.changed();
      ++t.extra["reloads"];
      return st;
    }
    const kueue_workload w = workload_of(o);
    const bool bad = o.queue >= n_cq || o.per_pod[0] < 0 || o.per_pod[1] < 0 || o.per_pod[2] < 0;
    kueue_flavor_assignment a;
    std::optional<decision> d;
    try {
      d = s.lib.check(w, a);
    } catch (const unknown_entity_error&) {
      st.lib = prop::outcome::error;
    } catch (const validation_error&) {
      st.lib = prop::outcome::error;
    }
    if (bad) {
      st.ref = prop::outcome::error;
      return st;
    }
    if (!d) return st;  // (the library failed where the reference did not: the driver reports it)
    const bool dup = ref.admitted.count(name) != 0;
    const auto want = dup ? std::nullopt : ref.assign(o);
    if (d->allowed() != want.has_value()) {
      st.divergence = std::string("decision: library ") + (d->allowed() ? "fits" : "denies (" + to_string(*d) + ")") +
                      ", reference " + (want ? "fits" : "does not fit");
      return st;
    }
    st.lib = st.ref = d->allowed() ? prop::outcome::allowed : prop::outcome::denied;
    if (!d->allowed() && !o.force) return st;
    try {
      s.lib.admit(w, a);
    } catch (const state_error&) {
      st.lib = prop::outcome::error;
    }
    if (!want) {
      st.ref = prop::outcome::error;  // a workload that does not fit (or is admitted already) cannot be admitted
      return st;
    }
    ref.admitted[name] = ref_admitted{o.queue, *want};
    ref.changed();
    // committed work within limits: what is left available stays >= 0
    const auto cq = s.lib.forest().cluster_queue_at("cq" + std::to_string(o.queue));
    for (const auto& [sl, v] : a.usage)
      if (s.lib.forest().available(cq, sl) < 0) st.divergence = "admission left a negative available amount";
    return st;
  }
};

std::vector<op> random_ops(const harness&, std::uint64_t seed, std::size_t n) {
  prop::rng r(seed);
  std::vector<op> ops;
  for (std::size_t i = 0; i < n; ++i) {
    op o;
    const auto p = r.below(100);
    o.k = p < 4 ? kind::reload : p < 66 ? kind::admit : kind::finish;
    o.wl = r.below(n_workloads);
    o.queue = r.chance(5) ? n_cq : r.below(n_cq);
    o.count = static_cast<std::int32_t>(r.range(1, 3));
    o.per_pod[0] = r.chance(80) ? r.range(0, 3) : 0;
    o.per_pod[1] = r.chance(50) ? r.range(0, 3) : 0;
    o.per_pod[2] = r.chance(25) ? r.range(0, 1) : 0;
    if (r.chance(4)) o.per_pod[r.below(3)] = -r.range(1, 2);  // bad
    o.force = r.chance(8);
    o.reload_seed = r.next();
    o.bad_reload = r.chance(20);
    ops.push_back(o);
  }
  return ops;
}

}  // namespace

TEST_CASE("property: kueue cohorts match the reference model over random operation sequences") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = prop::check_model(
      "kueue", 1, 24, 250,
      [](std::uint64_t seed) {
        harness h;
        h.sh = make_shape(seed);
        prop::rng r(seed * 977 + 5);
        h.initial = make_amounts(h.sh, r, false);
        return h;
      },
      [](const harness& h, std::uint64_t seed, std::size_t n) { return random_ops(h, seed, n); });
  if (!t.failure.empty()) FAIL(t.failure);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t reloads = t.counts.extra.count("reloads") ? t.counts.extra.at("reloads") : 0;
  std::printf(
      "kueue property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu reloads), 0 divergences, replayed "
      "twice, %.2f s\n",
      t.ops, t.counts.allowed, t.counts.denied, t.counts.errors, reloads, secs);
  CHECK(t.ops == 24 * 250);
  CHECK(t.counts.allowed > t.ops / 4);
  CHECK(t.counts.denied > t.ops / 50);
  CHECK(t.counts.errors > t.ops / 50);
  CHECK(reloads > 0);
}
