// SPDX-License-Identifier: Apache-2.0
// Tests of quota/kai_claims.hpp: ownership and accounting of shared DRA claims.
#include <quota/kai_claims.hpp>
#include <quota/kai_claims_json.hpp>

#include <random>
#include <string>
#include <vector>

#include "quota_catch.hpp"

using namespace quota;

namespace {

// A claim with `n` allocated devices of `cls` (one allocation result each).
claim_spec gpu_claim(std::string name, std::string label = "", std::int64_t n = 1, std::string cls = "gpu.nvidia.com",
                     std::string ns = "default") {
  claim_spec s;
  s.ns = std::move(ns);
  s.name = std::move(name);
  s.queue_label = std::move(label);
  s.allocated = true;
  s.requests.push_back(claim_device{cls, n, false, false, {}});
  for (std::int64_t i = 0; i < n; ++i) s.allocation.push_back(claim_device{cls, 1, false, false, {}});
  return s;
}

claim_pod pod(std::string_view id, claim_queue_id q, bool preemptible = true) {
  claim_pod p;
  p.id = id;
  p.queue = q;
  p.preemptible = preemptible;
  return p;
}

amount gpus(const kai_claims_model& m, claim_queue_id q) {
  const auto id = m.registry().find("gpu.nvidia.com");
  return id ? m.charge_of(q).get(*id) : 0;
}

bool has_action(const std::vector<claim_action>& a, claim_action_kind k, claim_id c, claim_queue_id q) {
  for (const auto& x : a)
    if (x.kind == k && x.claim == c && x.queue == q) return true;
  return false;
}

}  // namespace

TEST_CASE("kai_claims: two pods of one queue sharing one claim are charged once, from the allocation result") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("shared", "", 2));
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  auto r1 = m.bind(pod("p1", a), ids);
  auto r2 = m.bind(pod("p2", a), ids);
  REQUIRE(r1.verdict.allowed());
  REQUIRE(r2.verdict.allowed());
  CHECK(m.consumers(c) == 2);
  CHECK(gpus(m, a) == 2);  // the claim's two devices, not 2 per pod
  CHECK(m.allocated_total() == m.charged_total());
}

TEST_CASE("kai_claims: consumed capacities of the allocation result are charged per class") {
  kai_claims_model m;
  claim_spec s = gpu_claim("cap", "", 1);
  s.allocation[0].capacity.push_back({"memory", 40LL << 30});
  const auto c = m.add_claim(s);
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  REQUIRE(m.bind(pod("p", a), ids).verdict.allowed());
  CHECK(m.charge_of(a).get(m.registry().at("gpu.nvidia.com/memory")) == (40LL << 30));
}

TEST_CASE("kai_claims: an unallocated claim is charged its exact-count request; All mode waits for the allocation") {
  kai_claims_model m;
  claim_spec s;
  s.name = "pending";
  s.requests.push_back(claim_device{"gpu.nvidia.com", 3, false, false, {}});
  s.requests.push_back(claim_device{"gpu.nvidia.com", 1, true, false, {}});
  const auto c = m.add_claim(s);
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  REQUIRE(m.bind(pod("p", a), ids).verdict.allowed());
  CHECK(gpus(m, a) == 3);
}

TEST_CASE("kai_claims: an existing queue label wins over the first binder and is never rewritten") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("labelled", "b"));
  const auto a = m.queue("a");
  const auto b = m.find_queue("b");
  REQUIRE(b != claim_none);
  CHECK(m.owner(c) == b);
  std::vector<claim_action> acts;
  const claim_id ids[] = {c};
  REQUIRE(m.bind(pod("pa", a), ids, &acts).verdict.allowed());
  CHECK(m.owner(c) == b);
  CHECK(m.owner_source(c) == claim_owner_source::label);
  CHECK(gpus(m, b) == 1);
  CHECK(gpus(m, a) == 0);
  CHECK(acts.empty());  // no upsert for a labelled claim
}

TEST_CASE("kai_claims: racing - the first binder owns the claim and every later bind carries that owner") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("race"));
  const auto a = m.queue("a");
  const auto b = m.queue("b");
  const claim_id ids[] = {c};
  std::vector<claim_action> first, second;
  REQUIRE(m.bind(pod("pa", a), ids, &first).verdict.allowed());
  CHECK(m.owner(c) == a);
  CHECK(m.owner_source(c) == claim_owner_source::first_bind);
  CHECK(has_action(first, claim_action_kind::upsert_label, c, a));
  // queue b's bind request is created later but may be handled by the binder first:
  // it names the same owner, so the label is right whichever is applied first.
  REQUIRE(m.bind(pod("pb", b), ids, &second).verdict.allowed());
  CHECK(has_action(second, claim_action_kind::upsert_label, c, a));
  CHECK_FALSE(has_action(second, claim_action_kind::upsert_label, c, b));
  CHECK(gpus(m, a) == 1);
  CHECK(gpus(m, b) == 0);
}

TEST_CASE("kai_claims: opt-out - a foreign pod is denied with a reason naming the owner") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("private", "a"));
  m.set_sharing("a", false);
  const auto a = m.find_queue("a");
  const auto b = m.queue("b");
  const claim_id ids[] = {c};
  const auto r = m.bind(pod("pb", b), ids);
  REQUIRE(r.verdict.denied());
  REQUIRE(r.verdict.has_rule("sharing_opted_out", "kai_claims"));
  CHECK(r.verdict.reasons()[0].entity == "default/private");
  CHECK(r.verdict.reasons()[0].message.str().find("'a'") != std::string::npos);
  CHECK(m.consumers(c) == 0);
  CHECK(m.bind(pod("pa", a), ids).verdict.allowed());  // the owner's own pods
  m.set_sharing("a", true);
  CHECK(m.bind(pod("pb", b), ids).verdict.allowed());
}

TEST_CASE("kai_claims: non-accounted device classes get no owner, no charge and no sharing checks") {
  SECTION("per-class flag") {
    kai_claims_model m;
    m.set_class_accounted("nic.example.com", false);
    const auto c = m.add_claim(gpu_claim("nic", "", 1, "nic.example.com"));
    const auto a = m.queue("a");
    const auto b = m.queue("b");
    const claim_id ids[] = {c};
    CHECK_FALSE(m.accounted(c));
    REQUIRE(m.bind(pod("pa", a), ids).verdict.allowed());
    REQUIRE(m.bind(pod("pb", b, false), ids).verdict.allowed());  // no locking check either
    CHECK(m.owner(c) == claim_none);
    CHECK(m.charge_of(a).is_zero());
    CHECK(m.allocated_total().is_zero());
  }
  SECTION("config predicate, flag wins over it") {
    kai_claims_config cfg;
    cfg.accounted_class = [](std::string_view n) { return n == "gpu.nvidia.com"; };
    kai_claims_model m(cfg);
    m.set_class_accounted("fpga.example.com", true);
    CHECK(m.class_accounted("gpu.nvidia.com"));
    CHECK_FALSE(m.class_accounted("imex.nvidia.com"));
    CHECK(m.class_accounted("fpga.example.com"));
    // a claim mixing classes is charged only for the accounted part
    claim_spec s = gpu_claim("mixed", "", 1);
    s.requests.push_back(claim_device{"imex.nvidia.com", 1, false, false, {}});
    s.allocation.push_back(claim_device{"imex.nvidia.com", 1, false, false, {}});
    const auto c = m.add_claim(s);
    const auto a = m.queue("a");
    const claim_id ids[] = {c};
    REQUIRE(m.bind(pod("pa", a), ids).verdict.allowed());
    CHECK(gpus(m, a) == 1);
    CHECK_FALSE(m.registry().find("imex.nvidia.com").has_value());
  }
  SECTION("flags only before claims are added") {
    kai_claims_model m;
    (void)m.add_claim(gpu_claim("x"));
    REQUIRE_THROWS_AS(m.set_class_accounted("gpu.nvidia.com", false), state_error);
  }
}

TEST_CASE("kai_claims: locking deny_foreign - the seed's example: B's non-preemptible pod may not share A's claim") {
  kai_claims_model m;  // default locking
  const auto c = m.add_claim(gpu_claim("a-claim", "a"));
  const auto a = m.find_queue("a");
  const auto b = m.queue("b");
  const claim_id ids[] = {c};
  const auto denied = m.bind(pod("b-np", b, false), ids);
  REQUIRE(denied.verdict.has_rule("foreign_non_preemptible"));
  CHECK(m.consumers(c) == 0);
  // min runtime protection locks too, configurably
  claim_pod mr = pod("b-mr", b);
  mr.min_runtime_protected = true;
  CHECK(m.check(mr, ids).has_rule("foreign_non_preemptible"));
  // the owner's own non-preemptible pod is fine, and foreign preemptible ones too
  auto ra = m.bind(pod("a-np", a, false), ids);
  REQUIRE(ra.verdict.allowed());
  REQUIRE(m.bind(pod("b-p", b), ids).verdict.allowed());
  // A's pod finishes: B's preemptible pod keeps the claim; it is reported pinned, A still pays
  std::vector<claim_action> acts;
  m.unbind(ra.binding, &acts);
  CHECK(m.pinned(c));
  CHECK(has_action(acts, claim_action_kind::pinned, c, a));
  CHECK(gpus(m, a) == 1);
  CHECK(m.owner(c) == a);

  kai_claims_config cfg;
  cfg.min_runtime_locks = false;
  kai_claims_model m2(cfg);
  const auto c2 = m2.add_claim(gpu_claim("a-claim", "a"));
  claim_pod mr2 = pod("b-mr", m2.queue("b"));
  mr2.min_runtime_protected = true;
  const claim_id ids2[] = {c2};
  CHECK(m2.check(mr2, ids2).allowed());
}

TEST_CASE("kai_claims: locking pin - foreign non-preemptible pods may share; a claim left to them is pinned") {
  kai_claims_config cfg;
  cfg.locking = claim_locking::pin;
  kai_claims_model m(cfg);
  const auto c = m.add_claim(gpu_claim("a-claim", "a"));
  const auto a = m.find_queue("a");
  const auto b = m.queue("b");
  const claim_id ids[] = {c};
  auto ra = m.bind(pod("a1", a), ids);
  REQUIRE(m.bind(pod("b-np", b, false), ids).verdict.allowed());
  std::vector<claim_action> acts;
  m.unbind(ra.binding, &acts);
  CHECK(m.pinned(c));
  CHECK(has_action(acts, claim_action_kind::pinned, c, a));
  CHECK(gpus(m, a) == 1);  // still charged to its owner
  acts.clear();
  REQUIRE(m.bind(pod("a2", a), ids, &acts).verdict.allowed());
  CHECK_FALSE(m.pinned(c));
  CHECK(has_action(acts, claim_action_kind::unpinned, c, a));
}

TEST_CASE("kai_claims: locking transfer - ownership moves to the remaining queue that bound first") {
  kai_claims_config cfg;
  cfg.locking = claim_locking::transfer;
  kai_claims_model m(cfg);
  const auto c = m.add_claim(gpu_claim("t", "", 2));
  const auto a = m.queue("a");
  const auto b = m.queue("b");
  const auto cq = m.queue("c");
  const claim_id ids[] = {c};
  auto ra = m.bind(pod("a1", a), ids);
  REQUIRE(m.bind(pod("b1", b), ids).verdict.allowed());
  REQUIRE(m.bind(pod("c1", cq, false), ids).verdict.allowed());  // no locking denial under transfer
  std::vector<claim_action> acts;
  m.unbind(ra.binding, &acts);
  CHECK(m.owner(c) == b);
  CHECK(m.owner_source(c) == claim_owner_source::transferred);
  CHECK(has_action(acts, claim_action_kind::upsert_label, c, b));
  CHECK(gpus(m, a) == 0);
  CHECK(gpus(m, b) == 2);
  CHECK_FALSE(m.pinned(c));
  CHECK(m.allocated_total() == m.charged_total());
}

TEST_CASE("kai_claims: orphans deduct - a claim bound by several queues without a label is charged to no queue") {
  kai_claims_model m;  // default: deduct
  const auto c = m.add_claim(gpu_claim("orphan", "", 4));
  const auto a = m.queue("a");
  const auto b = m.queue("b");
  const claim_id ids[] = {c};
  const auto ba = m.restore(pod("pa", a), ids);
  const auto bb = m.restore(pod("pb", b), ids);
  // binding before the snapshot is finished is out of order
  REQUIRE_THROWS_AS(m.bind(pod("px", a), ids), state_error);
  std::vector<claim_action> acts;
  m.finish_snapshot(&acts);
  CHECK(m.orphan(c));
  CHECK(m.owner(c) == claim_none);
  CHECK(m.deducted().get(m.registry().at("gpu.nvidia.com")) == 4);
  CHECK(gpus(m, a) == 0);
  CHECK(gpus(m, b) == 0);
  CHECK(acts.empty());
  CHECK(m.allocated_total() == m.charged_total());
  m.unbind(ba);
  m.unbind(bb);
  CHECK(m.deducted().is_zero());
  CHECK_FALSE(m.orphan(c));
  REQUIRE(m.bind(pod("pb2", b), ids).verdict.allowed());
  CHECK(m.owner(c) == b);  // the next binder owns it
}

TEST_CASE("kai_claims: orphans attribute - earliest pod creation, then queue name") {
  kai_claims_config cfg;
  cfg.orphans = claim_orphans::attribute;
  kai_claims_model m(cfg);
  const auto c1 = m.add_claim(gpu_claim("o1"));
  const auto c2 = m.add_claim(gpu_claim("o2"));
  const auto a = m.queue("a");
  const auto z = m.queue("z");
  const auto y = m.queue("y");
  const claim_id i1[] = {c1};
  const claim_id i2[] = {c2};
  claim_pod pa = pod("pa", a), pz = pod("pz", z), py = pod("py", y);
  pa.created_ms = 500;
  pz.created_ms = 100;  // earliest
  py.created_ms = 100;
  (void)m.restore(pa, i1);
  (void)m.restore(pz, i1);
  (void)m.restore(pz, i2);
  (void)m.restore(py, i2);  // same creation time as pz: y < z by name
  std::vector<claim_action> acts;
  m.finish_snapshot(&acts);
  CHECK(m.owner(c1) == z);
  CHECK(m.owner(c2) == y);
  CHECK(m.owner_source(c1) == claim_owner_source::attributed);
  CHECK(has_action(acts, claim_action_kind::upsert_label, c1, z));
  CHECK(gpus(m, z) == 1);
  CHECK(gpus(m, y) == 1);
  CHECK(m.deducted().is_zero());
}

TEST_CASE("kai_claims: a restored unlabelled claim used by one queue is owned by that queue") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("solo"));
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  (void)m.restore(pod("p1", a), ids);
  (void)m.restore(pod("p2", a), ids);
  std::vector<claim_action> acts;
  m.finish_snapshot(&acts);
  CHECK(m.owner(c) == a);
  CHECK_FALSE(m.orphan(c));
  CHECK(has_action(acts, claim_action_kind::upsert_label, c, a));
  CHECK(gpus(m, a) == 1);
}

TEST_CASE("kai_claims: consumer cap - 255 and 256 reservations fit, the 257th does not; a gang is denied whole") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("busy"));
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  std::vector<std::string> names;
  for (int i = 0; i < 255; ++i) REQUIRE(m.bind(pod("p", a), ids).verdict.allowed());
  CHECK(m.consumers(c) == 255);
  // a gang of 2 would make 257: denied as a whole, nothing reserved
  claim_pod gang = pod("gang", a);
  gang.count = 2;
  const auto g = m.bind(gang, ids);
  REQUIRE(g.verdict.has_rule("consumer_cap"));
  CHECK(g.verdict.reasons()[0].requested == 2);
  CHECK(g.verdict.reasons()[0].used == 255);
  CHECK(g.verdict.reasons()[0].limit == 256);
  CHECK(m.consumers(c) == 255);
  const auto last = m.bind(pod("p256", a), ids);
  REQUIRE(last.verdict.allowed());
  CHECK(m.consumers(c) == 256);
  CHECK(m.bind(pod("p257", a), ids).verdict.has_rule("consumer_cap"));
  m.unbind(last.binding);
  gang.count = 1;
  CHECK(m.check(gang, ids).allowed());
  CHECK(gpus(m, a) == 1);
}

TEST_CASE("kai_claims: release - the charge leaves the owner with the last reservation; the owner is kept") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("r", "", 2));
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  auto r1 = m.bind(pod("p1", a), ids);
  auto r2 = m.bind(pod("p2", a), ids);
  m.unbind(r1.binding);
  CHECK(gpus(m, a) == 2);
  m.unbind(r2.binding);
  CHECK(gpus(m, a) == 0);
  CHECK(m.consumers(c) == 0);
  CHECK(m.owner(c) == a);  // its label was written: it stays the owner
  REQUIRE_THROWS_AS(m.unbind(r2.binding), unknown_entity_error);
  CHECK(m.live_bindings() == 0);
}

TEST_CASE("kai_claims: a deleted owner queue - deduct (default) and transfer") {
  SECTION("deduct") {
    kai_claims_model m;
    const auto c = m.add_claim(gpu_claim("d", "a", 3));
    const auto a = m.find_queue("a");
    const auto b = m.queue("b");
    const claim_id ids[] = {c};
    REQUIRE(m.bind(pod("pa", a), ids).verdict.allowed());
    auto rb = m.bind(pod("pb", b), ids);
    m.remove_queue("a");
    CHECK_FALSE(m.queue_live(a));
    CHECK(m.owner(c) == claim_none);
    CHECK(m.orphan(c));
    CHECK(m.deducted().get(m.registry().at("gpu.nvidia.com")) == 3);
    CHECK(gpus(m, a) == 0);
    CHECK(m.allocated_total() == m.charged_total());
    REQUIRE_THROWS_AS(m.remove_queue("a"), unknown_entity_error);
    m.unbind(rb.binding);
    CHECK(m.consumers(c) == 1);  // a's pod is still bound until released
  }
  SECTION("transfer") {
    kai_claims_config cfg;
    cfg.owner_deleted = claim_owner_deleted::transfer;
    kai_claims_model m(cfg);
    const auto c = m.add_claim(gpu_claim("d", "a", 3));
    const auto a = m.find_queue("a");
    const auto b = m.queue("b");
    const claim_id ids[] = {c};
    REQUIRE(m.bind(pod("pa", a), ids).verdict.allowed());
    REQUIRE(m.bind(pod("pb", b), ids).verdict.allowed());
    std::vector<claim_action> acts;
    m.remove_queue("a", &acts);
    CHECK(m.owner(c) == b);
    CHECK(has_action(acts, claim_action_kind::upsert_label, c, b));
    CHECK(gpus(m, b) == 3);
    CHECK(m.deducted().is_zero());
  }
  SECTION("an unused claim of a deleted queue goes to its next binder") {
    kai_claims_model m;
    const auto c = m.add_claim(gpu_claim("idle", "a"));
    const auto b = m.queue("b");
    m.remove_queue("a");
    CHECK_FALSE(m.orphan(c));
    const claim_id ids[] = {c};
    REQUIRE(m.bind(pod("pb", b), ids).verdict.allowed());
    CHECK(m.owner(c) == b);
    CHECK(gpus(m, b) == 1);
  }
  SECTION("unknown queue") {
    kai_claims_model m;
    REQUIRE_THROWS_AS(m.remove_queue("nope"), unknown_entity_error);
  }
}

TEST_CASE("kai_claims: a per-pod template claim is owned by the pod's queue, without sharing checks") {
  kai_claims_model m;
  claim_spec s = gpu_claim("pod-x-gpu-abc12", "other");
  s.per_pod = true;
  const auto c = m.add_claim(s);
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  REQUIRE(m.bind(pod("x", a, false), ids).verdict.allowed());
  CHECK(m.owner(c) == a);
  CHECK(m.owner_source(c) == claim_owner_source::per_pod);
  CHECK(gpus(m, a) == 1);
}

TEST_CASE("kai_claims: kai-strict - a shared GPU claim needs a queue label equal to the pod's queue") {
  kai_claims_config cfg;
  cfg.mode = kai_claims_mode::upstream;
  kai_claims_model m(cfg);
  const auto none = m.add_claim(gpu_claim("nolabel"));
  const auto wrong = m.add_claim(gpu_claim("wrong", "b"));
  const auto right = m.add_claim(gpu_claim("right", "a"));
  const auto nic = m.add_claim(gpu_claim("nic", "", 1, "nic.example.com"));
  claim_spec t = gpu_claim("tmpl");
  t.per_pod = true;
  const auto tmpl = m.add_claim(t);
  const auto a = m.queue("a");
  const claim_id i_none[] = {none}, i_wrong[] = {wrong}, i_right[] = {right}, i_nic[] = {nic}, i_tmpl[] = {tmpl};
  CHECK(m.check(pod("p", a), i_none).has_rule("missing_queue_label"));
  CHECK(m.check(pod("p", a), i_wrong).has_rule("queue_label_mismatch"));
  CHECK(m.check(pod("p", a), i_right).allowed());
  CHECK(m.check(pod("p", a), i_nic).allowed());   // not a GPU class by KAI's rule
  CHECK(m.check(pod("p", a), i_tmpl).allowed());  // template claims are not checked
  CHECK_FALSE(m.accounted(nic));
  // KAI's GPU rule: "gpu" anywhere in the class name, any case
  CHECK(m.class_accounted("MyGPUClass"));
  CHECK_FALSE(m.class_accounted("gp-u"));
}

TEST_CASE("kai_claims: kai-strict charges a shared claim to every pod; the design charges it once") {
  kai_claims_config strict;
  strict.mode = kai_claims_mode::upstream;
  kai_claims_model k(strict);
  kai_claims_model d;
  for (kai_claims_model* m : {&k, &d}) {
    const auto c = m->add_claim(gpu_claim("shared", "a", 2));
    const auto a = m->find_queue("a") == claim_none ? m->queue("a") : m->find_queue("a");
    const claim_id ids[] = {c};
    auto r1 = m->bind(pod("p1", a), ids);
    REQUIRE(r1.verdict.allowed());
    REQUIRE(m->bind(pod("p2", a), ids).verdict.allowed());
    claim_pod gang = pod("g", a);
    gang.count = 3;
    REQUIRE(m->bind(gang, ids).verdict.allowed());
    m->unbind(r1.binding);
  }
  const auto ka = k.find_queue("a");
  const auto da = d.find_queue("a");
  CHECK(gpus(k, ka) == 2 * 4);  // 4 pods left, each charged the claim's 2 devices
  CHECK(gpus(d, da) == 2);
  CHECK(d.allocated_total() == d.charged_total());
  CHECK_FALSE(k.allocated_total() == k.charged_total());
}

TEST_CASE("kai_claims: kai-strict counts requests - ExactCount count (1 when unset), All as 1") {
  kai_claims_config strict;
  strict.mode = kai_claims_mode::upstream;
  kai_claims_model k(strict);
  claim_spec s;
  s.name = "req";
  s.queue_label = "a";
  s.requests.push_back(claim_device{"gpu.nvidia.com", 0, false, false, {}});
  s.requests.push_back(claim_device{"gpu.nvidia.com", 4, false, false, {}});
  s.requests.push_back(claim_device{"gpu.nvidia.com", 0, true, false, {}});
  const auto c = k.add_claim(s);
  CHECK(k.claim_charge(c).get(k.registry().at("gpu.nvidia.com")) == 6);
}

TEST_CASE("kai_claims: bad input is a typed error naming the object, and nothing changes") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("ok"));
  const auto a = m.queue("a");
  SECTION("duplicate claim") {
    REQUIRE_THROWS_AS(m.add_claim(gpu_claim("ok")), state_error);
  }
  SECTION("malformed claim lists every problem") {
    claim_spec s = gpu_claim("bad");
    s.requests[0].count = -1;
    s.allocation[0].device_class = "";
    s.allocation[0].capacity.push_back({"memory", -5});
    try {
      (void)m.add_claim(s);
      FAIL("expected validation_error");
    } catch (const validation_error& e) {
      CHECK(e.problems().size() == 3);
      CHECK(e.problems()[0].path == "claim default/bad.spec.devices.requests[0].count");
    }
    CHECK(m.find_claim("default/bad") == claim_none);
  }
  SECTION("missing claim") {
    try {
      (void)m.claim_at("default/missing");
      FAIL("expected unknown_entity_error");
    } catch (const unknown_entity_error& e) {
      CHECK(e.name() == "default/missing");
    }
    const claim_id ids[] = {7};
    REQUIRE_THROWS_AS(m.bind(pod("p", a), ids), unknown_entity_error);
  }
  SECTION("claim in another namespace") {
    const auto other = m.add_claim(gpu_claim("elsewhere", "", 1, "gpu.nvidia.com", "team-b"));
    const claim_id ids[] = {c, other};
    try {
      (void)m.bind(pod("p", a), ids);
      FAIL("expected validation_error");
    } catch (const validation_error& e) {
      CHECK(std::string(e.what()).find("team-b/elsewhere") != std::string::npos);
      CHECK(e.problems()[0].path == "pod default/p.spec.resourceClaims[1]");
    }
  }
  SECTION("unknown binding") {
    REQUIRE_THROWS_AS(m.unbind(42), unknown_entity_error);
  }
  CHECK(m.consumers(c) == 0);
  CHECK(m.owner(c) == claim_none);
  CHECK(m.charge_of(a).is_zero());
  CHECK(m.live_bindings() == 0);
}

TEST_CASE("kai_claims: an overflowing charge is an overflow_error and changes nothing") {
  kai_claims_model m;
  claim_spec big = gpu_claim("big");
  big.allocation[0].count = std::numeric_limits<std::int64_t>::max();
  const auto c1 = m.add_claim(gpu_claim("one"));
  const auto c2 = m.add_claim(big);
  const auto a = m.queue("a");
  const claim_id ids[] = {c1, c2};
  REQUIRE_THROWS_AS(m.bind(pod("p", a), ids), overflow_error);
  CHECK(m.consumers(c1) == 0);
  CHECK(m.consumers(c2) == 0);
  CHECK(m.owner(c1) == claim_none);
  CHECK(gpus(m, a) == 0);
  CHECK(m.live_bindings() == 0);
  const claim_id only[] = {c2};
  REQUIRE(m.bind(pod("p", a), only).verdict.allowed());
}

TEST_CASE("kai_claims: conservation holds over random bind/release sequences for every policy") {
  std::mt19937 rng(20261123);
  for (int variant = 0; variant < 6; ++variant) {
    kai_claims_config cfg;
    cfg.locking = static_cast<claim_locking>(variant % 3);
    cfg.orphans = variant < 3 ? claim_orphans::deduct : claim_orphans::attribute;
    cfg.owner_deleted = variant % 2 ? claim_owner_deleted::transfer : claim_owner_deleted::deduct;
    cfg.max_consumers = 6;
    kai_claims_model m(cfg);
    m.set_class_accounted("nic.example.com", false);
    std::vector<claim_id> claims;
    for (int i = 0; i < 12; ++i) {
      const std::string label = i % 4 == 0 ? "q" + std::to_string(i % 3) : "";
      auto s = gpu_claim("c" + std::to_string(i), label, 1 + i % 3, i % 5 == 4 ? "nic.example.com" : "gpu.nvidia.com");
      s.per_pod = i % 7 == 6;
      claims.push_back(m.add_claim(s));
    }
    std::vector<claim_queue_id> queues;
    for (int i = 0; i < 4; ++i) queues.push_back(m.queue("q" + std::to_string(i)));
    m.set_sharing("q3", false);
    std::vector<claim_binding_id> live;
    // a snapshot first: unlabelled claims restored from several queues (orphans)
    for (int i = 0; i < 6; ++i) {
      const claim_id ids[] = {claims[static_cast<std::size_t>(1 + i % 3)]};
      claim_pod p = pod("old", queues[static_cast<std::size_t>(i % 4)]);
      p.created_ms = 1000 - i;
      live.push_back(m.restore(p, ids));
    }
    m.finish_snapshot();
    REQUIRE(m.allocated_total() == m.charged_total());
    if (cfg.orphans == claim_orphans::deduct) CHECK_FALSE(m.deducted().is_zero());
    for (int step = 0; step < 3000; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        const auto k = rng() % live.size();
        m.unbind(live[k]);
        live[k] = live.back();
        live.pop_back();
      } else {
        claim_pod p = pod("p", queues[rng() % queues.size()], rng() % 4 != 0);
        p.count = 1 + static_cast<std::uint32_t>(rng() % 2);
        std::vector<claim_id> ids{claims[rng() % claims.size()]};
        const auto extra = claims[rng() % claims.size()];
        if (extra != ids[0] && rng() % 2) ids.push_back(extra);
        auto r = m.bind(p, ids);
        if (r.verdict.allowed()) live.push_back(r.binding);
      }
      if (step % 500 == 499 && m.queue_live(queues[1])) m.remove_queue("q1");
      REQUIRE(m.allocated_total() == m.charged_total());
      for (const auto q : queues) REQUIRE_FALSE(m.charge_of(q).any_negative());
    }
    for (const auto b : live) m.unbind(b);
    CHECK(m.charged_total().is_zero());
    CHECK(m.deducted().is_zero());
  }
}

TEST_CASE("kai_claims: policy adapter maps jobs to claim uses") {
  kai_claims_policy pol;
  auto& m = pol.model();
  const auto c = m.add_claim(gpu_claim("shared", "a"));
  m.set_sharing("a", false);
  job ja;
  ja.id = "default/pa";
  ja.queue = "a";
  ja.claims = {"shared"};
  job jb = ja;
  jb.id = "default/pb";
  jb.queue = "b";  // a queue the model has not seen
  jb.claims = {"default/shared"};
  CHECK(pol.check(ja).allowed());
  const auto d = pol.check(jb);
  REQUIRE(d.has_rule("sharing_opted_out", "kai_claims"));
  REQUIRE_THROWS_AS(pol.commit(jb), state_error);
  CHECK(m.find_queue("b") == claim_none);
  pol.commit(ja);
  CHECK(m.consumers(c) == 1);
  REQUIRE_THROWS_AS(pol.commit(ja), state_error);
  job missing = ja;
  missing.id = "x";
  missing.claims = {"nope"};
  REQUIRE_THROWS_AS(pol.check(missing), unknown_entity_error);
  job gang = ja;
  gang.id = "gang";
  gang.pods = 256;
  CHECK(pol.check(gang).has_rule("consumer_cap"));
  pol.release("default/pa");
  CHECK(m.consumers(c) == 0);
  REQUIRE_THROWS_AS(pol.release("default/pa"), unknown_entity_error);
  std::vector<victim> v;
  pol.victims(jb, v);
  CHECK(v.empty());
}

TEST_CASE("kai_claims: policy adapter reports the first-bind owner to every later job") {
  kai_claims_policy pol;
  auto& m = pol.model();
  const auto c = m.add_claim(gpu_claim("race"));
  job ja;
  ja.id = "pa";
  ja.queue = "a";
  ja.claims = {"race"};
  job jb = ja;
  jb.id = "pb";
  jb.queue = "b";
  pol.commit(ja);
  pol.commit(jb);
  const auto a = m.find_queue("a");
  REQUIRE(pol.actions().size() == 2);
  CHECK(pol.actions()[0] == claim_action{claim_action_kind::upsert_label, c, a});
  CHECK(pol.actions()[1] == claim_action{claim_action_kind::upsert_label, c, a});
  pol.clear_actions();
  CHECK(pol.actions().empty());
}

namespace {
std::string data(const char* f) {
  return std::string(QUOTA_SOURCE_DIR) + "/tests/data/kai_claims/" + f;
}

// Loads classes, claims and pods; restores the pods that claims' reservedFor names.
struct cluster {
  kai_claims_model m;
  std::vector<claim_pod_object> pods;
  explicit cluster(kai_claims_config cfg = {}) : m(std::move(cfg)) {
    load_device_classes(m, load_json_file(data("deviceclasses.json")));
    const auto claims = load_resource_claims(m, load_json_file(data("claims.json")));
    pods = load_claim_pods(m, load_json_file(data("pods.json")));
    for (const auto& p : pods) {
      std::vector<claim_id> held;
      for (const auto& key : p.claims) {
        const auto c = m.claim_at(key);
        for (const auto& o : claims)
          if (o.spec.ns + "/" + o.spec.name == key)
            for (const auto& r : o.reserved_for)
              if (r == p.name) held.push_back(c);
      }
      if (!held.empty()) (void)m.restore(p.as_pod(m.queue(p.queue)), held);
    }
    m.finish_snapshot();
  }
  const claim_pod_object& pod_named(std::string_view n) const {
    for (const auto& p : pods)
      if (p.name == n) return p;
    throw std::runtime_error("no pod");
  }
  std::vector<claim_id> ids_of(const claim_pod_object& p) const {
    std::vector<claim_id> ids;
    for (const auto& k : p.claims) ids.push_back(m.claim_at(k));
    return ids;
  }
};
}  // namespace

TEST_CASE("kai_claims: ResourceClaim v1 objects load requests, allocation results, capacities and reservedFor") {
  kai_claims_model m;
  const auto objs = load_resource_claims(m, load_json_file(data("claims.json")));
  REQUIRE(objs.size() == 4);
  CHECK(objs[0].reserved_for == std::vector<std::string>{"pod0", "pod1"});
  const auto labelled = m.claim_at("gpu-test3/team-a-gpus");
  CHECK(m.owner(labelled) == m.find_queue("team-a"));
  CHECK(m.claim_charge(labelled).get(m.registry().at("gpu.nvidia.com")) == 2);
  CHECK(m.claim_charge(labelled).get(m.registry().at("gpu.nvidia.com/memory")) == 2 * (80LL << 30));
  // firstAvailable: the allocation says which alternative was used
  const auto any = m.claim_at("gpu-test3/any-gpu");
  CHECK(m.claim_charge(any).get(m.registry().at("mig.nvidia.com")) == 2);
  CHECK_FALSE(m.claim_charge(any).has(m.registry().at("gpu.nvidia.com")));
  CHECK(objs[2].spec.per_pod);
  CHECK_FALSE(objs[0].spec.per_pod);
}

TEST_CASE("kai_claims: loaded cluster - orphan deducted, non-accounted template claim, foreign non-preemptible denied") {
  cluster k;
  auto& m = k.m;
  const auto single = m.claim_at("gpu-test3/single-gpu");
  CHECK(m.orphan(single));
  CHECK(m.deducted().get(m.registry().at("gpu.nvidia.com")) == 1);
  CHECK(m.consumers(single) == 2);
  const auto channel = m.claim_at("gpu-test3/pod2-channel-x7k2p");
  CHECK_FALSE(m.accounted(channel));
  // pod3 (team-b, non-preemptible) may not share team-a's claim; pod4 (team-a) may
  const auto& p3 = k.pod_named("pod3");
  CHECK_FALSE(p3.preemptible);
  const auto ids3 = k.ids_of(p3);
  CHECK(m.check(p3.as_pod(m.queue(p3.queue)), ids3).has_rule("foreign_non_preemptible"));
  const auto& p4 = k.pod_named("pod4");
  const auto ids4 = k.ids_of(p4);
  REQUIRE(m.bind(p4.as_pod(m.queue(p4.queue)), ids4).verdict.allowed());
  CHECK(gpus(m, m.find_queue("team-a")) == 2);
  CHECK(m.allocated_total() == m.charged_total());
  // pod2's template claim resolves through status.resourceClaimStatuses
  CHECK(k.pod_named("pod2").claims == std::vector<std::string>{"gpu-test3/pod2-channel-x7k2p"});
  CHECK(k.pod_named("pod1").created_ms + 3000 == k.pod_named("pod0").created_ms);
}

TEST_CASE("kai_claims: loaded cluster with orphans attributed goes to the earliest pod's queue") {
  kai_claims_config cfg;
  cfg.orphans = claim_orphans::attribute;
  cluster k(cfg);
  const auto single = k.m.claim_at("gpu-test3/single-gpu");
  CHECK(k.m.owner(single) == k.m.find_queue("team-c"));  // pod1 was created before pod0
  CHECK(k.m.deducted().is_zero());
}

TEST_CASE("kai_claims: malformed claim documents list every problem and load nothing") {
  kai_claims_model m;
  try {
    (void)load_resource_claims(m, load_json_file(data("bad_claims.json")));
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& pr = e.problems();
    REQUIRE(pr.size() == 4);
    CHECK(pr[0].path == "[0].spec.devices.requests[0].exactly.allocationMode");
    CHECK(pr[1].path == "[0].spec.devices.requests[1].exactly.count");
    CHECK(pr[2].path == "[0].status.allocation.devices.results[0].request");
    CHECK(pr[3].message.find("ns1/fine") != std::string::npos);
  }
  CHECK(m.claim_count() == 0);
  REQUIRE_THROWS_AS(load_resource_claims(m, json::parse(R"({"kind":"ResourceClaim","metadata":{}})")),
                    validation_error);
  REQUIRE_THROWS_AS(
      load_device_classes(
          m, json::parse(
                 R"({"kind":"DeviceClass","metadata":{"name":"x","annotations":{"quota.dev/accounted":"maybe"}}})")),
      validation_error);
}

TEST_CASE("kai_claims: a pod naming a missing claim or an unresolved template claim is an error naming the pod") {
  kai_claims_model m;
  (void)load_resource_claims(m, load_json_file(data("claims.json")));
  try {
    (void)load_claim_pods(m, load_json_file(data("bad_pods.json")));
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].message.find("gpu-test3/lost") != std::string::npos);
    CHECK(e.problems()[0].message.find("gpu-test3/does-not-exist") != std::string::npos);
    CHECK(e.problems()[1].path == "[0].spec.resourceClaims[1]");
  }
}

TEST_CASE("kai_claims: introspection JSON names each claim's owner and charge and each queue's charge") {
  kai_claims_policy pol;
  auto& m = pol.model();
  m.set_class_accounted("nic.example.com", false);
  (void)m.add_claim(gpu_claim("shared", "", 2));
  (void)m.add_claim(gpu_claim("nic", "", 1, "nic.example.com"));
  (void)m.add_claim(gpu_claim("labelled", "b"));
  job ja;
  ja.id = "pa";
  ja.queue = "a";
  ja.claims = {"shared", "nic"};
  pol.commit(ja);
  job jb = ja;
  jb.id = "pb";
  jb.queue = "b";
  jb.claims = {"default/shared", "labelled"};
  pol.commit(jb);

  json j;
  to_json(j, pol);
  CHECK(j["mode"] == "owning_queue");
  const json& shared = j["claims"]["default/shared"];
  CHECK(shared["owner"] == "a");
  CHECK(shared["owner_source"] == "first_bind");
  CHECK(shared["consumers"] == 2);
  CHECK(shared["charge"] == json{{"gpu.nvidia.com", 2}});
  CHECK(j["claims"]["default/nic"]["owner"].is_null());
  CHECK(j["claims"]["default/nic"]["accounted"] == false);
  CHECK(j["claims"]["default/labelled"]["owner_source"] == "label");
  CHECK(j["queues"]["a"]["charge"] == json{{"gpu.nvidia.com", 2}});
  CHECK(j["queues"]["b"]["charge"] == json{{"gpu.nvidia.com", 1}});
  CHECK(j["queues"]["a"]["shares"] == true);
  CHECK(j["deducted"] == json::object());
  // the first bind and pb's bind both carry the owner to the binder
  REQUIRE(j["actions"].size() == 2);
  CHECK(j["actions"][1] == json{{"action", "upsert_label"}, {"claim", "default/shared"}, {"queue", "a"}});
  CHECK(j.at(json::json_pointer("/claims/default~1shared/owner")) == "a");

  pol.release("pa");
  pol.release("pb");
  to_json(j, pol);
  CHECK(j["queues"]["a"]["charge"] == json::object());
  CHECK(j["claims"]["default/shared"]["consumers"] == 0);
}

namespace {
job claim_job(std::string id, std::string queue, std::vector<std::string> claims, bool preemptible = true) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.claims = std::move(claims);
  j.preemptible = preemptible;
  return j;
}
std::vector<std::string> victim_ids(const kai_claims_policy& pol, const job& j) {
  std::vector<victim> v;
  pol.victims(j, v);
  std::vector<std::string> ids;
  for (const auto& x : v) {
    CHECK(x.model == "kai_claims");
    CHECK(x.rule == "owner_evicts");
    ids.push_back(x.job_id);
  }
  return ids;
}
}  // namespace

TEST_CASE("kai_claims: owner_evicts - the owner queue may evict foreign jobs on its pinned claims, newest first") {
  kai_claims_config cfg;
  cfg.locking = claim_locking::pin;
  SECTION("off by default: no victims") {
    kai_claims_policy pol(cfg);
    (void)pol.model().add_claim(gpu_claim("shared"));
    pol.commit(claim_job("pa", "a", {"shared"}));
    pol.commit(claim_job("pb", "b", {"shared"}, false));
    pol.release("pa");
    CHECK(victim_ids(pol, claim_job("pa2", "a", {"shared"})).empty());
  }
  SECTION("on: foreign jobs keeping the owner's claim pinned, non-preemptible included") {
    cfg.owner_evicts = true;
    kai_claims_policy pol(cfg);
    auto& m = pol.model();
    const auto c = m.add_claim(gpu_claim("shared"));
    (void)m.add_claim(gpu_claim("other"));
    pol.commit(claim_job("pa", "a", {"shared"}));
    pol.commit(claim_job("pb", "b", {"shared"}, false));
    pol.commit(claim_job("pc", "c", {"shared"}));
    pol.commit(claim_job("po", "b", {"other"}));
    // a still has a pod on the claim: nothing pinned, and the new job names another claim
    CHECK(victim_ids(pol, claim_job("pa2", "a", {"other"})).empty());
    pol.release("pa");
    REQUIRE(m.pinned(c));
    CHECK(gpus(m, m.find_queue("a")) == 1);  // still charged to its owner
    // the owner's next job, whatever it names, may evict the claim's foreign jobs
    CHECK(victim_ids(pol, claim_job("pa2", "a", {})) == std::vector<std::string>{"pc", "pb"});
    std::vector<victim> v;
    pol.victims(claim_job("pa2", "a", {}), v);
    REQUIRE(v.size() == 2);
    CHECK(v[0].entity == "default/shared");
    // other queues own nothing here; an unknown queue owns nothing
    CHECK(victim_ids(pol, claim_job("pb2", "b", {"shared"})).empty());
    CHECK(victim_ids(pol, claim_job("x", "new-queue", {"shared"})).empty());
    REQUIRE_THROWS_AS(pol.victims(claim_job("y", "a", {"nope"}), v), unknown_entity_error);
    // evicting them releases the claim and the owner's charge
    pol.release("pc");
    pol.release("pb");
    CHECK(gpus(m, m.find_queue("a")) == 0);
    CHECK(victim_ids(pol, claim_job("pa2", "a", {})).empty());
  }
}

TEST_CASE("kai_claims: owner_evicts - an owner job denied by the consumer cap may evict foreign consumers") {
  kai_claims_config cfg;
  cfg.owner_evicts = true;
  cfg.max_consumers = 2;
  kai_claims_policy pol(cfg);
  (void)pol.model().add_claim(gpu_claim("shared", "a"));
  pol.commit(claim_job("pa", "a", {"shared"}));
  pol.commit(claim_job("pb", "b", {"shared"}));
  const job pa2 = claim_job("pa2", "a", {"shared"});
  REQUIRE(pol.check(pa2).has_rule("consumer_cap"));
  CHECK(victim_ids(pol, pa2) == std::vector<std::string>{"pb"});
  // b's job is denied too, but b owns nothing: it may not evict
  CHECK(victim_ids(pol, claim_job("pb2", "b", {"shared"})).empty());
  pol.release("pb");
  CHECK(pol.check(pa2).allowed());
}

TEST_CASE("kai_claims: owner_evicts has no effect in upstream mode") {
  kai_claims_config cfg;
  cfg.owner_evicts = true;
  cfg.mode = kai_claims_mode::upstream;
  kai_claims_policy pol(cfg);
  (void)pol.model().add_claim(gpu_claim("shared", "a"));
  pol.commit(claim_job("pa", "a", {"shared"}));
  CHECK(victim_ids(pol, claim_job("pa2", "a", {"shared"})).empty());
}

namespace {
// A claim of one allocation result of `count` devices (big counts without big vectors).
claim_spec counted_claim(std::string name, std::int64_t count, std::string label = "",
                         std::string cls = "gpu.nvidia.com") {
  claim_spec s = gpu_claim(std::move(name), std::move(label), 1, std::move(cls));
  s.requests[0].count = count;
  s.allocation[0].count = count;
  return s;
}
constexpr std::int64_t quarter_of_range = std::int64_t{1} << 62;  // two of them make 2^63: overflow
}  // namespace

TEST_CASE("kai_claims: configuration, queue, class and claim names are validated with errors naming the field") {
  kai_claims_config no_key;
  no_key.queue_label_key.clear();
  try {
    kai_claims_model bad(no_key);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "queue_label_key");
  }
  kai_claims_config no_cap;
  no_cap.max_consumers = 0;
  try {
    kai_claims_model bad(no_cap);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "max_consumers");
  }

  kai_claims_model m;
  CHECK_THROWS_AS(m.queue(""), validation_error);
  CHECK_THROWS_AS(m.set_class_accounted("", false), validation_error);
  CHECK(m.queue_count() == 0);

  claim_spec nameless;
  nameless.ns.clear();
  nameless.requests.push_back(claim_device{"Bad Class!", 1, false, false, {}});
  nameless.allocated = true;
  nameless.allocation.push_back(claim_device{"gpu.nvidia.com", 1, false, false, {{"mem ory", 1}, {"memory", 2}}});
  nameless.allocation.push_back(claim_device{"", 1, false, false, {{"memory", 1}}});
  try {
    (void)m.add_claim(nameless);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    REQUIRE(p.size() == 5);
    CHECK(p[0].path == "claim /.metadata.namespace");
    CHECK(p[1].path == "claim /.metadata.name");
    CHECK(p[2].path == "claim /.spec.devices.requests[0].deviceClassName");
    CHECK(p[2].message == "invalid device class name 'Bad Class!'");
    CHECK(p[3].path == "claim /.status.allocation.devices.results[0].consumedCapacity.mem ory");
    CHECK(p[3].message == "invalid capacity name");
    // a line without a class is reported once, not again for its capacity's name
    CHECK(p[4].path == "claim /.status.allocation.devices.results[1].deviceClassName");
  }
  CHECK(m.claim_count() == 0);
  CHECK(m.queue_count() == 0);
}

TEST_CASE("kai_claims: ids the model never issued are unknown_entity_errors and change nothing") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("c"));
  const auto a = m.queue("a");
  const claim_id ids[] = {c};
  CHECK_THROWS_AS((void)m.queue_name(99), unknown_entity_error);
  CHECK_THROWS_AS((void)m.charge_of(99), unknown_entity_error);
  CHECK_THROWS_AS(m.bind(pod("p", 99), ids), unknown_entity_error);
  CHECK_THROWS_AS(m.restore(pod("p", claim_none), ids), unknown_entity_error);
  CHECK_THROWS_AS(m.restore(pod("p", 99), ids), unknown_entity_error);
  CHECK(m.consumers(c) == 0);
  CHECK(m.live_bindings() == 0);
  const auto b = m.bind(pod("p", a), ids).binding;
  CHECK(m.binding_queue(b) == a);
  m.unbind(b);
  CHECK_THROWS_AS((void)m.binding_queue(b), unknown_entity_error);  // released
  CHECK_THROWS_AS((void)m.binding_claims(b + 1), unknown_entity_error);
  CHECK_THROWS_AS(m.unbind(b), unknown_entity_error);  // double release
  CHECK(m.consumers(c) == 0);
  CHECK(gpus(m, a) == 0);
}

TEST_CASE("kai_claims: a restored labelled claim is charged to its label's queue at once") {
  kai_claims_model m;
  const auto c = m.add_claim(gpu_claim("lab", "a", 2));
  const auto b = m.queue("b");
  const auto a = m.find_queue("a");
  REQUIRE(a != claim_none);  // the label made the queue
  const claim_id ids[] = {c};
  (void)m.restore(pod("pb", b), ids);  // a pod of another queue holds it
  CHECK(gpus(m, a) == 2);              // before finish_snapshot
  CHECK(gpus(m, b) == 0);
  std::vector<claim_action> acts;
  m.finish_snapshot(&acts);
  CHECK(acts.empty());  // the label is never rewritten
  CHECK(m.owner(c) == a);
  CHECK(m.owner_source(c) == claim_owner_source::label);
  CHECK(m.allocated_total() == m.charged_total());
}

TEST_CASE("kai_claims: finish_snapshot twice changes nothing the first one decided") {
  kai_claims_model m;
  const auto orphan = m.add_claim(gpu_claim("o"));
  const auto solo = m.add_claim(gpu_claim("s"));
  const auto a = m.queue("a"), b = m.queue("b");
  const claim_id both[] = {orphan, solo};
  const claim_id one[] = {orphan};
  (void)m.restore(pod("pa", a), both);
  (void)m.restore(pod("pb", b), one);
  m.finish_snapshot();
  REQUIRE(m.orphan(orphan));
  REQUIRE(m.owner(solo) == a);
  const auto deducted = m.deducted();
  const auto charge_a = m.charge_of(a);
  std::vector<claim_action> acts;
  m.finish_snapshot(&acts);
  CHECK(acts.empty());
  CHECK(m.orphan(orphan));
  CHECK(m.deducted() == deducted);
  CHECK(m.charge_of(a) == charge_a);
  CHECK(m.allocated_total() == m.charged_total());
}

TEST_CASE("kai_claims: orphans attribute - a later pod or a tie with a greater queue name does not take the claim") {
  kai_claims_config cfg;
  cfg.orphans = claim_orphans::attribute;
  kai_claims_model m(cfg);
  const auto c = m.add_claim(gpu_claim("o"));
  const auto b = m.queue("b"), cq = m.queue("c"), a = m.queue("a");
  claim_pod pb = pod("pb", b), pc = pod("pc", cq), pa = pod("pa", a);
  pb.created_ms = 1000;
  pc.created_ms = 1000;  // ties with b: "b" < "c"
  pa.created_ms = 5000;  // the smallest name, but created later
  const claim_id ids[] = {c};
  (void)m.restore(pb, ids);
  (void)m.restore(pc, ids);
  (void)m.restore(pa, ids);
  m.finish_snapshot();
  CHECK(m.owner(c) == b);
  CHECK(gpus(m, b) == 1);
  CHECK(m.allocated_total() == m.charged_total());
}

TEST_CASE("kai_claims: firstAvailable alternatives count only once allocated; kai-strict ignores them") {
  claim_spec s;
  s.name = "alt";
  s.requests.push_back(claim_device{"gpu.nvidia.com", 2, false, true, {}});
  s.requests.push_back(claim_device{"mig.nvidia.com", 3, false, true, {}});
  kai_claims_model design;
  const auto c = design.add_claim(s);
  CHECK(design.accounted(c));
  CHECK(design.claim_charge(c).is_zero());  // which alternative is used is not known yet

  kai_claims_config strict;
  strict.mode = kai_claims_mode::upstream;
  kai_claims_model kai(strict);
  const auto k = kai.add_claim(s);
  CHECK_FALSE(kai.accounted(k));  // KAI today reads `exactly` requests only
  // a class whose name merely starts with 'g' is no GPU class in KAI's rule
  CHECK_FALSE(kai.class_accounted("gateway.example.com"));
  CHECK(kai.class_accounted("example.com/GPU-large"));
}

TEST_CASE("kai_claims: kai-strict - an overflowing second claim rolls the first back; non-GPU claims are never charged") {
  kai_claims_config strict;
  strict.mode = kai_claims_mode::upstream;
  kai_claims_model m(strict);
  const auto big = m.add_claim(counted_claim("big", std::numeric_limits<std::int64_t>::max(), "a"));
  const auto small = m.add_claim(counted_claim("small", 1, "a", "other-gpu.example.com"));
  const auto nic = m.add_claim(counted_claim("nic", 4, "a", "nic.example.com"));
  const auto a = m.queue("a");
  const claim_id first[] = {big};
  REQUIRE(m.bind(pod("p1", a), first).verdict.allowed());
  const auto before = m.charge_of(a);
  const claim_id both[] = {small, big};
  CHECK_THROWS_AS(m.bind(pod("p2", a), both), overflow_error);
  CHECK(m.charge_of(a) == before);  // small's charge was taken back
  CHECK(m.consumers(small) == 0);
  CHECK(m.consumers(big) == 1);
  CHECK(m.live_bindings() == 1);

  const claim_id n[] = {nic};
  const auto r = m.bind(pod("p3", a), n);
  REQUIRE(r.verdict.allowed());  // not a GPU class: no label check either
  CHECK(m.charge_of(a) == before);
  m.unbind(r.binding);
  CHECK(m.charge_of(a) == before);
  CHECK(m.consumers(nic) == 0);
}

TEST_CASE("kai_claims: locking transfer keeps the claim with its owner, pinned, when the next queue would overflow") {
  kai_claims_config cfg;
  cfg.locking = claim_locking::transfer;
  kai_claims_model m(cfg);
  const auto held_by_b = m.add_claim(counted_claim("b-own", quarter_of_range, "b"));
  const auto shared = m.add_claim(counted_claim("shared", quarter_of_range));
  const auto a = m.queue("a"), b = m.find_queue("b");
  const claim_id sa[] = {shared};
  const claim_id sb[] = {held_by_b, shared};
  const auto ra = m.bind(pod("pa", a), sa).binding;
  REQUIRE(m.bind(pod("pb", b), sb).verdict.allowed());
  REQUIRE(gpus(m, b) == quarter_of_range);
  std::vector<claim_action> acts;
  m.unbind(ra, &acts);  // a's last pod leaves: b cannot take 2^62 more
  CHECK(m.owner(shared) == a);
  CHECK(m.pinned(shared));
  CHECK(has_action(acts, claim_action_kind::pinned, shared, a));
  CHECK_FALSE(has_action(acts, claim_action_kind::upsert_label, shared, b));
  CHECK(gpus(m, a) == quarter_of_range);
  CHECK(gpus(m, b) == quarter_of_range);  // (the cluster total, 2^63, is past int64 itself)
}

TEST_CASE("kai_claims: snapshot or queue-deletion charges that would overflow are overflow_errors and change nothing") {
  SECTION("finish_snapshot") {
    kai_claims_model m;
    const auto labelled = m.add_claim(counted_claim("lab", quarter_of_range, "a"));
    const auto unlabelled = m.add_claim(counted_claim("free", quarter_of_range));
    const auto a = m.find_queue("a");
    const claim_id ids[] = {labelled, unlabelled};
    (void)m.restore(pod("pa", a), ids);
    REQUIRE(gpus(m, a) == quarter_of_range);
    CHECK_THROWS_AS(m.finish_snapshot(), overflow_error);
    CHECK(m.owner(unlabelled) == claim_none);
    CHECK(gpus(m, a) == quarter_of_range);
  }
  SECTION("remove_queue into deducted") {
    kai_claims_model m;
    const auto orphan = m.add_claim(counted_claim("o", quarter_of_range));
    const auto owned = m.add_claim(counted_claim("x", quarter_of_range, "x"));
    const auto x = m.find_queue("x"), y = m.queue("y");
    const claim_id both[] = {orphan, owned};
    const claim_id one[] = {orphan};
    (void)m.restore(pod("px", x), both);
    (void)m.restore(pod("py", y), one);
    m.finish_snapshot();
    REQUIRE(m.deducted().get(m.registry().at("gpu.nvidia.com")) == quarter_of_range);
    try {
      m.remove_queue("x");
      FAIL("expected overflow_error");
    } catch (const overflow_error& e) {
      CHECK(std::string(e.what()).find("deducted") != std::string::npos);
    }
    CHECK(m.queue_live(x));
    CHECK(m.owner(owned) == x);
    CHECK(gpus(m, x) == quarter_of_range);
    CHECK(m.deducted().get(m.registry().at("gpu.nvidia.com")) == quarter_of_range);
  }
  SECTION("remove_queue transferring to the next consumer queue") {
    kai_claims_config cfg;
    cfg.owner_deleted = claim_owner_deleted::transfer;
    kai_claims_model m(cfg);
    const auto xs = m.add_claim(counted_claim("xs", quarter_of_range, "x"));
    const auto ys = m.add_claim(counted_claim("ys", quarter_of_range, "y"));
    const auto x = m.find_queue("x"), y = m.find_queue("y");
    const claim_id px_ids[] = {xs};
    const claim_id py_ids[] = {xs, ys};
    REQUIRE(m.bind(pod("px", x), px_ids).verdict.allowed());
    REQUIRE(m.bind(pod("py", y), py_ids).verdict.allowed());
    std::vector<claim_action> acts;
    try {
      m.remove_queue("x", &acts);
      FAIL("expected overflow_error");
    } catch (const overflow_error& e) {
      CHECK(std::string(e.what()).find("queue 'y'") != std::string::npos);
    }
    CHECK(acts.empty());
    CHECK(m.queue_live(x));
    CHECK(m.owner(xs) == x);
    CHECK(gpus(m, x) == quarter_of_range);
    CHECK(gpus(m, y) == quarter_of_range);
  }
}

TEST_CASE("kai_claims: a bind that overflows after a release leaves the bindings usable") {
  kai_claims_model m;
  const auto one = m.add_claim(gpu_claim("one"));
  const auto big = m.add_claim(counted_claim("big", std::numeric_limits<std::int64_t>::max()));
  const auto a = m.queue("a");
  const claim_id first[] = {one};
  REQUIRE(m.bind(pod("p2", a), first).verdict.allowed());  // a gpu charged: big cannot follow
  const auto r = m.bind(pod("p1", a), first);
  m.unbind(r.binding);  // its slot is free for the next bind
  const claim_id ids[] = {one, big};
  CHECK_THROWS_AS(m.bind(pod("p3", a), ids), overflow_error);
  CHECK(m.live_bindings() == 1);
  CHECK(m.consumers(one) == 1);
  CHECK(m.consumers(big) == 0);
  CHECK(gpus(m, a) == 1);
  const auto again = m.bind(pod("p4", a), first);
  REQUIRE(again.verdict.allowed());
  CHECK(m.live_bindings() == 2);
  CHECK(m.consumers(one) == 2);
  m.unbind(again.binding);
  CHECK(m.consumers(one) == 1);
  CHECK(gpus(m, a) == 1);
}

TEST_CASE("kai_claims: policy adapter rejects a job without a queue or with an empty claim name, binding nothing") {
  kai_claims_policy pol;
  (void)pol.model().add_claim(gpu_claim("c"));
  job j = claim_job("j", "", {"c"});
  try {
    pol.commit(j);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "job j.queue");
  }
  j.queue = "a";
  j.claims = {"c", ""};
  try {
    pol.commit(j);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "job j.claims[1]");
  }
  CHECK(pol.model().live_bindings() == 0);
  CHECK(pol.model().consumers(0) == 0);
  CHECK(pol.actions().empty());
  // the failed commits left no entry: the same id binds now
  j.claims = {"c"};
  pol.commit(j);
  CHECK(pol.model().live_bindings() == 1);
  pol.release("j");
  CHECK(pol.model().live_bindings() == 0);
}

TEST_CASE("kai_claims: malformed ResourceClaim fields are each named, and the model is unchanged") {
  kai_claims_model m;
  (void)m.add_claim(gpu_claim("existing"));
  const json doc = json::parse(R"([
    {"kind": 7, "metadata": {"name": "k"}, "spec": {"devices": {"requests": {"name": "r"}}}},
    {"metadata": {"name": "req"}, "spec": {"devices": {"requests": [
      {"name": "no-class", "exactly": {"count": 1}},
      {"name": "class-number", "exactly": {"deviceClassName": 5}},
      {"name": "count-text", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": "2"}},
      {"name": "first-object", "firstAvailable": {"name": "x"}},
      {"name": "first-empty", "firstAvailable": []}
    ]}}},
    {"metadata": {"name": "alloc"},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
     "status": {"allocation": {"devices": {"results": {"request": "r"}}},
                "reservedFor": ["pod-a", {"name": 3}, {"resource": "pods"}]}},
    {"metadata": {"name": "result-fields"},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
     "status": {"allocation": {"devices": {"results": [{"request": 4, "driver": "d", "pool": "p", "device": "x"}]}}}}
  ])");
  try {
    (void)load_resource_claims(m, doc);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    std::vector<std::string> paths;
    for (const auto& pr : e.problems()) paths.push_back(pr.path);
    CHECK(paths == std::vector<std::string>{
                       "[0].kind",
                       "[0].spec.devices.requests",
                       "[1].spec.devices.requests[0].exactly.deviceClassName",
                       "[1].spec.devices.requests[1].exactly.deviceClassName",
                       "[1].spec.devices.requests[2].exactly.count",
                       "[1].spec.devices.requests[3]",
                       "[1].spec.devices.requests[4]",
                       "[2].status.allocation.devices.results",
                       "[2].status.reservedFor[0].name",
                       "[2].status.reservedFor[1].name",
                       "[2].status.reservedFor[2].name",
                       "[3].status.allocation.devices.results[0].request",
                   });
  }
  CHECK(m.claim_count() == 1);
  CHECK(m.queue_count() == 0);
}

TEST_CASE("kai_claims: a single ResourceClaim document already loaded is named by its key") {
  kai_claims_model m;
  const json one = json::parse(R"({"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}})");
  REQUIRE(load_resource_claims(m, one).size() == 1);
  try {
    (void)load_resource_claims(m, one);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "ResourceClaim ns/c");
    CHECK(e.problems()[0].message == "claim 'ns/c' appears twice");
  }
  CHECK(m.claim_count() == 1);
}

TEST_CASE("kai_claims: only a controlling Pod owner makes a per-pod claim; odd labels and nulls are absent values") {
  kai_claims_model m;
  const auto objs = load_resource_claims(m, json::parse(R"([
    {"metadata": {"name": "not-controller", "labels": {"kai.scheduler/queue": 5},
                  "ownerReferences": [{"kind": "Pod", "name": "p"}, "junk"]},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}},
    {"metadata": {"name": "controller-text", "labels": "team-a",
                  "ownerReferences": [{"kind": "Pod", "name": "p", "controller": "true"}]},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
     "status": null},
    {"metadata": {"name": "controller-false", "ownerReferences": [{"kind": "Pod", "controller": false}]},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
     "status": {"allocation": {}}},
    {"metadata": {"name": "owners-object", "ownerReferences": {"kind": "Pod", "controller": true}},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}},
    {"metadata": {"name": "controlled", "labels": {"kai.scheduler/queue": "team-a"},
                  "ownerReferences": [{"kind": "Pod", "name": "p", "controller": true}]},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
  ])"));
  REQUIRE(objs.size() == 5);
  for (std::size_t i = 0; i < 4; ++i) {
    INFO(objs[i].spec.name);
    CHECK_FALSE(objs[i].spec.per_pod);
    CHECK(objs[i].spec.queue_label.empty());  // a label value or labels map of the wrong type is no label
  }
  CHECK(objs[0].spec.requests.size() == 1);
  CHECK_FALSE(objs[1].spec.allocated);  // "status": null is no status
  CHECK(objs[2].spec.allocated);        // an allocation without devices: allocated, no results
  CHECK(objs[2].spec.allocation.empty());
  CHECK(objs[4].spec.per_pod);
  CHECK(objs[4].spec.queue_label == "team-a");
  CHECK(m.owner(m.claim_at("default/controlled")) == claim_none);  // per-pod: the label does not own it
}

TEST_CASE("kai_claims: DeviceClass flags - true and false, from annotation or label; bad ones named, nothing set") {
  kai_claims_config cfg;
  cfg.accounted_class = [](std::string_view) { return false; };  // shard default: nothing accounted
  kai_claims_model m(cfg);
  const auto n = load_device_classes(m, json::parse(R"({"kind": "List", "items": [
    {"kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com", "annotations": {"quota.dev/accounted": "true"}}},
    {"kind": "DeviceClass", "metadata": {"name": "nic.example.com", "labels": {"quota.dev/accounted": "false"}}},
    {"kind": "DeviceClass", "metadata": {"name": "fpga.example.com"}}
  ]})"));
  CHECK(n == 2);
  CHECK(m.class_accounted("gpu.nvidia.com"));  // the class flag wins over the predicate
  CHECK_FALSE(m.class_accounted("nic.example.com"));
  CHECK_FALSE(m.class_accounted("fpga.example.com"));  // unflagged: the predicate decides

  kai_claims_model fresh;
  try {
    (void)load_device_classes(fresh, json::parse(R"([
      {"kind": 1, "metadata": {"name": "odd.example.com", "labels": {"quota.dev/accounted": "false"}}},
      {"kind": "DeviceClass", "metadata": {}},
      {"kind": "DeviceClass", "metadata": {"name": "ok.example.com", "labels": {"quota.dev/accounted": "false"}}}
    ])"));
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].path == "[0].kind");
    CHECK(e.problems()[1].path == "[1]");
    CHECK(e.problems()[1].message.find("metadata.name") != std::string::npos);
  }
  CHECK(fresh.class_accounted("ok.example.com"));  // nothing of the rejected document was applied
}

TEST_CASE("kai_claims: pod documents - preemptibility, timestamps and claim references are checked and named") {
  kai_claims_model m;
  (void)m.add_claim(gpu_claim("shared"));
  const auto ok = load_claim_pods(m, json::parse(R"([
    {"metadata": {"name": "p1", "labels": {"kai.scheduler/queue": "a", "kai.scheduler/preemptibility": "preemptible"},
                  "creationTimestamp": "2025-04-08T21:55:32.1234Z"},
     "spec": {"resourceClaims": [{"name": "x", "resourceClaimName": "shared"}]}},
    {"metadata": {"name": "p2", "labels": {"kai.scheduler/queue": "a"}, "creationTimestamp": "2025-04-08T21:55:32Z"}},
    {"metadata": {"name": "p3", "labels": {"kai.scheduler/queue": "a"}, "creationTimestamp": "2025-04-08T21:55:32.5Z"},
     "spec": {}}
  ])"));
  REQUIRE(ok.size() == 3);
  CHECK(ok[0].preemptible);
  CHECK(ok[0].claims == std::vector<std::string>{"default/shared"});
  CHECK(ok[0].created_ms - ok[1].created_ms == 123);  // fraction truncated to milliseconds
  CHECK(ok[2].created_ms - ok[1].created_ms == 500);  // and padded
  CHECK(ok[1].claims.empty());

  try {
    (void)load_claim_pods(m, json::parse(R"([
      {"metadata": {"name": "ts-number", "labels": {"kai.scheduler/queue": "a"}, "creationTimestamp": 17}},
      {"metadata": {"name": "rcs-object", "labels": {"kai.scheduler/queue": "a"}},
       "spec": {"resourceClaims": {"name": "x"}}},
      {"metadata": {"name": "refs", "labels": {"kai.scheduler/queue": "a"}},
       "spec": {"resourceClaims": [
         {"name": "by-number", "resourceClaimName": 3},
         {"name": "tmpl-number", "resourceClaimTemplateName": 4},
         {"resourceClaimTemplateName": "t"},
         {"name": "gen", "resourceClaimTemplateName": "t"},
         {"name": "gen2", "resourceClaimTemplateName": "t"}]},
       "status": {"resourceClaimStatuses": ["junk", {"name": "gen", "resourceClaimName": 9},
                                            {"name": "gen2", "resourceClaimName": "shared"}]}},
      {"metadata": {"name": "no-statuses", "labels": {"kai.scheduler/queue": "a"}},
       "spec": {"resourceClaims": [{"name": "gen", "resourceClaimTemplateName": "t"}]},
       "status": {"resourceClaimStatuses": {"name": "gen"}}}
    ])"));
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    std::vector<std::string> paths;
    for (const auto& pr : e.problems()) paths.push_back(pr.path);
    CHECK(paths == std::vector<std::string>{
                       "[0].metadata.creationTimestamp", "[1].spec.resourceClaims", "[2].spec.resourceClaims[0]",
                       "[2].spec.resourceClaims[1]",
                       "[2].spec.resourceClaims[2]",  // a template entry needs its name
                       "[2].spec.resourceClaims[3]",  // its generated name is not a string
                       "[3].spec.resourceClaims[0]",  // statuses not a list
                   });
  }
}

TEST_CASE("kai_claims: pod creationTimestamp must be an RFC 3339 UTC time with valid fields") {
  std::int64_t ms = -1;
  REQUIRE(detail::parse_rfc3339_utc_ms("1970-01-02T00:00:00Z", ms));
  CHECK(ms == 86400000);
  REQUIRE(detail::parse_rfc3339_utc_ms("0000-01-01T00:00:00Z", ms));  // proleptic Gregorian year 0
  CHECK(ms == -62167219200000);
  REQUIRE(detail::parse_rfc3339_utc_ms("2024-02-29T23:59:60Z", ms));  // leap day, leap second
  for (const char* bad : {
           "2025-04-08",                 // too short
           "yyyy-04-08T21:55:32Z",       // not numbers
           "2025-04-08T21:55:32+02:00",  // not UTC
           "2025-00-08T21:55:32Z",       // month 0
           "2025-13-08T21:55:32Z",       // month 13
           "2025-04-00T21:55:32Z",       // day 0
           "2025-04-32T21:55:32Z",       // day 32
           "2025-04-08T24:55:32Z",       // hour 24
           "2025-04-08T21:60:32Z",       // minute 60
           "2025-04-08T21:55:61Z",       // second 61
           "2025-04-08T21:55:32xZ",      // junk before the zone
           "2025-04-08T21:55:32.5xZ",    // junk after the fraction
           " 2025-04-08T21:55:32Z",      // leading blank
           "2025-04-08T21:55:3 Z",       // blank inside a field
           "+025-04-08T21:55:32Z",       // sign in the year
       }) {
    INFO(bad);
    ms = 42;
    CHECK_FALSE(detail::parse_rfc3339_utc_ms(bad, ms));
    CHECK(ms == 42);  // untouched
  }
}

TEST_CASE("kai_claims: the node of an allocation is read from its nodeSelector when it names one node") {
  kai_claims_model m;
  const auto claim = [](const char* name, const char* selector) {
    return json::parse(std::string(R"({"kind": "ResourceClaim", "metadata": {"name": ")") + name +
                       R"(", "namespace": "ns"},
      "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
      "status": {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "d", "pool": "p", "device": "g0"}]}, "nodeSelector": )" +
                       selector + "}}}");
  };
  (void)load_resource_claims(
      m,
      claim(
          "by-field",
          R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})"));
  (void)load_resource_claims(m, claim("by-label", R"({"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]}]})"));
  (void)load_resource_claims(m, claim("two-nodes", R"({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}]})"));
  (void)load_resource_claims(m, claim("odd", R"({"nodeSelectorTerms": "x"})"));
  (void)load_resource_claims(m, claim("none", "null"));
  CHECK(m.claim_node(m.claim_at("ns/by-field")) == "n1");
  CHECK(m.claim_node(m.claim_at("ns/by-label")) == "n2");
  CHECK(m.claim_node(m.claim_at("ns/two-nodes")).empty());
  CHECK(m.claim_node(m.claim_at("ns/odd")).empty());
  CHECK(m.claim_node(m.claim_at("ns/none")).empty());
  // its devices, whoever pays: the allocation's one device
  const auto devs = m.claim_devices(m.claim_at("ns/by-field"));
  REQUIRE(devs.size() == 1);
  CHECK(devs[0].first == "gpu.nvidia.com");
  CHECK(devs[0].second == 1);
}

namespace {
// A labelled GPU claim of queue "a" whose status.reservedFor has `entries`
// pods p0, p1, ...
json reserved_claim(std::size_t entries) {
  json rf = json::array();
  for (std::size_t i = 0; i < entries; ++i)
    rf.push_back(json{{"resource", "pods"}, {"name", "p" + std::to_string(i)}, {"uid", "u" + std::to_string(i)}});
  return json{
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "shared"}, {"namespace", "ns"}, {"labels", {{"kai.scheduler/queue", "a"}}}}},
      {"spec",
       {{"devices",
         {{"requests", json::array({{{"name", "g"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}}})}}}}},
      {"status", {{"reservedFor", rf}}}};
}
}  // namespace

// KAI (plugins/dynamicresources/dynamicresources.go, preFilter) refuses a pod
// when len(status.reservedFor) has reached ResourceClaimReservedForMaxSize,
// whether or not the scheduler knows the pods those entries name.
TEST_CASE("kai_claims: strict - status.reservedFor entries without pods count toward the consumer limit") {
  kai_claims_config cfg;
  cfg.mode = kai_claims_mode::upstream;
  SECTION("256 entries: the next pod is refused") {
    kai_claims_model m(cfg);
    load_resource_claims(m, reserved_claim(256));
    const claim_id ids[] = {m.claim_at("ns/shared")};
    claim_pod p = pod("late", m.queue("a"));
    p.ns = "ns";
    const auto d = m.check(p, ids);
    REQUIRE(d.has_rule("consumer_cap"));
    CHECK(d.reasons()[0].used == 256);
  }
  SECTION("255 entries: one more fits, then the claim is full") {
    kai_claims_model m(cfg);
    load_resource_claims(m, reserved_claim(255));
    const claim_id ids[] = {m.claim_at("ns/shared")};
    claim_pod p = pod("late", m.queue("a"));
    p.ns = "ns";
    REQUIRE(m.bind(p, ids).verdict.allowed());
    p.id = "later";
    CHECK(m.check(p, ids).has_rule("consumer_cap"));
  }
  SECTION("a restored pod is one of the entries, not one more") {
    kai_claims_model m(cfg);
    load_resource_claims(m, reserved_claim(255));
    const claim_id ids[] = {m.claim_at("ns/shared")};
    claim_pod p0 = pod("p0", m.queue("a"));
    p0.ns = "ns";
    (void)m.restore(p0, ids);
    m.finish_snapshot();
    claim_pod p = pod("late", m.queue("a"));
    p.ns = "ns";
    REQUIRE(m.bind(p, ids).verdict.allowed());
    p.id = "later";
    CHECK(m.check(p, ids).has_rule("consumer_cap"));
  }
}

// KAI (pkg/common/resources/dra.go, countGPUDevicesFromClaim): ExactCount
// counts `count` when above 0, else 1; All counts 1; any other allocation
// mode is skipped. The claim stays a GPU claim (IsGpuResourceClaim), so the
// queue-label rule still applies.
TEST_CASE("kai_claims: strict - an unknown allocationMode counts 0 and an explicit count 0 counts 1") {
  const json doc = json::parse(R"([
    {"kind": "ResourceClaim", "metadata": {"name": "odd", "namespace": "ns", "labels": {"kai.scheduler/queue": "a"}},
     "spec": {"devices": {"requests": [
       {"name": "x", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "Some"}},
       {"name": "z", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 0}},
       {"name": "t", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}}},
    {"kind": "ResourceClaim", "metadata": {"name": "only-odd", "namespace": "ns"},
     "spec": {"devices": {"requests": [
       {"name": "x", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "Some"}}]}}}])");
  kai_claims_config cfg;
  cfg.mode = kai_claims_mode::upstream;
  kai_claims_model m(cfg);
  REQUIRE_NOTHROW(load_resource_claims(m, doc));
  const auto gpu = m.registry().at("gpu.nvidia.com");
  CHECK(m.claim_charge(m.claim_at("ns/odd")).get(gpu) == 3);  // 0 + 1 + 2
  const auto only = m.claim_at("ns/only-odd");
  CHECK(m.claim_charge(only).get(gpu) == 0);
  // still a GPU claim: the label is required
  const claim_id ids[] = {only};
  claim_pod p = pod("p", m.queue("a"));
  p.ns = "ns";
  CHECK(m.check(p, ids).has_rule("missing_queue_label"));
  // the owning_queue mode keeps rejecting both, naming the fields
  const auto has_problem = [](const validation_error& e, std::string_view path) {
    for (const auto& pr : e.problems())
      if (pr.path == path) return true;
    return false;
  };
  kai_claims_model d;
  try {
    load_resource_claims(d, doc);
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(has_problem(e, "[0].spec.devices.requests[0].exactly.allocationMode"));
    CHECK(has_problem(e, "[0].spec.devices.requests[1].exactly.count"));
  }
}
