#!/usr/bin/env bash
# Issue 15, "Energy from the power model equals the integral of the
# exported power": with cost.energy: power, /cost's energy of each pool and
# day equals what fleetsim metrics exports, DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
# (mJ, the exact integral of DCGM_FI_DEV_POWER_USAGE per GPU) summed over the
# pool's GPUs between the day's first and last instant, to 1e-6 relative.
# Power caps, thermal throttling, time-slicing, MPS, MIG, multi-node gangs
# and node failures are all in.  The host part is 0 (power_w = the TDP) and
# PUE 1, so /cost's energy_kwh is the GPUs' alone; the fleet is owned whole
# from time 0 (the exporter draws idle power on every GPU of /pools, the
# cost model on owned GPUs only: a node not yet bought draws nothing).
source "$(dirname "$0")/lib/common.bash"

cat > e.yaml <<'EOF'
name: energy
seed: 5
horizon: 30h
until: horizon
cluster:
  pools:
    - {name: capped, gpu: H100, nodes: 4, gpus_per_node: 8, power_cap_w: 450}
    - {name: hot, gpu: H100, nodes: 2, gpus_per_node: 8, ambient_c: 55}
    - {name: ts, gpu: H100, nodes: 2, gpus_per_node: 4, sharing: {time_slicing: 4}}
    - {name: mps, gpu: A100, nodes: 1, gpus_per_node: 8, sharing: {mps: 3}}
workload:
  synthetic:
    arrivals: {rate: 12/h}
    gpus: {1: 0.5, 4: 0.2, 8: 0.2, 16: 0.1}
    duration: {dist: exponential, mean: 2h}
    tenants: {vision: 0.6, nlp: 0.4}
startup: {container: 30s}
telemetry: {sm: 0.8, throttle_c: 87}
failures:
  components: [{kind: node, tbf: {dist: exponential, mean: 20h}, causes: {dbe: 1}}]
  causes: [{name: dbe, xid: 48}]
cost:
  energy: power
  pue: 1
  pools: [{pool: capped, power_w: 700}, {pool: hot, power_w: 700}, {pool: ts, power_w: 700},
          {pool: mps, power_w: 400}]
output: {gpu_intervals: true}
EOF

cat > mig.yaml <<'EOF'
name: energy-mig
seed: 3
horizon: 6h
until: horizon
cluster:
  pools:
    - {name: mig, gpu: H100, nodes: 2, gpus_per_node: 2, mig: "3g.40gb, 2g.20gb, 1g.10gb x2"}
    - {name: whole, gpu: H100, nodes: 1, gpus_per_node: 2}
workload:
  synthetic:
    arrivals: {rate: 20/h}
    gpus: {1: 0.7, 2: 0.3}
    duration: {dist: exponential, mean: 30m}
    mig_profile: 1g.10gb
telemetry: {sm: 0.7, duty: 0.9}
failures:
  components: [{kind: node, pool: mig, tbf: {dist: exponential, mean: 4h}, causes: {dbe: 1}}]
  causes: [{name: dbe, xid: 48}]
cost: {energy: power, pue: 1, pools: [{pool: mig, power_w: 700}, {pool: whole, power_w: 700}]}
output: {gpu_intervals: true}
EOF

for s in e mig; do
    expect_exit 0 "$FLEETSIM" run $s.yaml -o $s.h5 -q
    expect_exit 0 "$FLEETSIM" metrics $s.h5 -o $s.om --step 600
    /usr/bin/python3 - $s > $s.txt 2>&1 <<'EOF' && ok || bad "$s: $(cat $s.txt)"
import collections, re, sys
import h5py
s = sys.argv[1]
f = h5py.File(s + ".h5", "r")
pools = [x.decode() for x in f["pools"]["name"]]
end = float(f["summary"]["end_time"][0])
assert end % 600 == 0, end
fails = len(f["failures"]) if "failures" in f else 0
assert fails >= 1, "no failure"
# the counter of every GPU at every sample, whatever series (idle, a job's) it is in
e = {}
pat = re.compile(r'^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{.*UUID="([^"]+)".*hostname="([^"]+)-[0-9]+"')
origin = None
for line in open(s + ".om"):
    m = pat.match(line)
    if not m:
        continue
    lab, v, ts = line.rsplit(" ", 2)
    e[(m.group(1), int(ts))] = (m.group(2), float(v))
t0 = min(ts for _, ts in e)
gpus = {u: e[(u, t0)][0] for u, ts in e if ts == t0}
def counter(pool, t):
    return sum(e[(u, t0 + int(t))][1] for u, p in gpus.items() if p == pool)
cost = f["cost"][:]
worst, n = 0.0, 0
for r in cost:
    p, d = pools[r["pool"]], int(r["day"])
    lo, hi = d * 86400, min((d + 1) * 86400, end)
    om = (counter(p, hi) - counter(p, lo)) / 3.6e9      # mJ -> kWh
    rel = abs(r["energy_kwh"] - om) / om
    worst = max(worst, rel)
    n += 1
    assert rel <= 1e-6, (p, d, r["energy_kwh"], om, rel)
total = sum(counter(p, end) for p in set(gpus.values())) / 3.6e9
assert abs(f["summary"]["energy_kwh"][0] - total) <= 1e-6 * total
print("%s: %d (day, pool) cells, %d failures, %.3f kWh; worst relative difference %.2g" %
      (s, n, fails, total, worst))
EOF
    cat $s.txt
done

# the key off: /cost as without it (flat), and different from power
expect_exit 0 "$FLEETSIM" run e.yaml -o flat.h5 -q --set cost.energy=flat --set output.gpu_intervals=false
sed -e '/^  energy: power$/d' -e 's/gpu_intervals: true/gpu_intervals: false/' e.yaml > nokey.yaml
expect_exit 0 "$FLEETSIM" run nokey.yaml -o nokey.h5 -q
/usr/bin/python3 - > flat.txt 2>&1 <<'EOF' && ok || bad "flat: $(cat flat.txt)"
import h5py, numpy as np
a, b, c = (h5py.File(x, "r") for x in ("flat.h5", "nokey.h5", "e.h5"))
for t in ("cost", "cost_pools", "cost_tenants"):
    assert a[t][:].tobytes() == b[t][:].tobytes(), t
assert a["jobs"][:].tobytes() == c["jobs"][:].tobytes(), "the key changed the jobs"
# the measurement window is the whole run here: its cost is the total, power draw included
w, t = c["summary"]["cost_window"][0], c["summary"]["cost_total"][0]
assert abs(w - t) <= 1e-12 * t, ("window", w, t)   # (summed in another order)
fe, pe = a["summary"]["energy_kwh"][0], c["summary"]["energy_kwh"][0]
assert abs(fe - pe) > 1e-3 * fe, (fe, pe)
print("flat %.3f kWh, power %.3f kWh" % (fe, pe))
EOF
cat flat.txt

# a peak below the TDP is refused: the host part would be negative
expect_exit 2 "$FLEETSIM" run e.yaml -o bad.h5 -q --set 'cost.pools=[{pool: capped, power_w: 600}]'
expect_err "cost.energy: power: pool 'capped': peak power per GPU 600 W is below the GPU's TDP \(700 W\)"
expect_no_file bad.h5
finish
