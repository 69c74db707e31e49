"""The fleetsim Python package (analysis/python/fleetsim) as installed:
run through libfleetsim, summary equal to the CLI's, tables equal to h5py's
reading of the same file, located errors, cancellation."""
import json
import os
import subprocess

import h5py
import numpy as np
import pytest

import fleetsim


def same_summary(a, b):
    """Two summaries equal figure by figure, NaN (a figure the run does not
    have: no checkpointing, no services) equal to NaN."""
    return set(a) == set(b) and all(
        (isinstance(v, float) and np.isnan(v) and np.isnan(b[k])) or b[k] == v
        for k, v in a.items())


def test_versions():
    assert fleetsim.api_version() // 1000 == fleetsim.API_VERSION_MAJOR
    assert fleetsim.library_version().count(".") == 2
    # imported from the installed prefix, not the source tree
    assert "share/fleetsim/python" in fleetsim.__file__


def test_summary_equals_cli(tmp_path):
    out = tmp_path / "r.h5"
    r = fleetsim.run(overrides={"horizon": "2d", "cluster.pools.0.nodes": 64}, output=str(out))
    cli = json.loads(subprocess.run(
        [os.environ["FLEETSIM_CLI"], "run", "--set", "horizon=2d", "--set",
         "cluster.pools.0.nodes=64", "--no-output", "--json"],
        check=True, capture_output=True, text=True).stdout)["summary"]
    assert set(cli) == set(r.summary)
    for k, v in cli.items():   # the CLI's JSON writes NaN as null
        assert np.isnan(r.summary[k]) if v is None else r.summary[k] == v, k


def test_memory_of_the_run():
    r = fleetsim.run(overrides={"horizon": "2d"}, output=None)
    m = r.memory
    assert m["allocations"] > 100 and m["failed"] == 0
    assert m["live_blocks"] == 0 and m["live_bytes"] == 0
    assert m["peak_bytes"] > 100000


def test_frames_equal_h5py(tmp_path):
    out = tmp_path / "r.h5"
    r = fleetsim.run(overrides={"horizon": "3d", "output.timeline_interval": "1h"}, output=str(out))
    jobs = r.jobs()
    with h5py.File(out, "r") as f:
        raw = f["jobs"][:]
        assert len(jobs) == len(raw) == r.summary["jobs_submitted"]
        np.testing.assert_array_equal(jobs["id"].to_numpy(), raw["id"])
        np.testing.assert_array_equal(jobs["wait"].to_numpy(), raw["wait"])
        assert set(jobs["state"]) <= {"completed", "running", "queued", "failed", "rejected"}
        assert len(r.timeline()) == len(f["timeline"])
    assert list(r.tenants().columns)[:2] == ["tenant", "name"]


def test_errors_are_located(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\nhorizon: soon\n")
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(str(bad))
    assert e.value.status == 1 and str(e.value).startswith(str(bad) + ":2:")
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(overrides={"scheduler.queue": "lottery"})
    assert "scheduler.queue" in str(e.value)


def test_cancel():
    calls = []
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(overrides={"horizon": "60d"}, output=None,
                     progress=lambda *a: calls.append(a) or len(calls) >= 2)
    assert e.value.status == 4 and len(calls) == 2
    t, h, done, running, queued = calls[-1]
    assert 0 < t < h == 60 * 86400 and done > 0


# ---- policies in Python (fleetsim.policy; docs/plugins.md "From Python") ----

LOADED = {"horizon": "2d", "cluster.pools.0.nodes": 48}


def same_schedule(a, b, cols=("start", "end", "wait", "pool", "nodes")):
    ja, jb = (r.jobs().sort_values("id").reset_index(drop=True) for r in (a, b))
    assert len(ja) == len(jb) > 1000
    for c in cols:
        np.testing.assert_array_equal(ja[c].to_numpy(), jb[c].to_numpy(), err_msg=c)
    return ja


@pytest.mark.parametrize("mode", ["best_effort", "strict"])
def test_order_policy_equals_fifo(mode):
    ov = dict(LOADED, **{"scheduler.mode": mode})
    builtin = fleetsim.run(overrides=ov)
    py = fleetsim.run(overrides=ov, policy=fleetsim.OrderPolicy(lambda q, c: range(len(q)),
                                                                strict=mode == "strict"))
    j = same_schedule(builtin, py)
    assert (j["wait"] > 0).sum() > 100     # a queue formed
    assert py.summary["wait_mean"] == builtin.summary["wait_mean"]


def test_order_sees_queue_and_capacity():
    seen = []

    def smallest_first(queue, cap):
        assert queue.dtype == fleetsim.QUEUE_DTYPE
        assert np.all(queue["queued_since"] <= cap.now) and cap.free_gpus <= cap.gpus_up
        seen.append((len(queue), cap.free_gpus))
        return np.argsort(queue["gpus"], kind="stable")

    fifo = fleetsim.run(overrides=LOADED)
    sgf = fleetsim.run(overrides=LOADED, policy=smallest_first)
    assert max(n for n, _ in seen) > 10
    assert sgf.summary["jobs_completed"] + sgf.summary["jobs_unfinished"] == \
        fifo.summary["jobs_submitted"]
    # small jobs overtake: their mean wait drops below FIFO's
    js, jf = sgf.jobs(), fifo.jobs()
    assert js[js.gpus == 1].wait.mean() < jf[jf.gpus == 1].wait.mean()


class Srtf(fleetsim.Policy):
    """tests/install/plugin_srtf.c in Python: shortest remaining time first
    with preemption (ranks all active jobs by work left, stable)."""
    name = "srtf-py"

    def create(self, host, options):
        self.host, self.ord, self.running, self.waiting = host, [], set(), 0

    def enqueue(self, h):
        self.ord.append(h)
        self.waiting += 1

    def job_end(self, h):
        self.ord.remove(h)
        self.running.discard(h)

    def queued(self):
        return self.waiting

    def schedule(self):
        host = self.host
        key = {h: host.job(h).remaining_s for h in self.ord}
        rank = sorted(self.ord, key=lambda h: key[h])         # stable
        left, want = host.gpus_up(), set()
        for h in rank:
            g = host.job(h).gpus
            if g <= left:
                want.add(h)
                left -= g
        best = next((key[h] for h in rank if h in want and h not in self.running), None)
        if best is not None:
            for h in rank:
                if h not in want and h in self.running and key[h] > best:
                    host.preempt(h)
                    self.running.discard(h)
                    self.waiting += 1
        for h in rank:
            if h in want and h not in self.running and host.start(h):
                self.running.add(h)
                self.waiting -= 1
        self.ord = rank


def test_policy_class_equals_builtin_srtf():
    ov = dict(LOADED, **{"scheduler.checkpoint_interval": "1us"})
    builtin = fleetsim.run(overrides=dict(ov, **{"scheduler.queue": "srtf"}))
    py = fleetsim.run(overrides=ov, policy=Srtf())
    j = same_schedule(builtin, py, ("start", "end", "wait", "preemptions", "queued_s"))
    assert j["preemptions"].sum() > 50


class RoundRobin(fleetsim.Policy):
    """First come first served; a job that has run `quantum` s goes to the
    back when others wait (one timer per start, stale ones ignored)."""

    def __init__(self, quantum):
        self.quantum = quantum

    def create(self, host, options):
        self.host, self.q, self.epoch, self.running = host, [], {}, set()

    def enqueue(self, h):
        self.q.append(h)

    def queued(self):
        return len(self.q) - len(self.running)

    def job_end(self, h):
        self.q.remove(h)
        self.running.discard(h)
        self.epoch[h] = self.epoch.get(h, 0) + 1

    def _start(self, h):
        if self.host.start(h):
            self.running.add(h)
            self.epoch[h] = e = self.epoch.get(h, 0) + 1
            self.host.timer(self.host.now() + self.quantum, h << 32 | e)

    def schedule(self):
        for h in list(self.q):
            if h not in self.running:
                self._start(h)

    def timer(self, data):
        h, e = data >> 32, data & 0xffffffff
        if h not in self.running or self.epoch[h] != e:
            return                                         # stale
        if self.queued() == 0:
            self.epoch[h] = e = e + 1
            self.host.timer(self.host.now() + self.quantum, h << 32 | e)
            return
        self.host.preempt(h)
        self.running.discard(h)
        self.epoch[h] += 1
        self.q.remove(h)
        self.q.append(h)


def test_round_robin_timers(tmp_path):
    (tmp_path / "rr.csv").write_text("id,submit,gpus,duration\n1,0,1,9000\n2,0,1,9000\n3,0,1,9000\n")
    yaml = ("name: rr\nhorizon: 1d\ncluster: {pools: [{name: p, gpu: H100, nodes: 1, "
            "gpus_per_node: 1}]}\nworkload: {trace: {path: %s}}\n"
            "scheduler: {checkpoint_interval: 1us}\n" % (tmp_path / "rr.csv"))
    j = fleetsim.run(yaml, policy=RoundRobin(quantum=3600)).jobs().sort_values("id")
    # A B C A B C, then A ends at 6.5 h, B at 7 h, C at 7.5 h
    assert list(j["end"]) == [6.5 * 3600, 7 * 3600, 7.5 * 3600]
    assert list(j["preemptions"]) == [2, 2, 2]


def test_policy_errors_propagate():
    def broken(queue, cap):
        return [len(queue)]                # out of range
    with pytest.raises(IndexError) as e:
        fleetsim.run(overrides={"horizon": "2d"}, policy=broken)
    assert isinstance(e.value.__cause__, fleetsim.FleetsimError)

    class Refuses(fleetsim.Policy):
        def create(self, host, options):
            raise ValueError("no options wanted: %s" % sorted(options))
    with pytest.raises(ValueError):
        fleetsim.run(overrides={"horizon": "2d"}, policy=Refuses())
    with pytest.raises(TypeError):
        fleetsim.run(overrides={"horizon": "2d"}, policy=42)


# ---- sweeps and versus from Python (fleetsim_sweep, API 1.1) ----

SCEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios")


def same_tree(a, b):
    ra, rb = sorted(os.listdir(a / "runs")), sorted(os.listdir(b / "runs"))
    assert ra == rb and len(ra) > 0
    for name in ra + ["../index.h5"]:
        assert (a / "runs" / name).read_bytes() == (b / "runs" / name).read_bytes(), name


def test_versus_equals_cli(tmp_path):
    scen = os.path.join(SCEN, "default.yaml")
    ov = {"horizon": "2d", "cluster.pools.0.nodes": 64}
    sw = fleetsim.versus({"fifo": {"scheduler.queue": "fifo"}, "sjf": {"scheduler.queue": "sjf"}},
                         scenario=scen, overrides=ov, replications=3, threads=2,
                         output=str(tmp_path / "py"))
    subprocess.run([os.environ["FLEETSIM_CLI"], "versus", scen, "--set", "horizon=2d", "--set",
                    "cluster.pools.0.nodes=64", "-p", "fifo=scheduler.queue=fifo", "-p",
                    "sjf=scheduler.queue=sjf", "-r", "3", "-j", "1", "-o", str(tmp_path / "cli"),
                    "-q"], check=True, capture_output=True)
    same_tree(tmp_path / "py", tmp_path / "cli")     # runs and index, byte for byte
    assert sw.variants() == ["fifo", "sjf"]
    st = sw.stats()
    w = st[st.metric == "wait_mean"].set_index("variant")
    assert (w["n"] == 3).all() and w.loc["sjf", "mean"] < w.loc["fifo", "mean"]
    assert (w["ci_lo"] <= w["mean"]).all() and (w["mean"] <= w["ci_hi"]).all()
    r = sw.result(1, 2)
    assert r.summary["wait_mean"] == sw.runs().query("point == 1 and replication == 2")[
        "wait_mean"].iloc[0]
    assert len(r.jobs()) == r.summary["jobs_submitted"]


def test_sweep_block_equals_cli(tmp_path):
    scen = os.path.join(SCEN, "sweep-fifo-load.yaml")
    sw = fleetsim.sweep(scen, output=str(tmp_path / "py"), replications=2, threads=2)
    subprocess.run([os.environ["FLEETSIM_CLI"], "sweep", scen, "--set", "sweep.replications=2",
                    "-j", "2", "-o", str(tmp_path / "cli"), "-q"], check=True, capture_output=True)
    same_tree(tmp_path / "py", tmp_path / "cli")
    assert sw.variants() is None
    pts = sw.points()
    assert len(pts) > 1 and len(sw.runs()) == 2 * len(pts)


def test_sweep_errors(tmp_path):
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.versus({"bad": {"scheduler.queue": "lottery"}}, overrides={"horizon": "2d"},
                        replications=2, output=str(tmp_path / "v"))
    assert e.value.status == 1 and "bad" in str(e.value) and "scheduler.queue" in str(e.value)
    with pytest.raises(ValueError):
        fleetsim.versus({})
    with pytest.raises(fleetsim.FleetsimError) as e:       # not KEY=VALUE
        fleetsim.versus({"nokey": {"": "fifo"}}, output=str(tmp_path / "w"))
    assert e.value.status == 1 and "variant nokey" in str(e.value)
    assert not (tmp_path / "w").exists()                   # refused before anything is written


def test_host_reads_in_create():
    # the host's reads work in create (a policy given through the library is
    # created for the run only; a shared object's is also created once for
    # the scenario's check, where they answer 0: tests/install/plugin_contract.c)
    seen = []

    class Peek(fleetsim.OrderPolicy):
        def create(self, host, options):
            super().create(host, options)
            seen.append((host.now(), host.free_gpus(), host.gpus_up()))

    r = fleetsim.run(overrides={"horizon": "2d"}, policy=Peek(lambda q, c: range(len(q))))
    assert seen == [(0.0, 1024, 1024)]     # created once, for the run, before time starts
    assert r.summary["jobs_completed"] > 0


# the M/M/c plan of tests/cli/plan.sh
MMC_PLAN = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "scenarios",
                             "mmc-plan.yaml")).read()


def erlang_c_smallest(a, bound):
    """The smallest c with Erlang C's P(wait > 0) <= bound (Erlang B recursion)."""
    b = 1.0
    for c in range(1, 200):
        b = a * b / (c + a * b)
        if c > a and c * b / (c - a * (1 - b)) <= bound:
            return c
    raise AssertionError("no c")


def test_plan_equals_cli(tmp_path):
    """fleetsim.plan (libfleetsim's fleetsim_plan) and `fleetsim plan` give the
    same evaluations byte for byte and the same plan.h5 tables; the choice is
    Erlang C's."""
    scen = tmp_path / "mmc.yaml"
    scen.write_text(MMC_PLAN)
    pl = fleetsim.plan(str(scen), output=str(tmp_path / "py"), threads=2)
    subprocess.run([os.environ["FLEETSIM_CLI"], "plan", str(scen), "-j", "1", "-o",
                    str(tmp_path / "cli"), "-q"], check=True, capture_output=True)
    evals = sorted(os.listdir(tmp_path / "py" / "evals"))
    assert evals == sorted(os.listdir(tmp_path / "cli" / "evals")) and len(evals) >= 2
    for e in evals:
        same_tree(tmp_path / "py" / "evals" / e, tmp_path / "cli" / "evals" / e)
    a, b = pl.points(), fleetsim.Plan(str(tmp_path / "cli")).points()
    assert a.equals(b)
    assert pl.runs().equals(fleetsim.Plan(str(tmp_path / "cli")).runs())
    want = erlang_c_smallest(8.0, 0.19)
    ch = pl.chosen
    assert ch["choice"] == "main" and ch["nodes"] == want and ch["chosen"] == 1
    at = pl.attrs()
    assert at["chosen_nodes"] == want and at["chosen_choice"] == "main"
    # the figures libfleetsim returned are /plan's, point by point
    assert len(pl._points) == len(a)
    for p, (_, row) in zip(pl._points, a.iterrows()):
        assert p["nodes"] == row["nodes"] and p["meets"] == row["meets"]
        assert p["wait_prob_hi"] == row["wait_prob_hi"]
        assert p["gpu_hours_capacity_mean"] == row["gpu_hours_capacity_mean"]
    sw = pl.evaluation("main", want)
    assert len(sw.runs()) == 5
    # a second call resumes: nothing runs again, the same answer
    again = fleetsim.plan(str(scen), output=str(tmp_path / "py"), threads=2)
    assert again.points().equals(a)


def test_plan_errors(tmp_path):
    scen = tmp_path / "bad.yaml"
    scen.write_text(MMC_PLAN.replace("metric: wait_prob", "metric: wait_probability"))
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.plan(str(scen), output=str(tmp_path / "p"))
    assert e.value.status == 1 and "plan.slo.0.metric" in str(e.value)
    assert "wait_probability" in str(e.value) and ":19:16:" in str(e.value)
    assert not (tmp_path / "p").exists()


def test_run_file_equals_cli(tmp_path):
    """A run through libfleetsim (fleetsim.run) writes the results file the
    CLI writes for the same scenario and overrides, byte for byte."""
    scen = os.path.join(SCEN, "default.yaml")
    fleetsim.run(scen, overrides={"horizon": "2d", "cluster.pools.0.nodes": 64},
                 output=str(tmp_path / "py.h5"))
    subprocess.run([os.environ["FLEETSIM_CLI"], "run", scen, "--set", "horizon=2d", "--set",
                    "cluster.pools.0.nodes=64", "-o", str(tmp_path / "cli.h5"), "-q"],
                   check=True, capture_output=True)
    a, b = (tmp_path / "py.h5").read_bytes(), (tmp_path / "cli.h5").read_bytes()
    assert len(a) > 10000 and a == b


# ---- issue 39: overrides as a set, NUL bytes, isolated runs, tables by name, ABI 3 ----

def test_overrides_are_one_set():
    # one at a time, horizon 1d fails against the default warmup (1d); as a
    # set, both orders work and give the same run
    a = fleetsim.run(overrides={"horizon": "1d", "warmup": "0s"})
    b = fleetsim.run(overrides={"warmup": "0s", "horizon": "1d"})
    assert same_summary(a.summary, b.summary) and a.summary["jobs_submitted"] > 0
    # a set with a bad key is refused as a whole, located at that key
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(overrides={"warmup": "0s", "horizon": "soon"})
    assert "horizon" in str(e.value)


def test_nul_byte_is_refused(tmp_path):
    for kwargs, what in (({"scenario": str(tmp_path / "a\0b.yaml")}, "scenario path"),
                         ({"output": str(tmp_path / "r\0.h5")}, "output"),
                         ({"overrides": {"horizon": "1d\0x"}}, "override horizon")):
        with pytest.raises(ValueError) as e:
            fleetsim.run(**kwargs)
        assert what in str(e.value) and "NUL" in str(e.value), str(e.value)
    with pytest.raises(ValueError) as e:
        fleetsim.sweep(output=str(tmp_path / "s\0"))
    assert "output" in str(e.value)
    assert not list(tmp_path.iterdir())       # nothing written under a cut-short name


def test_tables_by_name():
    r = fleetsim.run(overrides={"horizon": "2d"})
    assert {"jobs", "timeline", "tenants", "summary"} <= set(r.tables())
    assert r["jobs"].equals(r.jobs()) and r["timeline"].equals(r.table("timeline"))
    assert len(r["jobs"]) == r.summary["jobs_submitted"]


def crashed(e):
    """The message of a run whose child died of a segmentation fault (under
    ASan, preloaded by install.sh in a sanitizer build, the child reports it
    and exits with a status instead of dying of the signal)."""
    msg = str(e.value)
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        return "crashed in its child process" in msg
    return "crashed in its child process (killed by SIGSEGV)" in msg


class Segfault(fleetsim.Policy):
    """A policy whose first pass reads address 0: a segmentation fault."""

    def create(self, host, options):
        self.host = host

    def enqueue(self, handle):
        pass

    def schedule(self):
        import ctypes
        ctypes.string_at(0)

    def queued(self):
        return 1


def test_isolated_run_equals_and_survives_crashes(tmp_path):
    a = fleetsim.run(overrides={"horizon": "2d"}, output=str(tmp_path / "a.h5"))
    b = fleetsim.run(overrides={"horizon": "2d"}, output=str(tmp_path / "b.h5"), isolated=True)
    assert same_summary(a.summary, b.summary)
    assert (tmp_path / "a.h5").read_bytes() == (tmp_path / "b.h5").read_bytes()
    assert b.jobs().equals(a.jobs())
    # located errors come back as they are
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(overrides={"horizon": "soon"}, isolated=True)
    assert "horizon" in str(e.value)
    # a Python policy that crashes the process: only the child dies
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(overrides={"horizon": "2d"}, policy=Segfault(), isolated=True,
                     output=str(tmp_path / "py.h5"))
    assert crashed(e), str(e.value)
    # a C plugin that crashes during the run (tests/install/plugin_bad.c BAD_RUN)
    with pytest.raises(fleetsim.FleetsimError) as e:
        fleetsim.run(overrides={"horizon": "2d",
                                "scheduler.plugin.path": os.environ["FLEETSIM_TEST_CRASH_PLUGIN"]},
                     isolated=True, output=str(tmp_path / "c.h5"))
    assert crashed(e), str(e.value)
    # nothing half-written, and this process goes on
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.h5", "b.h5"]
    assert fleetsim.run(overrides={"horizon": "1d", "warmup": "0s"}).summary["jobs_submitted"] > 0


class FastestType(fleetsim.Policy):
    """ABI 3 from Python: FIFO, each job on the GPU type where it runs fastest
    (host.speed), started there with host.start_in (or with last=True, with
    host.place on the highest-numbered node of the type with room); waits
    for that type."""
    name = "fastest-type"

    def __init__(self, last=False):
        self.last = last

    def create(self, host, options):
        self.host = host
        self.q = []
        self.seen = []

    def enqueue(self, handle):
        self.q.append(handle)

    def schedule(self):
        pools = self.host.pools()
        keep = []
        for h in self.q:
            speed = {p.gpu: self.host.speed(h, p.gpu) for p in pools}
            self.seen.append(speed)
            assert self.host.speed(h, "no-such-gpu") is None
            best = max(speed.values())
            chosen = [p for p in pools if speed[p.gpu] == best]
            if self.last:
                nodes = sorted((v for p in chosen for v in range(p.first_node, p.first_node + p.nodes)
                                if self.host.node_free(v)), reverse=True)
                started = nodes and self.host.place(h, nodes)
            else:
                started = self.host.start_in(h, [p.index for p in chosen])
            if not started:
                keep.append(h)
        self.q = keep

    def queued(self):
        return len(self.q)


def test_abi3_policy_speed_and_placement(tmp_path):
    (tmp_path / "sp.csv").write_text("id,submit,gpus,duration\n" +
                                     "".join("%d,0,1,3600\n" % i for i in range(1, 7)))
    yaml = ("name: sp\nhorizon: 1d\ncluster:\n  pools: [{name: a, gpu: A100, nodes: 1, "
            "gpus_per_node: 8}, {name: h, gpu: H100, nodes: 2, gpus_per_node: 1}]\n"
            "  speed: [{class: 0, gpu: H100, factor: 2}]\nworkload: {trace: {path: %s}}\n"
            "output: {gpu_intervals: true}\n" % (tmp_path / "sp.csv"))
    p = FastestType()
    j = fleetsim.run(yaml, policy=p).jobs().sort_values("id")
    assert p.seen[0] == {"A100": 1.0, "H100": 2.0}
    # all on H100 (pool 1), two at a time, at twice the speed
    assert list(j["pool"]) == [1] * 6
    assert list(j["start"]) == [0, 0, 1800, 1800, 3600, 3600]
    assert list(j["run"]) == [1800] * 6
    # the built-in FIFO puts them all on the first pool, at speed 1
    b = fleetsim.run(yaml).jobs()
    assert list(b["pool"]) == [0] * 6 and list(b["run"]) == [3600] * 6
    # place: the same times, on the last H100 node with room (2, then 1)
    r = fleetsim.run(yaml, policy=FastestType(last=True))
    assert r.jobs().sort_values("id")[["pool", "start", "run"]].equals(j[["pool", "start", "run"]])
    g = r["gpu_intervals"].sort_values(["job", "start"])
    assert list(g["node"]) == [2, 1, 2, 1, 2, 1]
    with pytest.raises(ValueError):         # a node id out of range is refused

        class BadNode(FastestType):
            def schedule(self):
                self.host.place(self.q[0], [99])
        fleetsim.run(yaml, policy=BadNode())
