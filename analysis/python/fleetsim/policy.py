"""Scheduling policies written in Python (docs/plugins.md, "From Python").

The C plugin ABI of fleetsim.h (fleetsim_policy, fleetsim_host) bridged with
ctypes: fleetsim.run(..., policy=P) hands the table to the library with
fleetsim_scenario_set_policy, and the simulator calls P the way it calls a
plugin's shared object.  Two ways to write one:

    def smallest_first(queue, capacity):
        # queue: numpy structured array of the waiting jobs (QUEUE_DTYPE);
        # capacity: .now, .free_gpus, .gpus_up.  Return the indices of the
        # jobs to try, in order; each is started if it fits now.
        return numpy.argsort(queue["gpus"], kind="stable")

    fleetsim.run("s.yaml", policy=fleetsim.OrderPolicy(smallest_first))
    fleetsim.run("s.yaml", policy=smallest_first)          # the same

or subclass Policy and drive the host yourself (start, preempt, timers),
as a C plugin does.  An exception raised in a callback stops the run, and
fleetsim.run raises it (chained to the FleetsimError of the run).
"""
import collections
import ctypes

import numpy as np

__all__ = ["Policy", "OrderPolicy", "Capacity", "QUEUE_DTYPE", "JobInfo", "PoolInfo"]

ABI = 3                       # FLEETSIM_POLICY_ABI of the header this bridges

_u32, _u64, _i32, _dbl, _vp = (ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_double,
                               ctypes.c_void_p)


class JobInfo(ctypes.Structure):
    """fleetsim_job_info: what a policy may know of a job (times in s)."""
    _fields_ = [("id", _u64), ("submit_s", _dbl), ("duration_s", _dbl), ("estimate_s", _dbl),
                ("remaining_s", _dbl), ("gpus", _u32), ("gpu_milli", _u32), ("tenant", _i32),
                ("priority", _i32), ("job_class", _i32), ("restarts", _u32)]


class _PoolInfo(ctypes.Structure):
    """fleetsim_pool_info (ABI 3)."""
    _fields_ = [("name", ctypes.c_char_p), ("gpu", ctypes.c_char_p), ("first_node", _u32),
                ("nodes", _u32), ("gpus_per_node", _u32), ("gpus_free", _u64), ("gpus_up", _u64)]


PoolInfo = collections.namedtuple("PoolInfo", "index name gpu first_node nodes gpus_per_node "
                                  "gpus_free gpus_up")

_NOW = ctypes.CFUNCTYPE(_dbl, _vp)
_JOB = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _u32, ctypes.POINTER(JobInfo))
_START = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _u32)
_COUNT = ctypes.CFUNCTYPE(_u64, _vp)
_SET_TIMER = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _dbl, _u64)


_SPEED = ctypes.CFUNCTYPE(_dbl, _vp, _u32, ctypes.c_char_p)
_NPOOLS = ctypes.CFUNCTYPE(_u32, _vp)
_POOL = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _u32, ctypes.POINTER(_PoolInfo))
_START_IN = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _u32, ctypes.POINTER(_u32), ctypes.c_size_t)
_NODE_FREE = ctypes.CFUNCTYPE(ctypes.c_int64, _vp, _u32)


class _Host(ctypes.Structure):
    _fields_ = [("abi", _u32), ("sim", _vp), ("now", _NOW), ("job", _JOB), ("start", _START),
                ("free_gpus", _COUNT), ("preempt", _START), ("timer", _SET_TIMER),
                ("gpus_up", _COUNT), ("speed", _SPEED), ("pools", _NPOOLS), ("pool", _POOL),
                ("start_in", _START_IN), ("place", _START_IN), ("node_free", _NODE_FREE)]


_CREATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Host), ctypes.POINTER(ctypes.c_char_p),
                           ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                           ctypes.POINTER(_vp), ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
_DESTROY = ctypes.CFUNCTYPE(None, _vp)
_HANDLE = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _u32)
_PASS = ctypes.CFUNCTYPE(ctypes.c_int, _vp)
_JOB_END = ctypes.CFUNCTYPE(None, _vp, _u32)
_QUEUED = ctypes.CFUNCTYPE(ctypes.c_size_t, _vp)
_TIMER = ctypes.CFUNCTYPE(ctypes.c_int, _vp, _u64)


class _Table(ctypes.Structure):
    _fields_ = [("abi", _u32), ("name", ctypes.c_char_p), ("create", _CREATE),
                ("destroy", _DESTROY), ("enqueue", _HANDLE), ("pass_", _PASS),
                ("job_end", _JOB_END), ("queued", _QUEUED), ("timer", _TIMER)]


class Host:
    """The simulator's side, as a C plugin sees it (fleetsim_host)."""

    def __init__(self, ptr):
        self._h = ptr.contents
        self._sim = self._h.sim

    def now(self):
        """Simulated time, s."""
        return self._h.now(self._sim)

    def job(self, handle):
        """A waiting or running job's JobInfo (None if the handle is not a job)."""
        info = JobInfo()
        return info if self._h.job(self._sim, handle, ctypes.byref(info)) == 0 else None

    def start(self, handle):
        """Starts a waiting job where the placement puts it: 1 started, 0 it does not fit."""
        rc = self._h.start(self._sim, handle)
        if rc < 0:
            raise ValueError("start(%d) refused (code %d): not a waiting job" % (handle, rc))
        return rc

    def free_gpus(self):
        return self._h.free_gpus(self._sim)

    def gpus_up(self):
        return self._h.gpus_up(self._sim)

    def preempt(self, handle):
        """Stops a running job; it waits again and stays the policy's (docs/plugins.md)."""
        rc = self._h.preempt(self._sim, handle)
        if rc < 0:
            raise ValueError("preempt(%d) refused (code %d): not a running job" % (handle, rc))

    def timer(self, at_s, data):
        """timer(data) is called at simulated time at_s (the past: now)."""
        if self._h.timer(self._sim, float(at_s), int(data)) < 0:
            raise MemoryError("timer: out of memory")

    def speed(self, handle, gpu_model):
        """The job's speed factor on pools of gpu_model (a GPU model or pool
        name): cluster.speed's row for its class, else the catalog's speed
        under cluster.speed_catalog, else 1.0; None if no pool has that model
        or the handle is not a job."""
        v = self._h.speed(self._sim, handle, str(gpu_model).encode())
        return None if v < 0 else v

    def pools(self):
        """The cluster's pools, in order: a list of PoolInfo (index, name, gpu,
        nodes, gpus_per_node, gpus_free, gpus_up); empty before the run."""
        out = []
        info = _PoolInfo()
        for i in range(self._h.pools(self._sim)):
            if self._h.pool(self._sim, i, ctypes.byref(info)) == 0:
                out.append(PoolInfo(i, info.name.decode(), info.gpu.decode(), info.first_node,
                                    info.nodes, info.gpus_per_node, info.gpus_free, info.gpus_up))
        return out

    def start_in(self, handle, pools):
        """Starts a waiting job placed only in the given pools (indices, see
        pools()); those the job may not use are skipped: 1 started, 0 it does
        not fit there now."""
        idx = [int(p) for p in pools]
        arr = (_u32 * max(len(idx), 1))(*idx)
        rc = self._h.start_in(self._sim, handle, arr, len(idx))
        if rc < 0:
            raise ValueError("start_in(%d, %r) refused (code %d): not a waiting job, or a pool "
                             "index out of range" % (handle, idx, rc))
        return rc

    def place(self, handle, nodes):
        """Starts a waiting job on the first of the given nodes (global ids:
        a pool's first_node + i) where it fits now on that node: 1 started,
        0 it fits on none of them now."""
        idx = [int(v) for v in nodes]
        arr = (_u32 * max(len(idx), 1))(*idx)
        rc = self._h.place(self._sim, handle, arr, len(idx))
        if rc < 0:
            raise ValueError("place(%d, %r) refused (code %d): not a waiting job, a node id out "
                             "of range, a MIG pod or a job larger than every node given"
                             % (handle, idx, rc))
        return rc

    def node_free(self, node):
        """Whole GPUs free on a node now; None if it is out of service (or no such node)."""
        v = self._h.node_free(self._sim, int(node))
        return None if v < 0 else v


class Policy:
    """A scheduling policy in Python, with the calls of the C plugin ABI.
    Override enqueue, schedule (the pass) and queued; job_end and timer
    when needed.  create is called before a run (and once more for the
    check of the scenario), with the host and scheduler.plugin.options."""
    name = "python"

    def create(self, host, options):
        self.host = host

    def enqueue(self, handle):
        raise NotImplementedError

    def schedule(self):
        raise NotImplementedError

    def job_end(self, handle):
        pass

    def timer(self, data):
        pass

    def queued(self):
        raise NotImplementedError


QUEUE_DTYPE = np.dtype([("handle", "u4"), ("id", "u8"), ("submit", "f8"), ("duration", "f8"),
                        ("estimate", "f8"), ("remaining", "f8"), ("gpus", "u4"),
                        ("gpu_milli", "u4"), ("tenant", "i4"), ("priority", "i4"),
                        ("job_class", "i4"), ("restarts", "u4"), ("queued_since", "f8")])

Capacity = collections.namedtuple("Capacity", "now free_gpus gpus_up")


class OrderPolicy(Policy):
    """A queue order as a Python callable: order(queue, capacity) is called
    at every scheduling pass with the waiting jobs as a numpy structured
    array (QUEUE_DTYPE, in arrival order; a view valid during the call) and
    the free capacity; it returns the indices of the jobs to try, in order.
    Each is started if it fits now; with strict=True the pass stops at the
    first that does not (as scheduler.mode strict), otherwise it goes on
    (best effort).  Jobs not returned are not tried in that pass.  A job
    asking more whole GPUs than are free is known not to fit without asking
    the simulator."""

    def __init__(self, order, strict=False, name=None):
        self.order = order
        self.strict = strict
        self.name = name or getattr(order, "__name__", "python-order")

    def create(self, host, options):
        self.host = host
        self._q = np.zeros(64, dtype=QUEUE_DTYPE)
        self._n = 0

    def enqueue(self, handle):
        j = self.host.job(handle)
        if self._n == len(self._q):
            self._q = np.concatenate([self._q, np.zeros(len(self._q), dtype=QUEUE_DTYPE)])
        self._q[self._n] = (handle, j.id, j.submit_s, j.duration_s, j.estimate_s, j.remaining_s,
                            j.gpus, j.gpu_milli, j.tenant, j.priority, j.job_class, j.restarts,
                            self.host.now())
        self._n += 1

    def schedule(self):
        n = self._n
        if n == 0:
            return
        host = self.host
        queue = self._q[:n]
        free = host.free_gpus()
        idx = np.asarray(self.order(queue, Capacity(host.now(), free, host.gpus_up())))
        idx = idx.astype(np.intp, copy=False).ravel()
        if idx.size == 0:
            return
        if idx.min() < 0 or idx.max() >= n:
            bad = idx[(idx < 0) | (idx >= n)][0]
            raise IndexError("order returned index %d for a queue of %d jobs" % (bad, n))
        # whole-GPU jobs asking more than is free cannot start (free only
        # shrinks during a pass): filtered at once, not asked one by one
        cannot = (queue["gpu_milli"][idx] == 1000) & (queue["gpus"][idx] > free)
        if self.strict:
            stop = np.flatnonzero(cannot)
            if stop.size:
                idx = idx[:stop[0]]
        else:
            idx = idx[~cannot]
        handles = queue["handle"][idx].tolist()
        gpus = queue["gpus"][idx].tolist()
        whole = (queue["gpu_milli"][idx] == 1000).tolist()
        tried, started = set(), []
        for k, i in enumerate(idx.tolist()):
            if i in tried:
                continue
            tried.add(i)
            if (whole[k] and gpus[k] > free) or not host.start(handles[k]):
                if self.strict:
                    break
                continue
            started.append(i)
            free = host.free_gpus()
        if started:
            keep = np.ones(n, dtype=bool)
            keep[started] = False
            rest = queue[keep]
            self._q[:len(rest)] = rest
            self._n = len(rest)

    def queued(self):
        return self._n


class _Bridge:
    """Holds the ctypes table and callbacks of one policy for one run; the
    first exception a callback raised is kept in .error."""

    def __init__(self, policy):
        self.policy = policy
        self.error = None
        self.sessions = {}
        self.next_id = 1
        name = getattr(policy, "name", "python")
        self._name = name.encode() if isinstance(name, str) else b"python"
        self.table = _Table(ABI, self._name, _CREATE(self._create), _DESTROY(self._destroy),
                            _HANDLE(self._enqueue), _PASS(self._pass), _JOB_END(self._job_end),
                            _QUEUED(self._queued), _TIMER(self._timer))

    def _fail(self, e):
        if self.error is None:
            self.error = e

    def _create(self, host, keys, values, n, state, err, errlen):
        try:
            opts = {keys[i].decode(): values[i].decode() for i in range(n)}
            self.policy.create(Host(host), opts)
        except Exception as e:    # the scenario is refused with the message
            msg = ("%s: %s" % (type(e).__name__, e)).encode()[:max(errlen - 1, 0)]
            ctypes.memmove(err, msg + b"\0", len(msg) + 1)
            self._fail(e)
            return 1
        sid = self.next_id
        self.next_id += 1
        self.sessions[sid] = True
        state[0] = sid
        return 0

    def _destroy(self, state):
        self.sessions.pop(state, None)

    def _guard(self, fn, on_error, *args):
        """fn(*args) for the library: an exception is kept (the first one) and
        becomes the return code on_error, which stops the run."""
        try:
            return fn(*args)
        except Exception as e:
            self._fail(e)
            return on_error

    def _enqueue(self, _state, handle):
        return self._guard(lambda: self.policy.enqueue(handle) or 0, -1)

    def _pass(self, _state):
        if self.error is not None:
            return 1
        return self._guard(lambda: self.policy.schedule() or 0, 1)

    def _job_end(self, _state, handle):
        self._guard(self.policy.job_end, None, handle)

    def _queued(self, _state):
        return self._guard(lambda: int(self.policy.queued()), 0)

    def _timer(self, _state, data):
        return self._guard(lambda: self.policy.timer(data) or 0, 1)
