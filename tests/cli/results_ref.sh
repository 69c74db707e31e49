#!/usr/bin/env bash
# The results reference check (tests/results_ref.py, tests/data/results_ref/README.md) fails
# when it must: a run with one changed key, a changed value (found to its block of 1,024 rows),
# a missing column or table, an incomplete file, a scenario that does not run, a manifest that
# became a scenario, a scenario with no reference; and passes a new column, a narrower or wider
# stored type of the same values, another NaN payload, and a renamed column declared in a
# schema_changes.json under a new format_version.
. "$(dirname "$0")/lib/common.bash"
PY=${FS_TEST_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import h5py, numpy' 2>/dev/null; then
    echo "skipped: $PY has no h5py/numpy"
    exit 77
fi
CHECK="$SRC/tests/results_ref.py"

# the reference scenario at its seed: equal
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/default.yaml" --seed 7 -q -o good.h5
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" default good.h5
expect_out 'equal to the reference'

# one key changed (the job durations' spread): flagged, naming scenario, table and column
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/default.yaml" --seed 7 -q -o changed.h5 \
    --set workload.synthetic.duration.sigma=1.49
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default changed.h5
expect_out '^FAIL: default: column /jobs\.end differs: .*reference sum .* actual sum '
expect_out '^FAIL: default: column /summary\.'
# another seed: flagged too
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/default.yaml" --seed 8 -q -o seed8.h5
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default seed8.h5
expect_out '^FAIL: default: column /jobs\.submit differs'

# mutate.py IN OUT OP...: a copy of IN with one change, every other dataset and attribute as is
cat > mutate.py <<'EOF'
import sys, h5py, numpy as np
src, dst, op = sys.argv[1], sys.argv[2], sys.argv[3:]
with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
    for k in f.attrs:
        g.attrs[k] = f.attrs[k]
    for name in f:
        data = f[name][()]
        if op[0] == "drop-table" and name == op[1]:
            continue
        if name == op[1]:
            names = list(data.dtype.names)
            if op[0] == "set":                      # set TABLE COLUMN ROW VALUE
                data[op[2]][int(op[3])] = float(op[4])
            elif op[0] == "drop":                   # drop TABLE COLUMN
                names.remove(op[2])
                data = np.rec.fromarrays([data[c] for c in names], names=names)
            elif op[0] == "add":                    # add TABLE COLUMN
                cols = [data[c] for c in names] + [np.arange(len(data), dtype="<f8")]
                data = np.rec.fromarrays(cols, names=names + [op[2]])
            elif op[0] == "retype":                 # retype TABLE COLUMN NUMPY_TYPE
                cols = [data[c].astype(op[3]) if c == op[2] else data[c] for c in names]
                dt = [(c, op[3] if c == op[2] else data.dtype[c]) for c in names]
                data = np.array(list(zip(*cols)), dtype=dt)
            elif op[0] == "rename":                 # rename TABLE COLUMN NEW_NAME
                new = [op[3] if c == op[2] else c for c in names]
                data = np.rec.fromarrays([data[c] for c in names], names=new)
            elif op[0] == "nan-payload":            # nan-payload TABLE COLUMN
                v = data[op[2]].view("<u8")
                v[np.isnan(data[op[2]])] = 0xFFF8000000000001
        g.create_dataset(name, data=data, maxshape=(None,), chunks=True)
    if op[0] == "attr":                             # attr - NAME VALUE
        g.attrs[op[2]] = np.int32(op[3])
EOF
mutate() { "$PY" mutate.py good.h5 m.h5 "$@" || bad "mutate.py $*"; }

# a copy of the file through h5py (the stored layout changes, the values do not): equal
mutate copy -
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" default m.h5

# one value in row 2100 of /timeline: found in rows 2048..3071
mutate set timeline gpus_busy 2100 5
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^FAIL: default: column /timeline\.gpus_busy differs: [0-9]+ rows; first difference in rows 2048\.\.3071; reference sum [0-9]+ '
# ...and only that column
if [ "$(grep -c '^FAIL' out.txt)" = 1 ]; then ok; else bad "one changed value, several columns flagged: $(cat out.txt)"; fi

# a float value in the first block of /summary
mutate set summary utilization 0 0.5
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^FAIL: default: column /summary\.utilization differs: 1 rows; first difference in rows 0\.\.0'

# a missing column, a missing table
mutate drop jobs wait
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^FAIL: default: column /jobs\.wait is missing \(reference: [0-9]+ rows, sum '
mutate drop-table gpu_intervals
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^FAIL: default: table /gpu_intervals is missing'

# an incomplete file
mutate attr - complete 0
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out 'is not complete'

# a new column: reported, not a failure
mutate add jobs new_figure
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^note: default: new column /jobs\.new_figure'

# the same values in other widths (u32 -> i64, f64 -> f32 for whole numbers, f64 -> i64): equal
mutate retype timeline gpus_busy '<i8'
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" default m.h5
mutate retype jobs gpus '<f4'
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" default m.h5
# ...but not other values: a float column cut to float32
mutate retype jobs submit '<f4'
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^FAIL: default: column /jobs\.submit differs'

# NaN is NaN whatever its bits
mutate nan-payload jobs ettr
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" default m.h5

# a renamed column under a new format_version: a failure unless schema_changes.json says so
"$PY" mutate.py good.h5 r1.h5 rename jobs wait wait_s || bad "mutate rename"
"$PY" mutate.py r1.h5 m.h5 attr - format_version 2 || bad "mutate attr"
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" default m.h5
expect_out '^FAIL: default: column /jobs\.wait is missing'
expect_out '^note: default: format_version 2, reference 1'
printf '{"changes": [{"since_format_version": 2, "renamed": {"jobs/wait": "jobs/wait_s"}}]}\n' \
    > changes.json
expect_exit 0 "$PY" "$CHECK" file --src "$SRC" --schema-changes changes.json default m.h5
expect_out '^note: default: column /jobs\.wait compared as /jobs\.wait_s'
# the declaration does not apply to a file of the reference's version
expect_exit 1 "$PY" "$CHECK" file --src "$SRC" --schema-changes changes.json default r1.h5

# a scenario that does not run is a failure, not a skip
printf '#!/bin/sh\necho "broken on purpose" >&2\nexit 1\n' > broken
chmod +x broken
expect_exit 1 "$PY" "$CHECK" check --fleetsim ./broken --src "$SRC" sweep-fifo-load
expect_out "^FAIL: sweep-fifo-load: 'fleetsim run scenarios/sweep-fifo-load.yaml --seed 7 -q -o .*' exited 1: broken on purpose"
# a listed manifest that validate accepts now (or that is no manifest) is a failure
printf '#!/bin/sh\necho ok\nexit 0\n' > accepts
chmod +x accepts
expect_exit 1 "$PY" "$CHECK" check --fleetsim ./accepts --src "$SRC" kueue_research-cohort
expect_out "^FAIL: kueue_research-cohort: scenarios/kueue/research-cohort.yaml is listed in not_scenarios.json, but 'fleetsim validate' exits 0"
expect_exit 2 "$PY" "$CHECK" check --fleetsim "$FLEETSIM" --src "$SRC" no-such-scenario
expect_err 'no scenario named no-such-scenario'

# the inventory: a new .yaml under scenarios/ with no reference, and a reference left behind
mkdir -p tree/tests/data
cp -r "$SRC/scenarios" tree/
cp -r "$SRC/tests/data/results_ref" tree/tests/data/
expect_exit 0 "$PY" "$CHECK" inventory --fleetsim "$FLEETSIM" --src tree
cp tree/scenarios/default.yaml tree/scenarios/new-one.yaml
mv tree/scenarios/sweep-fifo-load.yaml tree/scenarios/renamed.yaml
expect_exit 1 "$PY" "$CHECK" inventory --fleetsim "$FLEETSIM" --src tree
expect_out '^FAIL: scenarios/new-one.yaml has no reference'
expect_out '^FAIL: tests/data/results_ref/sweep-fifo-load: scenario sweep-fifo-load no longer exists'
# update makes the reference of the new scenario (equal to default's tables but its own file)
expect_exit 0 "$PY" "$CHECK" update --fleetsim "$FLEETSIM" --src tree new-one
expect_exit 0 "$PY" "$CHECK" check --fleetsim "$FLEETSIM" --src tree new-one
expect_out '^new-one: [0-9]+ tables, [0-9]+ columns equal to the reference'

finish
