// SPDX-License-Identifier: Apache-2.0
// quota-example-kai_claims: loads DeviceClasses, ResourceClaims and Pods, restores
// the pods the claims are reserved for, binds the other pods and prints the
// decisions, the actions for the binder and what each queue is charged - once
// with the claim-sharing design and once with KAI's current rules.
//
//   quota-example-kai_claims [dir]      (dir holds deviceclasses.json, claims.json, pods.json)
#include <quota/kai_claims.hpp>
#include <quota/kai_claims_json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {
using namespace quota;

std::string vec(const kai_claims_model& m, const resource_vector& v) {
  return resource_list_to_json(v, m.registry()).dump();
}

void run(const std::string& dir, kai_claims_mode mode) {
  kai_claims_config cfg;
  cfg.mode = mode;
  kai_claims_model m(cfg);
  std::cout << "== " << (mode == kai_claims_mode::owning_queue ? "owning_queue (default)" : "upstream") << " ==\n";
  load_device_classes(m, load_json_file(dir + "/deviceclasses.json"));
  const auto claims = load_resource_claims(m, load_json_file(dir + "/claims.json"));
  const auto pods = load_claim_pods(m, load_json_file(dir + "/pods.json"));
  std::vector<claim_action> actions;
  for (const auto& p : pods) {
    std::vector<claim_id> held, wanted;
    for (const auto& key : p.claims) {
      bool reserved = false;
      for (const auto& o : claims)
        if (o.spec.ns + "/" + o.spec.name == key)
          for (const auto& r : o.reserved_for) reserved = reserved || r == p.name;
      (reserved ? held : wanted).push_back(m.claim_at(key));
    }
    const auto q = m.queue(p.queue);
    if (!held.empty()) {
      (void)m.restore(p.as_pod(q), held);
      std::cout << "restored " << p.ns << "/" << p.name << " (queue " << p.queue << ")\n";
    }
    if (!wanted.empty()) {
      const auto r = m.bind(p.as_pod(q), wanted, &actions);
      std::cout << "bind " << p.ns << "/" << p.name << " (queue " << p.queue << "): " << to_string(r.verdict) << "\n";
    }
  }
  m.finish_snapshot(&actions);
  for (const auto& a : actions)
    std::cout << "action: "
              << (a.kind == claim_action_kind::upsert_label ? "upsert label "
                  : a.kind == claim_action_kind::pinned     ? "pinned "
                                                            : "unpinned ")
              << m.claim_key(a.claim) << " " << m.config().queue_label_key << "=" << m.queue_name(a.queue) << "\n";
  for (claim_id c = 0; c < m.claim_count(); ++c) {
    std::cout << "claim " << m.claim_key(c) << ": ";
    if (!m.accounted(c))
      std::cout << "not accounted";
    else if (m.config().mode == kai_claims_mode::upstream)
      std::cout << "charged to every consuming pod's queue";
    else if (m.orphan(c))
      std::cout << "orphan";
    else if (m.owner(c) != claim_none)
      std::cout << "owner " << m.queue_name(m.owner(c));
    else
      std::cout << "no owner yet";
    std::cout << ", consumers " << m.consumers(c) << "\n";
  }
  for (claim_queue_id q = 0; q < m.queue_count(); ++q)
    std::cout << "queue " << m.queue_name(q) << " charged " << vec(m, m.charge_of(q)) << "\n";
  std::cout << "deducted " << vec(m, m.deducted()) << "\n";
  std::cout << "allocated " << vec(m, m.allocated_total()) << " / charged " << vec(m, m.charged_total()) << "\n\n";
}
}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string dir = argc > 1 ? argv[1] : QUOTA_EXAMPLE_DIR;
    run(dir, kai_claims_mode::owning_queue);
    run(dir, kai_claims_mode::upstream);
  } catch (const quota::error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
