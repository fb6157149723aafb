# SPDX-License-Identifier: Apache-2.0
# quota-sim import cluster on the example dump (docs/cluster-import.md), then
# run and compare on the scenario it writes; and a bad dump writes nothing.
# -DSIM=quota-sim -DSRC=source dir -DOUT=work dir
set(dump ${SRC}/examples/cluster-dump/dump.json)
set(sc ${OUT}/cluster-dump.json)
file(REMOVE ${sc})
execute_process(COMMAND ${SIM} import cluster ${dump} --from-objects --duration uniform:1h-4h --seed 7 -o ${sc}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "import cluster failed (${rc}):\n${out}${err}")
endif()
foreach(want "imported 48 nodes, 67 running pods, 101 pending pods" "left out node gpu-39 \\(cordoned\\)"
    "skipped 1 pod\\(s\\): on an excluded node" "models from the dump: volcano kueue kai_claims")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "import cluster did not print '${want}':\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${SIM} run ${sc} --quiet --check-invariants --report ${OUT}/cluster-dump.report.json
  --svg ${OUT}/cluster-dump.svg RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run on the imported scenario failed (${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${SIM} compare ${sc} --policies scenario,volcano,kueue,kai_fair_share
  --report ${OUT}/cluster-dump.compare.json --svg ${OUT}/cluster-dump.compare.svg
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "scenario: utilisation.*\nvolcano: .*\nkueue: .*\nkai_fair_share: ")
  message(FATAL_ERROR "compare on the imported scenario failed (${rc}):\n${out}${err}")
endif()
# a pod bound to a node the dump does not have: exit 2, the pod named, nothing written
file(WRITE ${OUT}/bad-dump.json [=[{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
   "spec": {"nodeName": "ghost", "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}]}
]=])
file(REMOVE ${OUT}/bad-dump.scenario.json)
execute_process(COMMAND ${SIM} import cluster ${OUT}/bad-dump.json -o ${OUT}/bad-dump.scenario.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "Pod/ns/p.spec.nodeName: names node 'ghost'" OR EXISTS ${OUT}/bad-dump.scenario.json)
  message(FATAL_ERROR "a bad dump: expected exit 2, the pod named and nothing written; got ${rc}:\n${out}${err}")
endif()
# a PodGroup whose minMember its pods cannot meet, a pod naming a PodGroup and
# a pod naming a ResourceClaimTemplate the dump does not have: exit 2, each
# named with its field, nothing written
file(WRITE ${OUT}/bad-gang-dump.json [=[{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "8"}}},
  {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ns"},
   "spec": {"minMember": 3}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "ns", "creationTimestamp": "2026-03-02T10:00:00Z",
   "annotations": {"scheduling.k8s.io/group-name": "g"}}, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "ns", "creationTimestamp": "2026-03-02T10:00:00Z",
   "annotations": {"scheduling.k8s.io/group-name": "gone"}}, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c", "namespace": "ns", "creationTimestamp": "2026-03-02T10:00:00Z"},
   "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "absent"}]},
   "status": {"phase": "Pending"}}]}
]=])
file(REMOVE ${OUT}/bad-gang-dump.scenario.json)
execute_process(COMMAND ${SIM} import cluster ${OUT}/bad-gang-dump.json --from-objects -o ${OUT}/bad-gang-dump.scenario.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR EXISTS ${OUT}/bad-gang-dump.scenario.json
    OR NOT err MATCHES "PodGroup/ns/g.spec.minMember: 3 is more than the group's 1 pods"
    OR NOT err MATCHES "Pod/ns/b.metadata.annotations.scheduling.k8s.io/group-name: names PodGroup 'gone'"
    OR NOT err MATCHES "Pod/ns/c.spec.resourceClaims\\[0\\].resourceClaimTemplateName: names ResourceClaimTemplate 'absent'")
  message(FATAL_ERROR "a bad gang dump: expected exit 2, each problem named and nothing written; got ${rc}:\n${out}${err}")
endif()
