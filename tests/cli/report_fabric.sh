#!/usr/bin/env bash
# fleetsim report, the fabric part (analysis/report.py fabric_section): a run with
# cluster.fabric gets the line of GPU-hours lost to the network (/summary gpu_s_network)
# and the plot of the jobs' slowdown and the busiest links (fabric.png, embedded and
# beside the page); a run without the fabric gets neither.
source "$(dirname "$0")/lib/common.bash"
PY=/usr/bin/python3
if ! [ -x "$PY" ] || ! "$PY" -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
    echo "SKIP: $PY with h5py, numpy and matplotlib is needed (.ci/install-deps installs them)"
    exit 0
fi
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/fabric-oversub.yaml" -o fab.h5 -q --set horizon=12h
expect_exit 0 "$FLEETSIM" report fab.h5 -o fab.html
"$PY" - fab.h5 fab.html > py.txt 2>&1 <<'EOF' && ok || bad "fabric section: $(cat py.txt)"
import base64, re, sys
import h5py
f = h5py.File(sys.argv[1], "r")
page = open(sys.argv[2], encoding="utf-8").read()
s = f["summary"][0]
lost_h = float(s["gpu_s_network"]) / 3600
assert lost_h > 0, lost_h
m = re.search(r"GPU-hours lost to the network: <b>([^<]+)</b> \(([0-9.]+)% of the busy", page)
assert m, "no line"
assert float(m.group(1)) == float("%.6g" % lost_h), (m.group(1), lost_h)
assert abs(float(m.group(2)) - 100 * lost_h / (float(s["gpu_s_busy"]) / 3600)) < 0.006, m.group(2)
img = re.search(r'<img src="data:image/png;base64,([^"]*)"[^>]*data-png="fab_plots/fabric.png"', page)
assert img, "no fabric plot"
assert base64.b64decode(img.group(1)) == open("fab_plots/fabric.png", "rb").read()
assert "Network fabric: slowdown and busiest links" in page
print("ok", m.group(1))
EOF
# without the fabric: no section, no plot
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/fabric-oversub.yaml" -o off.h5 -q --set horizon=12h \
    --set cluster.fabric.kind=off --set cluster.fabric.traffic=[]
expect_exit 0 "$FLEETSIM" report off.h5 -o off.html
grep -q "Network fabric\|lost to the network" off.html && bad "a fabric section without the fabric" || ok
[ -e off_plots/fabric.png ] && bad "fabric.png without the fabric" || ok
finish
