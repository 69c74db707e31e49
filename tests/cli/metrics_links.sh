#!/usr/bin/env bash
# Issue 36: the fabric's link counters in `fleetsim metrics` (analysis/fs_metrics_links.c), from
# /link_bytes (every link's bytes from time 0 at the /timeline samples): NIC ports under
# node_exporter's InfiniBand names, leaf uplink ports under snmp_exporter's IF-MIB names.
# Every port is sampled at every step, its counter never falls, and a link's ports add up at
# the end to its /links bytes: exactly in the blocks (promtool tsdb dump prints the shortest
# exact decimal), to the text's 10 digits in OpenMetrics.  The promtool parts are skipped
# (SKIP on stderr) where promtool is not installed.
source "$(dirname "$0")/lib/common.bash"

FAMS=node_infiniband_port_data_transmitted_bytes_total,node_infiniband_port_data_received_bytes_total,ifHCOutOctets,ifHCInOctets
# fabric-oversub (32 nodes of 8 NICs, 4 leaf groups of 16 uplink ports, 4:1) stopped at 6 h:
# the run ends on a sample instant, so the last sample holds the run's totals
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/fabric-oversub.yaml" -o f.h5 -q --set horizon=6h \
    --set until=horizon --set output.gpu_intervals=true
expect_exit 0 "$FLEETSIM" metrics f.h5 -o f.om --step 600 --families "$FAMS"
for fam in 'node_infiniband_port_data_transmitted_bytes_total counter' \
    'node_infiniband_port_data_received_bytes_total counter' 'ifHCOutOctets gauge' 'ifHCInOctets gauge'; do
    grep -qx "# TYPE $fam" f.om && ok || bad "no '# TYPE $fam'"
done
grep -q '^node_infiniband_port_data_transmitted_bytes_total{device="mlx5_0",port="1",instance="h100-0:9100",job="node-exporter"} 0 1767225600$' f.om &&
    ok || bad "node_exporter's labels: $(grep -m1 '^node_infiniband_port_data_transmitted' f.om)"
# a rail-optimized leaf group is 8 leaf switches (one per rail), each with its own 2 uplinks
# (8 ports down at 4:1), not one switch of 16 ports across the rails
grep -q '^ifHCOutOctets{switch="h100-leaf3-rail7",port="uplink2",ifName="uplink2",ifIndex="2",job="snmp"} ' f.om &&
    ok || bad "IF-MIB labels: $(grep -m1 '^ifHCOutOctets' f.om)"
grep -q '^ifHCOutOctets{switch="h100-leaf3",\|port="uplink3"' f.om &&
    bad "an uplink series names a leaf group as one switch" || ok
expect_exit 0 "$FLEETSIM" metrics f.h5 --tsdb db --step 600 --families "$FAMS"

if ! /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
    echo "SKIP: python3-h5py not installed" >&2
    finish
    exit
fi
check() {   # check FORMAT FILE: series, samples, monotone, the last values against /links
/usr/bin/python3 - f.h5 "$1" "$2" <<'EOF'
import math, re, sys
import h5py
f = h5py.File(sys.argv[1], "r")
fmt, path = sys.argv[2], sys.argv[3]
links = f["links"][:]
end = float(f["summary"]["end_time"][0])
steps = int(end // 600) + 1
ser = {}
pat = (r'^([A-Za-z_:]+)\{(.*)\} (\S+) (\d+)$' if fmt == "text" else
       r'^\{__name__="([^"]+)", (.*)\} (\S+) (\d+)$')
for line in open(path):
    m = re.match(pat, line)
    if m and not math.isnan(float(m.group(3))):    # the blocks' staleness marker after the end
        lab = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', m.group(2))))
        ser.setdefault((m.group(1), lab), []).append((int(m.group(4)), float(m.group(3))))
nic = [r for r in links if r["tier"] == b"nic"]
up = [r for r in links if r["tier"] == b"leaf_uplink"]
want = {"node_infiniband_port_data_transmitted_bytes_total": nic,
        "node_infiniband_port_data_received_bytes_total": nic,
        "ifHCOutOctets": up, "ifHCInOctets": up}
for name, rows in want.items():
    got = {lab: v for (n, lab), v in ser.items() if n == name}
    assert len(got) == sum(int(r["ports"]) for r in rows), (name, len(got))
    total = {}
    for lab, v in got.items():
        v.sort()
        assert len(v) == steps, (name, lab, len(v), steps)          # every step
        assert all(b[1] >= a[1] for a, b in zip(v, v[1:])), (name, lab)  # monotone
        d = dict(lab)
        key = d["instance"] if "instance" in d else re.sub(r"-rail\d+$", "", d["switch"])
        total.setdefault(key, []).append(v[-1][1])
    if rows is up:   # one switch per rail of each group, each with ports / rails uplinks
        sw = {}
        for lab in got:
            d = dict(lab)
            sw.setdefault(d["switch"], set()).add(d["port"])
        assert len(sw) == sum(int(r["rails"]) for r in rows), (name, len(sw))
        per = {int(r["ports"]) // int(r["rails"]) for r in rows}
        assert {len(p) for p in sw.values()} == per == {2}, (name, per)
    for r in rows:
        key = ("h100-%d:9100" % r["node"]) if r["tier"] == b"nic" else "h100-leaf%d" % r["leaf"]
        s = math.fsum(total[key])
        if fmt == "dump":
            assert s == r["bytes"], (name, key, s, r["bytes"])      # exact
        else:
            assert abs(s - r["bytes"]) <= 1e-9 * r["bytes"], (name, key, s, r["bytes"])
    assert sum(r["bytes"] for r in rows) > 0, name
print("ok", len(ser), "series")
EOF
}
check text f.om > py.txt 2>&1 && ok || bad "text export: $(cat py.txt)"
# a file written before /links had its rails column reads as one switch per leaf group
cp f.h5 old.h5
/usr/bin/python3 - old.h5 > old.txt 2>&1 <<'EOF' || bad "dropping /links rails: $(cat old.txt)"
import sys
import h5py
f = h5py.File(sys.argv[1], "r+")
links = f["links"][:]
names = [n for n in links.dtype.names if n != "rails"]
del f["links"]
f.create_dataset("links", data=links[names])
EOF
expect_exit 0 "$FLEETSIM" metrics old.h5 -o old.om --step 600 --families ifHCOutOctets
grep -q '^ifHCOutOctets{switch="h100-leaf3",port="uplink16",ifName="uplink16",ifIndex="16",job="snmp"} ' old.om &&
    ok || bad "without /links rails: $(grep -m1 '^ifHCOutOctets' old.om)"

# --pools and --nodes select the links as they select the GPUs: a NIC port with its node, a leaf
# group's uplinks when one of the group's nodes (its NIC rows' leaf) is selected.  Nodes 6-9 span
# leaf groups 0 and 1 (8 nodes each); --pools alone keeps every link
expect_exit 0 "$FLEETSIM" metrics f.h5 -o sel.om --step 3600 --nodes 6-9 \
    --families "DCGM_FI_DEV_POWER_USAGE,$FAMS"
expect_exit 0 "$FLEETSIM" metrics f.h5 --tsdb seldb --step 3600 --nodes 6-9 --families "$FAMS"
expect_exit 0 "$FLEETSIM" metrics f.h5 -o pool.om --step 3600 --pools h100 --families "$FAMS"
/usr/bin/python3 - f.h5 sel.om pool.om > sel.txt 2>&1 <<'EOF' && ok || bad "--nodes on links: $(cat sel.txt)"
import re, sys
import h5py
links = h5py.File(sys.argv[1], "r")["links"][:]
def found(path):
    nic, up, gpu = {}, {}, set()
    for line in open(path):
        m = re.match(r'^node_infiniband_port_data_transmitted_bytes_total\{.*instance="h100-(\d+):9100"', line)
        if m:
            nic[int(m.group(1))] = nic.get(int(m.group(1)), 0) + 1
        m = re.match(r'^ifHCOutOctets\{switch="h100-leaf(\d+)-rail\d+"', line)
        if m:
            up[int(m.group(1))] = up.get(int(m.group(1)), 0) + 1
        m = re.match(r'^DCGM_FI_DEV_POWER_USAGE\{.*hostname="h100-(\d+)"', line)
        if m:
            gpu.add(int(m.group(1)))
    return nic, up, gpu
nic, up, gpu = found(sys.argv[2])
sel = {6, 7, 8, 9}
leaves = {int(r["leaf"]) for r in links if r["tier"] == b"nic" and int(r["node"]) in sel}
assert leaves == {0, 1}, leaves
assert gpu == sel, gpu
assert set(nic) == sel, nic
assert set(up) == leaves, up
# --pools of the only pool keeps every link; the selected ports have all their samples
nic_all, up_all, _ = found(sys.argv[3])
assert set(nic_all) == {int(r["node"]) for r in links if r["tier"] == b"nic"}, nic_all
assert set(up_all) == {int(r["leaf"]) for r in links if r["tier"] == b"leaf_uplink"}, up_all
assert all(nic[n] == nic_all[n] for n in sel) and all(up[g] == up_all[g] for g in leaves)
print("ok")
EOF
if command -v promtool >/dev/null; then
    promtool tsdb dump seldb 2>/dev/null | grep -o 'instance="h100-[0-9]*:9100"\|switch="h100-leaf[0-9]*-rail' |
        sort -u | tr '\n' ' ' > seldb.txt
    [ "$(cat seldb.txt)" = 'instance="h100-6:9100" instance="h100-7:9100" instance="h100-8:9100" instance="h100-9:9100" switch="h100-leaf0-rail switch="h100-leaf1-rail ' ] &&
        ok || bad "--nodes on links in the blocks: $(cat seldb.txt)"
fi

# /link_bytes itself on the whole run (drained, ending between two samples; more rows than the
# fabric holds before handing a batch to the writer): in time order, at /timeline's instants,
# never falling per link, and each link's last row its /links bytes exactly
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/fabric-oversub.yaml" -o full.h5 -q
/usr/bin/python3 - full.h5 > lb.txt 2>&1 <<'EOF' && ok || bad "/link_bytes: $(cat lb.txt)"
import sys
import h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
lb, links, tl = f["link_bytes"][:], f["links"][:], f["timeline"]["time"][:]
assert len(lb) > 3 * 4096, len(lb)
assert np.all(np.diff(lb["time"]) >= 0) and set(lb["time"]) <= set(tl), "times"
assert tl[-1] == f["summary"]["end_time"][0] and tl[-1] % 600 != 0, tl[-1]
for l in range(len(links)):
    b = lb["bytes"][lb["link"] == l]
    assert np.all(np.diff(b) > 0), l
    assert (b[-1] if len(b) else 0.0) == links["bytes"][l], (l, b[-1:], links["bytes"][l])
print("ok", len(lb))
EOF

# a fabric run without /timeline (no /link_bytes) and a run without the fabric: no link series
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/fabric-oversub.yaml" -o off.h5 -q --set horizon=2h \
    --set until=horizon --set output.gpu_intervals=true --set cluster.fabric.kind=off \
    --set cluster.fabric.traffic=[]
expect_exit 0 "$FLEETSIM" metrics off.h5 -o off.om --step 600
/usr/bin/python3 -c "import h5py,sys; f=h5py.File('off.h5','r'); sys.exit('links' in f or 'link_bytes' in f)" &&
    ok || bad "a run without the fabric has /links or /link_bytes"
grep -q '^node_infiniband\|^ifHC' off.om && bad "link series without the fabric" || ok
grep -q '^DCGM_FI_DEV_GPU_UTIL' off.om && ok || bad "no DCGM series without the fabric"

if ! command -v promtool >/dev/null; then
    echo "SKIP: promtool not installed (Debian package prometheus)" >&2
    finish
    exit
fi
# the text parses; the linter's only findings are IF-MIB's own camelCase names
promtool check metrics < f.om > lint.txt 2>&1
grep -v -e "should be written in 'snake_case' not 'camelCase'" lint.txt > lint-other.txt
[ -s lint-other.txt ] && bad "promtool check metrics: $(head -3 lint-other.txt)" || ok
# the blocks: every value exact
promtool tsdb dump db > dump.txt 2>dump.err && ok || bad "promtool tsdb dump: $(head -3 dump.err)"
check dump dump.txt > py2.txt 2>&1 && ok || bad "blocks: $(cat py2.txt)"
finish
