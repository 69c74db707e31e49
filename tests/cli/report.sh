#!/usr/bin/env bash
# fleetsim report: the HTML report of a run file, of a run file with /failures
# and /cost tables, and of a sweep index; PNGs beside the page and the same
# PNGs embedded; every image loads in headless Chromium; error paths.
source "$(dirname "$0")/lib/common.bash"
PY=/usr/bin/python3
LIB="$SRC/tests/cli/lib"
if ! [ -x "$PY" ] || ! "$PY" -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
    echo "SKIP: $PY with h5py, numpy and matplotlib is needed (.ci/install-deps installs them)"
    exit 0
fi
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || echo "NOTE: chromium not found: the browser checks are skipped (.ci/install-deps installs it)"

# check_page HTML N NAMES...: N <img> elements, each a PNG data URI equal to
# the file NAME.png in the plots folder; no SVG; then Chromium loads them all
# (and, with SHOT=1, takes a screenshot; FLEETSIM_KEEP_SCREENSHOTS=DIR keeps
# a screenshot of every page there, to look at).  The Chromium part is done
# once for every page at the end (browser_results: one headless launch of a
# page that holds each checked page in an iframe and reads each one's
# data-images verdict); screenshots run in the background meanwhile.
BROWSER_PAGES=()
check_page() {
    local page=$1 n=$2
    shift 2
    "$PY" - "$page" "$n" "$@" <<'EOF' && ok || bad "$page: images are not the PNGs beside it"
import base64, os, re, sys
page, n, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
html = open(page, encoding="utf-8").read()
assert "<svg" not in html.lower(), "hand-written SVG"
srcs = re.findall(r'<img src="([^"]*)"[^>]*data-png="([^"]*)"', html)
assert len(srcs) == n, (len(srcs), n)
plots = os.path.join(os.path.dirname(os.path.abspath(page)),
                     os.path.splitext(os.path.basename(page))[0] + "_plots")
got = []
for uri, rel in srcs:
    assert uri.startswith("data:image/png;base64,"), uri[:40]
    data = base64.b64decode(uri.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    fn = os.path.join(os.path.dirname(os.path.abspath(page)), rel)
    assert open(fn, "rb").read() == data, fn
    got.append(os.path.splitext(os.path.basename(rel))[0])
assert sorted(got) == sorted(names), (got, names)
assert sorted(os.listdir(plots)) == sorted(x + ".png" for x in names), os.listdir(plots)
EOF
    [ -n "$CHROMIUM" ] && [ "${BROWSER:-1}" = 1 ] || return 0
    BROWSER_PAGES+=("$page:$n:${SHOT:-0}")
    [ "${SHOT:-0}" = 1 ] || [ -n "${FLEETSIM_KEEP_SCREENSHOTS:-}" ] || return 0
    (
        prof=$(mktemp -d)
        timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
            --disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
            --window-size=1200,3000 --screenshot="$PWD/${page%.html}-shot.png" \
            "file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")" >/dev/null 2>&1
        rm -rf "$prof"
    ) &
}

# One Chromium launch for every page check_page saw: all.html frames them
# and copies each frame's body[data-images] and data-image-count into its
# own body[data-pages] ("PAGE=ok:N ..."), which --dump-dom shows; each page
# must say ok with its N images.  Then the screenshots (SHOT=1) exist.
browser_results() {
    [ "${#BROWSER_PAGES[@]}" -gt 0 ] || return 0
    local entry page n shot frames=""
    for entry in "${BROWSER_PAGES[@]}"; do
        frames+="<iframe src=\"${entry%%:*}\"></iframe>"
    done
    cat > all.html <<EOT
<!doctype html><html><body data-pages="pending">$frames
<script>
function poll() {
  var out = [], done = true, fr = document.getElementsByTagName("iframe");
  for (var i = 0; i < fr.length; i++) {
    var b = null;
    try { b = fr[i].contentDocument && fr[i].contentDocument.body; } catch (e) {}
    var st = b ? b.getAttribute("data-images") : "unreadable";
    if (!st || st === "pending") done = false;
    out.push(fr[i].getAttribute("src") + "=" + st + ":" + (b ? b.getAttribute("data-image-count") : ""));
  }
  document.body.setAttribute("data-pages", out.join(" "));
  if (!done) setTimeout(poll, 50);
}
window.addEventListener("load", poll);
</script></body></html>
EOT
    local prof
    prof=$(mktemp -d)
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --allow-file-access-from-files \
        --user-data-dir="$prof" --virtual-time-budget=10000 --dump-dom "file://$PWD/all.html" \
        >dom.txt 2>chromium.err
    rm -rf "$prof"
    wait
    local verdict
    verdict=$(grep -o 'data-pages="[^"]*"' dom.txt)
    for entry in "${BROWSER_PAGES[@]}"; do
        IFS=: read -r page n shot <<<"$entry"
        if [[ " ${verdict#data-pages=\"}" == *" $page=ok:$n "* || " ${verdict#data-pages=\"}" == *" $page=ok:$n\"" ]]; then
            ok
        else
            bad "$page in Chromium: ${verdict:-$(head -c 300 chromium.err)}"
        fi
        if [ "$shot" = 1 ]; then
            [ "$(stat -c %s "${page%.html}-shot.png" 2>/dev/null || echo 0)" -gt 20000 ] && ok \
                || bad "$page: no screenshot"
        fi
        if [ -n "${FLEETSIM_KEEP_SCREENSHOTS:-}" ]; then
            cp "${page%.html}-shot.png" "$FLEETSIM_KEEP_SCREENSHOTS/" 2>/dev/null || true
        fi
    done
}

BASE=(--set horizon=2d --set warmup=6h --set cluster.pools.0.nodes=32)

# the real `fleetsim sweep`, when this build has it: runs in the background
# while the single-run reports are made (its report is checked below)
SWEEP_PID=
if "$FLEETSIM" help 2>/dev/null | grep -q '^ *sweep'; then
    cat > sweep.yaml <<'EOF'
name: report-sweep
horizon: 2d
warmup: 6h
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 32, gpus_per_node: 8}
workload:
  synthetic:
    arrivals: {process: poisson, rate: 10/h}
    gpus: {1: 0.5, 2: 0.1, 4: 0.1, 8: 0.2, 16: 0.06, 64: 0.04}
    duration: {dist: lognormal, median: 45m, sigma: 1.5}
sweep:
  params:
    - {key: workload.synthetic.arrivals.rate, values: [8/h, 14/h]}
  replications: 3
EOF
    timeout 120 "$FLEETSIM" sweep sweep.yaml -o real -j 2 -q >sweep.out 2>&1 &
    SWEEP_PID=$!
fi

# ---- one run ----
expect_exit 0 "$FLEETSIM" run "${BASE[@]}" --set workload.synthetic.arrivals.rate=12/h -o run.h5 -q
expect_exit 0 "$FLEETSIM" report run.h5 -o run.html
expect_out 'run\.html'
# (no browser here: extra.html below has these plots and more)
BROWSER=0 check_page run.html 4 timeline capacity wait_cdf cost
"$PY" - run.h5 run.html <<'EOF' && ok || bad "the capacity plot's caption does not give /summary's states"
import re, sys, h5py
s = h5py.File(sys.argv[1], "r")["summary"][0]
page = open(sys.argv[2], encoding="utf-8").read()
m = re.search(r"Whole run: busy ([0-9.]+)%, free while jobs wait ([0-9.]+)%, "
              r"free, nothing waiting ([0-9.]+)%, down ([0-9.]+)%", page)
assert m, "no whole-run states in the caption"
want = [100 * s[c] / s["gpu_s_total"] for c in ("gpu_s_busy", "gpu_s_waiting", "gpu_s_idle", "gpu_s_down")]
assert all(abs(float(g) - w) <= 0.05 for g, w in zip(m.groups(), want)), (m.groups(), want)
assert "what busy GPU-time was" in page
EOF
grep -q 'Cost per pool (/cost_pools)' run.html && ok || bad "no cost table"
grep -q '/failures has no rows' run.html && ok || bad "empty /failures not said"
grep -q '<td>wait_p95</td>' run.html && ok || bad "no summary table"
grep -q 'warm-up of 21600 s' run.html && ok || bad "the warm-up (6h) did not reach the report"

# ---- a run file with /failures and /cost tables (layouts of later issues:
# fake rows added with h5py; the report draws whatever columns it finds) ----
cp run.h5 extra.h5
"$PY" - extra.h5 <<'EOF' && ok || bad "adding /failures and /cost failed"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    for name in ("cost", "cost_pools", "cost_tenants", "failures"):   # the run's own
        if name in f:
            del f[name]
    kind = h5py.enum_dtype({"fail": 0, "repair": 1}, basetype="i4")
    t = np.linspace(0, 2 * 86400, 60)
    fl = np.zeros(60, dtype=[("time", "<f8"), ("event", kind), ("node", "<u4")])
    fl["time"], fl["event"], fl["node"] = t, np.arange(60) % 2, np.arange(60) % 32
    f.create_dataset("failures", data=fl)
    c = np.array([(b"capex", 1000.0), (b"power", 250.5), (b"repair", 75.0)],
                 dtype=[("item", "S16"), ("usd", "<f8")])
    f.create_dataset("cost", data=c)
EOF
expect_exit 0 "$FLEETSIM" report extra.h5 -o extra.html
check_page extra.html 5 timeline capacity wait_cdf failures cost

# ---- a sweep index: arrival rate 8, 12, 16 per hour x 3 replications ----
mkdir -p sw/runs
vals="8/h 12/h 16/h"
p=0
for v in $vals; do
    for r in 0 1 2; do
        "$FLEETSIM" run "${BASE[@]}" --set workload.synthetic.arrivals.rate=$v --set replication=$r \
            -o sw/runs/p$p-r$r.h5 -q || bad "run p$p r$r failed"
    done
    p=$((p + 1))
done
"$PY" "$LIB/fake_sweep.py" sw workload.synthetic.arrivals.rate "$vals" 3 && ok || bad "fake_sweep.py failed"
expect_exit 0 "$FLEETSIM" report sw/index.h5 -o sweep.html
SHOT=1 check_page sweep.html 4 versus_load wait_cdf timeline cost
grep -q 'Utilization and wait versus workload.synthetic.arrivals.rate' sweep.html && ok \
    || bad "no plot against the swept rate"
grep -q 'Summary per point (/stats)' sweep.html && ok || bad "no per-point table"

# the real `fleetsim sweep` (started at the top, in the background)
if [ -n "$SWEEP_PID" ]; then
    if wait "$SWEEP_PID"; then
        ok
        expect_exit 0 "$FLEETSIM" report real/index.h5 -o real.html
        check_page real.html 4 versus_load wait_cdf timeline cost
    else
        echo "NOTE: fleetsim sweep did not run this sweep: $(head -c 400 sweep.out)"
    fi
fi

# ---- where the script comes from, and failures ----
mkdir -p alt && cat > alt/report.py <<'EOF'
import sys
open(sys.argv[sys.argv.index("-o") + 1], "w").write("from FLEETSIM_DATADIR\n")
EOF
FLEETSIM_DATADIR="$PWD/alt" "$FLEETSIM" report run.h5 -o alt.html >/dev/null 2>&1
grep -q 'from FLEETSIM_DATADIR' alt.html 2>/dev/null && ok || bad "FLEETSIM_DATADIR not used first"
# default output name: report.html in the working directory
mkdir -p def && (cd def && FLEETSIM_DATADIR="$PWD/../alt" "$FLEETSIM" report ../run.h5 >/dev/null 2>&1)
grep -q 'from FLEETSIM_DATADIR' def/report.html 2>/dev/null && ok || bad "default report.html not written"
expect_exit 1 "$FLEETSIM" report run.h5 -o x.html --python /nonexistent/python3
expect_err '/nonexistent/python3 not found'
expect_err 'python3-matplotlib'
printf '#!/bin/sh\nexec %s -S "$@"\n' "$PY" > nosite.sh && chmod +x nosite.sh
expect_exit 1 "$FLEETSIM" report run.h5 -o x.html --python "$PWD/nosite.sh"
expect_err "module '(numpy|h5py|matplotlib)' is missing"
expect_no_file x.html
expect_exit 2 "$FLEETSIM" report missing.h5
expect_err 'missing\.h5: cannot open'
echo "not hdf5" > junk.h5
expect_exit 2 "$FLEETSIM" report junk.h5
expect_exit 2 "$FLEETSIM" report
expect_exit 2 "$FLEETSIM" report run.h5 --bogus
expect_exit 0 "$FLEETSIM" report --help
expect_out 'usage: fleetsim report'
browser_results
finish
