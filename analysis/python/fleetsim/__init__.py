"""fleetsim from Python: run a scenario through libfleetsim and read its
results as pandas DataFrames (docs/library.md).

    import fleetsim
    r = fleetsim.run("scenario.yaml", overrides={"cluster.pools.0.nodes": 64})
    r.summary["utilization"]      # the /summary columns, a dict
    r.jobs()                      # /jobs as a DataFrame (also timeline(), tenants(), table(name))

The library is found through $FLEETSIM_LIB, then next to an installed
prefix (PREFIX/share/fleetsim/python -> PREFIX/lib*/libfleetsim.so.1), then
the system's search path.  Only ctypes, numpy, h5py and pandas are used.
"""
import ctypes
import ctypes.util
import glob
import os
import tempfile

from .policy import QUEUE_DTYPE, OrderPolicy, Policy, _Bridge

__all__ = ["run", "sweep", "versus", "plan", "Result", "Sweep", "Plan", "FleetsimError", "library_version",
           "api_version", "Policy", "OrderPolicy", "QUEUE_DTYPE"]

API_VERSION_MAJOR = 1


class FleetsimError(RuntimeError):
    """A fleetsim call failed: .status is the FLEETSIM_E* code, the message says why."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status

    def __reduce__(self):   # pickled back from an isolated run's child
        return (FleetsimError, (self.status, str(self)))


_PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double, ctypes.c_double,
                             ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)
_lib = None


def _find_library():
    env = os.environ.get("FLEETSIM_LIB")
    if env:
        return env
    try:    # written by pip install (setup.py): the prefix's library when installed from it
        from ._where import LIBRARY
    except ImportError:
        LIBRARY = None
    if LIBRARY and os.path.exists(LIBRARY):
        return LIBRARY
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
    for pat in ("lib/libfleetsim.so.1", "lib/*/libfleetsim.so.1", "lib64/libfleetsim.so.1"):
        hits = sorted(glob.glob(os.path.join(prefix, pat)))
        if hits:
            return hits[0]
    name = ctypes.util.find_library("fleetsim")
    if name:
        return name
    raise OSError("libfleetsim not found: set FLEETSIM_LIB to its path (or pip install the "
                  "package from an installed prefix, PREFIX/share/fleetsim/python)")


def _load():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(_find_library())
    lib.fleetsim_api_version.restype = ctypes.c_int
    lib.fleetsim_version.restype = ctypes.c_char_p
    lib.fleetsim_strerror.restype = ctypes.c_char_p
    lib.fleetsim_strerror.argtypes = [ctypes.c_int]
    vp, pp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    for name, args in (("fleetsim_scenario_load_file", [ctypes.c_char_p, pp]),
                       ("fleetsim_scenario_load_string", [ctypes.c_char_p, ctypes.c_char_p, pp]),
                       ("fleetsim_scenario_load_default", [pp]),
                       ("fleetsim_scenario_set", [vp, ctypes.c_char_p]),
                       ("fleetsim_scenario_set_policy", [vp, vp]),
                       ("fleetsim_scenario_add_variant", [vp, ctypes.c_char_p,
                                                          ctypes.POINTER(ctypes.c_char_p),
                                                          ctypes.c_size_t]),
                       ("fleetsim_sweep", [vp, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint]),
                       ("fleetsim_run", [vp, ctypes.c_char_p, _PROGRESS, vp, pp]),
                       ("fleetsim_result_get", [vp, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double)])):
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = ctypes.c_int
    lib.fleetsim_scenario_error.argtypes = [vp]
    lib.fleetsim_scenario_error.restype = ctypes.c_char_p
    lib.fleetsim_scenario_dump.argtypes = [vp]
    lib.fleetsim_scenario_dump.restype = ctypes.c_char_p
    lib.fleetsim_scenario_free.argtypes = [vp]
    lib.fleetsim_scenario_free.restype = None
    lib.fleetsim_result_count.argtypes = [vp]
    lib.fleetsim_result_count.restype = ctypes.c_size_t
    lib.fleetsim_result_name.argtypes = [vp, ctypes.c_size_t]
    lib.fleetsim_result_name.restype = ctypes.c_char_p
    lib.fleetsim_result_wall_seconds.argtypes = [vp]
    lib.fleetsim_result_wall_seconds.restype = ctypes.c_double
    lib.fleetsim_result_free.argtypes = [vp]
    lib.fleetsim_result_free.restype = None
    if lib.fleetsim_api_version() >= 1002:     # API 1.2: memory counters
        lib.fleetsim_scenario_memory.argtypes = [vp, ctypes.POINTER(_Memory)]
        lib.fleetsim_scenario_memory.restype = ctypes.c_int
    if lib.fleetsim_api_version() >= 1003:     # API 1.3: capacity plans
        lib.fleetsim_plan.argtypes = [vp, ctypes.c_char_p, ctypes.c_uint, pp]
        lib.fleetsim_plan.restype = ctypes.c_int
        lib.fleetsim_plan_count.argtypes = [vp]
        lib.fleetsim_plan_count.restype = ctypes.c_size_t
        lib.fleetsim_plan_chosen.argtypes = [vp]
        lib.fleetsim_plan_chosen.restype = ctypes.c_long
        lib.fleetsim_plan_choice.argtypes = [vp, ctypes.c_size_t]
        lib.fleetsim_plan_choice.restype = ctypes.c_char_p
        lib.fleetsim_plan_name.argtypes = [vp, ctypes.c_size_t]
        lib.fleetsim_plan_name.restype = ctypes.c_char_p
        lib.fleetsim_plan_get.argtypes = [vp, ctypes.c_size_t, ctypes.c_char_p,
                                          ctypes.POINTER(ctypes.c_double)]
        lib.fleetsim_plan_get.restype = ctypes.c_int
        lib.fleetsim_plan_file.argtypes = [vp]
        lib.fleetsim_plan_file.restype = ctypes.c_char_p
        lib.fleetsim_plan_free.argtypes = [vp]
        lib.fleetsim_plan_free.restype = None
    if lib.fleetsim_api_version() >= 1004:     # API 1.4: overrides as a set
        lib.fleetsim_scenario_set_many.argtypes = [vp, ctypes.POINTER(ctypes.c_char_p),
                                                   ctypes.c_size_t]
        lib.fleetsim_scenario_set_many.restype = ctypes.c_int
    major = lib.fleetsim_api_version() // 1000
    if major != API_VERSION_MAJOR:
        raise OSError("libfleetsim API %d.x, this package needs %d.x" % (major, API_VERSION_MAJOR))
    _lib = lib
    return lib


def library_version():
    """libfleetsim's release, e.g. '0.1.0'."""
    return _load().fleetsim_version().decode()


def api_version():
    """FLEETSIM_API_VERSION of the loaded library (major x 1000 + minor)."""
    return _load().fleetsim_api_version()


class _Memory(ctypes.Structure):
    """fleetsim_memory (fleetsim.h, API 1.2)."""
    _fields_ = [("allocations", ctypes.c_uint64), ("failed", ctypes.c_uint64),
                ("live_blocks", ctypes.c_int64), ("live_bytes", ctypes.c_int64),
                ("peak_bytes", ctypes.c_int64)]


def _memory(lib, s):
    """The memory counters of the last call on s as a dict, or None before API 1.2."""
    if lib.fleetsim_api_version() < 1002:
        return None
    m = _Memory()
    if lib.fleetsim_scenario_memory(s, ctypes.byref(m)) != 0:
        return None
    return {name: getattr(m, name) for name, _ in _Memory._fields_}


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _c(value, what):
    """value (str, bytes or a path) as bytes for C; a NUL byte would cut the
    string short there, so it is refused (ValueError naming what)."""
    b = os.fsencode(value) if isinstance(value, (str, bytes, os.PathLike)) else str(value).encode()
    if b"\0" in b:
        raise ValueError("%s contains a NUL byte (at %d): %r" % (what, b.index(b"\0"), value))
    return b


class Result:
    """A finished run: .summary (dict of the /summary columns), .path (the
    results file) and its tables as DataFrames; .memory: what the run
    allocated (allocations, failed, live_blocks, live_bytes, peak_bytes;
    docs/library.md "Memory"), None when read from a file."""

    def __init__(self, summary, path, wall_seconds, owned_dir=None, memory=None):
        self.summary = summary
        self.path = path
        self.wall_seconds = wall_seconds
        self.memory = memory
        self._owned_dir = owned_dir

    def table(self, name):
        """A results table (/jobs, /timeline, /tenants, /failures, ...) as a DataFrame;
        string columns decoded, enum columns as their names.  r["jobs"] is the same."""
        return _read_table(self.path, name)

    def __getitem__(self, name):
        return self.table(name)

    def tables(self):
        """The names of the results file's tables (its datasets at the root)."""
        import h5py
        with h5py.File(self.path, "r") as f:
            return sorted(k for k, v in f.items() if isinstance(v, h5py.Dataset))

    def jobs(self):
        return self.table("jobs")

    def timeline(self):
        return self.table("timeline")

    def tenants(self):
        return self.table("tenants")

    def __del__(self):
        if self._owned_dir is not None:
            self._owned_dir.cleanup()


def _read_table(path, name):
    """A table of an HDF5 file as a DataFrame; strings decoded, enums named."""
    import h5py
    import pandas as pd
    with h5py.File(path, "r") as f:
        ds = f[name]
        data = ds[:]
        frame = pd.DataFrame.from_records(data) if len(data) else pd.DataFrame(
            columns=list(ds.dtype.names))
        for col in ds.dtype.names:
            dt = ds.dtype[col]
            enum = h5py.check_enum_dtype(dt)
            if enum:
                names = {v: k for k, v in enum.items()}
                frame[col] = frame[col].map(names)
            elif dt.kind == "S":
                frame[col] = frame[col].str.decode("utf-8")
    return frame


def _check(lib, s, st):
    """Raises the scenario handle's located error unless st is FLEETSIM_OK."""
    if st != 0:
        raise FleetsimError(st, lib.fleetsim_scenario_error(s).decode())


def _open(lib, scenario, overrides):
    """A loaded scenario handle with its overrides (the caller frees it).
    The overrides are applied as one set and checked once (API 1.4), so
    keys valid only together may come in any order."""
    kv = [_c("%s=%s" % (k, _value(v)), "override %s" % k) for k, v in (overrides or {}).items()]
    s = ctypes.c_void_p()
    if scenario is None:
        st = lib.fleetsim_scenario_load_default(ctypes.byref(s))
    elif isinstance(scenario, str) and "\n" in scenario:
        st = lib.fleetsim_scenario_load_string(b"<string>", _c(scenario, "scenario (YAML text)"),
                                               ctypes.byref(s))
    else:
        st = lib.fleetsim_scenario_load_file(_c(scenario, "scenario path"), ctypes.byref(s))
    try:
        _check(lib, s, st)
        if kv and lib.fleetsim_api_version() >= 1004:
            st = lib.fleetsim_scenario_set_many(s, (ctypes.c_char_p * len(kv))(*kv), len(kv))
            _check(lib, s, st)
        else:
            for b in kv:
                _check(lib, s, lib.fleetsim_scenario_set(s, b))
    except BaseException:
        lib.fleetsim_scenario_free(s)
        raise
    return s


class Sweep:
    """A finished sweep directory (docs/sweeps.md): .path, .index (index.h5);
    points(), runs() and stats() as DataFrames; result(point, replication)."""

    def __init__(self, path, owned_dir=None):
        self.path = path
        self.index = os.path.join(path, "index.h5")
        self._owned_dir = owned_dir

    def variants(self):
        """The variant names of a versus sweep, in point order (None otherwise)."""
        import h5py
        with h5py.File(self.index, "r") as f:
            v = f.attrs.get("variants")
            return None if v is None else [x.decode() if isinstance(x, bytes) else str(x)
                                           for x in v]

    def points(self):
        frame = _read_table(self.index, "points")
        names = self.variants()
        if names is not None:
            frame.insert(1, "variant", [names[int(p)] for p in frame["point"]])
        return frame

    def runs(self):
        """/runs: point, replication, file, status and every /summary column."""
        return _read_table(self.index, "runs")

    def stats(self):
        """/stats with the points' parameters (or variant names) joined:
        point, metric, n, mean, sd, ci_lo, ci_hi (Student-t 95%)."""
        st = _read_table(self.index, "stats")
        return st.merge(self.points(), on="point", how="left")

    def result(self, point, replication):
        """The Result of one run of the sweep."""
        row = self.runs()
        row = row[(row.point == point) & (row.replication == replication)]
        if not len(row):
            raise KeyError((point, replication))
        r = row.iloc[0]
        skip = {"point", "replication", "file", "status"}
        summary = {k: float(r[k]) for k in row.columns if k not in skip}
        return Result(summary, os.path.join(self.path, r["file"]), float("nan"))

    def __del__(self):
        if getattr(self, "_owned_dir", None) is not None:
            self._owned_dir.cleanup()


def sweep(scenario=None, output=None, overrides=None, threads=0, replications=0, variants=None):
    """Runs a scenario's sweep (its sweep: block, docs/sweeps.md) through
    libfleetsim, as `fleetsim sweep -o output -j threads`: output is the
    directory (a temporary one when None, removed with the Sweep); threads
    0 = one per CPU; replications 0 = the scenario's.  variants: {name:
    {key: value}} runs one point per variant instead (as `fleetsim versus`,
    10 replications unless given).  Returns a Sweep."""
    lib = _load()
    s = _open(lib, scenario, overrides)
    try:
        for name, sets in (variants or {}).items():
            kv = [_c("%s=%s" % (k, _value(v)), "variant %s: override %s" % (name, k))
                  for k, v in sets.items()]
            arr = (ctypes.c_char_p * max(len(kv), 1))(*kv)
            st = lib.fleetsim_scenario_add_variant(s, _c(str(name), "variant name"), arr, len(kv))
            _check(lib, s, st)
        owned = None
        if output is None:
            owned = tempfile.TemporaryDirectory(prefix="fleetsim-sweep-")
            output = os.path.join(owned.name, "sweep")
        st = lib.fleetsim_sweep(s, _c(output, "output"), int(threads), int(replications))
        _check(lib, s, st)
        return Sweep(output, owned)
    finally:
        lib.fleetsim_scenario_free(s)


def versus(variants, scenario=None, output=None, overrides=None, replications=10, threads=0):
    """The same workload under several named variants ({name: {key: value}}),
    common random numbers across them, as `fleetsim versus -p NAME=...`;
    Sweep.stats() gives each variant's means with 95% intervals."""
    if not variants:
        raise ValueError("versus: at least one variant")
    return sweep(scenario, output, overrides, threads, replications, variants)


class Plan:
    """A capacity plan's directory (docs/plan.md): .path, .file (plan.h5);
    points() (/plan: every evaluated fleet with each metric's interval),
    runs() (/plan_runs), attrs() (the root attributes: the choice, the SLOs,
    the cash flow), chosen (the chosen point's figures as a dict, None when
    no fleet meets the SLOs) and evaluation(choice, nodes), the Sweep of one
    candidate.  Plan(path) opens a plan written before (by the CLI too)."""

    def __init__(self, path, owned_dir=None, points=None):
        self.path = path
        self.file = os.path.join(path, "plan.h5")
        self._owned_dir = owned_dir
        self._points = points

    def points(self):
        return _read_table(self.file, "plan")

    def runs(self):
        return _read_table(self.file, "plan_runs")

    def attrs(self):
        import h5py
        with h5py.File(self.file, "r") as f:
            return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}

    @property
    def chosen(self):
        """The chosen fleet: choice, nodes, gpus and every figure of its point
        (as libfleetsim returned it, or read from /plan); None if infeasible."""
        if self._points is not None:
            return next((dict(p) for p in self._points if p["chosen"]), None)
        pts = self.points()
        row = pts[pts["chosen"] != 0]
        return None if not len(row) else {k: (v.item() if hasattr(v, "item") else v)
                                          for k, v in row.iloc[0].items()}

    def evaluation(self, choice, nodes):
        """The Sweep of the candidate (choice, nodes): DIR/evals/<choice>-n<N>."""
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in str(choice))
        path = os.path.join(self.path, "evals", "%s-n%d" % (safe, int(nodes)))
        if not os.path.isdir(path):
            raise KeyError((choice, nodes))
        return Sweep(path)

    def __del__(self):
        if getattr(self, "_owned_dir", None) is not None:
            self._owned_dir.cleanup()


def _plan_points(lib, r):
    """Every point of a fleetsim_plan_result as a list of dicts."""
    names, j = [], 0
    while True:
        n = lib.fleetsim_plan_name(r, j)
        if n is None:
            break
        names.append(n)
        j += 1
    pts = []
    for i in range(lib.fleetsim_plan_count(r)):
        p = {"choice": lib.fleetsim_plan_choice(r, i).decode()}
        for n in names:
            v = ctypes.c_double()
            lib.fleetsim_plan_get(r, i, n, ctypes.byref(v))
            p[n.decode()] = v.value
        pts.append(p)
    return pts


def plan(scenario=None, output=None, overrides=None, threads=0):
    """Runs the scenario's plan: block (docs/plan.md) through libfleetsim, as
    `fleetsim plan -o output -j threads`: output is the directory (a
    temporary one when None, removed with the Plan; an existing one is
    resumed from its finished candidates).  Returns a Plan."""
    lib = _load()
    if lib.fleetsim_api_version() < 1003:
        raise OSError("fleetsim.plan needs libfleetsim API 1.3")
    s = _open(lib, scenario, overrides)
    try:
        owned = None
        if output is None:
            owned = tempfile.TemporaryDirectory(prefix="fleetsim-plan-")
            output = os.path.join(owned.name, "plan")
        r = ctypes.c_void_p()
        st = lib.fleetsim_plan(s, _c(output, "output"), int(threads), ctypes.byref(r))
        _check(lib, s, st)
        try:
            pts = _plan_points(lib, r)
        finally:
            lib.fleetsim_plan_free(r)
        return Plan(output, owned, pts)
    finally:
        lib.fleetsim_scenario_free(s)


def run(scenario=None, overrides=None, output=None, progress=None, policy=None, isolated=False):
    """Runs a scenario: a path, a YAML string (anything containing a newline),
    or None for the built-in default.  overrides: {key: value} as --set takes
    them, applied as one set.  output: the results file (a temporary one when
    None, removed with the Result).  progress(sim_time_s, horizon_s, done,
    running, queued) may return True to cancel.  policy: a Policy, or a
    callable taken as an OrderPolicy, that schedules in place of the
    scenario's scheduler (fleetsim.policy).  isolated=True runs it in a
    child process (forked): a plugin or policy that crashes (a segmentation
    fault in C) then raises FleetsimError naming the signal instead of
    killing this process; progress and policy run in the child.  Raises
    FleetsimError with the located message, or the policy's own exception."""
    if isolated:
        return _run_isolated(scenario, overrides, output, progress, policy)
    lib = _load()
    bridge = None
    if policy is not None:
        if not isinstance(policy, Policy):
            if not callable(policy):
                raise TypeError("policy: a fleetsim.Policy or a callable order(queue, capacity)")
            policy = OrderPolicy(policy)
        bridge = _Bridge(policy)
    out_b = _c(output, "output") if output is not None else None
    s = _open(lib, scenario, overrides)
    try:
        if bridge is not None:
            st = lib.fleetsim_scenario_set_policy(s, ctypes.addressof(bridge.table))
            _check(lib, s, st)
        owned = None
        if output is None:
            owned = tempfile.TemporaryDirectory(prefix="fleetsim-")
            output = os.path.join(owned.name, "results.h5")
            out_b = os.fsencode(output)

        def cb(_ud, t, h, done, running, queued):
            try:
                return 1 if progress(t, h, done, running, queued) else 0
            except Exception:   # an exception cancels the run
                return 1
        r = ctypes.c_void_p()
        st = lib.fleetsim_run(s, out_b, _PROGRESS(cb) if progress else _PROGRESS(),
                              None, ctypes.byref(r))
        if st != 0:
            err = FleetsimError(st, lib.fleetsim_scenario_error(s).decode())
            if bridge is not None and bridge.error is not None:
                raise bridge.error from err
            raise err
        if bridge is not None and bridge.error is not None:   # e.g. raised in job_end
            lib.fleetsim_result_free(r)
            raise bridge.error
        memory = _memory(lib, s)
        try:
            summary = {}
            for i in range(lib.fleetsim_result_count(r)):
                name = lib.fleetsim_result_name(r, i)
                v = ctypes.c_double()
                lib.fleetsim_result_get(r, name, ctypes.byref(v))
                summary[name.decode()] = v.value
            wall = lib.fleetsim_result_wall_seconds(r)
        finally:
            lib.fleetsim_result_free(r)
        return Result(summary, output, wall, owned, memory)
    finally:
        lib.fleetsim_scenario_free(s)


FLEETSIM_EINTERNAL = 7


def _isolated_child(conn, scenario, overrides, output, progress, policy):
    """The child of run(isolated=True): the run, then its answer on conn."""
    try:
        r = run(scenario, overrides, output, progress, policy)
        conn.send(("ok", r.summary, r.wall_seconds, r.memory))
    except BaseException as e:      # sent back to be raised in the parent
        try:
            conn.send(("raise", e))
        except Exception:           # an exception that does not pickle
            conn.send(("raise", RuntimeError("%s: %s" % (type(e).__name__, e))))
    finally:
        conn.close()


def _signal_name(n):
    import signal
    try:
        return signal.Signals(n).name
    except ValueError:
        return "signal %d" % n


def _run_isolated(scenario, overrides, output, progress, policy):
    import multiprocessing
    owned = None
    if output is None:
        owned = tempfile.TemporaryDirectory(prefix="fleetsim-")
        output = os.path.join(owned.name, "results.h5")
    _c(output, "output")
    ctx = multiprocessing.get_context("fork")
    rx, tx = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_isolated_child, name="fleetsim-run",
                        args=(tx, scenario, overrides, output, progress, policy))
    child.start()
    tx.close()
    try:
        answer = rx.recv()
    except EOFError:
        answer = None
    finally:
        rx.close()
        child.join()
    if answer is not None and answer[0] == "ok":
        return Result(answer[1], output, answer[2], owned, answer[3])
    if answer is not None:
        raise answer[1]
    code = child.exitcode
    try:    # the crashed run's temporary file (TARGET.tmp.PID): nothing half-written stays
        os.unlink("%s.tmp.%d" % (output, child.pid))
    except OSError:
        pass
    why = ("killed by %s" % _signal_name(-code)) if code is not None and code < 0 \
        else "exited with status %s" % code
    raise FleetsimError(FLEETSIM_EINTERNAL, "the run crashed in its child process (%s); "
                        "no results were written" % why)
