// SPDX-License-Identifier: Apache-2.0
// Property test: Volcano proportion queues (quota/volcano.hpp) against a
// plain reference. The reference keeps the queue specs, the list of allocated
// tasks, pending and inqueue amounts, and recomputes on demand:
//   realCapability = min(capability, max(0, total - sum of guarantees) + guarantee)
//   deserved       = max(g, min(b, w * L)) with b = min(realCapability, request),
//                    L the level where the deserved sum reaches the total,
//                    found by evaluating the sum at every breakpoint g/w, b/w
//                    (exact fractions) and solving on the linear piece;
// the predicates allocatable (allocated + task <= floor(deserved)), overused,
// job_enqueueable, overcommit_gate and reclaim victims, and its own validation
// of new queues. Random allocate (check, then commit when allowed; sometimes
// regardless), deallocate, set_pending, enqueue/dequeue, recompute, add_queue
// (valid and invalid) and bad input (unknown queues/tasks, negative amounts,
// untracked resources) are applied to both; after every step the decisions
// and the full per-queue state are compared and a failed call must leave the
// state byte-identical.
#include <quota/json.hpp>
#include <quota/volcano.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

__extension__ using wide = __int128;
const std::vector<resource_id> dims{resources::cpu, resources::memory, resources::nvidia_gpu};
constexpr std::int64_t totals[] = {20, 200, 8};
constexpr std::size_t n_tasks = 20;
constexpr std::size_t max_queues = 7;
std::string qname(std::size_t i) {
  return "q" + std::to_string(i);
}
std::string tname(std::size_t i) {
  return "t" + std::to_string(i);
}

// ---- operations --------------------------------------------------------------------------------------

enum class kind { allocate, deallocate, pending, enqueue, dequeue, recompute, add_queue, probe };
const char* kind_name(kind k) {
  const char* n[] = {"allocate", "deallocate", "set_pending", "enqueue", "dequeue", "recompute", "add_queue", "probe"};
  return n[static_cast<int>(k)];
}

struct op {
  kind k = kind::allocate;
  std::size_t queue = 0, task = 0;
  std::int64_t amounts[3] = {0, 0, 0};
  std::int64_t untracked = 0;  // resources::pods, not a tracked dimension
  bool force = false;
  // add_queue
  std::int64_t weight = 1;
  std::optional<std::int64_t> cap[3];
  std::int64_t guar[3] = {0, 0, 0};
  std::size_t parent = 0;  // 0: none; i: qname(i - 1); self for a cycle
  bool reclaimable = true;
  bool closed = false;
};

resource_vector vec(const op& o) {
  resource_vector v;
  for (std::size_t d = 0; d < 3; ++d)
    if (o.amounts[d] != 0) v.set(dims[d], o.amounts[d]);
  if (o.untracked) v.set(resources::pods, o.untracked);
  return v;
}

std::string describe(const op& o) {
  std::ostringstream s;
  s << kind_name(o.k) << " " << qname(o.queue);
  if (o.k == kind::allocate || o.k == kind::deallocate) s << " " << tname(o.task);
  if (o.k != kind::deallocate && o.k != kind::recompute && o.k != kind::add_queue) {
    s << " [" << o.amounts[0] << "," << o.amounts[1] << "," << o.amounts[2] << "]";
    if (o.untracked) s << " pods=" << o.untracked;
  }
  if (o.force) s << " (forced)";
  if (o.k == kind::add_queue) {
    s << " weight " << o.weight << " cap [";
    for (const auto& c : o.cap) s << (c ? std::to_string(*c) : "-") << ",";
    s << "] guarantee [" << o.guar[0] << "," << o.guar[1] << "," << o.guar[2] << "] parent " << o.parent;
  }
  return s.str();
}

volcano_queue_spec spec_of(const op& o, std::size_t index) {
  volcano_queue_spec q;
  q.name = qname(index);
  q.weight = o.weight;
  for (std::size_t d = 0; d < 3; ++d) {
    if (o.cap[d]) q.capability.set(dims[d], *o.cap[d]);
    if (o.guar[d]) q.guarantee.set(dims[d], o.guar[d]);
  }
  q.parent = o.parent == 0 ? "" : qname(o.parent - 1);
  q.reclaimable = o.reclaimable;
  q.state = o.closed ? volcano_queue_state::closed : volcano_queue_state::open;
  return q;
}

op random_queue_op(prop::rng& r, bool bad) {
  op o;
  o.k = kind::add_queue;
  o.weight = r.chance(15) ? 0 : r.range(1, 3);
  for (std::size_t d = 0; d < 3; ++d) {
    if (r.chance(50)) o.cap[d] = r.range(0, totals[d] / 2);  // cpu/memory 0 = unlimited
    if (r.chance(40)) o.guar[d] = r.range(0, totals[d] / 5);
    if (o.cap[d] && o.guar[d] > *o.cap[d] && !(d < 2 && *o.cap[d] == 0) && !bad) o.guar[d] = *o.cap[d];
  }
  o.parent = r.chance(30) ? 1 + r.below(max_queues) : 0;
  o.reclaimable = !r.chance(20);
  o.closed = r.chance(10);
  if (bad && r.chance(30)) o.weight = -1;
  if (bad && r.chance(30)) o.cap[0] = -1;
  return o;
}

std::vector<op> initial_queues(prop::rng& r) {
  std::vector<op> ops;
  const std::size_t n = 2 + r.below(3);
  for (std::size_t i = 0; i < n; ++i) {
    op o = random_queue_op(r, false);
    o.parent = 0;
    ops.push_back(o);
  }
  return ops;
}

std::vector<op> random_ops(std::uint64_t seed, std::size_t n) {
  prop::rng r(seed);
  std::vector<op> ops;
  for (std::size_t i = 0; i < n; ++i) {
    const auto p = r.below(100);
    op o;
    if (p < 3) {
      o = random_queue_op(r, r.chance(40));
    } else {
      o.k = p < 45   ? kind::allocate
            : p < 65 ? kind::deallocate
            : p < 72 ? kind::pending
            : p < 77 ? kind::enqueue
            : p < 81 ? kind::dequeue
            : p < 90 ? kind::recompute
                     : kind::probe;
    }
    o.queue = r.chance(4) ? max_queues + 1 : r.chance(80) ? r.below(3) : r.below(max_queues);  // sometimes unknown
    o.task = r.below(n_tasks);
    const std::int64_t hi[] = {5, 50, 2};
    for (std::size_t d = 0; d < 3; ++d) o.amounts[d] = r.chance(70) ? r.range(0, hi[d]) : 0;
    if (r.chance(3)) o.amounts[r.below(3)] = -1;  // bad input
    if (r.chance(3)) o.untracked = 1;             // untracked resource
    o.force = r.chance(8);
    ops.push_back(o);
  }
  return ops;
}

// ---- the reference ------------------------------------------------------------------------------------

struct ref_queue {
  volcano_queue_spec spec;
  std::optional<std::int64_t> cap[3];  // nullopt: unlimited
  std::int64_t guar[3] = {0, 0, 0};
  std::int64_t pending[3] = {0, 0, 0};
  std::int64_t inq[3] = {0, 0, 0};
  std::int64_t des_lo[3] = {0, 0, 0}, des_hi[3] = {0, 0, 0};
};
struct ref_task {
  std::string id;
  std::size_t queue;
  std::int64_t req[3];
};

enum class outcome { allowed, denied, error };
const char* name_of(outcome o) {
  return o == outcome::allowed ? "allowed" : o == outcome::denied ? "denied" : "error";
}

struct ref_reason {
  std::string rule;
  resource_id resource;
  std::int64_t requested, used, limit;
  auto operator<=>(const ref_reason&) const = default;
};

class reference {
 public:
  std::vector<ref_queue> queues;
  std::vector<ref_task> tasks;  // allocation order

  std::optional<std::size_t> find(const std::string& name) const {
    for (std::size_t i = 0; i < queues.size(); ++i)
      if (queues[i].spec.name == name) return i;
    return std::nullopt;
  }
  std::int64_t allocated(std::size_t q, std::size_t d) const {
    std::int64_t a = 0;
    for (const auto& t : tasks)
      if (t.queue == q) a += t.req[d];
    return a;
  }
  std::int64_t real_cap(std::size_t q, std::size_t d) const {
    std::int64_t sum = 0;
    for (const auto& x : queues) sum += x.guar[d];
    const std::int64_t v = std::max<std::int64_t>(0, totals[d] - sum) + queues[q].guar[d];
    return queues[q].cap[d] ? std::min(*queues[q].cap[d], v) : v;
  }
  std::int64_t request(std::size_t q, std::size_t d) const { return allocated(q, d) + queues[q].pending[d]; }

  /// Validation of a new queue (the rules of docs/volcano.md); true = accepted.
  bool add(const volcano_queue_spec& s) {
    ref_queue q;
    q.spec = s;
    if (find(s.name) || s.weight < 0) return false;
    for (std::size_t d = 0; d < 3; ++d) {
      if (const amount* c = s.capability.find(dims[d])) {
        if (*c < 0) return false;
        if (!(*c == 0 && d < 2)) q.cap[d] = *c;  // cpu/memory listed as 0: unlimited
      }
      q.guar[d] = s.guarantee.get(dims[d]);
      if (q.guar[d] < 0 || (q.cap[d] && q.guar[d] > *q.cap[d])) return false;
      std::int64_t sum = q.guar[d];
      for (const auto& x : queues) sum += x.guar[d];
      if (sum > totals[d]) return false;
    }
    if (!s.parent.empty() && !find(s.parent)) return false;  // unknown parent, or itself (a cycle)
    queues.push_back(q);
    return true;
  }

  /// deserved in dimension d from first principles.
  void compute(std::size_t d) {
    const std::size_t n = queues.size();
    std::vector<std::int64_t> g(n), b(n), w(n);
    for (std::size_t q = 0; q < n; ++q) {
      g[q] = queues[q].guar[d];
      b[q] = std::min(real_cap(q, d), request(q, d));
      w[q] = queues[q].spec.weight;
    }
    // f(L) = sum_q share_q(L), share_q(L) = max(g, min(b, w L)) (w > 0), g (w = 0); L = num/den
    auto f = [&](wide num, wide den) {
      wide s = 0;  // scaled by den
      for (std::size_t q = 0; q < n; ++q) {
        if (w[q] == 0) {
          s += wide{g[q]} * den;
          continue;
        }
        wide x = wide{w[q]} * num;
        x = std::min<wide>(x, wide{b[q]} * den);
        x = std::max<wide>(x, wide{g[q]} * den);
        s += x;
      }
      return s;
    };
    std::optional<std::pair<wide, wide>> level;  // nullopt: every queue gets its bound
    wide upper = 0;
    for (std::size_t q = 0; q < n; ++q) upper += w[q] > 0 ? std::max(g[q], b[q]) : g[q];
    if (upper > totals[d]) {
      std::vector<std::pair<wide, wide>> points{{0, 1}};
      for (std::size_t q = 0; q < n; ++q)
        if (w[q] > 0) {
          points.emplace_back(g[q], w[q]);
          points.emplace_back(b[q], w[q]);
        }
      std::sort(points.begin(), points.end(),
                [](const auto& x, const auto& y) { return x.first * y.second < y.first * x.second; });
      std::pair<wide, wide> prev{0, 1};
      for (const auto& pt : points) {
        if (f(pt.first, pt.second) >= wide{totals[d]} * pt.second) {
          // linear between prev and pt: slope = sum of weights of queues growing at the midpoint
          const wide mid_num = prev.first * pt.second + pt.first * prev.second, mid_den = 2 * prev.second * pt.second;
          wide slope = 0;
          for (std::size_t q = 0; q < n; ++q)
            if (w[q] > 0 && wide{w[q]} * mid_num > wide{g[q]} * mid_den && wide{w[q]} * mid_num < wide{b[q]} * mid_den)
              slope += w[q];
          const wide f_prev = f(prev.first, prev.second);  // scaled by prev.second
          if (slope == 0 || f_prev == wide{totals[d]} * prev.second) {
            level = prev;
          } else {  // L = prev + (T - f(prev)) / slope
            level = std::pair<wide, wide>{prev.first * slope + (wide{totals[d]} * prev.second - f_prev),
                                          prev.second * slope};
          }
          break;
        }
        prev = pt;
      }
    }
    for (std::size_t q = 0; q < n; ++q) {
      std::int64_t lo = g[q], hi = g[q];
      if (w[q] > 0 && b[q] > g[q]) {
        if (!level) {
          lo = hi = b[q];
        } else {
          const wide x = wide{w[q]} * level->first, den = level->second;
          if (x >= wide{b[q]} * den) {
            lo = hi = b[q];
          } else if (x > wide{g[q]} * den) {
            lo = static_cast<std::int64_t>(x / den);
            hi = x % den == 0 ? lo : lo + 1;
          }
        }
      }
      queues[q].des_lo[d] = lo;
      queues[q].des_hi[d] = hi;
    }
  }
  void compute() {
    for (std::size_t d = 0; d < 3; ++d) compute(d);
  }

  std::vector<ref_reason> allocatable(std::size_t q, const op& o) const {
    std::vector<ref_reason> out;
    for (std::size_t d = 0; d < 3; ++d)
      if (o.amounts[d] > 0 && allocated(q, d) + o.amounts[d] > queues[q].des_lo[d])
        out.push_back({"over_deserved", dims[d], o.amounts[d], allocated(q, d), queues[q].des_lo[d]});
    // pods takes no part (Volcano's IsIgnoredScalarResource), tracked or not
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<ref_reason> enqueueable(std::size_t q, const op& o) const {
    std::vector<ref_reason> out;
    if (queues[q].spec.state != volcano_queue_state::open) return {{"queue_not_open", no_resource, 0, 0, 0}};
    for (std::size_t d = 0; d < 3; ++d) {
      const std::int64_t used = allocated(q, d) + queues[q].inq[d];
      if (o.amounts[d] > 0 && o.amounts[d] + used > real_cap(q, d))
        out.push_back({"over_real_capability", dims[d], o.amounts[d], used, real_cap(q, d)});
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<ref_reason> overcommit(std::size_t q, const op& o) const {
    bool fits_guarantee = true;
    for (std::size_t d = 0; d < 3; ++d)
      if (o.amounts[d] > 0 && o.amounts[d] + allocated(q, d) + queues[q].inq[d] > queues[q].guar[d])
        fits_guarantee = false;
    std::vector<ref_reason> out;
    if (fits_guarantee) return out;
    for (std::size_t d = 0; d < 3; ++d) {
      if (o.amounts[d] <= 0) continue;
      const std::int64_t scaled = totals[d] * 6 / 5;
      std::int64_t used = 0;
      for (std::size_t x = 0; x < queues.size(); ++x) used += allocated(x, d) + queues[x].inq[d];
      if (o.amounts[d] > scaled - used) out.push_back({"overcommit", dims[d], o.amounts[d], used, scaled});
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  bool overused(std::size_t q) const {
    for (std::size_t d = 0; d < 3; ++d)
      if (queues[q].des_hi[d] > allocated(q, d)) return false;
    return true;
  }
  std::vector<std::string> victims(std::size_t self) const {
    std::vector<std::string> out;
    std::vector<std::vector<std::int64_t>> running(queues.size(), std::vector<std::int64_t>(3));
    for (std::size_t q = 0; q < queues.size(); ++q)
      for (std::size_t d = 0; d < 3; ++d) running[q][d] = allocated(q, d);
    for (const auto& t : tasks) {
      if (t.queue == self || !queues[t.queue].spec.reclaimable) continue;
      bool exceeds = false;
      for (std::size_t d = 0; d < 3; ++d) exceeds = exceeds || running[t.queue][d] > queues[t.queue].des_lo[d];
      if (!exceeds) continue;
      for (std::size_t d = 0; d < 3; ++d) running[t.queue][d] -= t.req[d];
      out.push_back(t.id);
    }
    return out;
  }
};

bool negative(const op& o) {
  return o.amounts[0] < 0 || o.amounts[1] < 0 || o.amounts[2] < 0;
}

std::vector<ref_reason> reasons_of(const decision& d) {
  std::vector<ref_reason> out;
  for (const auto& r : d.reasons()) out.push_back({std::string(r.rule), r.resource, r.requested, r.used, r.limit});
  std::sort(out.begin(), out.end());
  return out;
}

json state_of(const volcano_model& t) {
  json j{{"tasks", t.running_tasks()}, {"queues", json::array()}};
  for (std::size_t q = 0; q < t.size(); ++q) {
    json e{{"name", t.spec(q).name}};
    for (std::size_t d = 0; d < 3; ++d)
      e["d" + std::to_string(d)] = {t.real_capability(q, d), t.capability(q, d),   t.guarantee(q, d),
                                    t.allocated(q, d),       t.inqueue(q, d),      t.request(q, d),
                                    t.deserved_floor(q, d),  t.deserved_ceil(q, d)};
    j["queues"].push_back(e);
  }
  return j;
}

std::string compare(const volcano_model& t, const reference& ref) {
  if (t.size() != ref.queues.size()) return "number of queues differs";
  for (std::size_t q = 0; q < t.size(); ++q) {
    const auto& rq = ref.queues[q];
    if (t.spec(q).name != rq.spec.name) return "queue order differs";
    for (std::size_t d = 0; d < 3; ++d) {
      const std::string at = " of " + rq.spec.name + " in dimension " + std::to_string(d);
      if (t.real_capability(q, d) != ref.real_cap(q, d)) return "realCapability" + at + " differs";
      if (t.guarantee(q, d) != rq.guar[d]) return "guarantee" + at + " differs";
      if (t.allocated(q, d) != ref.allocated(q, d)) return "allocated" + at + " differs";
      if (t.inqueue(q, d) != rq.inq[d]) return "inqueue" + at + " differs";
      if (t.request(q, d) != ref.request(q, d)) return "request" + at + " differs";
      if (t.deserved_floor(q, d) != rq.des_lo[d] || t.deserved_ceil(q, d) != rq.des_hi[d])
        return "deserved" + at + " differs: library [" + std::to_string(t.deserved_floor(q, d)) + "," +
               std::to_string(t.deserved_ceil(q, d)) + "], reference [" + std::to_string(rq.des_lo[d]) + "," +
               std::to_string(rq.des_hi[d]) + "]";
    }
    if (t.overused(q) != ref.overused(q)) return "overused of " + rq.spec.name + " differs";
  }
  std::vector<std::string> ids;
  for (const auto& x : ref.tasks) ids.push_back(x.id);
  if (t.running_tasks() != ids) return "running tasks differ";
  return "";
}

// ---- the driver ---------------------------------------------------------------------------------------------

struct run_result {
  std::string divergence;
  std::size_t step = 0;
  std::size_t allowed = 0, denied = 0, errors = 0, rejected_queues = 0, victim_sets = 0;
  json final_state;
};

run_result run(const std::vector<op>& init, const std::vector<op>& ops) {
  run_result res;
  std::vector<volcano_queue_spec> specs;
  reference ref;
  for (std::size_t i = 0; i < init.size(); ++i) {
    specs.push_back(spec_of(init[i], i));
    REQUIRE(ref.add(specs.back()));
  }
  resource_vector total;
  for (std::size_t d = 0; d < 3; ++d) total.set(dims[d], totals[d]);
  volcano_model lib(dims, total, specs);
  lib.compute_deserved();
  ref.compute();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op& o = ops[i];
    auto diverge = [&](const std::string& msg) {
      res.divergence = "step " + std::to_string(i) + " (" + describe(o) + "): " + msg;
      res.step = i;
      return res;
    };
    const json before = state_of(lib);
    const auto rq = ref.find(qname(o.queue));
    outcome got = outcome::allowed, want = outcome::allowed;
    auto reasons_differ = [&](const decision& d, const std::vector<ref_reason>& w) { return reasons_of(d) != w; };
    try {
      switch (o.k) {
        case kind::allocate: {
          const auto q = lib.index(qname(o.queue));
          const decision d = lib.allocatable(q, vec(o));
          if (rq && reasons_differ(d, ref.allocatable(*rq, o))) return diverge("allocatable: library " + to_string(d));
          got = d.allowed() ? outcome::allowed : outcome::denied;
          if (d.allowed() || o.force) {
            lib.allocate(tname(o.task), qname(o.queue), vec(o));
            got = outcome::allowed;
          }
          break;
        }
        case kind::deallocate:
          lib.deallocate(tname(o.task));
          break;
        case kind::pending:
          lib.set_pending(qname(o.queue), vec(o));
          break;
        case kind::enqueue:
          lib.enqueue(qname(o.queue), vec(o));
          break;
        case kind::dequeue:
          lib.dequeue(qname(o.queue), vec(o));
          break;
        case kind::recompute:
          lib.compute_deserved();
          break;
        case kind::add_queue:
          lib.add_queue(spec_of(o, lib.size()));
          lib.compute_deserved();
          break;
        case kind::probe: {
          const auto q = lib.index(qname(o.queue));
          const decision e = lib.job_enqueueable(q, vec(o)), g = lib.overcommit_gate(q, vec(o));
          std::vector<victim> vs;
          lib.reclaimable(qname(o.queue), lib.running_tasks(), vs);
          if (rq && !o.untracked && !negative(o)) {
            if (reasons_differ(e, ref.enqueueable(*rq, o))) return diverge("job_enqueueable: library " + to_string(e));
            if (reasons_differ(g, ref.overcommit(*rq, o))) return diverge("overcommit_gate: library " + to_string(g));
            std::vector<std::string> ids;
            for (const auto& v : vs) ids.push_back(v.job_id);
            if (ids != ref.victims(*rq)) return diverge("reclaim victims differ");
            res.victim_sets += !ids.empty();
          }
          break;
        }
      }
    } catch (const quota::error&) {
      got = outcome::error;
    }
    // the reference
    const bool has_task =
        std::any_of(ref.tasks.begin(), ref.tasks.end(), [&](const auto& t) { return t.id == tname(o.task); });
    const bool bad_vec = negative(o) || o.untracked != 0;
    switch (o.k) {
      case kind::allocate:
        if (!rq) {
          want = outcome::error;
        } else {
          const bool allowed = ref.allocatable(*rq, o).empty();
          want = allowed ? outcome::allowed : outcome::denied;
          if (allowed || o.force) {
            if (has_task || bad_vec) {
              want = outcome::error;
            } else {
              ref.tasks.push_back({tname(o.task), *rq, {o.amounts[0], o.amounts[1], o.amounts[2]}});
              want = outcome::allowed;
            }
          }
        }
        break;
      case kind::deallocate:
        if (!has_task) {
          want = outcome::error;
        } else {
          ref.tasks.erase(
              std::find_if(ref.tasks.begin(), ref.tasks.end(), [&](const auto& t) { return t.id == tname(o.task); }));
        }
        break;
      case kind::pending:
        if (!rq || bad_vec)
          want = outcome::error;
        else
          std::copy(o.amounts, o.amounts + 3, ref.queues[*rq].pending);
        break;
      case kind::enqueue:
        if (!rq || bad_vec)
          want = outcome::error;
        else
          for (std::size_t d = 0; d < 3; ++d) ref.queues[*rq].inq[d] += o.amounts[d];
        break;
      case kind::dequeue: {
        bool ok = rq && !bad_vec;
        for (std::size_t d = 0; d < 3 && ok; ++d) ok = ref.queues[*rq].inq[d] >= o.amounts[d];
        if (!ok)
          want = outcome::error;
        else
          for (std::size_t d = 0; d < 3; ++d) ref.queues[*rq].inq[d] -= o.amounts[d];
        break;
      }
      case kind::recompute:
        ref.compute();
        break;
      case kind::add_queue:
        if (ref.add(spec_of(o, ref.queues.size()))) {
          ref.compute();
        } else {
          want = outcome::error;
          ++res.rejected_queues;
        }
        break;
      case kind::probe:
        want = rq ? outcome::allowed : outcome::error;
        break;
    }
    (got == outcome::allowed ? res.allowed : got == outcome::denied ? res.denied : res.errors)++;
    if (got != want) return diverge(std::string("library ") + name_of(got) + ", reference " + name_of(want));
    if (got != outcome::allowed && state_of(lib) != before) return diverge("a failed or denied call changed the state");
    if (auto msg = compare(lib, ref); !msg.empty()) return diverge(msg);
    // committed work within deserved when it was checked
    if (o.k == kind::allocate && got == outcome::allowed && !o.force)
      for (std::size_t d = 0; d < 3; ++d)
        if (lib.allocated(*rq, d) > lib.deserved_floor(*rq, d) && o.amounts[d] > 0)
          return diverge("allocated above deserved after an allowed allocation");
    // deserved never exceeds realCapability above the guarantee, and sums to at most the total
    for (std::size_t d = 0; d < 3; ++d) {
      std::int64_t sum = 0;
      for (std::size_t q = 0; q < lib.size(); ++q) sum += lib.deserved_floor(q, d);
      if (sum > totals[d]) return diverge("deserved floors sum above the total");
    }
  }
  res.final_state = state_of(lib);
  return res;
}

}  // namespace

TEST_CASE("property: Volcano queues match the reference model over random operation sequences") {
  constexpr std::uint64_t seeds = 20;
  constexpr std::size_t length = 300;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t total = 0, allowed = 0, denied = 0, errors = 0, rejected = 0, victim_sets = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    prop::rng r(seed * 31 + 7);
    const auto init = initial_queues(r);
    const auto ops = random_ops(seed, length);
    const run_result res = run(init, ops);
    total += ops.size();
    allowed += res.allowed;
    denied += res.denied;
    errors += res.errors;
    rejected += res.rejected_queues;
    victim_sets += res.victim_sets;
    if (!res.divergence.empty()) {
      std::vector<op> prefix(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(res.step) + 1);
      const auto small =
          prop::shrink<op>(prefix, [&](const std::vector<op>& c) { return !run(init, c).divergence.empty(); });
      std::ostringstream s;
      s << "seed " << seed << ": " << res.divergence << "\ninitial queues:\n";
      for (const auto& o : init) s << "  " << describe(o) << "\n";
      s << "shrunk to " << small.size() << " operations:\n";
      for (const auto& o : small) s << "  " << describe(o) << "\n";
      s << "  -> " << run(init, small).divergence;
      FAIL(s.str());
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "queue tree property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu rejected queues, %zu victim "
      "sets), "
      "0 divergences, %.2f s\n",
      total, allowed, denied, errors, rejected, victim_sets, secs);
  CHECK(total == seeds * length);
  CHECK(allowed > total / 4);
  CHECK(denied > total / 100);
  CHECK(errors > total / 50);
  CHECK(rejected > 0);
  CHECK(victim_sets > 0);
}

TEST_CASE("property: Volcano queues replay deterministically") {
  for (std::uint64_t seed = 300; seed < 303; ++seed) {
    prop::rng r(seed);
    const auto init = initial_queues(r);
    const auto ops = random_ops(seed, 300);
    const run_result a = run(init, ops), b = run(init, ops);
    REQUIRE(a.divergence.empty());
    CHECK(a.final_state.dump() == b.final_state.dump());
  }
}
