// SPDX-License-Identifier: Apache-2.0
// quota/kai_claims.hpp — ownership and accounting of shared DRA ResourceClaims: one owning
// queue per accounted claim, the charges a host applies to its queue model, and
// whether a pod may use a claim (KAI claim-sharing design, and KAI's behaviour as a
// mode).
// Docs: docs/kai-claims.md
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/reserve.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

using claim_id = std::uint32_t;
using claim_queue_id = std::uint32_t;
using claim_binding_id = std::uint32_t;
/// "No claim / no queue / no binding".
inline constexpr std::uint32_t claim_none = 0xFFFFFFFFu;

/// design: KAI's claim-sharing design proposal, docs/kai-claims.md#references (default). upstream: KAI's current rules.
enum class kai_claims_mode : std::uint8_t { owning_queue, upstream };
/// What happens when a claim's owner has no pod left on it but others do.
enum class claim_locking : std::uint8_t {
  deny_foreign,  ///< foreign non-preemptible pods may not share (default); a claim left to foreigners is reported
                 ///< pinned
  pin,           ///< every pod may share; the claim is reported pinned and stays charged to its owner
  transfer,      ///< ownership moves to the remaining queue that bound the claim first (label rewritten)
};
/// Allocated claims bound by several queues that carry no queue label.
enum class claim_orphans : std::uint8_t {
  deduct,     ///< charged to no queue, reported in deducted() (default)
  attribute,  ///< owned by the queue of the earliest-created pod, ties by queue name
};
/// What happens to the claims of a queue that is deleted.
enum class claim_owner_deleted : std::uint8_t {
  deduct,    ///< they become orphans charged to deducted() (default)
  transfer,  ///< to the remaining consumer queue that bound first; orphans when none is left
};

/// Where the owner of a claim came from.
enum class claim_owner_source : std::uint8_t { none, label, first_bind, attributed, transferred, per_pod };

struct kai_claims_config {
  /// Label that names a claim's (and a pod's) queue.
  std::string queue_label_key = "kai.scheduler/queue";
  kai_claims_mode mode = kai_claims_mode::owning_queue;
  claim_locking locking = claim_locking::deny_foreign;
  /// With deny_foreign: pods protected by a minimum runtime lock like non-preemptible ones.
  bool min_runtime_locks = true;
  claim_orphans orphans = claim_orphans::deduct;
  claim_owner_deleted owner_deleted = claim_owner_deleted::deduct;
  /// The design's locking option 2, "Allow queues to evict claims, even if it
  /// will evict foreign pods" (default off): the policy adapter's victims()
  /// offers, for a job of the owning queue, the foreign jobs bound to the
  /// claims it names and to the queue's pinned claims, non-preemptible ones
  /// included. With locking `pin` this is the design's option 2 as a whole.
  bool owner_evicts = false;
  /// Kubernetes' limit on status.reservedFor (ResourceClaimReservedForMaxSize).
  std::uint32_t max_consumers = 256;
  /// Design mode: which device classes are accounted when the class has no
  /// flag of its own (set_class_accounted). Empty: every class is accounted.
  std::function<bool(std::string_view)> accounted_class;
  /// What a claim's charge is in the other models' terms, when the policy
  /// adapter passes it on (quota/capabilities.hpp, charge_aware): device
  /// class (or "class/capacity") -> resource name. A class not listed is
  /// charged as nvidia.com/gpu when it is a GPU class (its name contains
  /// "gpu": KAI counts DRA GPU claims as GPUs), else under its own name.
  std::map<std::string, std::string, std::less<>> charge_as;
};

/// One line of a claim's spec requests or allocation result.
struct claim_device {
  std::string device_class;
  /// Devices (ExactCount count, or 1 for one allocation result).
  std::int64_t count = 1;
  /// allocationMode All (spec requests only): the count is unknown before allocation.
  bool all = false;
  /// One alternative of a firstAvailable request (spec requests only): which
  /// one is used is known from the allocation; KAI today ignores these.
  bool alternative = false;
  /// Consumed capacities of an allocation result: (capacity name, amount in base units).
  std::vector<std::pair<std::string, std::int64_t>> capacity;
  /// allocationMode neither ExactCount nor All (spec requests only): a
  /// validation error in owning_queue mode; upstream skips the request (counts 0),
  /// as KAI does.
  bool unknown_mode = false;
};

/// A ResourceClaim as the model sees it.
struct claim_spec {
  std::string ns = "default";
  std::string name;
  /// Value of the queue label, empty when there is none.
  std::string queue_label;
  /// Created from a ResourceClaimTemplate for one pod (owned by the pod's queue).
  bool per_pod = false;
  /// status.allocation present: `allocation` holds its results.
  bool allocated = false;
  std::vector<claim_device> requests;
  std::vector<claim_device> allocation;
  /// The node the allocation is bound to (status.allocation.nodeSelector
  /// naming one node), empty when unknown or not allocated.
  std::string node;
  /// Entries in status.reservedFor when the claim was read, of any kind. Each
  /// pod restored on the claim is taken as one of them; the others (entries
  /// without a pod the host knows) still count toward max_consumers.
  std::uint32_t reserved_entries = 0;
};

/// A pod (or a gang of `count` pods) that wants to use claims.
struct claim_pod {
  std::string_view id;
  std::string_view ns = "default";
  claim_queue_id queue = claim_none;
  /// Used when `queue` is claim_none (a queue the model has not seen yet).
  std::string_view queue_name;
  bool preemptible = true;
  bool min_runtime_protected = false;
  std::int64_t created_ms = 0;
  /// Reservations this bind adds to each claim (pods of a gang).
  std::uint32_t count = 1;
};

enum class claim_action_kind : std::uint8_t {
  upsert_label,  ///< the binder must set the claim's queue label to `queue`
  pinned,        ///< the owner `queue` has no pod left on the claim; others keep it bound
  unpinned,      ///< the claim is no longer pinned
};
struct claim_action {
  claim_action_kind kind;
  claim_id claim;
  claim_queue_id queue;
  friend bool operator==(const claim_action&, const claim_action&) = default;
};

struct claim_bind_result {
  decision verdict;
  claim_binding_id binding = claim_none;
};

namespace detail {
struct claims_use {
  claim_queue_id queue;
  std::uint32_t count;
  std::uint64_t first_seq;
  std::int64_t earliest_created;
};
enum class claims_target : std::uint8_t { none, queue, deducted };
struct claims_claim {
  std::string key;  // ns/name
  std::size_t slash = 0;
  std::string label;
  bool per_pod = false;
  bool allocated = false;
  bool accounted = false;
  bool orphan = false;
  bool pinned = false;
  resource_vector charge;
  std::vector<std::pair<std::string, std::int64_t>> devices;  // every class's devices (accounted or not)
  std::string node;
  claim_queue_id owner = claim_none;
  claim_owner_source source = claim_owner_source::none;
  claims_target target = claims_target::none;
  claim_queue_id target_queue = claim_none;
  std::uint32_t consumers = 0;
  std::uint32_t unmatched = 0;  // reservedFor entries no restored pod stands for
  std::vector<claims_use> uses;
  std::vector<std::string> classes;
};
struct claims_queue {
  std::string name;
  bool shares = true;
  bool live = true;
  resource_vector charge;
};
struct claims_binding {
  bool live = false;
  claim_queue_id queue = claim_none;
  std::uint32_t count = 1;
  std::vector<claim_id> claims;
};

[[nodiscard]] inline bool claims_can_add(const resource_vector& a, const resource_vector& b) noexcept {
  for (const auto& e : b) {
    amount r = 0;
    if (!try_add(a.get(e.id), e.value, r)) return false;
  }
  return true;
}
[[nodiscard]] inline bool claims_kai_gpu_class(std::string_view name) noexcept {
  // KAI today: a device class is a GPU class when its name contains "gpu" (any case).
  for (std::size_t i = 0; i + 3 <= name.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(name[i]) == 'g' && lower(name[i + 1]) == 'p' && lower(name[i + 2]) == 'u') return true;
  }
  return false;
}
}  // namespace detail

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view kai_claims_model_name = "kai_claims";

class kai_claims_model {
 public:

  explicit kai_claims_model(kai_claims_config cfg = {}) : cfg_(std::move(cfg)) {
    if (cfg_.queue_label_key.empty()) throw validation_error("queue_label_key", "must not be empty");
    if (cfg_.max_consumers == 0) throw validation_error("max_consumers", "must be at least 1");
  }
  /// A model whose registry starts as the host's: every name the host knows
  /// keeps its id, so charges are in the host's resource ids (device classes
  /// the host lacks are added; the host takes registry() back after loading).
  kai_claims_model(kai_claims_config cfg, resource_registry host) : kai_claims_model(std::move(cfg)) { reg_ = std::move(host); }

  [[nodiscard]] const kai_claims_config& config() const noexcept { return cfg_; }
  [[nodiscard]] resource_registry& registry() noexcept { return reg_; }
  [[nodiscard]] const resource_registry& registry() const noexcept { return reg_; }

  // ---- queues ---------------------------------------------------------------

  /// The id of queue `name`, created on first use (a deleted queue comes back).
  claim_queue_id queue(std::string_view name) {
    if (name.empty()) throw validation_error("queue", "empty queue name");
    if (auto it = queue_ids_.find(name); it != queue_ids_.end()) {
      queues_[it->second].live = true;
      return it->second;
    }
    const auto id = static_cast<claim_queue_id>(queues_.size());
    queues_.emplace_back();
    try {
      queues_.back().name = std::string(name);
    } catch (...) {
      queues_.pop_back();
      throw;
    }
    try {
      queue_ids_.emplace(queues_.back().name, id);
    } catch (...) {
      queues_.pop_back();
      throw;
    }
    return id;
  }
  [[nodiscard]] claim_queue_id find_queue(std::string_view name) const noexcept {
    auto it = queue_ids_.find(name);
    return it == queue_ids_.end() ? claim_none : it->second;
  }
  [[nodiscard]] std::string_view queue_name(claim_queue_id q) const { return queue_at(q).name; }
  /// Rule 3: a queue that does not share lets no foreign pod use its claims.
  void set_sharing(std::string_view name, bool shares) { queues_[queue(name)].shares = shares; }
  [[nodiscard]] bool shares(claim_queue_id q) const { return queue_at(q).shares; }
  [[nodiscard]] bool queue_live(claim_queue_id q) const { return queue_at(q).live; }
  /// Charges (claims owned, or per-pod charges in upstream) of queue q.
  [[nodiscard]] const resource_vector& charge_of(claim_queue_id q) const { return queue_at(q).charge; }
  [[nodiscard]] std::size_t queue_count() const noexcept { return queues_.size(); }

  /// Rule 8: the queue is deleted. Its claims go on by config().owner_deleted;
  /// its pods stay bound until released. Unknown queue: unknown_entity_error.
  void remove_queue(std::string_view name, std::vector<claim_action>* actions = nullptr) {
    const auto q = find_queue(name);
    if (q == claim_none || !queues_[q].live) throw unknown_entity_error(error_id::unknown_queue, "queue", name);
    // plan every move first (may throw), then apply without failure
    std::vector<std::pair<claim_id, claim_queue_id>> plan;  // new owner, claim_none = orphan
    std::map<claim_queue_id, resource_vector> incoming;     // claim_none = deducted
    for (claim_id c = 0; c < claims_.size(); ++c) {
      const auto& cl = claims_[c];
      if (cl.owner != q) continue;
      claim_queue_id to = claim_none;
      if (cfg_.owner_deleted == claim_owner_deleted::transfer) to = earliest_other_use(cl, q);
      plan.emplace_back(c, to);
      if (cl.target == detail::claims_target::queue) incoming[to].add_in_place(cl.charge);
    }
    for (const auto& [to, v] : incoming) {
      const resource_vector& base = to == claim_none ? deducted_ : queues_[to].charge;
      if (!detail::claims_can_add(base, v))
        throw overflow_error("claims: moving the claims of deleted queue '" + std::string(name) + "' overflows " +
                             (to == claim_none ? std::string("deducted") : "queue '" + queues_[to].name + "'"));
    }
    if (actions) detail::reserve_more(*actions, plan.size());
    for (const auto& [c, to] : plan) {
      auto& cl = claims_[c];
      const bool charged = cl.target == detail::claims_target::queue;
      if (charged) queues_[q].charge.sub_in_place(cl.charge);
      if (to == claim_none) {
        cl.owner = claim_none;
        cl.source = claim_owner_source::none;
        cl.orphan = cl.consumers > 0;  // an unused claim simply waits for its next binder
        cl.pinned = false;
        if (charged) move_charge_to_deducted(cl);
      } else {
        cl.owner = to;
        cl.source = claim_owner_source::transferred;
        cl.pinned = false;
        if (charged) {
          queues_[to].charge.add_in_place(cl.charge);
          cl.target_queue = to;
        }
        if (actions) actions->push_back({claim_action_kind::upsert_label, c, to});
      }
    }
    queues_[q].live = false;
    queues_[q].shares = true;
    queues_[q].charge.drop_zeros();
  }

  // ---- device classes ---------------------------------------------------------

  /// Rule 4: the per-class flag (a DeviceClass setting); wins over the
  /// config predicate. Only before any claim is added (state_error otherwise).
  void set_class_accounted(std::string_view device_class, bool accounted) {
    if (!claims_.empty())
      throw state_error(error_id::state_out_of_order,
                        "claims: device class '" + std::string(device_class) + "' flagged after claims were added");
    if (device_class.empty()) throw validation_error("deviceClass", "empty device class name");
    class_flags_.insert_or_assign(std::string(device_class), accounted);
  }
  [[nodiscard]] bool class_accounted(std::string_view device_class) const {
    if (cfg_.mode == kai_claims_mode::upstream) return detail::claims_kai_gpu_class(device_class);
    if (auto it = class_flags_.find(device_class); it != class_flags_.end()) return it->second;
    if (cfg_.accounted_class) return cfg_.accounted_class(device_class);
    return true;
  }

  // ---- claims -------------------------------------------------------------------

  /// Adds a claim. Duplicate: state_error; malformed: validation_error with
  /// every problem; nothing changes on error.
  claim_id add_claim(const claim_spec& s) {
    const std::string key = s.ns + "/" + s.name;
    diagnostics diag;
    if (s.ns.empty()) diag.add("claim " + key + ".metadata.namespace", "empty namespace");
    if (s.name.empty()) diag.add("claim " + key + ".metadata.name", "empty name");
    auto check_lines = [&](const std::vector<claim_device>& lines, std::string_view field) {
      for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string p = "claim " + key + "." + std::string(field) + "[" + std::to_string(i) + "]";
        if (lines[i].device_class.empty()) diag.add(p + ".deviceClassName", "empty device class");
        // upstream: a request count <= 0 counts 1, as in KAI
        const bool kai_request = cfg_.mode == kai_claims_mode::upstream && &lines == &s.requests;
        if (lines[i].count < 0 && !kai_request)
          diag.add(p + ".count", "negative count " + std::to_string(lines[i].count));
        if (lines[i].unknown_mode && cfg_.mode == kai_claims_mode::owning_queue)
          diag.add(p + ".allocationMode", "unknown allocation mode (ExactCount or All)");
        for (const auto& [cap, v] : lines[i].capacity) {
          if (v < 0) diag.add(p + ".consumedCapacity." + cap, "negative amount");
          if (!lines[i].device_class.empty() && !detail::valid_resource_name(lines[i].device_class + "/" + cap))
            diag.add(p + ".consumedCapacity." + cap, "invalid capacity name");
        }
        if (!lines[i].device_class.empty() && !detail::valid_resource_name(lines[i].device_class))
          diag.add(p + ".deviceClassName", "invalid device class name '" + lines[i].device_class + "'");
      }
    };
    check_lines(s.requests, "spec.devices.requests");
    check_lines(s.allocation, "status.allocation.devices.results");
    diag.throw_if_any();
    if (claim_ids_.find(key) != claim_ids_.end())
      throw state_error(error_id::state_duplicate, "claims: claim '" + key + "' is already loaded");

    detail::claims_claim c;
    c.key = key;
    c.slash = s.ns.size();
    c.label = s.queue_label;
    c.per_pod = s.per_pod;
    c.allocated = s.allocated;
    resource_registry reg = reg_;  // interning on a copy keeps the strong guarantee
    if (cfg_.mode == kai_claims_mode::owning_queue) {
      const auto& lines = s.allocated ? s.allocation : s.requests;
      for (const auto& r : s.requests)
        if (class_accounted(r.device_class)) c.accounted = true;
      for (const auto& l : lines) {
        if (!class_accounted(l.device_class)) continue;
        c.accounted = true;
        if (!s.allocated && (l.all || l.alternative)) continue;  // unknown until allocated
        c.charge.add(reg.intern(l.device_class), l.count);
        for (const auto& [cap, v] : l.capacity) c.charge.add(reg.intern(l.device_class + "/" + cap), v);
      }
    } else {
      // KAI today: GPU classes of `exactly` requests, ExactCount count (1 when
      // not above 0), All = 1, another allocation mode 0 (the claim is still a
      // GPU claim for the label rule)
      for (const auto& r : s.requests) {
        if (r.alternative || !detail::claims_kai_gpu_class(r.device_class)) continue;
        c.accounted = true;
        if (r.unknown_mode) continue;
        c.charge.add(reg.intern(r.device_class), r.all ? 1 : (r.count > 0 ? r.count : 1));
      }
    }
    // the devices on the node, whoever pays for them: the allocation, or the
    // requests whose count is known before allocation
    for (const auto& l : s.allocated ? s.allocation : s.requests) {
      if (!s.allocated && (l.all || l.alternative || l.unknown_mode || l.count <= 0)) continue;
      auto it =
          std::find_if(c.devices.begin(), c.devices.end(), [&](const auto& d) { return d.first == l.device_class; });
      if (it == c.devices.end())
        c.devices.emplace_back(l.device_class, l.count);
      else
        it->second = detail::checked_add(it->second, l.count);
    }
    c.node = s.node;
    c.unmatched = s.reserved_entries;
    for (const auto& l : s.requests) c.classes.push_back(l.device_class);
    c.uses.reserve(2);
    const auto id = static_cast<claim_id>(claims_.size());
    if (claims_.size() == claims_.capacity()) claims_.reserve(claims_.size() * 2 + 16);
    // the label's queue exists from now on (interning may throw: nothing else changed yet)
    const std::size_t queues_before = queues_.size();
    if (!c.label.empty() && !c.per_pod && c.accounted && cfg_.mode == kai_claims_mode::owning_queue) {
      c.owner = queue(c.label);
      c.source = claim_owner_source::label;
    }
    try {
      claims_.push_back(std::move(c));
      claim_ids_.emplace(claims_.back().key, id);
    } catch (...) {
      if (claims_.size() > id) claims_.pop_back();
      while (queues_.size() > queues_before) {
        queue_ids_.erase(queues_.back().name);
        queues_.pop_back();
      }
      throw;
    }
    reg_.swap(reg);
    return id;
  }

  /// The id of claim "namespace/name", or claim_none.
  [[nodiscard]] claim_id find_claim(std::string_view key) const noexcept {
    auto it = claim_ids_.find(key);
    return it == claim_ids_.end() ? claim_none : it->second;
  }
  [[nodiscard]] claim_id find_claim(std::string_view ns, std::string_view name) const {
    std::string key(ns);
    key.push_back('/');
    key.append(name);
    return find_claim(key);
  }
  /// The id of claim "namespace/name"; unknown_entity_error naming it otherwise.
  [[nodiscard]] claim_id claim_at(std::string_view key) const {
    const auto c = find_claim(key);
    if (c == claim_none) throw unknown_entity_error(error_id::unknown_entity, "resource claim", key);
    return c;
  }
  [[nodiscard]] std::size_t claim_count() const noexcept { return claims_.size(); }
  [[nodiscard]] std::string_view claim_key(claim_id c) const { return claim_ref(c).key; }
  [[nodiscard]] std::string_view claim_namespace(claim_id c) const {
    const auto& cl = claim_ref(c);
    return std::string_view(cl.key).substr(0, cl.slash);
  }
  /// The owning queue, or claim_none (not accounted, not bound yet, orphan).
  [[nodiscard]] claim_queue_id owner(claim_id c) const { return claim_ref(c).owner; }
  [[nodiscard]] claim_owner_source owner_source(claim_id c) const { return claim_ref(c).source; }
  [[nodiscard]] bool accounted(claim_id c) const { return claim_ref(c).accounted; }
  [[nodiscard]] bool orphan(claim_id c) const { return claim_ref(c).orphan; }
  [[nodiscard]] bool pinned(claim_id c) const { return claim_ref(c).pinned; }
  [[nodiscard]] std::uint32_t consumers(claim_id c) const { return claim_ref(c).consumers; }
  /// Reservations of queue q on claim c.
  [[nodiscard]] std::uint32_t consumers_of(claim_id c, claim_queue_id q) const {
    for (const auto& u : claim_ref(c).uses)
      if (u.queue == q) return u.count;
    return 0;
  }
  /// The claim's charge (design: allocation result of accounted classes;
  /// upstream: what each consuming pod is charged).
  [[nodiscard]] const resource_vector& claim_charge(claim_id c) const { return claim_ref(c).charge; }
  /// The claim's devices on its node, by device class, accounted or not (the
  /// allocation; before it, the requests with a known count).
  [[nodiscard]] std::span<const std::pair<std::string, std::int64_t>> claim_devices(claim_id c) const {
    return claim_ref(c).devices;
  }
  /// The node the claim's allocation is bound to ("" when unknown).
  [[nodiscard]] std::string_view claim_node(claim_id c) const { return claim_ref(c).node; }
  /// Orphan charges reduced from cluster capacity and charged to no queue.
  [[nodiscard]] const resource_vector& deducted() const noexcept { return deducted_; }

  /// Sum of the charges of accounted claims with at least one reservation.
  [[nodiscard]] resource_vector allocated_total() const {
    resource_vector t;
    for (const auto& c : claims_)
      if (c.accounted && c.consumers > 0) t.add_in_place(c.charge);
    t.drop_zeros();
    return t;
  }
  /// Sum of every queue's charge plus deducted().
  [[nodiscard]] resource_vector charged_total() const {
    resource_vector t = deducted_;
    for (const auto& q : queues_) t.add_in_place(q.charge);
    t.drop_zeros();
    return t;
  }

  // ---- binding --------------------------------------------------------------------

  /// May the pod use these claims? Unknown claim id: unknown_entity_error;
  /// a claim of another namespace: validation_error naming both.
  [[nodiscard]] decision check(const claim_pod& p, std::span<const claim_id> claims) const {
    validate(p, claims);
    decision d;
    for (const claim_id c : claims) check_one(p, c, d);
    return d;
  }

  /// check, then (when allowed) reserve the claims for the pod: ownership,
  /// charges, pinning. Actions for the host are appended to `actions`.
  /// Denied: nothing changes. Errors: nothing changes.
  claim_bind_result bind(const claim_pod& p, std::span<const claim_id> claims,
                         std::vector<claim_action>* actions = nullptr) {
    claim_bind_result r;
    r.verdict = check(p, claims);
    if (r.verdict.denied()) return r;
    if (p.queue == claim_none || p.queue >= queues_.size())
      throw unknown_entity_error(error_id::unknown_queue, "queue id", std::to_string(p.queue));
    for (const claim_id c : claims) {
      const auto& cl = claims_[c];
      if (cfg_.mode == kai_claims_mode::owning_queue && cl.accounted && !cl.per_pod && cl.owner == claim_none &&
          cl.consumers > 0 && !cl.orphan)
        throw state_error(error_id::state_out_of_order,
                          "claims: claim '" + cl.key + "' has restored consumers; call finish_snapshot first");
    }
    r.binding = record(p, claims, actions, false);
    return r;
  }

  /// Snapshot: the pod already holds these claims (status.reservedFor). No
  /// rule is checked and unlabelled claims get their owner in finish_snapshot.
  claim_binding_id restore(const claim_pod& p, std::span<const claim_id> claims) {
    validate(p, claims);
    if (p.queue == claim_none || p.queue >= queues_.size())
      throw unknown_entity_error(error_id::unknown_queue, "queue id", std::to_string(p.queue));
    return record(p, claims, nullptr, true);
  }

  /// Rule 2 and 6 for restored claims without a label: one queue -> owner;
  /// several -> orphan policy.
  void finish_snapshot(std::vector<claim_action>* actions = nullptr) {
    std::vector<std::pair<claim_id, claim_queue_id>> plan;
    std::map<claim_queue_id, resource_vector> incoming;
    for (claim_id c = 0; c < claims_.size(); ++c) {
      const auto& cl = claims_[c];
      if (cfg_.mode != kai_claims_mode::owning_queue || !cl.accounted || cl.per_pod || cl.owner != claim_none || cl.orphan ||
          cl.consumers == 0)
        continue;
      claim_queue_id to = claim_none;
      if (cl.uses.size() == 1)
        to = cl.uses.front().queue;
      else if (cfg_.orphans == claim_orphans::attribute)
        to = earliest_created_use(cl);
      plan.emplace_back(c, to);
      incoming[to].add_in_place(cl.charge);
    }
    for (const auto& [to, v] : incoming) {
      const resource_vector& base = to == claim_none ? deducted_ : queues_[to].charge;
      if (!detail::claims_can_add(base, v)) throw overflow_error("claims: snapshot charges overflow");
    }
    if (actions) detail::reserve_more(*actions, plan.size());
    for (const auto& [c, to] : plan) {
      auto& cl = claims_[c];
      if (to == claim_none) {
        cl.orphan = true;
        move_charge_to_deducted(cl);
        continue;
      }
      cl.owner = to;
      cl.source = cl.uses.size() == 1 ? claim_owner_source::first_bind : claim_owner_source::attributed;
      queues_[to].charge.add_in_place(cl.charge);
      cl.target = detail::claims_target::queue;
      cl.target_queue = to;
      if (actions) actions->push_back({claim_action_kind::upsert_label, c, to});
    }
  }

  /// The pod (gang) gave its reservations back. Unknown binding: unknown_entity_error.
  void unbind(claim_binding_id b, std::vector<claim_action>* actions = nullptr) {
    if (b >= bindings_.size() || !bindings_[b].live)
      throw unknown_entity_error(error_id::unknown_job, "claim binding", std::to_string(b));
    auto& bd = bindings_[b];
    if (actions) detail::reserve_more(*actions, bd.claims.size());
    for (const claim_id c : bd.claims) release_one(c, bd.queue, bd.count, actions);
    bd.live = false;
    bd.claims.clear();
    free_.push_back(b);  // capacity reserved in record(): never allocates
  }
  [[nodiscard]] std::size_t live_bindings() const noexcept { return bindings_.size() - free_.size(); }
  /// The queue and the claims of a live binding. Unknown: unknown_entity_error.
  [[nodiscard]] claim_queue_id binding_queue(claim_binding_id b) const { return binding_ref(b).queue; }
  [[nodiscard]] std::span<const claim_id> binding_claims(claim_binding_id b) const { return binding_ref(b).claims; }

 private:
  [[nodiscard]] const detail::claims_binding& binding_ref(claim_binding_id b) const {
    if (b >= bindings_.size() || !bindings_[b].live)
      throw unknown_entity_error(error_id::unknown_job, "claim binding", std::to_string(b));
    return bindings_[b];
  }
  [[nodiscard]] const detail::claims_queue& queue_at(claim_queue_id q) const {
    if (q >= queues_.size()) throw unknown_entity_error(error_id::unknown_queue, "queue id", std::to_string(q));
    return queues_[q];
  }
  [[nodiscard]] const detail::claims_claim& claim_ref(claim_id c) const {
    if (c >= claims_.size()) throw unknown_entity_error(error_id::unknown_entity, "claim id", std::to_string(c));
    return claims_[c];
  }
  [[nodiscard]] std::string pod_queue_name(const claim_pod& p) const {
    if (p.queue != claim_none && p.queue < queues_.size()) return queues_[p.queue].name;
    return std::string(p.queue_name);
  }

  void validate(const claim_pod& p, std::span<const claim_id> claims) const {
    if (p.count == 0) throw validation_error("pod " + std::string(p.id) + ".count", "must be at least 1");
    for (std::size_t i = 0; i < claims.size(); ++i) {
      const auto& cl = claim_ref(claims[i]);
      if (cl.key.compare(0, cl.slash, p.ns) != 0 || cl.slash != p.ns.size())
        throw validation_error(
            "pod " + std::string(p.ns) + "/" + std::string(p.id) + ".spec.resourceClaims[" + std::to_string(i) + "]",
            "claim '" + cl.key + "' is in another namespace than the pod ('" + std::string(p.ns) + "')");
      for (std::size_t k = 0; k < i; ++k)
        if (claims[k] == claims[i])
          throw validation_error(
              "pod " + std::string(p.ns) + "/" + std::string(p.id) + ".spec.resourceClaims[" + std::to_string(i) + "]",
              "claim '" + cl.key + "' is listed twice");
    }
  }

  void check_one(const claim_pod& p, claim_id c, decision& d) const {
    const auto& cl = claims_[c];
    // Rule 7: status.reservedFor holds at most max_consumers entries, with or
    // without a pod the host knows
    const std::uint64_t entries = static_cast<std::uint64_t>(cl.consumers) + cl.unmatched;
    if (entries + p.count > cfg_.max_consumers)
      d.add(reason{kai_claims_model_name,
                   "consumer_cap",
                   cl.key,
                   no_resource,
                   {},
                   p.count,
                   static_cast<amount>(entries),
                   cfg_.max_consumers,
                   reason_note("claim '$0' would pass its maximum number of consumers", {cl.key})});
    if (!cl.accounted || cl.per_pod) return;  // rule 4 / per-pod claims: no sharing checks
    if (cfg_.mode == kai_claims_mode::upstream) {
      if (cl.label.empty()) {
        d.add(reason{kai_claims_model_name,
                     "missing_queue_label",
                     cl.key,
                     no_resource,
                     {},
                     0,
                     0,
                     0,
                     reason_note("shared GPU claim '$0' has no $1 label", {cl.key, cfg_.queue_label_key})});
      } else if (cl.label != pod_queue_name(p)) {
        d.add(reason{kai_claims_model_name,
                     "queue_label_mismatch",
                     cl.key,
                     no_resource,
                     {},
                     0,
                     0,
                     0,
                     reason_note("shared GPU claim '$0' is labelled for queue '$1', the pod is in '$2'",
                                 {cl.key, cl.label, pod_queue_name(p)})});
      }
      return;
    }
    if (cl.owner == claim_none || cl.owner == p.queue) return;  // pod's queue owns it or becomes the owner
    const auto& owner = queues_[cl.owner];
    if (!owner.shares)
      d.add(reason{
          kai_claims_model_name,
          "sharing_opted_out",
          cl.key,
          no_resource,
          {},
          0,
          0,
          0,
          reason_note("claim '$0' is owned by queue '$1', which does not share its claims", {cl.key, owner.name})});
    if (cfg_.locking == claim_locking::deny_foreign &&
        (!p.preemptible || (cfg_.min_runtime_locks && p.min_runtime_protected)))
      d.add(reason{kai_claims_model_name,
                   "foreign_non_preemptible",
                   cl.key,
                   no_resource,
                   {},
                   0,
                   0,
                   0,
                   reason_note("claim '$0' is owned by queue '$1'; a $2 pod of another queue could keep it locked",
                               {cl.key, owner.name, p.preemptible ? "min-runtime protected" : "non-preemptible"})});
  }

  // Appends a binding; the only throwing steps come before any change.
  claim_binding_id record(const claim_pod& p, std::span<const claim_id> claims, std::vector<claim_action>* actions,
                          bool restoring) {
    // 1. storage that may allocate
    claim_binding_id b;
    bool fresh = false;
    if (free_.empty()) {
      bindings_.emplace_back();
      b = static_cast<claim_binding_id>(bindings_.size() - 1);
      fresh = true;
    } else {
      b = free_.back();
    }
    auto undo_slot = [&] {
      if (fresh) bindings_.pop_back();
    };
    try {
      if (fresh) detail::reserve_more(free_, bindings_.size() - free_.size());
      bindings_[b].claims.assign(claims.begin(), claims.end());
      for (const claim_id c : claims) {
        auto& uses = claims_[c].uses;
        if (uses.size() == uses.capacity()) uses.reserve(uses.size() * 2 + 1);
      }
      if (actions) detail::reserve_more(*actions, 2 * claims.size());
    } catch (...) {
      undo_slot();
      throw;
    }
    // 2. charges (checked; rolled back on overflow)
    std::size_t applied = 0;
    try {
      for (; applied < claims.size(); ++applied) charge_on_bind(claims[applied], p, restoring, true);
    } catch (...) {
      for (std::size_t k = 0; k < applied; ++k) charge_on_bind(claims[k], p, restoring, false);
      bindings_[b].claims.clear();
      undo_slot();
      throw;
    }
    // 3. no-fail bookkeeping
    if (!fresh) free_.pop_back();
    auto& bd = bindings_[b];
    bd.live = true;
    bd.queue = p.queue;
    bd.count = p.count;
    const std::uint64_t seq = ++seq_;
    for (const claim_id c : claims) {
      auto& cl = claims_[c];
      if (cfg_.mode == kai_claims_mode::owning_queue && cl.accounted && cl.owner == claim_none && !cl.orphan && !restoring) {
        cl.owner = p.queue;  // rule 2: the first pod that binds it
        cl.source = cl.per_pod ? claim_owner_source::per_pod : claim_owner_source::first_bind;
      }
      bool found = false;
      for (auto& u : cl.uses)
        if (u.queue == p.queue) {
          u.count += p.count;
          u.earliest_created = std::min(u.earliest_created, p.created_ms);
          found = true;
        }
      if (!found) cl.uses.push_back({p.queue, p.count, seq, p.created_ms});  // capacity reserved above
      cl.consumers += p.count;
      if (restoring) cl.unmatched -= std::min(cl.unmatched, p.count);  // restored pods are reservedFor entries
      if (cl.pinned && cl.owner == p.queue) {
        cl.pinned = false;
        if (actions) actions->push_back({claim_action_kind::unpinned, c, p.queue});
      }
      // every bind request names the owner the engine recorded (racing rule)
      if (actions && cfg_.mode == kai_claims_mode::owning_queue && cl.accounted && cl.owner != claim_none &&
          cl.source != claim_owner_source::label)
        actions->push_back({claim_action_kind::upsert_label, c, cl.owner});
    }
    return b;
  }

  // apply=true adds the bind's charge, apply=false takes it back (rollback).
  void charge_on_bind(claim_id c, const claim_pod& p, bool restoring, bool apply) {
    auto& cl = claims_[c];
    if (!cl.accounted) return;
    if (cfg_.mode == kai_claims_mode::upstream) {
      // KAI today: every consuming pod is charged the claim's devices
      auto& qc = queues_[p.queue].charge;
      resource_vector v = cl.charge;
      for (const auto& e : cl.charge) v.set(e.id, detail::checked_mul<amount>(e.value, p.count));
      if (apply) {
        if (!detail::claims_can_add(qc, v))
          throw overflow_error("claims: charge of claim '" + cl.key + "' overflows queue '" + queues_[p.queue].name +
                               "'");
        qc.add_in_place(v);
      } else {
        qc.sub_in_place(v);
      }
      return;
    }
    if (cl.consumers > 0) return;                     // rule 1: charged once, by the first reservation
    if (restoring && cl.owner == claim_none) return;  // resolved in finish_snapshot
    const claim_queue_id to = cl.owner != claim_none ? cl.owner : (cl.orphan ? claim_none : p.queue);
    resource_vector& target = to == claim_none ? deducted_ : queues_[to].charge;
    if (apply) {
      if (!detail::claims_can_add(target, cl.charge))
        throw overflow_error("claims: charge of claim '" + cl.key + "' overflows " +
                             (to == claim_none ? std::string("deducted") : "queue '" + queues_[to].name + "'"));
      target.add_in_place(cl.charge);
      cl.target = to == claim_none ? detail::claims_target::deducted : detail::claims_target::queue;
      cl.target_queue = to;
    } else {
      target.sub_in_place(cl.charge);
      cl.target = detail::claims_target::none;
      cl.target_queue = claim_none;
    }
  }

  void release_one(claim_id c, claim_queue_id q, std::uint32_t n, std::vector<claim_action>* actions) noexcept {
    auto& cl = claims_[c];
    for (std::size_t i = 0; i < cl.uses.size(); ++i)
      if (cl.uses[i].queue == q) {
        cl.uses[i].count -= n;
        if (cl.uses[i].count == 0) {
          cl.uses[i] = cl.uses.back();
          cl.uses.pop_back();
        }
        break;
      }
    cl.consumers -= n;
    if (cfg_.mode == kai_claims_mode::upstream) {
      if (cl.accounted) {
        resource_vector v = cl.charge;                                                  // inline storage: no allocation
        for (const auto& e : cl.charge) v.set(e.id, e.value * static_cast<amount>(n));  // was added at bind: exact
        queues_[q].charge.sub_in_place(v);
      }
      return;
    }
    if (cl.consumers == 0) {
      // rule 8: the charge leaves with the last reservation
      if (cl.target == detail::claims_target::queue)
        queues_[cl.target_queue].charge.sub_in_place(cl.charge);
      else if (cl.target == detail::claims_target::deducted)
        deducted_.sub_in_place(cl.charge);
      cl.target = detail::claims_target::none;
      cl.target_queue = claim_none;
      cl.orphan = false;  // nobody holds it: the next binder owns it
      if (cl.pinned && actions) actions->push_back({claim_action_kind::unpinned, c, cl.owner});
      cl.pinned = false;
      return;
    }
    if (!cl.accounted || cl.per_pod || cl.owner == claim_none || cl.owner != q) return;
    bool owner_left = true;
    for (const auto& u : cl.uses)
      if (u.queue == cl.owner) owner_left = false;
    if (!owner_left) return;
    // rule 5: the owner's last pod left, foreign pods keep the claim bound
    if (cfg_.locking == claim_locking::transfer) {
      const claim_queue_id to = earliest_other_use(cl, cl.owner);
      auto& from_charge = queues_[cl.owner].charge;
      auto& to_charge = queues_[to].charge;
      if (detail::claims_can_add(to_charge, cl.charge)) {
        if (cl.target == detail::claims_target::queue) {
          from_charge.sub_in_place(cl.charge);
          to_charge.add_in_place(cl.charge);  // no overflow (checked), no new dimension beyond inline storage
          cl.target_queue = to;
        }
        cl.owner = to;
        cl.source = claim_owner_source::transferred;
        if (actions) actions->push_back({claim_action_kind::upsert_label, c, to});
        return;
      }
    }
    if (!cl.pinned) {
      cl.pinned = true;
      if (actions) actions->push_back({claim_action_kind::pinned, c, cl.owner});
    }
  }

  void move_charge_to_deducted(detail::claims_claim& cl) {
    deducted_.add_in_place(cl.charge);
    cl.target = detail::claims_target::deducted;
    cl.target_queue = claim_none;
  }

  [[nodiscard]] static claim_queue_id earliest_other_use(const detail::claims_claim& cl, claim_queue_id not_q) {
    claim_queue_id best = claim_none;
    std::uint64_t seq = std::numeric_limits<std::uint64_t>::max();
    for (const auto& u : cl.uses)
      if (u.queue != not_q && u.first_seq < seq) {
        seq = u.first_seq;
        best = u.queue;
      }
    return best;
  }
  [[nodiscard]] claim_queue_id earliest_created_use(const detail::claims_claim& cl) const {
    const detail::claims_use* best = nullptr;
    for (const auto& u : cl.uses)
      if (!best || u.earliest_created < best->earliest_created ||
          (u.earliest_created == best->earliest_created && queues_[u.queue].name < queues_[best->queue].name))
        best = &u;
    return best ? best->queue : claim_none;
  }

  kai_claims_config cfg_;
  resource_registry reg_;
  std::vector<detail::claims_queue> queues_;
  std::unordered_map<std::string, claim_queue_id, detail::string_hash, std::equal_to<>> queue_ids_;
  std::vector<detail::claims_claim> claims_;
  std::unordered_map<std::string, claim_id, detail::string_hash, std::equal_to<>> claim_ids_;
  std::unordered_map<std::string, bool, detail::string_hash, std::equal_to<>> class_flags_;
  std::vector<detail::claims_binding> bindings_;
  std::vector<claim_binding_id> free_;
  resource_vector deducted_;
  std::uint64_t seq_ = 0;
};

// ---- policy adapter ---------------------------------------------------------------

/// quota::policy over a kai_claims_model: job.claims are claim names ("name" in
/// job.ns, or "namespace/name"), job.queue the pod's queue, job.pods the
/// reservations each claim gets, job.preemptible the locking trait.
class kai_claims_policy {
 public:
  explicit kai_claims_policy(kai_claims_config cfg = {}) : model_(std::move(cfg)) {}
  /// With the host's registry (kai_claims_model(cfg, registry)): charges in its ids.
  kai_claims_policy(kai_claims_config cfg, resource_registry host) : model_(std::move(cfg), std::move(host)) {}

  [[nodiscard]] std::string_view policy_name() const noexcept { return kai_claims_model_name; }
  [[nodiscard]] kai_claims_model& model() noexcept { return model_; }
  [[nodiscard]] const kai_claims_model& model() const noexcept { return model_; }

  [[nodiscard]] decision check(const job& j) const {
    std::vector<claim_id> ids;
    const claim_pod p = pod_of(j, model_.find_queue(j.queue), ids);
    return model_.check(p, ids);
  }
  /// Duplicate id: state_error; denied: state_error naming the rules; nothing changes.
  void commit(const job& j) {
    // first (one lookup, the duplicate test too): a failure before the bind erases the entry
    const auto [at, inserted] = bindings_pool_.emplace(bindings_, j.id, bound{});
    if (!inserted) throw state_error(error_id::state_duplicate, "claims: job '" + j.id + "' is already bound");
    std::vector<claim_action> acts;
    claim_bind_result r;
    try {
      if (j.queue.empty()) throw validation_error("job " + j.id + ".queue", "empty queue");
      std::vector<claim_id> ids;
      const claim_queue_id existing = model_.find_queue(j.queue);
      claim_pod p = pod_of(j, existing, ids);
      {
        const decision d = model_.check(p, ids);
        if (d.denied()) throw state_error(error_id::state_conflict, "claims: job '" + j.id + "': " + to_string(d));
      }
      p.queue = model_.queue(j.queue);
      acts.reserve(2 * ids.size());
      detail::reserve_more(actions_, 2 * ids.size());
      r = model_.bind(p, ids, &acts);
    } catch (...) {
      bindings_pool_.erase(bindings_, at);
      throw;
    }
    at->second = bound{r.binding, ++seq_};
    actions_.insert(actions_.end(), acts.begin(), acts.end());
  }
  void release(std::string_view id) {
    auto it = bindings_.find(id);
    if (it == bindings_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    model_.unbind(it->second.binding, &actions_);
    bindings_pool_.erase(bindings_, it);
  }
  /// Claims decide ownership, not room: by default there is nobody to
  /// preempt (opt-out and locking are about who may share). With
  /// kai_claims_config::owner_evicts the job's queue may evict its claims: the
  /// jobs of other queues bound to a claim the job names and its queue owns,
  /// or to a pinned claim its queue owns (kept bound by foreign pods only),
  /// newest bind first, non-preemptible ones included (rule `owner_evicts`,
  /// entity the claim). A queue the model has not seen owns nothing.
  void victims(const job& j, std::vector<victim>& out) const {
    if (!model_.config().owner_evicts || model_.config().mode != kai_claims_mode::owning_queue) return;
    const claim_queue_id q = model_.find_queue(j.queue);
    if (q == claim_none) return;
    std::vector<claim_id> named;
    (void)pod_of(j, q, named);  // unknown claims: unknown_entity_error, as in check
    auto wanted = [&](claim_id c) {
      if (model_.owner(c) != q) return false;
      if (model_.pinned(c)) return true;
      return std::find(named.begin(), named.end(), c) != named.end();
    };
    std::vector<std::pair<std::uint64_t, std::pair<const std::string*, claim_id>>> found;
    for (const auto& [id, b] : bindings_) {
      if (model_.binding_queue(b.binding) == q) continue;
      for (const claim_id c : model_.binding_claims(b.binding))
        if (wanted(c)) {
          found.push_back({b.seq, {&id, c}});
          break;
        }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& f : found)
      out.push_back(victim{*f.second.first, kai_claims_model_name, "owner_evicts",
                           std::string(model_.claim_key(f.second.second))});
  }

  // ---- charges (quota/capabilities.hpp) ----
  /// What committing j would change in the queues' charges (a what-if on a
  /// copy of the model; nothing when j names no claim or would be refused).
  void charges_after_commit(const job& j, std::vector<queue_charge>& out) const {
    if (j.claims.empty()) return;
    kai_claims_policy next = *this;
    try {
      next.commit(j);
    } catch (const error&) {
      return;  // check() refuses it: no charge
    }
    charge_diff(next, out);
  }
  /// What releasing the job would change in the queues' charges.
  void charges_after_release(std::string_view id, std::vector<queue_charge>& out) const {
    const auto it = bindings_.find(id);
    if (it == bindings_.end() || model_.binding_claims(it->second.binding).empty()) return;
    kai_claims_policy next = *this;
    next.release(id);
    charge_diff(next, out);
  }
  /// Every queue charged now, and the cluster's deduction (queue "").
  void current_charges(std::vector<queue_charge>& out) const {
    for (claim_queue_id q = 0; q < model_.queue_count(); ++q)
      if (!model_.charge_of(q).empty())
        out.push_back({std::string(model_.queue_name(q)), {}, passed_on(model_.charge_of(q))});
    if (!model_.deducted().empty()) out.push_back({std::string(), {}, passed_on(model_.deducted())});
  }
  // ---- shared allocations (quota/capabilities.hpp) ----
  /// The claims j names, each once: key "namespace/name", amount the claim's
  /// devices in the host's terms (on_node), node the allocation's node.
  /// Claims the model does not know are left out (check() refuses them).
  void shared_allocations(const job& j, std::vector<shared_allocation>& out) const {
    const std::size_t first = out.size();
    for (const std::string& n : j.claims) {
      if (n.empty()) continue;
      const std::string key = n.find('/') == std::string::npos ? (j.ns.empty() ? "default" : j.ns) + "/" + n : n;
      const claim_id c = model_.find_claim(key);
      if (c == claim_none) continue;
      bool seen = false;
      for (std::size_t i = first; i < out.size() && !seen; ++i) seen = out[i].key == key;
      if (!seen) out.push_back({key, on_node(model_.claim_devices(c)), std::string(model_.claim_node(c))});
    }
  }
  /// The claims reserved by pods this policy did not bind (pods restored
  /// with the model's snapshot, which the host does not run).
  void held_allocations(std::vector<shared_allocation>& out) const {
    std::vector<std::uint8_t> ours(model_.claim_count(), 0);
    for (const auto& [id, b] : bindings_)
      for (const claim_id c : model_.binding_claims(b.binding)) ours[c] = 1;
    for (claim_id c = 0; c < model_.claim_count(); ++c)
      if (model_.consumers(c) > 0 && !ours[c])
        out.push_back(
            {std::string(model_.claim_key(c)), on_node(model_.claim_devices(c)), std::string(model_.claim_node(c))});
  }
  /// Devices in the host's node terms: a class named in charge_as counts as
  /// that resource, a GPU class as nvidia.com/gpu; other classes are devices
  /// the host does not track and are left out.
  [[nodiscard]] resource_vector on_node(std::span<const std::pair<std::string, std::int64_t>> devices) const {
    resource_vector out;
    const auto& reg = model_.registry();
    for (const auto& [cls, count] : devices) {
      const auto m = model_.config().charge_as.find(cls);
      std::optional<resource_id> id;
      if (m != model_.config().charge_as.end())
        id = reg.find(m->second);
      else if (detail::claims_kai_gpu_class(cls))
        id = resources::nvidia_gpu;
      if (id) out.set(*id, detail::checked_add(out.get(*id), count));
    }
    return out;
  }

  /// A charge in the other models' terms (kai_claims_config::charge_as).
  [[nodiscard]] resource_vector passed_on(const resource_vector& v) const {
    resource_vector out;
    const auto& reg = model_.registry();
    for (const auto& e : v) {
      const std::string_view name = reg.name(e.id);
      const auto m = model_.config().charge_as.find(name);
      std::optional<resource_id> id;
      if (m != model_.config().charge_as.end())
        id = reg.find(m->second);
      else if (name.find('/') == std::string_view::npos && detail::claims_kai_gpu_class(name))
        id = resources::nvidia_gpu;
      else
        id = e.id;
      if (!id) throw unknown_entity_error(error_id::unknown_resource, "resource", m->second);
      out.set(*id, detail::checked_add(out.get(*id), e.value));
    }
    return out;
  }

  /// Actions (label upserts, pin reports) for the host since the last clear.
  [[nodiscard]] const std::vector<claim_action>& actions() const noexcept { return actions_; }
  void clear_actions() noexcept { actions_.clear(); }

 private:
  // the queues whose charge differs in `next`, in the other models' terms
  void charge_diff(const kai_claims_policy& next, std::vector<queue_charge>& out) const {
    const auto& a = model_;
    const auto& b = next.model_;
    for (claim_queue_id q = 0; q < b.queue_count(); ++q) {
      const resource_vector none;
      const resource_vector& before = q < a.queue_count() ? a.charge_of(q) : none;
      if (before == b.charge_of(q)) continue;
      out.push_back({std::string(b.queue_name(q)), passed_on(before), passed_on(b.charge_of(q))});
    }
    if (!(a.deducted() == b.deducted()))
      out.push_back({std::string(), passed_on(a.deducted()), passed_on(b.deducted())});
  }
  claim_pod pod_of(const job& j, claim_queue_id q, std::vector<claim_id>& ids) const {
    ids.reserve(j.claims.size());
    for (std::size_t i = 0; i < j.claims.size(); ++i) {
      const std::string& n = j.claims[i];
      if (n.empty()) throw validation_error("job " + j.id + ".claims[" + std::to_string(i) + "]", "empty claim name");
      const std::string key = n.find('/') == std::string::npos ? (j.ns.empty() ? "default" : j.ns) + "/" + n : n;
      ids.push_back(model_.claim_at(key));
    }
    claim_pod p;
    p.id = j.id;
    p.ns = j.ns.empty() ? std::string_view("default") : std::string_view(j.ns);
    p.queue = q;
    p.queue_name = j.queue;
    p.preemptible = j.preemptible;
    p.created_ms = j.created_ms;
    p.count = j.pods > 0 ? static_cast<std::uint32_t>(j.pods) : 1u;
    return p;
  }

  struct bound {
    claim_binding_id binding;
    std::uint64_t seq;  // bind order, for victims (newest first)
  };
  kai_claims_model model_;
  std::uint64_t seq_ = 0;
  using binding_map = std::unordered_map<std::string, bound, detail::string_hash, std::equal_to<>>;
  binding_map bindings_;
  detail::node_pool<binding_map> bindings_pool_;  // a bind after an unbind allocates no node
  std::vector<claim_action> actions_;
};

static_assert(policy<kai_claims_policy>);
static_assert(charge_aware<kai_claims_policy>);
static_assert(allocation_sharing<kai_claims_policy>);

}  // namespace quota
