#!/usr/bin/env bash
# The command line itself (docs/cli.md): getopt_long forms on every command
# (--opt=value, unique prefixes, clustered short options, "--"), the
# --json documents of run, versus, compare and plan (parsed by python3's
# json module, numbers equal to the HDF5 files), the man page and the bash
# completion generated from the tables, the progress line off a terminal,
# and `report` on files it cannot read (a clear error, no traceback).
source "$(dirname "$0")/lib/common.bash"
PY=/usr/bin/python3
have_h5py=0
if "$PY" -c 'import h5py, numpy' 2>/dev/null; then have_h5py=1; fi

# ---- long options: --opt=value, prefixes, clusters, "--" ----
cat > s.yaml <<'EOF2'
name: s
horizon: 1d
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 4/h}, gpus: {1: 1.0}, duration: {dist: exponential, mean: 1h}}
EOF2
expect_exit 0 "$FLEETSIM" run s.yaml --set=horizon=2d --output=r1.h5 --seed=3 --quiet
[ -f r1.h5 ] && ok || bad "--output=FILE wrote nothing"
expect_exit 0 "$FLEETSIM" run s.yaml --set horizon=2d --out r2.h5 --see 3 -q
cmp -s <(h5dump -d /jobs r1.h5 | tail -n +2) <(h5dump -d /jobs r2.h5 | tail -n +2) && ok \
    || bad "--output=/--seed= and the prefixes --out/--see differ"
expect_exit 0 "$FLEETSIM" run s.yaml --set horizon=2d -qo r3.h5
[ -f r3.h5 ] && [ ! -s out.txt ] && ok || bad "-qo FILE (clustered) did not work"
expect_exit 0 "$FLEETSIM" run s.yaml --set horizon=2d -or4.h5 -q
[ -f r4.h5 ] && ok || bad "-oFILE did not work"
cp s.yaml ./-s.yaml
expect_exit 0 "$FLEETSIM" validate -- -s.yaml
expect_out '^-s.yaml: ok'
expect_exit 0 "$FLEETSIM" validate --set=horizon=2d s.yaml
expect_exit 2 "$FLEETSIM" run --quiet=yes
expect_err "--quiet takes no value"
expect_exit 2 "$FLEETSIM" run --bogus
expect_err "unknown option '--bogus'"
expect_exit 2 "$FLEETSIM" run -o
expect_err "needs a file name"
expect_exit 2 "$FLEETSIM" sweep s.yaml --jobs=0 -o x
expect_err "-j needs a number of workers"
expect_exit 0 "$FLEETSIM" sweep s.yaml --set='sweep={replications: 2}' --output=sw --jobs=2 -q
expect_exit 0 "$FLEETSIM" compare --no-w --points=0,0 sw/index.h5
expect_out 'Paired over 2 replications'
expect_exit 0 "$FLEETSIM" merge --quiet sw
for c in run validate bench compare report sweep plan merge trace versus help frag version; do
    expect_exit 0 "$FLEETSIM" $c --help
    expect_out 'usage: fleetsim'
done
expect_exit 0 "$FLEETSIM" trace info --format=native "$SRC/tests/data/traces/native_example.csv"
expect_exit 0 "$FLEETSIM" frag --help

# ---- run --json: one document, the numbers of /summary ----
expect_exit 0 "$FLEETSIM" run s.yaml -o j.h5 --json
cp out.txt run.json
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' run.json && ok || bad "run --json is not JSON"
if [ "$have_h5py" = 1 ]; then
    "$PY" - run.json j.h5 <<'EOF2' && ok || bad "run --json does not match /summary"
import json, math, sys, h5py
doc = json.load(open(sys.argv[1]))
row = h5py.File(sys.argv[2], "r")["summary"][0]
assert doc["command"] == "run" and doc["results"] == sys.argv[2]
assert list(doc["summary"]) == list(row.dtype.names), (list(doc["summary"]), row.dtype.names)
for k, v in doc["summary"].items():
    want = row[k].item()
    assert (v is None and math.isnan(want)) or v == want, (k, v, want)
assert doc["units"]["wait_mean"] == "s"
EOF2
fi

# ---- plan --json and the plan report ----
cat > p.yaml <<'EOF2'
name: p
seed: 3
horizon: 2d
warmup: 6h
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 10, gpus_per_node: 1}
workload:
  synthetic: {arrivals: {rate: 8/h}, gpus: {1: 1.0}, duration: {dist: exponential, mean: 1h}}
plan:
  replications: 2
  slo:
    - {metric: wait_p95, max: 2h}
  choices:
    - {pool: main, nodes: {from: 8, to: 16, step: 4}}
EOF2
expect_exit 0 "$FLEETSIM" plan p.yaml -o pl -j 2 --json
cp out.txt plan.json
if [ "$have_h5py" = 1 ]; then
    "$PY" - plan.json pl <<'EOF2' && ok || bad "plan --json does not match plan.h5 and the runs"
import json, math, sys, h5py
doc = json.load(open(sys.argv[1]))
f = h5py.File(sys.argv[2] + "/plan.h5", "r")
plan = f["plan"][:]
assert doc["command"] == "plan" and doc["objective"] == "cost_total"
assert doc["slo"][0] == {"metric": "wait_p95", "kind": "max", "bound": 7200.0, "text": "wait_p95 <= 2h"}
assert len(doc["points"]) == len(plan)
for p in doc["points"]:
    row = [r for r in plan if int(r["nodes"]) == p["nodes"]][0]
    assert p["metrics"]["cost_total"]["mean"] == float(row["cost_total_mean"])
    assert p["meets"] == bool(row["meets"]) and p["chosen"] == bool(row["chosen"])
    for r, v in enumerate(p["metrics"]["wait_p95"]["values"]):
        run = h5py.File("%s/evals/main-n%d/runs/p0000-r%04d.h5" % (sys.argv[2], p["nodes"], r), "r")
        assert v == float(run["summary"]["wait_p95"][0]), (p["nodes"], r, v)
assert list(f.attrs["slo_bound"]) == [7200.0]
# the cash-flow view, recomputed: purchase at year 0, yearly opex, residual, 8%/yr
year = 365.25 * 86400
flows = [p for p in doc["points"] if p["cash_flow"] is not None]
assert flows and all(p["best"] for p in flows)
for p in flows:
    c = p["cash_flow"]
    runs = [h5py.File("%s/evals/main-n%d/runs/p0000-r%04d.h5" % (sys.argv[2], p["nodes"], r), "r")["summary"][0]
            for r in range(2)]
    run_s = sum(float(r["end_time"]) for r in runs) / 2
    run_cost = sum(float(r["cost_total"]) for r in runs) / 2
    assert abs(c["run_s"] - run_s) <= 1e-9 * run_s and abs(c["run_cost"] - run_cost) <= 1e-9 * run_cost
    assert c["discount_rate"] == 0.08 and c["purchase"] > 0
    share = run_s / (c["years"] * year) * (1 - c["residual"] / c["purchase"])
    assert abs(c["depreciation_share"] - share) <= 1e-9, (c, share)
    opex = (run_cost - c["depreciation"]) * year / run_s
    assert abs(c["opex_per_year"] - opex) <= 1e-6 * opex
    npv, y, k = c["purchase"], 0.0, 1
    while y < c["years"] - 1e-12:
        part = min(1.0, c["years"] - y)
        npv += c["opex_per_year"] * part / 1.08 ** k
        y += part
        k += 1
    npv -= c["residual"] / 1.08 ** c["years"]
    assert abs(c["npv"] - npv) <= 1e-9 * npv, (c["npv"], npv)
    if p["chosen"]:
        assert f.attrs["chosen_npv"] == c["npv"] and f.attrs["discount_rate"] == 0.08
EOF2
    grep -q '^cash flow' out.txt && bad "cash flow printed into the --json output" || ok
fi
expect_exit 0 "$FLEETSIM" plan p.yaml -o pl2 -j 2 --set plan.discount_rate=0.05
expect_out '^cash flow \(finance view'
expect_out '^  main +[0-9]+ nodes: purchase \$[0-9,]+; the run.s cost over its [0-9.]+ d includes \$[0-9,]+ of depreciation = [0-9.]+% of the purchase'
expect_out 'NPV of the cost \$[0-9,]+ at 5.0%/yr over 5 years'
expect_exit 2 "$FLEETSIM" plan p.yaml -o pl --set plan.discount_rate=2
expect_err 'plan.discount_rate'
if "$PY" -c 'import h5py, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report pl/plan.h5 -o plan.html
    grep -q 'Cost frontier' plan.html && grep -q 'smallest fleet that meets the SLOs' plan.html \
        && grep -q 'SLO margins' plan.html && ok || bad "the plan report lacks its sections"
    # versus report: labelled by the -p names, one bar per policy
    expect_exit 0 "$FLEETSIM" versus s.yaml -p first=scheduler.queue=fifo -p second=scheduler.queue=sjf \
        -r 2 -j 2 -o vs -q
    expect_exit 0 "$FLEETSIM" report vs/index.h5 -o vs.html
    grep -q 'fleetsim versus report' vs.html && grep -q 'Policies side by side' vs.html && \
        grep -q '<td>first</td>' vs.html && ok || bad "the versus report is not labelled by policy"
    grep -q 'versus scheduler.queue' vs.html && bad "versus report plotted against a parameter" || ok
    # a /jobs that is a group: a clear error, exit 2, no traceback
    "$PY" - j.h5 grp.h5 <<'EOF2'
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    del f["jobs"]
    f.create_group("jobs")
EOF2
    expect_exit 2 "$FLEETSIM" report grp.h5 -o grp.html
    expect_err 'grp.h5: /jobs is a group, expected a table'
    grep -q Traceback err.txt && bad "a Python traceback" || ok
fi

# ---- man page and completion, from the tables ----
expect_exit 0 "$FLEETSIM" help --man
grep -q '^\.TH FLEETSIM 1' out.txt && ok || bad "no .TH in the man page"
for c in run validate sweep plan versus compare report trace frag; do
    grep -q "^\.SS $c\$" out.txt && ok || bad "the man page has no section for $c"
done
grep -q 'no\\-output' out.txt && ok || bad "the man page lists no --no-output"
if command -v man >/dev/null; then
    man -l out.txt >/dev/null 2>man.err && ok || bad "man cannot read it: $(head -c 200 man.err)"
fi
expect_exit 0 "$FLEETSIM" help --completion bash
cp out.txt fleetsim.bash
bash -n fleetsim.bash && ok || bad "the completion script is not valid bash"
complete_words() {   # complete_words WORD... : the completions of the last word
    bash -c 'source ./fleetsim.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fleetsim; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
complete_words fleetsim ve | grep -qx versus && complete_words fleetsim ve | grep -qx version && ok \
    || bad "commands do not complete"
complete_words fleetsim run --no | grep -qx -- --no-output && ok || bad "run options do not complete"
complete_words fleetsim run --set cluster.pools.0.n | grep -qx 'cluster.pools.0.nodes=' && ok \
    || bad "scenario keys do not complete after --set: $(complete_words fleetsim run --set cluster.pools.0.n)"
complete_words fleetsim run --set scheduler.q | grep -qx 'scheduler.queue=' && ok || bad "scheduler.queue"
if [ -f "$(dirname "$FLEETSIM")/fleetsim.1" ]; then
    cmp -s "$(dirname "$FLEETSIM")/fleetsim.1" <("$FLEETSIM" help --man) && ok \
        || bad "the built fleetsim.1 is not the table's"
fi

# ---- progress off a terminal: whole lines with an ETA, at the rate asked ----
BIG=(s.yaml --set horizon=30d --set workload.synthetic.arrivals.rate=400/h --set cluster.pools.0.nodes=64)
expect_exit 0 "$FLEETSIM" run "${BIG[@]}" --no-output -q --progress 0.02
grep -q $'\r' err.txt && bad "a carriage return in the progress log" || ok
grep -Eq '^fleetsim: t=[0-9.]+ d of 30.00 d \([0-9]+%\) .* ETA ' err.txt && ok \
    || bad "no progress line with an ETA: $(head -c 300 err.txt)"
expect_exit 0 "$FLEETSIM" run s.yaml --no-output -q
[ ! -s err.txt ] && ok || bad "a short run off a terminal printed progress before 30 s"
finish
