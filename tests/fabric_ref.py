#!/usr/bin/env python3
"""An independent reference for the fabric (issue 36, docs/models.md "Fabric").

Written from the model's description, sharing no code with models/fs_fabric*.c:
the two-tier Clos's links and capacities, a job's ring (its NVLink domains in
node order, each node's NICs, the uplink bundles of the leaf groups its ring
leaves), max-min fair rates by the bottleneck algorithm in exact rational
arithmetic (fractions.Fraction), and the ring model's iteration time.  It
reads the random cases `test_fabric --ref-cases FILE` wrote (the fabric, the
jobs, and what the engine computed) and checks every active job's rate and
speed factor and every link's load against its own, to rounding (relative
1e-9).  Usage: fabric_ref.py TEST_FABRIC_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction as Q

TOL = 1e-9


def links_of(case, job):
    """The job's (link -> coefficient) and its ring parameters, or None when
    its ring stays inside one NVLink domain."""
    n_nodes, dn, npl = case["nodes"], case["dom_nodes"], case["nodes_per_leaf"]
    nodes = sorted(job["nodes"])
    doms = [v // dn for v in nodes]
    d = len(set(doms))
    per_dom = {}
    for v in nodes:
        per_dom.setdefault(v // dn, []).append(v)
    m = max(len(vs) * job["gpus_per_node"] for vs in per_dom.values())
    ranks = len(nodes) * job["gpus_per_node"]
    if d < 2:
        return None, (d, m, ranks, None)
    coef = {}
    nic = Q(case["nics"]) * Q(case["nic_gbps"]) * 10**9 / 8
    x_nic = float(min(len(vs) * nic for vs in per_dom.values()))
    for dom, vs in per_dom.items():
        for v in vs:
            coef[v] = Q(1, len(vs))
    # ring edges: consecutive nodes (cyclic) in different domains and groups
    n = len(nodes)
    for i in range(n):
        a, b = nodes[i], nodes[(i + 1) % n]
        if a // dn == b // dn or a // npl == b // npl:
            continue
        link = n_nodes + a // npl
        coef[link] = coef.get(link, Q(0)) + 1
    return coef, (d, m, ranks, x_nic)


def caps_of(case):
    port = Q(case["nic_gbps"]) * 10**9 / 8
    rails = case["nics"] if case["rail"] else 1
    down = case["nodes_per_leaf"] * (1 if case["rail"] else case["nics"])
    up = Q(down) / Q(case["oversubscription"])
    assert up.denominator == 1, "uplink ports not whole"
    groups = -(-case["nodes"] // case["nodes_per_leaf"])
    caps = [case["nics"] * port] * case["nodes"] + [rails * up * port] * groups
    return caps


def max_min(caps, flows):
    """flows: {id: {link: coef}} -> {id: rate}.  Bottleneck algorithm: the
    link with the least fair share (remaining capacity over the unfixed
    coefficients) fixes its flows at that share; repeat."""
    rate = {}
    left = {l: Q(c) for l, c in enumerate(caps)}
    while len(rate) < len(flows):
        best, best_l = None, None
        for l in left:
            w = sum(c[l] for i, c in flows.items() if i not in rate and l in c)
            if w == 0:
                continue
            share = left[l] / w
            if best is None or share < best:
                best, best_l = share, l
        fix = [i for i, c in flows.items() if i not in rate and best_l in c]
        for i in fix:
            rate[i] = best
            for l, c in flows[i].items():
                left[l] -= c * best
    return rate


def comm_s(bytes_, d, m, ranks, x_nic, case, x):
    """NCCL's all-reduce as docs/models.md "Fabric" describes it: network and
    NVLink work overlapped (the larger counts), the network at `efficiency`
    of the rate; its ring over all GPUs, or at 2 and 3 domains its tree of
    domains when that is quicker at the NICs' rate."""
    eff, nvl_bw = case["efficiency"], case["nvlink_gbs"] * 1e9
    ring_net = 2.0 * (ranks - 1) / ranks * bytes_
    ring_nvl = (m - 1) / m * ring_net / nvl_bw if m >= 2 else 0.0
    net, nvl = ring_net, ring_nvl
    if d in (2, 3):
        tree_net = bytes_ if d == 2 else 1.5 * bytes_
        tree_nvl = 2.0 * bytes_ / nvl_bw if m >= 2 else 0.0
        if max(tree_net / (eff * x_nic), tree_nvl) < max(ring_net / (eff * x_nic), ring_nvl):
            net, nvl = tree_net, tree_nvl
    return max(net / (eff * x), nvl) + 2.0 * (d - 1) * case["alpha_us"] * 1e-6


def iter_s(comm, job):
    hid = job["overlap"] * comm
    return max(job["compute_s"], hid) + (1 - job["overlap"]) * comm


def close(a, b):
    return abs(a - b) <= TOL * max(abs(a), abs(b), 1e-300)


def check(case, k):
    caps = caps_of(case)
    errors = []
    for l, c in enumerate(case["link_cap"]):
        if not close(c, float(caps[l])):
            errors.append(f"case {k}: link {l} capacity {c} != {float(caps[l])}")
    flows, ring = {}, {}
    for j, job in enumerate(case["jobs"]):
        coef, shape = links_of(case, job)
        d = shape[0]
        if coef is None:
            if job["active"]:
                errors.append(f"case {k}: job {j} inside one NVLink domain has a flow")
            continue
        if job["removed"]:
            continue
        if not job["active"]:
            errors.append(f"case {k}: job {j} spans {d} domains but has no flow")
            continue
        flows[j] = coef
        ring[j] = shape
    rate = max_min(caps, flows)
    for j, x in rate.items():
        job = case["jobs"][j]
        if not close(job["x"], float(x)):
            errors.append(f"case {k}: job {j} rate {job['x']} != {float(x)}")
        d, m, ranks, x_nic = ring[j]
        idle = float(min(caps[l] / c for l, c in flows[j].items()))
        want = (iter_s(comm_s(job["bytes"], d, m, ranks, x_nic, case, idle), job)
                / iter_s(comm_s(job["bytes"], d, m, ranks, x_nic, case, float(x)), job))
        want = min(want, 1.0)
        if not close(job["factor"], want):
            errors.append(f"case {k}: job {j} factor {job['factor']} != {want}")
    load = [Q(0)] * len(caps)
    for j, coef in flows.items():
        for l, c in coef.items():
            load[l] += c * rate[j]
    for l, v in enumerate(load):
        if not close(case["link_load"][l], float(v)):
            errors.append(f"case {k}: link {l} load {case['link_load'][l]} != {float(v)}")
        if v > caps[l]:
            errors.append(f"case {k}: link {l} above its capacity in the reference")
    return errors, len(flows)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.json")
        subprocess.run([sys.argv[1], "--ref-cases", path], check=True)
        with open(path) as fh:
            cases = json.load(fh)
    errors, flows, contended = [], 0, 0
    for k, case in enumerate(cases):
        e, n = check(case, k)
        errors += e
        flows += n
        contended += sum(1 for j in case["jobs"] if j["active"] and j["factor"] < 1)
    for e in errors[:20]:
        print(e)
    print(f"fabric_ref: {len(cases)} cases, {flows} flows ({contended} slowed by the network), "
          f"{len(errors)} differences")
    return 1 if errors or contended == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
