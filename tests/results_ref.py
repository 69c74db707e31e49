#!/usr/bin/python3
"""Results reference check: every shipped scenario, run at a fixed seed, writes the same values.

For each scenario under scenarios/ the reference (tests/data/results_ref/NAME.json) holds, per
table (every dataset of the results file) and column: the row count, a SHA-256 of the values in a
canonical form that does not depend on the stored type (integers as int64 little-endian, floats
as float64 little-endian with every NaN as one NaN and -0.0 as 0.0, enumerations as member names,
strings as UTF-8; names and strings each followed by a NUL), one 64-bit digest per block of
1,024 rows (to find the first differing rows), and figures for people (sum, min, max, NaN count,
counts per enum member, distinct strings). tests/data/results_ref/README.md says how to update it
and how a schema change is handled.

  results_ref.py check  --fleetsim BIN --src SRC [SCENARIO...]  run and compare (all when none)
  results_ref.py file   --src SRC SCENARIO FILE.h5                compare an existing results file
  results_ref.py inventory --fleetsim BIN --src SRC                every .yaml is in the reference
  results_ref.py update --fleetsim BIN --src SRC [-j N] [SCENARIO...]  rewrite the reference

Exit status: 0 equal, 1 a difference (or a scenario that fails to run), 2 bad usage,
77 h5py/numpy missing, or (check) a scenario skipped because the shared data folder it reads
is not here and nothing failed (CTest reports the test as skipped).
"""
import argparse
import concurrent.futures
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:  # CTest: SKIP_RETURN_CODE 77
    print("results_ref: skipped, %s (install python3-h5py and python3-numpy)" % e)
    sys.exit(77)

SEED = 7
BLOCK_ROWS = 1024
REF_SUBDIR = os.path.join("tests", "data", "results_ref")
NOT_SCENARIOS = "not_scenarios.json"
SCHEMA_CHANGES = "schema_changes.json"
CANONICAL_NAN = np.array([0x7FF8000000000000], dtype="<u8").view("<f8")[0]


class Usage(Exception):
    pass


# ---------------------------------------------------------------- scenarios

def scenario_files(src):
    """Every .yaml under SRC/scenarios, as (name, path relative to SRC), sorted by path."""
    out = []
    root = os.path.join(src, "scenarios")
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".yaml"):
                rel = os.path.relpath(os.path.join(d, f), src)
                out.append((scenario_name(rel), rel))
    return sorted(out, key=lambda t: t[1])


def scenario_name(rel):
    """scenarios/kueue/research-cohort.yaml -> kueue_research-cohort (as /work/ref-base names)."""
    p = rel[len("scenarios/"):] if rel.startswith("scenarios/") else rel
    return p[:-len(".yaml")].replace("/", "_")


def is_manifest(path):
    """A Kubernetes manifest (Kueue objects): every YAML document names apiVersion and kind."""
    docs = [[]]
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.rstrip() == "---":
                docs.append([])
            else:
                docs[-1].append(line)
    docs = [d for d in docs if any(l.strip() and not l.lstrip().startswith("#") for l in d)]
    return bool(docs) and all(any(l.startswith("apiVersion:") for l in d)
                              and any(l.startswith("kind:") for l in d) for d in docs)


class NoData(Exception):
    """The scenario reads the shared data folder beside the repository, which is not here."""


SHARED_DATA = "../../shared/data/"


def data_dir(src):
    """The shared data folder: $FLEETSIM_DATA, or beside the checkout (SRC/../shared/data, where
    the scenarios' ../../shared/data/ points), or beside the folder of worktrees."""
    for d in (os.environ.get("FLEETSIM_DATA"), os.path.join(src, "..", "shared", "data"),
              os.path.join(src, "..", "..", "shared", "data")):
        if d and os.path.isdir(d):
            return os.path.abspath(d)
    return None


def prepare(src, rel, tmpdir):
    """The path to run: REL itself, or, when it reads the shared data folder and that folder is
    not where REL's relative paths point, a copy in TMPDIR naming the folder found."""
    with open(os.path.join(src, rel), encoding="utf-8") as f:
        text = f.read()
    if SHARED_DATA not in text:
        return rel
    where = os.path.join(src, os.path.dirname(rel), SHARED_DATA)
    if os.path.isdir(where):
        return rel
    found = data_dir(src)
    if found is None:
        raise NoData("%s reads %s (the shared data folder beside the repository), which is "
                     "not at %s nor named by FLEETSIM_DATA" % (rel, SHARED_DATA,
                                                               os.path.abspath(where)))
    copy = os.path.join(tmpdir, os.path.basename(rel))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text.replace(SHARED_DATA, found + "/"))
    return copy


def run_args(rel, out):
    return ["run", rel, "--seed", str(SEED), "-q", "-o", out]


def run_scenario(fleetsim, src, rel, out):
    """Runs one scenario; returns None or an error text."""
    path = prepare(src, rel, os.path.dirname(out))
    p = subprocess.run([fleetsim] + run_args(path, out), cwd=src,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        return "'fleetsim %s' exited %d: %s" % (" ".join(run_args(path, out)), p.returncode,
                                                p.stdout.decode("utf-8", "replace")[-800:])
    return None


def validate(fleetsim, src, rel, tmpdir=None):
    if tmpdir is not None:
        rel = prepare(src, rel, tmpdir)
    p = subprocess.run([fleetsim, "validate", rel], cwd=src,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace").strip()


# ---------------------------------------------------------------- canonical form

def column_kind(dt):
    if h5py.check_enum_dtype(dt) is not None:
        return "enum"
    if dt.kind in "iub":
        return "int"
    if dt.kind == "f":
        return "float"
    if dt.kind in "SUO":
        return "string"
    raise ValueError("unsupported column type %s" % dt)


def canon_bytes(kind, values, enum_names):
    """The canonical bytes of a 1-D (or, for array fields, N-D) slice of one column."""
    if kind == "int":
        return np.ascontiguousarray(values, dtype="<i8").tobytes() if values.dtype.kind != "u" \
            else np.ascontiguousarray(values, dtype="<u8").tobytes()
    if kind == "float":
        v = np.array(values, dtype="<f8")  # a copy
        v[np.isnan(v)] = CANONICAL_NAN
        v += 0.0  # -0.0 -> 0.0: equal values have equal bytes
        return v.tobytes()
    if kind == "enum":
        return b"".join(enum_names.get(int(x), "?%d" % int(x)).encode() + b"\0"
                        for x in np.ravel(values))
    out = []
    for x in np.ravel(values).tolist():
        if isinstance(x, str):
            x = x.encode("utf-8")
        out.append(x.rstrip(b"\0") + b"\0")
    return b"".join(out)


def figures(kind, values, enum_names):
    """Human-readable figures for diagnosis (not compared: the digests are)."""
    v = np.ravel(values)
    if kind == "int":
        if v.size == 0:
            return {}
        return {"sum": int(np.sum(v.astype(object))), "min": int(v.min()), "max": int(v.max())}
    if kind == "float":
        v = v.astype(np.float64)
        finite = v[~np.isnan(v)]
        f = {"nan": int(v.size - finite.size)}
        if finite.size:
            f.update({"sum": math.fsum(finite.tolist()), "min": float(finite.min()),
                      "max": float(finite.max())})
        return f
    if kind == "enum":
        counts = {}
        for x in v.tolist():
            n = enum_names.get(int(x), "?%d" % int(x))
            counts[n] = counts.get(n, 0) + 1
        return {"counts": dict(sorted(counts.items()))}
    s = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v.tolist()]
    s = [x.rstrip("\0") for x in s]
    return {"distinct": len(set(s)), "first": s[0] if s else None}


def describe_column(kind, values, enum_names):
    rows = values.shape[0]
    whole = hashlib.sha256()
    blocks = []
    for b in range(0, max(rows, 1), BLOCK_ROWS):
        data = canon_bytes(kind, values[b:b + BLOCK_ROWS], enum_names)
        whole.update(data)
        blocks.append(hashlib.sha256(data).hexdigest()[:16])
    d = {"kind": kind, "rows": int(rows), "digest": whole.hexdigest()[:32]}
    if rows > BLOCK_ROWS:
        d["blocks"] = blocks
    d.update(figures(kind, values, enum_names))
    return d


def as_kind(kind, ref_kind, values):
    """Values of a column whose stored kind changed, in the reference's kind when lossless."""
    if kind == ref_kind:
        return kind, values
    if kind == "int" and ref_kind == "float":
        return "float", values.astype(np.float64)
    if kind == "float" and ref_kind == "int":
        v = values.astype(np.float64)
        if np.all(np.isfinite(v)) and np.all(v == np.round(v)):
            return "int", v.astype(np.int64)
    return kind, values


def read_tables(path):
    """{table: {column: (kind, values, enum value->name)}} for every dataset of the file."""
    tables = {}
    with h5py.File(path, "r") as f:
        attrs = {k: f.attrs[k] for k in f.attrs}
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        for n in sorted(names):
            ds = f[n]
            data = ds[()]
            if ds.shape == ():
                data = np.reshape(data, (1,))
            cols = {}
            fields = ds.dtype.names or ("value",)
            for c in fields:
                dt = ds.dtype[c] if ds.dtype.names else ds.dtype
                v = data[c] if ds.dtype.names else data
                en = h5py.check_enum_dtype(dt.base)
                enum_names = {int(val): name for name, val in en.items()} if en else {}
                cols[c] = (column_kind(dt.base), v, enum_names)
            tables[n] = cols
    return attrs, tables


def attr_int(attrs, name):
    v = attrs.get(name)
    return None if v is None else int(np.ravel(v)[0])


def describe_file(path):
    attrs, tables = read_tables(path)
    return attrs, {t: {c: describe_column(*cols[c]) for c in cols} for t, cols in tables.items()}


# ---------------------------------------------------------------- reference files

def ref_dir(src):
    return os.path.join(src, REF_SUBDIR)


def load_json(path, default=None):
    if not os.path.exists(path):
        if default is not None:
            return default
        raise Usage("%s: no such reference file (run results_ref.py update; see %s/README.md)"
                    % (path, REF_SUBDIR))
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_ref(path, doc):
    """One column per line, so that a changed column is one changed line in a diff."""
    lines = ["{"]
    head = [k for k in doc if k != "tables"]
    for k in head:
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(doc[k])))
    lines.append('  "tables": {')
    tnames = list(doc["tables"])
    for i, t in enumerate(tnames):
        cols = doc["tables"][t]
        lines.append("    %s: {" % json.dumps(t))
        cnames = list(cols)
        for j, c in enumerate(cnames):
            lines.append("      %s: %s%s" % (json.dumps(c), json.dumps(cols[c], sort_keys=False),
                                             "," if j + 1 < len(cnames) else ""))
        lines.append("    }%s" % ("," if i + 1 < len(tnames) else ""))
    lines.append("  }")
    lines.append("}")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------- comparison

def fmt(d, key):
    return repr(d[key]) if key in d else "-"


def schema_map(src, ref_version, version, changes_path=None):
    """(renamed {table/old: table/new}, removed {table/column}) declared for the versions
    between the reference's format_version and the file's (schema_changes.json)."""
    path = changes_path or os.path.join(ref_dir(src), SCHEMA_CHANGES)
    renamed, removed = {}, set()
    if ref_version is None or version is None or version == ref_version:
        return renamed, removed
    for ch in load_json(path, default={"changes": []}).get("changes", []):
        since = int(ch["since_format_version"])
        if ref_version < since <= version:
            renamed.update(ch.get("renamed", {}))
            removed.update(ch.get("removed", []))
    return renamed, removed


def compare(name, ref, path, src, changes_path=None):
    """Compares the file at PATH with the reference document; returns (errors, notes)."""
    errors, notes = [], []
    attrs, tables = read_tables(path)
    if attr_int(attrs, "complete") != 1:
        errors.append("%s: %s is not complete (attribute complete = %s)"
                      % (name, path, attr_int(attrs, "complete")))
    ver, ref_ver = attr_int(attrs, "format_version"), ref.get("format_version")
    if ver != ref_ver:
        notes.append("%s: format_version %s, reference %s: columns compared by name, with the "
                     "renames and removals of %s" % (name, ver, ref_ver, SCHEMA_CHANGES))
    renamed, removed = schema_map(src, ref_ver, ver, changes_path)
    for t, rcols in ref["tables"].items():
        if t not in tables:
            if all("%s/%s" % (t, c) in removed for c in rcols):
                notes.append("%s: table /%s removed (declared in %s)" % (name, t, SCHEMA_CHANGES))
            else:
                errors.append("%s: table /%s is missing (reference: %d columns, %d rows)"
                              % (name, t, len(rcols), next(iter(rcols.values()))["rows"]
                                 if rcols else 0))
            continue
        acols = tables[t]
        seen = set()
        for c, rc in rcols.items():
            key = "%s/%s" % (t, c)
            if key in removed:
                notes.append("%s: column /%s.%s removed (declared in %s)"
                             % (name, t, c, SCHEMA_CHANGES))
                continue
            at, ac = renamed.get(key, key).split("/", 1) if key in renamed else (t, c)
            if at not in tables or ac not in tables[at]:
                errors.append("%s: column /%s.%s is missing (reference: %d rows, sum %s)"
                              % (name, t, c, rc["rows"], fmt(rc, "sum")))
                continue
            if (at, ac) != (t, c):
                notes.append("%s: column /%s.%s compared as /%s.%s (renamed in %s)"
                             % (name, t, c, at, ac, SCHEMA_CHANGES))
            seen.add((at, ac))
            kind, values, enum_names = tables[at][ac]
            kind, values = as_kind(kind, rc["kind"], values)
            d = describe_column(kind, values, enum_names)
            if d["kind"] != rc["kind"]:
                errors.append("%s: column /%s.%s changed kind: reference %s, now %s"
                              % (name, t, c, rc["kind"], d["kind"]))
                continue
            if d["rows"] == rc["rows"] and d["digest"] == rc["digest"]:
                continue
            errors.append("%s: column /%s.%s differs: %s; reference sum %s min %s max %s, "
                          "actual sum %s min %s max %s%s"
                          % (name, t, c, where(rc, d), fmt(rc, "sum"), fmt(rc, "min"),
                             fmt(rc, "max"), fmt(d, "sum"), fmt(d, "min"), fmt(d, "max"),
                             extra(rc, d)))
        for c in acols:
            if (t, c) not in seen and c not in rcols:
                notes.append("%s: new column /%s.%s (not in the reference)" % (name, t, c))
    for t in tables:
        if t not in ref["tables"] and not any(v.split("/", 1)[0] == t for v in renamed.values()):
            notes.append("%s: new table /%s (not in the reference)" % (name, t))
    return errors, notes


def block_digests(d):
    """A column's per-block digests (one block: the whole column's digest is the block's)."""
    return d.get("blocks") or [d["digest"][:16]]


def where(rc, d):
    """Which rows differ, as narrowly as the block digests tell."""
    rb, ab = block_digests(rc), block_digests(d)
    first = next((i for i, (x, y) in enumerate(zip(rb, ab)) if x != y), min(len(rb), len(ab)))
    lo = first * BLOCK_ROWS
    n = min(rc["rows"], d["rows"])
    rows = "rows: reference %d, actual %d" % (rc["rows"], d["rows"]) if rc["rows"] != d["rows"] \
        else "%d rows" % rc["rows"]
    if lo >= n:
        return "%s; the first %d rows are equal" % (rows, n)
    return "%s; first difference in rows %d..%d" % (rows, lo, min(lo + BLOCK_ROWS, n) - 1)


def extra(rc, d):
    out = []
    if "nan" in rc or "nan" in d:
        out.append("NaN reference %s actual %s" % (fmt(rc, "nan"), fmt(d, "nan")))
    if "counts" in rc:
        out.append("counts reference %s actual %s" % (rc["counts"], d.get("counts")))
    if "first" in rc:
        out.append("distinct reference %s actual %s, first %r vs %r"
                   % (rc["distinct"], d.get("distinct"), rc["first"], d.get("first")))
    return "; " + "; ".join(out) if out else ""


# ---------------------------------------------------------------- commands

def pick(src, names):
    files = scenario_files(src)
    if not names:
        return files
    by_name = dict(files)
    missing = [n for n in names if n not in by_name]
    if missing:
        raise Usage("no scenario named %s under %s/scenarios (names: %s)"
                    % (", ".join(missing), src, ", ".join(by_name)))
    return [(n, by_name[n]) for n in names]


def check_manifest(fleetsim, src, name, rel):
    """A file listed in not_scenarios.json must still be a manifest that validate rejects."""
    rc, msg = validate(fleetsim, src, rel)
    if rc == 2 and is_manifest(os.path.join(src, rel)):
        return []
    return ["%s: %s is listed in %s%s, but 'fleetsim validate' exits %d (%s): give it a "
            "reference (update)" % (name, rel, NOT_SCENARIOS,
                                    "" if is_manifest(os.path.join(src, rel))
                                    else " and is no Kubernetes manifest", rc, msg)]


def check_one(fleetsim, src, name, rel, tmpdir):
    """Returns (errors, notes, what was checked) for one scenario."""
    not_sc = load_json(os.path.join(ref_dir(src), NOT_SCENARIOS), default={})
    if name in not_sc:
        return check_manifest(fleetsim, src, name, rel), [], \
            "not a scenario (a Kubernetes manifest, as %s says)" % NOT_SCENARIOS
    ref = load_json(os.path.join(ref_dir(src), name + ".json"))
    os.makedirs(os.path.join(tmpdir, name))
    out = os.path.join(tmpdir, name, name + ".h5")
    try:
        err = run_scenario(fleetsim, src, rel, out)
    except NoData as e:
        return [], [], "SKIPPED: %s" % e
    if err:
        return ["%s: %s" % (name, err)], [], ""
    errors, notes = compare(name, ref, out, src)
    return errors, notes, "%d tables, %d columns equal to the reference" % (
        len(ref["tables"]), sum(len(c) for c in ref["tables"].values()))


def cmd_check(a):
    failed = skipped = 0
    with tempfile.TemporaryDirectory(prefix="results_ref-") as tmp:
        todo = pick(a.src, a.scenario)
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            futs = [ex.submit(check_one, a.fleetsim, a.src, n, rel, tmp) for n, rel in todo]
            for (n, rel), fu in zip(todo, futs):
                errors, notes, what = fu.result()
                for m in notes:
                    print("note: " + m)
                for m in errors:
                    print("FAIL: " + m)
                if errors:
                    failed += 1
                else:
                    print("%s: %s" % (n, what))
                    skipped += what.startswith("SKIPPED")
    print("results_ref: %d of %d scenarios differ, %d skipped (no data)"
          % (failed, len(todo), skipped))
    return 1 if failed else 77 if skipped else 0


def cmd_file(a):
    ref = load_json(os.path.join(ref_dir(a.src), a.scenario + ".json"))
    errors, notes = compare(a.scenario, ref, a.file, a.src, a.schema_changes)
    for m in notes:
        print("note: " + m)
    for m in errors:
        print("FAIL: " + m)
    print("results_ref: %s %s" % (a.file, "differs" if errors else "equal to the reference"))
    return 1 if errors else 0


def cmd_inventory(a):
    """Every .yaml under scenarios/ has a reference or is a listed manifest; no stale entry."""
    d = ref_dir(a.src)
    files = dict(scenario_files(a.src))
    not_sc = load_json(os.path.join(d, NOT_SCENARIOS), default={})
    refs = {f[:-len(".json")] for f in os.listdir(d)
            if f.endswith(".json") and f not in (NOT_SCENARIOS, SCHEMA_CHANGES)}
    bad = []
    for n, rel in files.items():
        if n not in refs and n not in not_sc:
            bad.append("%s has no reference in %s (run results_ref.py update %s)" % (rel, REF_SUBDIR, n))
    for n in sorted(refs | set(not_sc)):
        if n not in files:
            bad.append("%s/%s: scenario %s no longer exists under scenarios/" % (REF_SUBDIR, n, n))
    for n in sorted(not_sc):
        if n in files:
            bad.extend(check_manifest(a.fleetsim, a.src, n, files[n]))
    for n in sorted(refs):
        try:
            r = load_json(os.path.join(d, n + ".json"))
        except ValueError as e:
            bad.append("%s/%s.json: not JSON: %s" % (REF_SUBDIR, n, e))
            continue
        if r.get("scenario") != files.get(n, r.get("scenario")) or r.get("seed") != SEED:
            bad.append("%s/%s.json: made for %s seed %s, expected %s seed %d"
                       % (REF_SUBDIR, n, r.get("scenario"), r.get("seed"), files.get(n), SEED))
    for m in bad:
        print("FAIL: " + m)
    print("results_ref inventory: %d scenarios with a reference, %d manifests, %d problems"
          % (len(refs), len(not_sc), len(bad)))
    return 1 if bad else 0


def update_one(fleetsim, src, name, rel, tmpdir):
    tmpdir = os.path.join(tmpdir, name)
    os.makedirs(tmpdir)
    try:
        rc, msg = validate(fleetsim, src, rel, tmpdir)
    except NoData as e:
        raise Usage(str(e))
    if rc != 0:
        if rc == 2 and is_manifest(os.path.join(src, rel)):
            return name, None, msg
        raise Usage("%s: 'fleetsim validate' exits %d and it is not a Kubernetes manifest: %s"
                    % (rel, rc, msg))
    out = os.path.join(tmpdir, name + ".h5")
    err = run_scenario(fleetsim, src, rel, out)
    if err:
        raise Usage("%s: %s" % (name, err))
    attrs, tables = describe_file(out)
    doc = {"scenario": rel, "seed": SEED, "command": "fleetsim " + " ".join(run_args(rel, "OUT.h5")),
           "format_version": attr_int(attrs, "format_version"),
           "fleetsim_version": str(attrs.get("fleetsim_version", "")),
           "canonical": "int: int64 LE (uint64 as its bits); float: float64 LE, NaN as "
                        "0x7ff8000000000000, -0.0 as 0.0; enum: member names; string: UTF-8 "
                        "without padding; names and strings each followed by NUL",
           "block_rows": BLOCK_ROWS,
           "tables": tables}
    return name, doc, None


def cmd_update(a):
    d = ref_dir(a.src)
    os.makedirs(d, exist_ok=True)
    todo = pick(a.src, a.scenario)
    not_sc_path = os.path.join(d, NOT_SCENARIOS)
    not_sc = load_json(not_sc_path, default={})
    with tempfile.TemporaryDirectory(prefix="results_ref-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            results = list(ex.map(lambda t: update_one(a.fleetsim, a.src, t[0], t[1], tmp), todo))
    for (name, rel), (_, doc, msg) in zip(todo, results):
        path = os.path.join(d, name + ".json")
        if doc is None:
            not_sc[name] = {"path": rel, "why": "a Kubernetes manifest, not a scenario",
                            "validate": msg.splitlines()[0] if msg else ""}
            if os.path.exists(path):
                os.remove(path)
            print("%s: not a scenario (%s)" % (name, not_sc[name]["validate"]))
            continue
        not_sc.pop(name, None)
        write_ref(path, doc)
        print("%s: %s (%d tables, %d columns)" % (name, os.path.relpath(path, a.src),
              len(doc["tables"]), sum(len(c) for c in doc["tables"].values())))
    with open(not_sc_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(dict(sorted(not_sc.items())), f, indent=2)
        f.write("\n")
    os.replace(not_sc_path + ".tmp", not_sc_path)
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("check", "update", "inventory"):
        s = sub.add_parser(name)
        s.add_argument("--fleetsim", required=True, help="the fleetsim program")
        s.add_argument("--src", required=True, help="source root (holds scenarios/ and tests/)")
        if name != "inventory":
            s.add_argument("-j", "--jobs", type=int, default=2, help="scenarios at once (2)")
            s.add_argument("scenario", nargs="*", help="scenario names (default: all)")
    s = sub.add_parser("file")
    s.add_argument("--src", required=True)
    s.add_argument("--schema-changes", help="a schema_changes.json other than the reference's")
    s.add_argument("scenario")
    s.add_argument("file")
    a = p.parse_args(argv)
    a.src = os.path.abspath(a.src)
    if hasattr(a, "fleetsim"):
        a.fleetsim = os.path.abspath(a.fleetsim)
        if not os.access(a.fleetsim, os.X_OK):
            raise Usage("%s: not an executable program" % a.fleetsim)
    return {"check": cmd_check, "file": cmd_file, "inventory": cmd_inventory,
            "update": cmd_update}[a.cmd](a)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Usage as e:
        print("results_ref: %s" % e, file=sys.stderr)
        sys.exit(2)
