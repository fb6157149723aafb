#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes dump.json: a realistic `kubectl get ... -A -o json` dump of a
50-node GPU cluster shared by four teams, with Volcano Queues and PodGroups,
Kueue ClusterQueues and LocalQueues, one shared DRA ResourceClaim and a
ResourceClaimTemplate, running and pending pods (docs/cluster-import.md). Deterministic: the same script
writes the same file.

usage: python3 make_dump.py > dump.json
"""
import json
import random

rng = random.Random(33)
items = []
DUMP_DAY = "2026-03-02"


def ts(minute):
    """An RFC 3339 time `minute` minutes after 08:00 on the dump's day."""
    h, m = divmod(480 + minute, 60)
    return f"{DUMP_DAY}T{h:02d}:{m:02d}:00Z"


TEAMS = ["team-a", "team-b", "team-c", "team-d"]

# ---- nodes: 40 GPU nodes (8 A100), 10 CPU nodes; one cordoned, one not ready
nodes = {}
for i in range(40):
    nodes[f"gpu-{i:02d}"] = {"cpu": 96_000, "memory": 768, "gpu": 8, "kind": "gpu"}
for i in range(10):
    nodes[f"cpu-{i:02d}"] = {"cpu": 64_000, "memory": 256, "gpu": 0, "kind": "cpu"}
CORDONED, NOT_READY = "gpu-39", "cpu-09"
for name, n in nodes.items():
    alloc = {"cpu": f"{n['cpu'] // 1000}", "memory": f"{n['memory']}Gi", "pods": "110",
             "ephemeral-storage": "800Gi"}
    labels = {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "p4d.24xlarge"
              if n["kind"] == "gpu" else "m6i.16xlarge"}
    if n["gpu"]:
        alloc["nvidia.com/gpu"] = str(n["gpu"])
        labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "creationTimestamp": "2026-01-10T09:00:00Z"},
            "spec": {},
            "status": {"allocatable": alloc, "capacity": dict(alloc),
                       "conditions": [{"type": "Ready", "status": "False" if name == NOT_READY else "True"}]}}
    if name == CORDONED:
        node["spec"]["unschedulable"] = True
    items.append(node)

# ---- namespaces
for t in TEAMS:
    items.append({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": t, "labels": {"kubernetes.io/metadata.name": t, "org/team": t}}})

# ---- Volcano: one Queue per team (proportion plugin: weights)
for t, w in zip(TEAMS, [4, 3, 2, 1]):
    items.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                  "metadata": {"name": t, "creationTimestamp": "2026-01-10T09:00:00Z"},
                  "spec": {"weight": w, "reclaimable": True}})

# ---- Kueue: one flavor, one ClusterQueue per team in cohort "org", LocalQueues
items.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}})
quota = {"team-a": (1440, 10752, 112), "team-b": (1080, 8064, 80), "team-c": (960, 7168, 64),
         "team-d": (840, 6272, 56)}
for t in TEAMS:
    cpu, mem, gpu = quota[t]
    items.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": t},
                  "spec": {"cohort": "org",
                           "namespaceSelector": {"matchLabels": {"org/team": t}},
                           "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                           "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                                               "flavors": [{"name": "default", "resources": [
                                                   {"name": "cpu", "nominalQuota": str(cpu)},
                                                   {"name": "memory", "nominalQuota": f"{mem}Gi"},
                                                   {"name": "nvidia.com/gpu", "nominalQuota": gpu}]}]}]}})
    items.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                  "metadata": {"name": t, "namespace": t}, "spec": {"clusterQueue": t}})

# ---- DRA: the GPU device class and one claim team-a shares with its notebooks
items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})
items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared-a100", "namespace": "team-a", "labels": {"kai.scheduler/queue": "team-a"}},
              "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                  "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}},
              "status": {"allocation": {"devices": {"results": [
                  {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "gpu-00", "device": "gpu-0"},
                  {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "gpu-00", "device": "gpu-1"}]}}}})

# a template for one GPU: each pod naming it gets a claim of its own
items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
              "metadata": {"name": "one-a100", "namespace": "team-b"},
              "spec": {"metadata": {"labels": {"app": "b-dra"}},
                       "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                           "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}}})
# the claim the controller made from it for the running pod b-dra-0 (allocated on gpu-01)
items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "b-dra-0-gpu-7xk2p", "namespace": "team-b", "labels": {"app": "b-dra"},
                           "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                           "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "b-dra-0",
                                                "uid": "5f0c9a4e-2b1d-4c8e-9a7f-0d3b6e1c2a90",
                                                "controller": True, "blockOwnerDeletion": True}]},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                  "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}},
              "status": {"allocation": {
                  "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-01",
                                           "device": "gpu-7"}]},
                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["gpu-01"]}]}]}},
                  "reservedFor": [{"resource": "pods", "name": "b-dra-0",
                                   "uid": "5f0c9a4e-2b1d-4c8e-9a7f-0d3b6e1c2a90"}]}})

# ---- pods
free = {name: dict(n) for name, n in nodes.items()}
free["gpu-00"]["gpu"] -= 2  # the shared claim's two devices
free["gpu-01"]["gpu"] -= 1  # b-dra-0's claim


def place(cpu, mem, gpu, kind):
    """First fit over the schedulable nodes of `kind`."""
    for name, f in free.items():
        if name in (CORDONED, NOT_READY) or nodes[name]["kind"] != kind:
            continue
        if f["cpu"] >= cpu and f["memory"] >= mem and f["gpu"] >= gpu:
            f["cpu"] -= cpu
            f["memory"] -= mem
            f["gpu"] -= gpu
            return name
    raise SystemExit(f"no room for a pod of {cpu}m {mem}Gi {gpu} GPUs")


def pod(team, name, cpu, mem, gpu, prio, prio_class, minute, phase, node=None, group=None, init=None,
        sidecar=None, overhead=None, claim=None, template=None, made_claim=None):
    container = {"name": "main", "image": "registry.example/ml:1.4",
                 "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Gi"}}}
    if gpu:
        container["resources"]["requests"]["nvidia.com/gpu"] = str(gpu)
        container["resources"]["limits"] = {"nvidia.com/gpu": str(gpu)}
    annotations = {}
    if group:
        annotations["scheduling.k8s.io/group-name"] = group
    else:
        annotations["scheduling.volcano.sh/queue-name"] = team
    spec = {"schedulerName": "volcano", "priority": prio, "priorityClassName": prio_class,
            "containers": [container]}
    if gpu:
        spec["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    inits = []
    if sidecar:
        inits.append({"name": "log-shipper", "image": "registry.example/fluent-bit:3", "restartPolicy": "Always",
                      "resources": {"requests": {"cpu": f"{sidecar[0]}m", "memory": f"{sidecar[1]}Mi"}}})
    if init:
        inits.append({"name": "fetch-data", "image": "registry.example/fetch:2",
                      "resources": {"requests": {"cpu": f"{init[0]}m", "memory": f"{init[1]}Gi"}}})
    if inits:
        spec["initContainers"] = inits
    if overhead:
        spec["runtimeClassName"] = "kata"
        spec["overhead"] = {"cpu": overhead[0], "memory": overhead[1]}
    if claim:
        spec["resourceClaims"] = [{"name": "gpus", "resourceClaimName": claim}]
    if template:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    if node:
        spec["nodeName"] = node
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": team, "creationTimestamp": ts(minute),
                      "labels": {"kueue.x-k8s.io/queue-name": team, "app": name.rsplit("-", 1)[0]},
                      "annotations": annotations},
         "spec": spec, "status": {"phase": phase}}
    if made_claim:
        p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": made_claim}]
    items.append(p)


def running(team, name, cpu, mem, gpu, prio, pc, minute, kind="gpu", **kw):
    # what the node must hold: the effective request (sidecar and init included)
    c, m = cpu, mem
    if kw.get("sidecar"):
        c += kw["sidecar"][0]
        m += kw["sidecar"][1] / 1024
    if kw.get("init"):
        c, m = max(c, kw["init"][0] + (kw["sidecar"][0] if kw.get("sidecar") else 0)), max(m, kw["init"][1])
    node = kw.pop("node", None) or place(c, int(m + 0.999), gpu, kind)
    pod(team, name, cpu, mem, gpu, prio, pc, minute, "Running", node=node, **kw)


def podgroup(team, name, members, queue, phase="Running", min_resources=None, priority_class=None):
    spec = {"minMember": members, "queue": queue}
    if min_resources:
        spec["minResources"] = min_resources
    if priority_class:
        spec["priorityClassName"] = priority_class
    items.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                  "metadata": {"name": name, "namespace": team}, "spec": spec, "status": {"phase": phase}})


# team-a: an 8-node pre-training gang, two notebooks on the shared claim, a pending sweep
podgroup("team-a", "a-pretrain", 8, "team-a")
for i in range(8):
    running("team-a", f"a-pretrain-{i}", 90_000, 700, 8, 100, "training", 5 + i, group="a-pretrain")
for i in range(2):
    pod("team-a", f"a-notebook-{i}", 4_000, 32, 0, 1000, "interactive", 20 + i, "Running", node="gpu-00",
        claim="shared-a100")
    free["gpu-00"]["cpu"] -= 4_000
    free["gpu-00"]["memory"] -= 32
for i in range(24):
    pod("team-a", f"a-sweep-{i}", 8_000, 64, 1, 50, "batch", 95 + i, "Pending")

# team-b: fine-tuning on 4 GPUs and inference on 1 GPU (with a log sidecar), data prep on CPU nodes
for i in range(6):
    running("team-b", f"b-finetune-{i}", 32_000, 256, 4, 100, "training", 10 + 3 * i)
for i in range(20):
    running("team-b", f"b-infer-{i}", 7_500, 48, 1, 1000, "serving", 2 + i, sidecar=(500, 256))
for i in range(10):
    running("team-b", f"b-prep-{i}", 16_000, 64, 0, 50, "batch", 30 + i, kind="cpu")
for i in range(10):
    pod("team-b", f"b-finetune-{6 + i}", 32_000, 256, 4, 100, "training", 92 + 3 * i, "Pending")
# a DRA inference pod on a GPU of its own from the template (claim made and allocated), and one waiting for its claim
pod("team-b", "b-dra-0", 7_500, 48, 0, 1000, "serving", 25, "Running", node="gpu-01", template="one-a100",
    made_claim="b-dra-0-gpu-7xk2p")
free["gpu-01"]["cpu"] -= 7_500
free["gpu-01"]["memory"] -= 48
pod("team-b", "b-dra-1", 7_500, 48, 0, 1000, "serving", 96, "Pending", template="one-a100")

# team-c: 2-GPU evaluation jobs whose init container stages data (16 CPUs while it runs)
for i in range(12):
    running("team-c", f"c-eval-{i}", 8_000, 96, 2, 100, "training", 40 + 2 * i, init=(16_000, 32))
for i in range(16):
    pod("team-c", f"c-eval-{12 + i}", 8_000, 96, 2, 100, "training", 91 + 2 * i, "Pending", init=(16_000, 32))
# a distributed training job waiting as one gang: a Volcano job of 4 workers, minAvailable 4 (the job
# controller's PodGroup with the minResources it computes from the pods' quota usage)
podgroup("team-c", "c-dist", 4, "team-c", phase="Inqueue", priority_class="training",
         min_resources={"count/pods": "4", "cpu": "128", "memory": "1Ti", "pods": "4", "requests.cpu": "128",
                        "requests.memory": "1Ti", "requests.nvidia.com/gpu": "32"})
for i in range(4):
    pod("team-c", f"c-dist-worker-{i}", 32_000, 256, 8, 100, "training", 104, "Pending", group="c-dist")

# team-d: small 1-GPU jobs in a sandboxed runtime (pod overhead), then a burst of 8-GPU jobs
for i in range(8):
    running("team-d", f"d-job-{i}", 6_000, 40, 1, 100, "training", 60 + i, overhead=("250m", "120Mi"))
for i in range(30):
    pod("team-d", f"d-job-{8 + i}", 6_000, 40, 1, 100, "training", 90 + i, "Pending", overhead=("250m", "120Mi"))
for i in range(16):
    pod("team-d", f"d-burst-{i}", 90_000, 700, 8, 100, "training", 100 + i, "Pending")

# finished pods (skipped by the import), and one still running on the cordoned node
for i in range(5):
    pod("team-c", f"c-eval-old-{i}", 8_000, 96, 2, 100, "training", i, "Succeeded", node="gpu-30")
for i in range(2):
    pod("team-d", f"d-job-old-{i}", 6_000, 40, 1, 100, "training", i, "Failed", node="gpu-31")
pod("team-b", "b-infer-drain", 7_500, 48, 1, 1000, "serving", 1, "Running", node=CORDONED)

json.dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items},
          __import__("sys").stdout, indent=1)
print()
