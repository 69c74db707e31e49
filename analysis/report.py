#!/usr/bin/python3
"""fleetsim report: a self-contained HTML report of a results file or a sweep index.

Run by `fleetsim report` (sim/cli/cmd_report.c) with Debian's /usr/bin/python3;
usable alone:

    /usr/bin/python3 analysis/report.py RESULTS.h5 -o report.html [--warmup SECONDS]

Reads the files with h5py only (layouts: docs/results.md, docs/sweeps.md), draws
every plot with matplotlib (Agg backend), writes each plot as a PNG into
<report stem>_plots/ beside the HTML, and embeds the same PNGs in the HTML as
base64 data URIs so that the page opens from anywhere.  Plots that need a table
the file does not have (/failures, /cost) are left out, and the page says so.

Exit status: 0 written, 1 run-time failure, 2 bad input (not a results file),
3 a Python module is missing.
"""

import argparse
import base64
import html
import io
import math
import os
import re
import shutil
import subprocess
import sys

MISSING = []
try:
    import numpy as np
except ImportError:
    MISSING.append(("numpy", "python3-numpy"))
try:
    import h5py
except ImportError:
    MISSING.append(("h5py", "python3-h5py"))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    MISSING.append(("matplotlib", "python3-matplotlib"))

STATES = ["completed", "failed", "running", "queued", "rejected", "withdrawn"]
MAX_LINES = 12          # lines per plot before the rest are left out (said in the caption)
CDF_POINTS = 2000       # points of one drawn CDF (quantiles), whatever the job count


class BadInput(Exception):
    pass


def text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace").rstrip("\0")
    return str(v)


def columns_units(ds):
    """{column: unit} from the 'columns' attribute ("name:unit; ...")."""
    units = {}
    raw = ds.attrs.get("columns")
    if raw is None:
        return units
    for part in text(raw).split(";"):
        if ":" in part:
            k, u = part.split(":", 1)
            units[k.strip()] = u.strip()
    return units


def time_axis(seconds):
    """(divisor, label) for a time axis spanning `seconds`."""
    if seconds >= 3 * 86400:
        return 86400.0, "days"
    if seconds >= 3 * 3600:
        return 3600.0, "hours"
    if seconds >= 180:
        return 60.0, "minutes"
    return 1.0, "seconds"


def fmt_value(v, unit=""):
    if isinstance(v, (bytes, str)):
        return html.escape(text(v))
    try:
        f = float(v)
    except (TypeError, ValueError):
        return html.escape(str(v))
    if math.isnan(f):
        return "&ndash;"
    if unit == "s" and abs(f) >= 60:
        for div, name in ((86400, "d"), (3600, "h"), (60, "min")):
            if abs(f) >= div:
                return "%.4g s (%.3g %s)" % (f, f / div, name)
    if unit == "fraction":
        return "%.4g (%.2f%%)" % (f, 100 * f)
    if float(f).is_integer() and abs(f) < 1e15:
        return "%d" % int(f)
    return "%.6g" % f


def human_duration(s):
    """Seconds as s / min / h / d (3 significant digits); an en dash for NaN."""
    if s is None or math.isnan(s):
        return "&ndash;"
    a = abs(s)
    for div, name in ((86400, "d"), (3600, "h"), (60, "min")):
        if a >= div:
            return "%.3g %s" % (s / div, name)
    return "%.3g s" % s


def duration_axis(seconds):
    """(divisor, unit) for bars up to `seconds`: s, min, h or d."""
    for div, name in ((86400.0, "d"), (3600.0, "h"), (60.0, "min")):
        if seconds >= 2 * div:
            return div, name
    return 1.0, "s"


BOOT_N = 4000           # bootstrap resamples of one interval
BOOT_SEED = 20261207    # fixed: the same report twice draws the same resamples


def boot_mean_ci(x, level=0.95, seed=BOOT_SEED):
    """Mean of x (NaN skipped) and the percentile-bootstrap interval of the mean
    (BOOT_N resamples of the replications with replacement).  Unlike a
    Student-t interval it follows a skewed metric: a wait's interval never
    reaches below the smallest replication.  (mean, lo, hi); lo and hi NaN with
    fewer than 2 values, equal to the mean when every value is the same."""
    x = np.asarray([v for v in x if not math.isnan(v)], dtype=float)
    if len(x) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(x.mean())
    if len(x) < 2:
        return m, float("nan"), float("nan")
    if np.all(x == x[0]):
        return m, m, m
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(BOOT_N, len(x)))].mean(axis=1)
    a = (1 - level) / 2
    return m, float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


class Report:
    def __init__(self, out_html):
        self.out_html = out_html
        stem = os.path.splitext(os.path.basename(out_html))[0]
        self.png_dir = os.path.join(os.path.dirname(os.path.abspath(out_html)), stem + "_plots")
        self.png_rel = stem + "_plots"
        self.sections = []
        self.notes = []

    def figure(self, fig, name, title, caption):
        os.makedirs(self.png_dir, exist_ok=True)
        buf = io.BytesIO()
        # tight_layout, not bbox_inches="tight": the latter draws every figure
        # twice (about 15% of a report's time)
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
        data = buf.getvalue()
        with open(os.path.join(self.png_dir, name + ".png"), "wb") as f:
            f.write(data)
        uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        self.sections.append(
            '<section><h2>%s</h2>\n<figure><img src="%s" alt="%s" data-png="%s/%s.png">'
            "<figcaption>%s</figcaption></figure></section>\n"
            % (html.escape(title), uri, html.escape(title), html.escape(self.png_rel), name,
               caption))

    def table(self, title, header, rows, caption=""):
        h = "".join("<th>%s</th>" % c for c in header)
        body = "".join("<tr>%s</tr>\n" % "".join("<td>%s</td>" % c for c in r) for r in rows)
        self.sections.append("<section><h2>%s</h2>\n%s<table><thead><tr>%s</tr></thead><tbody>\n"
                             "%s</tbody></table></section>\n"
                             % (html.escape(title), "<p>%s</p>" % caption if caption else "",
                                h, body))

    def note(self, s):
        self.notes.append(s)

    def write(self, title, subtitle):
        notes = "".join("<li>%s</li>" % n for n in self.notes)
        page = PAGE % {
            "title": html.escape(title),
            "subtitle": subtitle,
            "notes": "<ul class=notes>%s</ul>" % notes if notes else "",
            "body": "".join(self.sections),
        }
        tmp = self.out_html + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(tmp, self.out_html)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>%(title)s</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } .sub { color: #555; margin-top: 0; }
section { margin: 2em 0; } img { max-width: 100%%; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.9em; margin-top: 0.4em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; } .notes { color: #555; }
</style></head>
<body data-images="pending">
<h1>%(title)s</h1>
<p class=sub>%(subtitle)s</p>
%(notes)s
%(body)s
<script>
// Sets body[data-images] to "ok" once every image has decoded with a size,
// else "failed: N of M" (read back by tests/cli/report.sh through --dump-dom).
(function () {
  function check() {
    var imgs = document.images, bad = 0;
    for (var i = 0; i < imgs.length; i++)
      if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad++;
    document.body.setAttribute("data-images",
      bad === 0 ? "ok" : "failed: " + bad + " of " + imgs.length);
    document.body.setAttribute("data-image-count", String(imgs.length));
  }
  if (document.readyState === "complete") check();
  else window.addEventListener("load", check);
})();
</script>
</body></html>
"""


# ---- reading ---------------------------------------------------------------

def in_stats_waits(path, warmup):
    with h5py.File(path, "r") as f:
        if "jobs" not in f:
            return np.array([])
        jobs = f["jobs"]
        wait = jobs.fields("wait")[:]
        submit = jobs.fields("submit")[:]
    keep = ~np.isnan(wait) & (submit >= warmup)
    return wait[keep]


TABLES = ("jobs", "timeline", "summary", "failures", "tenants", "cost", "pools", "runs",
          "points", "stats", "plan", "plan_runs", "services", "service_buckets")


def check_layout(path):
    """Every table the report reads must be a table (a compound dataset), not a group."""
    with h5py.File(path, "r") as f:
        for name in TABLES:
            if name not in f:
                continue
            obj = f.get(name, getlink=False)
            if not isinstance(obj, h5py.Dataset):
                raise BadInput("%s: /%s is a %s, expected a table (a compound dataset; "
                               "docs/results.md)" % (path, name,
                                                     "group" if isinstance(obj, h5py.Group)
                                                     else type(obj).__name__))
            if obj.dtype.names is None:
                raise BadInput("%s: /%s is not a table (no named columns; docs/results.md)"
                               % (path, name))


def read_summary(f):
    row = f["summary"][0]
    units = columns_units(f["summary"])
    return [(name, row[name], units.get(name, "")) for name in f["summary"].dtype.names]


def leading_number(s):
    m = re.match(r"\s*([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)", s)
    return float(m.group(1)) if m else None


# ---- plots of one run ------------------------------------------------------

def plot_timeline(rep, f, label=""):
    tl = f["timeline"][:]
    if len(tl) == 0:
        rep.note("The timeline is empty: no timeline plot.")
        return
    t = tl["time"]
    div, unit = time_axis(float(t[-1]) if len(t) else 0)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True,
                                   gridspec_kw={"height_ratios": [2, 1]})
    ax1.step(t / div, tl["gpus_total"], where="post", label="total", color="0.5", lw=1.5, ls="--")
    ax1.step(t / div, tl["gpus_up"], where="post", label="up", color="tab:green", lw=1.2)
    ax1.step(t / div, tl["gpus_busy"], where="post", label="busy", color="tab:blue", lw=1.2)
    ax1.set_ylabel("GPUs")
    ax1.set_ylim(bottom=0)
    ax1.legend(loc="lower right")
    ax1.grid(alpha=0.3)
    ax2.step(t / div, tl["gpus_queued"], where="post", color="tab:red", lw=1.2,
             label="GPUs requested by queued jobs")
    ax2.set_ylabel("GPUs queued")
    ax2.set_xlabel("time (%s)" % unit)
    ax2.grid(alpha=0.3)
    ax3 = ax2.twinx()
    ax3.step(t / div, tl["jobs_queued"], where="post", color="tab:orange", lw=0.8, alpha=0.8,
             label="jobs queued")
    ax3.set_ylabel("jobs queued")
    h1, l1 = ax2.get_legend_handles_labels()
    h2, l2 = ax3.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, loc="upper right")
    fig.suptitle("GPUs over time" + (" - " + label if label else ""))
    rep.figure(fig, "timeline", "GPUs busy, up and queued over time",
               "Top: GPUs in the fleet (grey), up (green: not failed or in repair) and busy "
               "(blue: allocated to jobs), sampled every timeline interval (/timeline). Bottom: "
               "GPUs requested by waiting jobs (red, left axis) and waiting jobs (orange, right "
               "axis).%s" % (" " + html.escape(label) if label else ""))


def draw_cdf(ax, waits, label, color=None):
    n = len(waits)
    if n == 0:
        return False
    w = np.sort(waits)
    if n > CDF_POINTS:
        q = np.linspace(0, 1, CDF_POINTS)
        x = np.quantile(w, q)
        y = q
    else:
        x = w
        y = np.arange(1, n + 1) / n
    ax.step(x, y, where="post", label=label, color=color, lw=1.3)
    return True


def draw_tail(ax, waits, label, color=None):
    """Survival P(wait > x | wait > 0) of the jobs that waited, log-log."""
    w = np.sort(waits[waits > 0])
    n = len(w)
    if n < 2:           # one step draws nothing
        return False
    if n > CDF_POINTS:
        q = np.linspace(0, 1, CDF_POINTS, endpoint=False)
        x = np.quantile(w, q)
        y = 1 - q
    else:
        x = w
        y = 1 - np.arange(n) / n
    ax.step(x, y, where="post", label=label, color=color, lw=1.3)
    return True


def time_marks(ax, y):
    lo, hi = ax.get_xlim()
    for s, name in ((60, "1 min"), (3600, "1 h"), (86400, "1 d"), (7 * 86400, "1 wk")):
        if lo < s < hi * 0.6:
            ax.axvline(s, color="0.75", lw=0.8, zorder=0)
            ax.text(s, y, " " + name, color="0.45", fontsize=8)


def finish_cdf(ax, tail_ax=None):
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("wait (s, logarithmic above 1 s)")
    ax.set_ylabel("share of jobs waiting at most x")
    ax.grid(alpha=0.3, which="both")
    time_marks(ax, 0.02)
    ax.set_title("all jobs in statistics")
    if tail_ax is not None:
        tail_ax.set_xscale("log")
        tail_ax.set_yscale("log")
        tail_ax.set_xlabel("wait (s)")
        tail_ax.set_ylabel("share of waiting jobs waiting longer than x")
        tail_ax.grid(alpha=0.3, which="both")
        tail_ax.set_title("jobs that waited (wait > 0): tail")
        time_marks(tail_ax, tail_ax.get_ylim()[0] * 1.3)


def plot_failures(rep, f, label=""):
    if "failures" not in f:
        rep.note("No /failures table in this file: no failures plot.")
        return
    ds = f["failures"]
    data = ds[:]
    names = ds.dtype.names or ()
    tcol = next((c for c in ("time", "t", "fail_time", "start") if c in names), None)
    if tcol is None or len(data) == 0:
        rep.note("/failures has no rows (or no time column): no failures plot.")
        return
    t = data[tcol].astype(float)
    kcol = next((c for c in ("event", "kind", "type", "what", "scope") if c in names), None)
    end = float(np.nanmax(t)) if len(t) else 1.0
    div, unit = time_axis(end)
    bins = np.linspace(0, max(end, 1.0) / div, 41)
    fig, ax = plt.subplots(figsize=(10, 3.8))
    if kcol is not None:
        raw = data[kcol]
        enum = h5py.check_enum_dtype(ds.dtype[kcol])
        if enum:
            inv = {v: k for k, v in enum.items()}
            kinds = np.array([inv.get(int(v), str(v)) for v in raw])
        else:
            kinds = np.array([text(v) for v in raw])
        groups = sorted(set(kinds))
        ax.hist([t[kinds == g] / div for g in groups], bins=bins, stacked=True, label=groups)
        ax.legend()
    else:
        ax.hist(t / div, bins=bins, color="tab:red")
    ax.set_xlabel("time (%s)" % unit)
    ax.set_ylabel("events per bin")
    ax.grid(alpha=0.3)
    rep.figure(fig, "failures", "Failures and repairs over time",
               "Events of /failures counted in 40 equal time bins%s.%s"
               % (" and stacked by %s" % html.escape(kcol) if kcol else "",
                  " " + html.escape(label) if label else ""))


def plot_cost(rep, f, label=""):
    if "cost" not in f:
        rep.note("No /cost table in this file: no cost breakdown.")
        return
    ds = f["cost"]
    data = ds[:]
    names = ds.dtype.names or ()
    currency = text(f.attrs.get("currency", "USD"))
    strs = [c for c in names if ds.dtype[c].kind in ("S", "O", "U")]
    nums = [c for c in names if ds.dtype[c].kind in ("f", "i", "u")]
    if len(data) == 0 or not nums:
        rep.note("/cost has no rows or no numeric column: no cost breakdown.")
        return
    if set(COST_PARTS) | {"day", "pool"} <= set(names):
        plot_cost_days(rep, f, data, currency, label)
        return
    fig, ax = plt.subplots(figsize=(10, 4))
    if strs and len(data) > 1:
        # one row per item: bar of the money column
        lab = [text(v) for v in data[strs[0]]]
        money = next((c for c in nums if re.search(r"usd|cost|amount|total|money", c)), nums[-1])
        ax.barh(lab, data[money].astype(float), color="tab:purple")
        ax.set_xlabel("%s (%s)" % (money, currency))
        what = "%s per %s" % (money, strs[0])
    else:
        # one row of components
        vals = [(c, float(data[0][c])) for c in nums if c not in ("index", "pool", "tenant")]
        ax.barh([c for c, _ in vals], [v for _, v in vals], color="tab:purple")
        ax.set_xlabel(currency)
        what = "every numeric column of the row"
    ax.grid(alpha=0.3, axis="x")
    rep.figure(fig, "cost", "Cost breakdown",
               "/cost: %s, in %s.%s" % (html.escape(what), html.escape(currency),
                                       " " + html.escape(label) if label else ""))


COST_PARTS = ("capex", "energy", "colocation", "ops", "cloud")
BUSIEST_LINKS = 12      # links in the fabric's busiest-links panel


def fabric_section(rep, f, label=""):
    """The fabric (cluster.fabric; docs/results.md "/links, /jobs_network"): only
    in a run with it (a file with /links): the GPU-hours lost to the network,
    the distribution of the jobs' slowdown and the busiest links."""
    if "links" not in f:
        return
    summ = f["summary"][0]
    names = f["summary"].dtype.names or ()
    lost_h = float(summ["gpu_s_network"]) / 3600 if "gpu_s_network" in names else float("nan")
    busy_h = float(summ["gpu_s_busy"]) / 3600 if "gpu_s_busy" in names else float("nan")
    share = " (%.2f%% of the busy GPU-hours)" % (100 * lost_h / busy_h) if busy_h > 0 else ""
    rep.sections.append(
        "<section><h2>Network fabric</h2>\n<p class=fabric>GPU-hours lost to the network: "
        "<b>%s</b>%s: the jobs' GPUs x (1 - their fabric speed factor) over their running "
        "time (/summary gpu_s_network).%s</p></section>\n"
        % (fmt_value(lost_h), share, " " + html.escape(label) if label else ""))
    links = f["links"][:]
    jn = f["jobs_network"][:] if "jobs_network" in f else np.zeros(0)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.5))
    run = jn["net_run_s"].astype(float) if len(jn) else np.zeros(0)
    ok = run > 0
    if ok.any():
        # a job's slowdown: its run time on the network over the same work on an idle fabric
        slow = run[ok] / np.maximum(run[ok] - jn["network_slow_s"].astype(float)[ok], 1e-300)
        x = np.sort(slow)
        y = np.arange(1, len(x) + 1) / len(x)
        if len(x) > CDF_POINTS:
            q = np.linspace(0, len(x) - 1, CDF_POINTS).astype(int)
            x, y = x[q], y[q]
        ax.step(x, y, where="post", color="tab:blue", label="n = %d" % int(ok.sum()))
        ax.set_xlabel("slowdown (run time / run time on an idle fabric)")
        ax.set_ylabel("share of jobs")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    else:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no job's ring crossed the network", ha="center",
                transform=ax.transAxes)
    top = np.argsort(-links["mean_util"].astype(float), kind="stable")[:BUSIEST_LINKS][::-1]
    lab = ["%s %d" % ("node" if text(links["tier"][i]) == "nic" else "leaf uplinks",
                      int(links["node"][i]) if text(links["tier"][i]) == "nic"
                      else int(links["leaf"][i])) for i in top]
    yy = np.arange(len(top))
    bx.barh(yy - 0.2, 100 * links["mean_util"][top].astype(float), height=0.4,
            color="tab:purple", label="mean")
    bx.barh(yy + 0.2, 100 * links["peak_util"][top].astype(float), height=0.4,
            color="tab:orange", label="peak")
    bx.set_yticks(yy)
    bx.set_yticklabels(lab)
    bx.set_xlabel("utilisation (%)")
    bx.grid(alpha=0.3, axis="x")
    bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.suptitle("Network fabric")
    rep.figure(fig, "fabric", "Network fabric: slowdown and busiest links",
               "Left: empirical CDF of the slowdown of the jobs whose ring crossed the network "
               "(/jobs_network: net_run_s / (net_run_s - network_slow_s)). Right: the %d links "
               "of /links with the highest mean utilisation (bytes / (capacity x run length)), "
               "with their peak (the jobs' max-min load / capacity): a node's NICs, or a leaf "
               "group's uplinks to the spines.%s"
               % (len(top), " " + html.escape(label) if label else ""))


def plot_cost_days(rep, f, data, currency, label=""):
    """/cost as fleetsim writes it (docs/cost.md): one row per (day, pool)."""
    days = data["day"].astype(int)
    nd = int(days.max()) + 1 if len(days) else 0
    fig, ax = plt.subplots(figsize=(10, 4))
    bottom = np.zeros(nd)
    for part in COST_PARTS:
        per_day = np.bincount(days, weights=data[part].astype(float), minlength=nd)
        if per_day.any():
            ax.bar(np.arange(nd), per_day, bottom=bottom, label=part)
            bottom = bottom + per_day
    ax.set_xlabel("day")
    ax.set_ylabel(currency)
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    rep.figure(fig, "cost", "Cost per day",
               "/cost summed over pools per day of simulated time, by component (%s).%s"
               % (html.escape(currency), " " + html.escape(label) if label else ""))
    pool_names = {}
    if "pools" in f:
        for r in f["pools"][:]:
            pool_names[int(r["index"])] = text(r["name"])
    if "cost_pools" in f:
        cols = ("total",) + COST_PARTS + ("idle", "unit_cost", "failures", "energy_kwh")
        rows = []
        for r in f["cost_pools"][:]:
            p = int(r["pool"])
            rows.append([html.escape(pool_names.get(p, str(p)))] +
                        [fmt_value(r[c]) for c in cols])
        rep.table("Cost per pool (/cost_pools)", ["pool"] + list(cols), rows,
                  "Whole run, %s; unit_cost per billed GPU-hour; energy in kWh "
                  "(docs/cost.md)." % html.escape(currency))
    if "cost_tenants" in f and len(f["cost_tenants"]):
        rows = [[html.escape(text(r["name"]) or str(int(r["tenant"])))] +
                [fmt_value(r[c]) for c in ("gpu_hours", "showback", "chargeback")]
                for r in f["cost_tenants"][:]]
        rep.table("Cost per tenant (/cost_tenants)", ["tenant", "GPU-hours", "showback",
                  "chargeback"], rows,
                  "Showback: GPU-hours at the pool's cost per GPU-hour; chargeback: the "
                  "whole cost shared by GPU-hours held (sums to cost_total).")


TENANT_COLUMNS = [
    ("jobs", "jobs", ""), ("jobs_completed", "completed", ""), ("gpu_hours", "GPU-hours", ""),
    ("wait_p50", "wait p50", "s"), ("wait_p95", "wait p95", "s"), ("wait_p99", "wait p99", "s"),
    ("jct_mean", "JCT mean", "s"), ("jct_p95", "JCT p95", "s"),
    ("queued_mean", "queued mean", "s"), ("preemptions", "preemptions", ""),
    ("preempt_lost_gpu_hours", "GPU-h lost to preemption", ""),
    ("borrowed_gpu_hours", "borrowed GPU-h", ""), ("lent_gpu_hours", "lent GPU-h", ""),
    ("held_gpu_hours", "held GPU-h", ""), ("computing_gpu_hours", "computing GPU-h", ""),
    ("redo_gpu_hours", "lost GPU-h", ""), ("ckpt_gpu_hours", "checkpoint GPU-h", ""),
    ("startup_gpu_hours", "start-up GPU-h", ""), ("recovering_gpu_hours", "recovering GPU-h", "")]


def tenants_section(rep, f):
    """Per-team results: one row per tenant of /tenants (docs/results.md)."""
    if "tenants" not in f or not len(f["tenants"]):
        return
    data = f["tenants"][:]
    names = data.dtype.names
    cols = []
    for c, title, unit in TENANT_COLUMNS:
        if c not in names:
            continue   # an older file
        vals = data[c].astype(float)
        if c in ("borrowed_gpu_hours", "lent_gpu_hours") and all(math.isnan(v) for v in vals):
            continue   # no quotas in this run
        cols.append((c, title, unit))
    rows = [[html.escape(text(r["name"]) or str(int(r["tenant"])))] +
            [fmt_value(r[c], unit) for c, _, unit in cols] for r in data]
    rep.table("Per tenant (/tenants)", ["tenant"] + [t for _, t, _ in cols], rows,
              "Waits and completion times of each tenant's jobs in statistics, counts and "
              "GPU-hours of all its jobs; queued = all time queued, requeues after preemption "
              "included; borrowed/lent: Kueue quota; held = computing (lost: its part whose "
              "work was thrown away) + checkpoint + start-up + recovering, the held split of "
              "busy per tenant (docs/results.md).")


def summary_table(rep, f):
    rows = [(html.escape(n), fmt_value(v, u), html.escape(u)) for n, v, u in read_summary(f)]
    rep.table("Summary (/summary)", ["metric", "value", "unit"], rows,
              "Headline figures of the run; definitions in docs/results.md.")


CAP_STATES = (("gpu_s_busy", "busy", "tab:blue"),
              ("gpu_s_waiting", "free while jobs wait", "tab:orange"),
              ("gpu_s_idle", "free, nothing waiting", "0.8"),
              ("gpu_s_down", "down", "tab:red"))

# busy over time, in its parts (/timeline, docs/results.md "The held split")
BUSY_PARTS = (("gpu_s_computing", "computing", "tab:blue"),
              ("gpu_s_ckpt", "checkpointing", "tab:cyan"),
              ("gpu_s_startup", "starting", "tab:olive"),
              ("gpu_s_recovering", "recovering", "tab:pink"),
              ("gpu_s_serving", "serving", "tab:purple"),
              ("gpu_s_share_idle", "unallocated shares", "0.55"))


def held_split(f):
    """The held split of busy from /summary (docs/results.md), as
    [(label, GPU-s, color)], or None for files without it."""
    names = f["summary"].dtype.names
    need = ("gpu_s_computing", "gpu_s_redo", "gpu_s_ckpt", "gpu_s_startup", "gpu_s_recovering",
            "gpu_s_serving", "gpu_s_share_idle")
    if not all(n in names for n in need):
        return None
    r = f["summary"][0]
    return [("useful computing", r["gpu_s_computing"] - r["gpu_s_redo"], "tab:blue"),
            ("work later lost", r["gpu_s_redo"], "tab:red"),
            ("checkpointing", r["gpu_s_ckpt"], "tab:cyan"),
            ("starting", r["gpu_s_startup"], "tab:olive"),
            ("recovering", r["gpu_s_recovering"], "tab:pink"),
            ("serving", r["gpu_s_serving"], "tab:purple"),
            ("unallocated shares", r["gpu_s_share_idle"], "0.55")]


def plot_capacity(rep, f, label=""):
    """Where capacity goes (#15): the capacity states of /timeline as a
    stacked area (each row's GPU-seconds over its interval: the mean GPUs in
    that state), and the held split of busy from /summary as one bar."""
    tl = f["timeline"][:]
    if len(tl) == 0 or "gpu_s_busy" not in tl.dtype.names:
        rep.note("This file's /timeline has no capacity-state columns: no capacity plot.")
        return
    t = tl["time"].astype(float)
    dt = np.diff(np.concatenate([[0.0], t]))
    keep = dt > 0
    t, dt = t[keep], dt[keep]
    if len(t) == 0:
        return
    div, unit = time_axis(float(t[-1]))
    states = CAP_STATES
    if all(c in tl.dtype.names for c, _, _ in BUSY_PARTS):
        # busy drawn in its parts: they add up to busy in every row (to rounding)
        states = BUSY_PARTS + CAP_STATES[1:]
    cols = {c: tl[c][keep] for c in tl.dtype.names}
    if "gpu_s_frag" in cols:
        # waiting drawn as fragmented + held back (the waiting split, docs/results.md)
        held = cols["gpu_s_waiting"] - cols["gpu_s_frag"]
        why = ("for quota" if cols["gpu_s_quota"].sum() > 0 else
               "reserved" if cols["gpu_s_reserved"].sum() > 0 else "blocked")
        cols["held_back"] = held
        i = [c for c, _, _ in states].index("gpu_s_waiting")
        states = (states[:i] + (("gpu_s_frag", "free, fragmented", "tab:brown"),
                                ("held_back", "free, held back (%s)" % why, "tab:orange"))
                  + states[i + 1:])
    ys = [np.clip(cols[c] / dt, 0, None) for c, _, _ in states]
    split = held_split(f)
    fig, axes = plt.subplots(1, 2 if split else 1, figsize=(12, 4.5), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 1]} if split else None)
    ax = axes[0][0]
    # each row covers (previous time, time]: a step drawn before the sample
    ax.stackplot(t / div, *ys, step="pre", labels=[l for _, l, _ in states],
                 colors=[c for _, _, c in states])
    ax.set_xlim(0, t[-1] / div)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (%s)" % unit)
    ax.set_ylabel("GPUs (mean over each interval)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4,
              fontsize="small", frameon=False)
    ax.grid(alpha=0.3)
    sm = f["summary"][0]
    total = float(sm["gpu_s_total"]) if "gpu_s_total" in sm.dtype.names else 0.0
    caption = ("Left: every GPU-second of the run in exactly one state (/timeline gpu_s_busy, "
               "gpu_s_waiting, gpu_s_idle, gpu_s_down), as the mean number of GPUs in each state "
               "over each timeline interval; the stack is the fleet's size.")
    if "gpu_s_frag" in cols:
        caption += (" Free while jobs wait is drawn as fragmented (no queued pod fits on the "
                    "node) and held back by the policy (/timeline gpu_s_frag, and gpu_s_quota, "
                    "gpu_s_reserved or gpu_s_blocked).")
    if any(c == "gpu_s_computing" for c, _, _ in states):
        caption += (" Busy is drawn in its parts (/timeline gpu_s_computing, gpu_s_ckpt, "
                    "gpu_s_startup, gpu_s_recovering, gpu_s_serving, gpu_s_share_idle); work "
                    "later lost is part of computing there (it is known only when it is lost: "
                    "the bar on the right has it).")
    if total > 0:
        caption += " Whole run: " + ", ".join(
            "%s %.1f%%" % (l, 100.0 * float(sm[c]) / total) for c, l, _ in CAP_STATES) + "."
    if split:
        bx = axes[0][1]
        busy = float(sm["gpu_s_busy"])
        left = 0.0
        for lab, v, col in split:
            share = 100.0 * float(v) / busy if busy > 0 else 0.0
            share = share if abs(share) > 1e-9 else 0.0
            bx.bar(0, share, bottom=left, color=col, label="%s %.1f%%" % (lab, share), width=0.6)
            left += share
        bx.set_xlim(-0.6, 0.6)
        bx.set_ylim(0, max(100.0, left))
        bx.set_xticks([])
        bx.set_ylabel("% of busy GPU-time")
        bx.set_title("busy is")
        bx.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
        caption += (" Right: what busy GPU-time was, over the whole run (/summary: computing "
                    "whose work was kept, computing whose work a failure or preemption threw "
                    "away, writing checkpoints, pod start-up, restoring or held while a failure "
                    "was detected, held by service replicas, and the unallocated shares of "
                    "shared GPUs).")
    fig.suptitle("Where capacity goes" + (" - " + label if label else ""))
    rep.figure(fig, "capacity", "Where capacity goes", caption)


def plot_services(rep, f, label=""):
    """Inference services: serving vs training GPUs over time and by hour of
    the day (/timeline gpus_serving), and each service's TTFT p99 per bucket
    against its SLO with its replicas (/service_buckets)."""
    if "service_buckets" not in f or "services" not in f:
        return
    tl = f["timeline"][:]
    if len(tl) and "gpus_serving" in tl.dtype.names:
        t = tl["time"]
        div, unit = time_axis(float(t[-1]) if len(t) else 0)
        serving = tl["gpus_serving"].astype(float)
        training = tl["gpus_busy"].astype(float) - serving
        idle = tl["gpus_up"].astype(float) - tl["gpus_busy"].astype(float)
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5),
                                       gridspec_kw={"width_ratios": [2, 1]})
        ax1.stackplot(t / div, serving, training, idle, step="post",
                      labels=["serving", "training", "idle (up)"],
                      colors=["tab:purple", "tab:blue", "0.85"])
        ax1.set_xlabel("time (%s)" % unit)
        ax1.set_ylabel("GPUs")
        ax1.legend(loc="lower right")
        ax1.grid(alpha=0.3)
        hour = ((t % 86400) // 3600).astype(int)
        hs = np.arange(24)
        mean_s = [serving[hour == h].mean() if (hour == h).any() else np.nan for h in hs]
        mean_t = [training[hour == h].mean() if (hour == h).any() else np.nan for h in hs]
        ax2.plot(hs, mean_s, "o-", color="tab:purple", label="serving")
        ax2.plot(hs, mean_t, "s-", color="tab:blue", label="training")
        ax2.set_xlabel("hour of the day")
        ax2.set_ylabel("mean GPUs")
        ax2.set_xticks(range(0, 24, 3))
        ax2.legend()
        ax2.grid(alpha=0.3)
        fig.suptitle("Serving and training on the same GPUs" + (" - " + label if label else ""))
        rep.figure(fig, "serving_training", "Serving vs training GPUs",
                   "Left: GPUs held by service replicas (purple; /timeline gpus_serving), by "
                   "training jobs (blue: gpus_busy - gpus_serving) and up but idle (grey), at "
                   "every timeline sample. Right: the daily curve, their mean by hour of the day.")
    svc = f["services"][:]
    bk = f["service_buckets"][:]
    if len(bk) == 0:
        return
    names = [text(n) for n in svc["name"]]
    fig, axes = plt.subplots(len(names), 1, figsize=(10, 3.2 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        ax = axes[i][0]
        b = bk[bk["service"] == i]
        if len(b) == 0:
            continue
        div, unit = time_axis(float(b["end"][-1]))
        ax.step(b["start"] / div, b["ttft_p99"], where="post", color="tab:red", label="TTFT p99")
        ax.step(b["start"] / div, b["ttft_p50"], where="post", color="tab:orange",
                label="TTFT p50")
        ax.set_yscale("log")
        ax.set_ylabel("s")
        ax.set_xlabel("time (%s)" % unit)
        ax.grid(alpha=0.3)
        ax2 = ax.twinx()
        ax2.step(b["start"] / div, b["replicas"], where="post", color="tab:purple", lw=0.8,
                 label="replicas")
        ax2.set_ylabel("replicas")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper right")
        ax.set_title(name)
    fig.tight_layout()
    rep.figure(fig, "service_ttft", "Service latency and replicas",
               "Per service, per /service_buckets bucket: time to first token p50 and p99 "
               "(left axis, log) and the time-average replicas (right axis).")
    rows = []
    for r in svc:
        rows.append([text(r["name"]), "%d" % r["requests"], fmt_value(r["ttft_p50"], "s"),
                     fmt_value(r["ttft_p99"], "s"), "%.2f%%" % (100 * r["slo_attainment"]),
                     "%.1f%%" % (100 * r["buckets_met"]), "%.0f" % r["gpu_hours"],
                     "%d" % r["cold_starts"],
                     "-" if np.isnan(r["cost_per_mtok"]) else "$%.3f" % r["cost_per_mtok"]])
    rep.table("Services", ["service", "requests", "TTFT p50", "TTFT p99", "SLO (requests)",
                           "SLO (buckets)", "GPU-h", "cold starts", "per M tokens"], rows,
              "From /services: the SLO columns are the share of requests meeting slo.ttft and "
              "slo.tpot, and the share of buckets whose TTFT p99 met slo.ttft.")


# ---- recorded against simulated (issue 42; docs/validation.md) ---------------

def fleetsim_program():
    """The fleetsim program: $FLEETSIM_PROGRAM, the process that started this script
    (`fleetsim report` runs it), or fleetsim on the PATH; None if none is found."""
    env = os.environ.get("FLEETSIM_PROGRAM")
    if env:
        return env
    try:
        parent = os.readlink("/proc/%d/exe" % os.getppid())
        if os.path.basename(parent).startswith("fleetsim"):
            return parent
    except OSError:
        pass
    return shutil.which("fleetsim")


def recorded_section(rep, path):
    """A trace replay against the waits its trace recorded (`fleetsim compare --recorded
    --json`): the two wait CDFs, the daily utilization side by side, the figures in a table.
    Nothing for runs that replayed no trace or a trace without recorded starts."""
    prog = fleetsim_program()
    if prog is None:
        return
    p = subprocess.run([prog, "compare", path, "--recorded", "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace").strip()
    if p.returncode != 0:
        if "replayed no trace" not in err and "records no start" not in err:
            rep.note("No recorded-against-simulated section: %s" % html.escape(err))
        return
    import json
    d = json.loads(p.stdout.decode("utf-8"))["recorded"]
    sim, rec = np.array(d["wait_simulated_s"], float), np.array(d["wait_recorded_s"], float)
    fig, (ax, ux) = plt.subplots(1, 2, figsize=(11, 4.5))
    if draw_cdf(ax, sim, "simulated", "tab:blue") and draw_cdf(ax, rec, "recorded", "tab:red"):
        finish_cdf(ax)
        ax.set_title("compared jobs (n = %d): KS %.3f" % (len(sim), d["ks"]))
        ax.legend(loc="lower right")
    days = np.arange(len(d["util_day_simulated"]))
    ux.plot(days, 100 * np.array(d["util_day_recorded"], float), color="tab:red", lw=1,
            label="recorded")
    ux.plot(days, 100 * np.array(d["util_day_simulated"], float), color="tab:blue", lw=1,
            label="simulated")
    ux.set_xlabel("day of the run")
    ux.set_ylabel("GPUs busy (%% of %.0f)" % d["capacity_gpus"])
    ux.set_ylim(bottom=0)
    ux.grid(alpha=0.3)
    ux.legend(loc="lower right")
    ux.set_title("daily utilization")
    fig.suptitle("Simulated against recorded (the trace's recorded starts)")
    rep.figure(fig, "recorded", "Simulated against recorded",
               "Left: CDFs of the queue wait of the jobs both sides started (simulated: /jobs "
               "wait; recorded: the trace's start - submit). Right: GPUs busy per day, simulated "
               "(/jobs start to end) and recorded (the trace's start to end). Jobs compared %d; "
               "with no recorded start %d; never started in the run %d; withdrawn at their "
               "recorded cancel time (cancelled before they started, not compared) %d."
               % (d["compared"], d["no_recorded_start"], d["never_started"],
                  d.get("withdrawn", 0)))
    rows = []
    for k, name in (("mean", "mean wait"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99")):
        a, b = d["simulated"][k], d["recorded"][k]
        rows.append((name, fmt_value(a, "s"), fmt_value(b, "s"),
                     "%.2f" % (a / b) if b else "-"))
    rows.append(("waited > 1 min", "%.1f%%" % (100 * d["simulated"]["share_waited"]),
                 "%.1f%%" % (100 * d["recorded"]["share_waited"]), ""))
    rows.append(("KS distance of the wait CDFs", "%.3f" % d["ks"], "", ""))
    rows.append(("Spearman per job", "%.3f" % d["spearman"], "", ""))
    rep.table("Simulated against recorded waits", ["", "simulated", "recorded", "sim / rec"],
              rows, "fleetsim compare RUN.h5 --recorded (docs/validation.md, Replays against "
              "recorded waits).")


def report_run(path, rep, warmup):
    with h5py.File(path, "r") as f:
        if "summary" not in f or "timeline" not in f:
            raise BadInput("%s: not a fleetsim results file (no /summary or /timeline)" % path)
        if int(f.attrs.get("complete", 0)) != 1:
            rep.note("This file is not complete (complete = 0): the run did not finish.")
        plot_timeline(rep, f)
        plot_capacity(rep, f)
        plot_services(rep, f)
        waits = in_stats_waits(path, warmup)
        fig, (ax, tail) = plt.subplots(1, 2, figsize=(11, 4.5))
        if draw_cdf(ax, waits, "n = %d" % len(waits), "tab:blue"):
            has_tail = draw_tail(tail, waits, "n = %d waited" % int((waits > 0).sum()), "tab:blue")
            finish_cdf(ax, tail if has_tail else None)
            if not has_tail:
                tail.set_axis_off()
                tail.text(0.5, 0.5, "%d job(s) waited: no tail to draw" % int((waits > 0).sum()),
                          ha="center", transform=tail.transAxes)
            ax.legend(loc="center right")
            fig.suptitle("Wait-time distribution")
            rep.figure(fig, "wait_cdf", "Wait-time distribution",
                       "Left: empirical CDF of the queue wait of the jobs in statistics (started, "
                       "submitted at or after the warm-up of %g s); the height at x = 0 is the "
                       "share of jobs that started at once. Right: among the jobs that waited, "
                       "the share that waited longer than x (log-log)." % warmup)
        else:
            plt.close(fig)
            rep.note("No job started after the warm-up: no wait-time CDF.")
        plot_failures(rep, f)
        plot_cost(rep, f)
        fabric_section(rep, f)
        tenants_section(rep, f)
        summary_table(rep, f)
        recorded_section(rep, path)
        name = "fleetsim report"
        scen = text(f.attrs.get("scenario", ""))
        m = re.search(r"^name:\s*(.+)$", scen, re.M)
        if m:
            name += ": " + m.group(1).strip().strip("'\"")
        sub = "%s &middot; seed %s &middot; replication %s &middot; fleetsim %s" % (
            html.escape(os.path.basename(path)), html.escape(text(f.attrs.get("seed", "?"))),
            html.escape(text(f.attrs.get("replication", "?"))),
            html.escape(text(f.attrs.get("fleetsim_version", "?"))))
    return name, sub


# ---- a sweep index ----------------------------------------------------------

def sweep_points(f):
    """[(point, {param: text})] from /points, ordered by point."""
    if "points" not in f:
        pts = sorted(set(int(p) for p in f["runs"]["point"]))
        return [(p, {}) for p in pts], []
    ds = f["points"]
    data = ds[:]
    params = [c for c in ds.dtype.names if c != "point"]
    out = []
    for row in data:
        out.append((int(row["point"]), {c: text(row[c]) for c in params}))
    out.sort(key=lambda x: x[0])
    return out, params


def choose_x(points, params):
    """The numeric parameter with the most distinct values (the 'load' axis), or None."""
    best, best_n = None, 1
    for p in params:
        vals = [leading_number(v[p]) for _, v in points]
        if any(v is None for v in vals):
            continue
        n = len(set(vals))
        if n > best_n:
            best, best_n = p, n
    return best


def run_ok(status):
    s = text(status).lower()
    return s in ("ok", "done", "complete", "completed", "finished", "0")


def runs_by_point(f, index_path):
    ds = f["runs"]
    data = ds[:]
    names = ds.dtype.names
    enum = h5py.check_enum_dtype(ds.dtype["status"]) if "status" in names else None
    inv = {v: k for k, v in enum.items()} if enum else {}
    out = {}
    base = os.path.dirname(os.path.abspath(index_path))
    for row in data:
        st = row["status"] if "status" in names else "ok"
        if enum:
            st = inv.get(int(st), str(st))
        if not run_ok(st):
            continue
        fn = text(row["file"]) if "file" in names else ""
        if fn and not os.path.isabs(fn):
            fn = os.path.join(base, fn)
        out.setdefault(int(row["point"]), []).append((int(row["replication"]), fn))
    for v in out.values():
        v.sort()
    return out


def point_label(params, vals):
    return ", ".join("%s=%s" % (p.split(".")[-1] if len(params) > 2 else p, vals[p])
                     for p in params) if params else ""


def sweep_versus_load(rep, stats, points, x, others, variants):
    """Utilization and wait versus the swept parameter x, with 95% bands
    (one line per value of the other parameters)."""
    if stats is not None and x is not None and len(stats):
        metric = np.array([text(m) for m in stats["metric"]])
        groups = {}
        for p, v in points:
            key = tuple(v[o] for o in others)
            groups.setdefault(key, []).append((leading_number(v[x]), p))
        panels = [("utilization", "utilization (fraction of GPUs up)", 1.0),
                  ("wait_mean", "mean wait (s)", 1.0), ("wait_p95", "95th percentile wait (s)", 1.0)]
        panels = [pn for pn in panels if (metric == pn[0]).any()]
        if panels:
            fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2), squeeze=False)
            for ax, (m, ylabel, _) in zip(axes[0], panels):
                sel = stats[metric == m]
                by_pt = {int(r["point"]): r for r in sel}
                for gi, (key, members) in enumerate(sorted(groups.items())):
                    if gi >= MAX_LINES:
                        break
                    members.sort()
                    xs = np.array([xv for xv, p in members if p in by_pt])
                    rows = [by_pt[p] for _, p in members if p in by_pt]
                    if not rows:
                        continue
                    mean = np.array([float(r["mean"]) for r in rows])
                    lo = np.array([float(r["ci_lo"]) for r in rows])
                    hi = np.array([float(r["ci_hi"]) for r in rows])
                    lab = ", ".join("%s=%s" % (o, k) for o, k in zip(others, key)) or m
                    line, = ax.plot(xs, mean, marker="o", ms=4, label=lab)
                    ok = ~np.isnan(lo) & ~np.isnan(hi)
                    ax.fill_between(xs[ok], lo[ok], hi[ok], color=line.get_color(), alpha=0.2)
                ax.set_xlabel(x)
                ax.set_ylabel(ylabel)
                ax.grid(alpha=0.3)
                if m == "utilization":
                    ax.set_ylim(0, 1.02)
                else:
                    ax.set_ylim(bottom=0)   # waits are >= 0; a band below 0 is cut
            if others:
                axes[0][0].legend(fontsize=8)
            rep.figure(fig, "versus_load", "Utilization and wait versus %s" % x,
                       "Mean over the replications of each point (/stats) with its 95%% "
                       "Student-t interval as a band, against the swept parameter <code>%s</code>%s."
                       % (html.escape(x), "; one line per value of " +
                          html.escape(", ".join(others)) if others else ""))
    elif stats is None:
        rep.note("No /stats table in the index: no plots against the swept parameter.")
    elif variants is None:
        rep.note("No numeric swept parameter: no plots against load.")



def sweep_wait_cdf(rep, points, runs, labels, warmup):
    """Wait-time CDF (and its tail) per point, pooled over replications."""
    fig, (ax, tail) = plt.subplots(1, 2, figsize=(12, 5))
    drawn = 0
    tails = 0
    for p, _ in points:
        if drawn >= MAX_LINES:
            rep.note("Wait-time CDF: only the first %d points are drawn." % MAX_LINES)
            break
        files = [fn for _, fn in runs.get(p, []) if fn and os.path.exists(fn)]
        if not files:
            continue
        w = np.concatenate([in_stats_waits(fn, warmup) for fn in files])
        color = "C%d" % (drawn % 10)
        if draw_cdf(ax, w, "%s (%d runs, n = %d)" % (labels[p], len(files), len(w)), color):
            drawn += 1
            tails += draw_tail(tail, w, labels[p], color)
    if drawn:
        finish_cdf(ax, tail if tails else None)
        if not tails:
            tail.set_axis_off()
        ax.legend(fontsize=7, loc="center right")
        fig.suptitle("Wait-time distribution per point, pooled over replications")
        rep.figure(fig, "wait_cdf", "Wait-time distribution per point",
                   "Left: empirical CDF of the waits of the jobs in statistics (warm-up %g s) of "
                   "every finished replication of each point together (/jobs of the run files). "
                   "Right: among the jobs that waited, the share that waited longer than x "
                   "(log-log)." % warmup)
    else:
        plt.close(fig)
        rep.note("No run file with jobs found: no wait-time CDF.")



def sweep_timeline(rep, points, runs, labels):
    """Busy and queued GPUs over time, replication 0 of each point; returns
    the first run file found (or None)."""
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True,
                                   gridspec_kw={"height_ratios": [2, 1]})
    drawn, first_file = 0, None
    tmax = 0.0
    series = []
    for p, _ in points[:MAX_LINES]:
        lst = [fn for _, fn in runs.get(p, []) if fn and os.path.exists(fn)]
        if not lst:
            continue
        first_file = first_file or lst[0]
        with h5py.File(lst[0], "r") as rf:
            tl = rf["timeline"][:]
        if len(tl):
            series.append((labels[p], tl))
            tmax = max(tmax, float(tl["time"][-1]))
    div, unit = time_axis(tmax)
    for lab, tl in series:
        up = np.maximum(tl["gpus_up"].astype(float), 1)
        line, = ax1.step(tl["time"] / div, tl["gpus_busy"] / up, where="post", lw=1, label=lab)
        ax2.step(tl["time"] / div, tl["gpus_queued"], where="post", lw=1, color=line.get_color())
        drawn += 1
    if drawn:
        ax1.set_ylabel("GPUs busy / up")
        ax1.set_ylim(0, 1.02)
        ax1.grid(alpha=0.3)
        ax1.legend(fontsize=8, loc="lower right")
        ax2.set_ylabel("GPUs queued")
        ax2.set_xlabel("time (%s)" % unit)
        ax2.grid(alpha=0.3)
        rep.figure(fig, "timeline", "GPUs busy and queued over time",
                   "Replication 0 of each point (/timeline of its run file): busy GPUs as a "
                   "share of the GPUs up (top) and GPUs requested by waiting jobs (bottom).")
    else:
        plt.close(fig)

    return first_file


def sweep_tables(rep, points, runs, labels, params, variants, stats):
    """The tables: points and the per-point statistics."""
    rows = []
    for p, v in points:
        reps = runs.get(p, [])
        rows.append(["%d" % p] + ([html.escape(labels[p])] if variants else []) +
                    [html.escape(v[c]) for c in params] + ["%d" % len(reps)])
    rep.table("Points (/points)", ["point"] + (["policy (-p)"] if variants else []) +
              [html.escape(c) for c in params] + ["finished runs"], rows)
    if stats is not None and len(stats):
        metric = np.array([text(m) for m in stats["metric"]])
        show = [m for m in ("jobs_completed", "utilization", "goodput", "wait_mean", "wait_p50",
                            "wait_p95", "wait_p99", "jct_mean", "queue_len_mean")
                if (metric == m).any()]
        rows = []
        for p, _ in points:
            cells = ["%d" % p if not variants else "%d %s" % (p, html.escape(labels[p]))]
            for m in show:
                r = stats[(metric == m) & (stats["point"] == p)]
                if len(r):
                    r = r[0]
                    half = (float(r["ci_hi"]) - float(r["ci_lo"])) / 2
                    cells.append("%.4g &plusmn; %.2g" % (float(r["mean"]), half)
                                 if not math.isnan(half) else "%.4g" % float(r["mean"]))
                else:
                    cells.append("&ndash;")
            rows.append(cells)
        rep.table("Summary per point (/stats)", ["point"] + show, rows,
                  "Mean &plusmn; half-width of the 95% Student-t interval over the replications.")


def report_sweep(path, rep, warmup):
    with h5py.File(path, "r") as f:
        points, params = sweep_points(f)
        runs = runs_by_point(f, path)
        variants = [text(v) for v in f.attrs["variants"]] if "variants" in f.attrs else None
        stats = f["stats"][:] if "stats" in f else None
        seed = f.attrs.get("seed")
        name = f.attrs.get("name")
        if name is not None and text(name) in ("", text(f.attrs.get("scenario_path", ""))):
            name = None
        nruns = len(f["runs"])
        runs_table = f["runs"][:]
    labels = {p: point_label(params, v) or "point %d" % p for p, v in points}
    x = choose_x(points, params)
    if variants is not None and len(variants) == len(points):
        # fleetsim versus: the points are named policies, not values of a
        # numeric parameter: one series (bar) per policy, labelled by its name
        labels = {p: variants[i] for i, (p, _) in enumerate(points)}
        x = None
        plot_policies(rep, stats, points, labels, runs_table)
    others = [p for p in params if p != x]

    # utilization and wait versus load, with 95% bands
    sweep_versus_load(rep, stats, points, x, others, variants)
    # wait CDF per point, pooled over replications
    sweep_wait_cdf(rep, points, runs, labels, warmup)
    # busy GPUs over time: replication 0 of each point
    first_file = sweep_timeline(rep, points, runs, labels)
    # failures and cost: of the first run file, when present
    if first_file:
        with h5py.File(first_file, "r") as rf:
            lab = "From %s (point %d, first replication)." % (os.path.basename(first_file),
                                                            points[0][0])
            plot_failures(rep, rf, lab)
            plot_cost(rep, rf, lab)

    # tables: points and the per-point statistics
    sweep_tables(rep, points, runs, labels, params, variants, stats)
    # per tenant: intervals over the replications, paired differences
    sweep_tenants(rep, points, runs, labels)
    sub = "%s &middot; %d points &middot; %d runs" % (
        html.escape(os.path.basename(path)), len(points), nruns)
    if seed is not None:
        sub += " &middot; seed %s" % html.escape(text(seed))
    title = ("fleetsim versus report" if variants else "fleetsim sweep report") + \
        (": " + text(name) if name is not None else "")
    return title, sub


def plot_policies(rep, stats, points, labels, runs_table=None):
    """fleetsim versus: per metric, one bar per policy (its mean over the
    replications) with its 95% percentile-bootstrap interval over the
    replications (the index's /runs) as an error bar; waits and completion
    times in s, min, h or d as their size asks; policies on a categorical axis
    in -p order."""
    if runs_table is None or not len(runs_table):
        rep.note("No /runs table in the index: no per-policy plot.")
        return
    names_rt = runs_table.dtype.names
    panels = [("utilization", "utilization (fraction of GPUs up)"),
              ("wait_mean", "mean wait"), ("wait_p95", "95th percentile wait"),
              ("jct_mean", "mean completion time")]
    panels = [pn for pn in panels if pn[0] in names_rt and
              np.isfinite(runs_table[pn[0]].astype(float)).any()]
    if not panels:
        return
    ok = np.array([run_ok(st) for st in status_texts(runs_table)])
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), squeeze=False)
    names = [labels[p] for p, _ in points]
    for ax, (m, ylabel) in zip(axes[0], panels):
        vals = {p: runs_table[m][(runs_table["point"] == p) & ok].astype(float)
                for p, _ in points}
        cis = {p: boot_mean_ci(v) for p, v in vals.items()}
        top = max([c[2] if not math.isnan(c[2]) else c[0] for c in cis.values()
                   if not math.isnan(c[0])] or [0])
        div, unit = (1.0, "") if m == "utilization" else duration_axis(top)
        for i, (p, _) in enumerate(points):
            mean, lo, hi = cis[p]
            if math.isnan(mean):
                continue
            err = None if math.isnan(lo) or math.isnan(hi) else \
                [[(mean - lo) / div], [(hi - mean) / div]]
            ax.bar(i, mean / div, color="C%d" % (i % 10), yerr=err, capsize=4, label=labels[p])
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel + (" (%s)" % unit if unit else ""))
        ax.grid(alpha=0.3, axis="y")
        ax.set_ylim(0, 1.02 if m == "utilization" else None)
    rep.figure(fig, "versus_policies", "Policies side by side",
               "One bar per policy given with <code>-p</code> (in that order): the mean over "
               "the replications (/runs of the index) with its 95%% percentile-bootstrap "
               "interval (%d resamples of the replications; it follows a skewed wait and never "
               "reaches below the smallest replication); no bar when the replications are "
               "identical or there is one." % BOOT_N)


def status_texts(runs_table):
    """The status of each row of /runs as text (an enum or strings)."""
    if "status" not in runs_table.dtype.names:
        return ["ok"] * len(runs_table)
    enum = h5py.check_enum_dtype(runs_table.dtype["status"])
    if enum:
        inv = {v: k for k, v in enum.items()}
        return [inv.get(int(s), str(s)) for s in runs_table["status"]]
    return [text(s) for s in runs_table["status"]]


TENANT_REPORT = (("jobs", "jobs", ""), ("wait_p50", "wait p50", "s"),
                 ("wait_p95", "wait p95", "s"), ("wait_p99", "wait p99", "s"),
                 ("jct_mean", "JCT mean", "s"), ("jct_p95", "JCT p95", "s"),
                 ("gpu_hours", "GPU-hours", ""),
                 ("borrowed_gpu_hours", "borrowed GPU-h", ""), ("preemptions", "preemptions", ""))


def fmt_human(v, unit):
    if math.isnan(v):
        return "&ndash;"
    if unit == "s":
        return human_duration(v)
    return "%.4g" % v


def fmt_ci(mean, lo, hi, unit):
    if math.isnan(mean):
        return "&ndash;"
    if math.isnan(lo) or lo == hi:
        return fmt_human(mean, unit)
    return "%s [%s, %s]" % (fmt_human(mean, unit), fmt_human(lo, unit), fmt_human(hi, unit))


def sweep_tenants(rep, points, runs, labels):
    """Per tenant, per policy or point: each /tenants figure's mean over the
    replications with its 95% percentile-bootstrap interval, and each point
    minus the first, paired by replication (bootstrap of the paired
    differences); a bar chart of every tenant's p95 wait."""
    # per point: {tenant: {metric: [value per replication]}}, replications aligned
    data, tenants = {}, []
    for p, _ in points:
        per = {}
        for r, fn in runs.get(p, []):
            if not fn or not os.path.exists(fn):
                continue
            with h5py.File(fn, "r") as rf:
                if "tenants" not in rf or not len(rf["tenants"]):
                    continue
                t = rf["tenants"][:]
            for row in t:
                name = text(row["name"]) or str(int(row["tenant"]))
                if name not in tenants:
                    tenants.append(name)
                d = per.setdefault(name, {})
                for c, _, _ in TENANT_REPORT:
                    if c in t.dtype.names:
                        d.setdefault(c, {})[r] = float(row[c])
        data[p] = per
    if not tenants:
        return
    cols = [(c, title, unit) for c, title, unit in TENANT_REPORT
            if any(not math.isnan(v) for p in data for tn in data[p]
                   for v in data[p][tn].get(c, {}).values())]
    pts = [p for p, _ in points]
    rows = []
    for tn in tenants:
        for p in pts:
            d = data.get(p, {}).get(tn, {})
            rows.append([html.escape(tn) if p == pts[0] else "", html.escape(labels[p])] +
                        [fmt_ci(*boot_mean_ci(list(d.get(c, {}).values())), unit)
                         for c, _, unit in cols])
    rep.table("Per tenant and policy (/tenants of the run files)",
              ["tenant", "policy / point"] + [t for _, t, _ in cols], rows,
              "Mean over the replications [95%% percentile-bootstrap interval of the mean, "
              "%d resamples]: the bootstrap follows a skewed metric such as a p95 wait, whose "
              "Student-t interval can reach below 0. Waits and completion times of each "
              "tenant's jobs in statistics; counts and GPU-hours of all its jobs." % BOOT_N)
    if len(pts) > 1:
        base = pts[0]
        rows = []
        for tn in tenants:
            for p in pts[1:]:
                cells = [html.escape(tn) if p == pts[1] else "",
                         "%s &minus; %s" % (html.escape(labels[p]), html.escape(labels[base]))]
                for c, _, unit in cols:
                    x = data.get(base, {}).get(tn, {}).get(c, {})
                    y = data.get(p, {}).get(tn, {}).get(c, {})
                    d = [y[r] - x[r] for r in sorted(set(x) & set(y))]
                    m, lo, hi = boot_mean_ci(d)
                    sig = not math.isnan(lo) and lo != hi and (lo > 0 or hi < 0)
                    cells.append(fmt_ci(m, lo, hi, unit) + (" *" if sig else ""))
                rows.append(cells)
        rep.table("Per tenant: paired differences against %s" % labels[base],
                  ["tenant", "difference"] + [t for _, t, _ in cols], rows,
                  "Replication r of each policy against replication r of the first (common "
                  "random numbers): mean difference [95% percentile-bootstrap interval]; "
                  "* = the interval excludes 0.")
    if any("wait_p95" == c for c, _, _ in cols):
        fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(tenants) * len(pts) / 2 + 2), 4.2))
        w = 0.8 / len(pts)
        cis = {(tn, p): boot_mean_ci(list(data.get(p, {}).get(tn, {}).get("wait_p95", {})
                                          .values())) for tn in tenants for p in pts}
        top = max([c[2] if not math.isnan(c[2]) else c[0] for c in cis.values()
                   if not math.isnan(c[0])] or [0])
        div, unit = duration_axis(top)
        for j, p in enumerate(pts):
            for i, tn in enumerate(tenants):
                mean, lo, hi = cis[(tn, p)]
                if math.isnan(mean):
                    continue
                err = None if math.isnan(lo) else [[(mean - lo) / div], [(hi - mean) / div]]
                ax.bar(i + (j - (len(pts) - 1) / 2) * w, mean / div, width=w,
                       color="C%d" % (j % 10), yerr=err, capsize=3,
                       label=labels[p] if i == 0 else None)
        ax.set_xticks(range(len(tenants)))
        ax.set_xticklabels(tenants, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("95th percentile wait (%s)" % unit)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
        rep.figure(fig, "tenant_wait_p95", "Each tenant's p95 wait per policy",
                   "Mean over the replications of each tenant's 95th percentile wait (/tenants "
                   "of the run files) with its 95%% percentile-bootstrap interval (%d "
                   "resamples)." % BOOT_N)


# ---- plan.h5 (fleetsim plan) ------------------------------------------------

def metric_unit(m):
    """The unit of a /summary metric by its name (as analysis/fs_fmt.c)."""
    if m in ("wait_prob", "goodput", "availability", "ettr_mean", "little_rel_err") or \
            m.startswith("utilization") or m.endswith("_share"):
        return "fraction"
    if m.startswith("cost_"):
        return "USD"
    if m.startswith(("wait_", "jct_", "queued_")) or m in ("makespan", "end_time") or \
            m.endswith("_s"):
        return "s"
    return ""


def report_plan_quarters(rep, q, sens, attrs, conf):
    """The quarterly cash flow of plan.years (docs/plan.md "Quarterly cash
    flow"): cumulative cash per fleet, and the sensitivity tornado."""
    years = float(attrs.get("years", 0))
    qchoice = np.array([text(c) for c in q["choice"]])
    fig, ax = plt.subplots(figsize=(8, 4.4))
    for ci, c in enumerate(dict.fromkeys(qchoice)):
        sel = q[qchoice == c]
        nq = int(sel["quarter"].max())
        reps = sorted(set(int(r) for r in sel["replication"]))
        cum = np.zeros((len(reps), nq + 1))
        for i, r in enumerate(reps):
            rr = sel[sel["replication"] == r]
            rr = rr[np.argsort(rr["quarter"])]
            capex, opex = rr["capex"].astype(float), rr["opex"].astype(float)
            # at 0: the first quarter's capex; at each quarter's end: everything paid by then
            # (the next quarter's capex is paid at its start, the same instant)
            ends = np.cumsum(capex + opex) + np.concatenate((capex[1:], [0.0]))
            cum[i] = np.concatenate(([capex[0]], ends))
        x = np.arange(0, nq + 1) / 4.0
        mean = cum.mean(axis=0)
        ax.plot(x, mean / 1e6, marker="o", ms=3, color="C%d" % (ci % 10), label=c)
        if len(reps) > 1:
            ax.fill_between(x, cum.min(axis=0) / 1e6, cum.max(axis=0) / 1e6,
                            color="C%d" % (ci % 10), alpha=0.2)
    ax.set_xlabel("years")
    ax.set_ylabel("cumulative cash, million $")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    rep.figure(fig, "plan_cash", "Cumulative cash flow per quarter",
               "Each fleet's cumulative cash over the %g years (capex when bought, at the "
               "start of its quarter, plus each quarter's operating cost from that quarter's "
               "simulated demand, at its end; undiscounted, before the residual value): the mean over the replications, the band their "
               "range. Where the lines cross is the payback." % years)
    if sens is None or not len(sens):
        return
    base = float(attrs.get("sensitivity_npv_mean", np.nan))

    def money(v):
        v = float(v)
        return "&ndash;" if math.isnan(v) else "$" + format(v, ",.0f")
    params = [text(p) for p in sens["parameter"]]
    lo, hi = sens["npv_low_mean"].astype(float), sens["npv_high_mean"].astype(float)
    order = np.argsort(np.abs(hi - lo))
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(params) + 1.6))
    for y, k in enumerate(order):
        for v, color, lab in ((lo[k], "C0", "parameter x (1 - X)"), (hi[k], "C3", "parameter x (1 + X)")):
            ax.barh(y, (v - base) / 1e6, left=base / 1e6, color=color, alpha=0.8,
                    label=lab if y == 0 else None)
    ax.axvline(base / 1e6, color="k", lw=1)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(["%s (%s)" % (params[k], "re-run" if int(sens["rerun"][k]) else
                                     "recomputed") for k in order])
    ax.set_xlabel("NPV of the cost, million $")
    ax.grid(alpha=0.3, axis="x")
    ax.legend(fontsize=8)
    x = float(sens["high_factor"][0]) - 1 if len(sens) else np.nan
    rep.figure(fig, "plan_tornado", "Sensitivity of the NPV (tornado)",
               "The NPV of %s's cost with each parameter x (1 &minus; %g) and x (1 + %g), widest "
               "swing on top; the line is the NPV as given. Electricity and GPU price are "
               "recomputed from the same runs; demand growth and arrival rate re-run every "
               "quarter (%d runs)." % (html.escape(text(attrs.get("sensitivity_choice", ""))), x, x,
                                      int(attrs.get("sensitivity_runs", 0))))
    rows = [[html.escape(params[k]), "re-run" if int(sens["rerun"][k]) else "recomputed",
             "%s [%s, %s]" % (money(lo[k]), money(sens["npv_low_lo"][k]),
                              money(sens["npv_low_hi"][k])),
             "%s [%s, %s]" % (money(hi[k]), money(sens["npv_high_lo"][k]),
                              money(sens["npv_high_hi"][k])),
             fmt_value(abs(hi[k] - lo[k]), "$")] for k in order[::-1]]
    rep.table("Sensitivity block (/plan_sensitivity)", ["parameter", "how", "NPV at -X",
              "NPV at +X", "swing"], rows,
              "Means with their %g%% Student-t intervals over the replications." % (conf * 100))



def report_plan(path, rep, warmup):
    """The cost frontier, each choice's smallest fleet and the SLO margins of a
    plan.h5 (docs/plan.md)."""
    with h5py.File(path, "r") as f:
        plan = f["plan"][:]
        attrs = {k: f.attrs[k] for k in f.attrs}
        quarters = f["plan_quarters"][:] if "plan_quarters" in f else None
        sens = f["plan_sensitivity"][:] if "plan_sensitivity" in f else None
    objective = text(attrs.get("objective", "cost_total"))
    conf = float(attrs.get("confidence", 0.95))
    slo_metric = [text(m) for m in attrs.get("slo_metric", [])]
    slo_kind = [text(k) for k in attrs.get("slo_kind", [])]
    slo_bound = [float(b) for b in attrs.get("slo_bound", [])]
    slo_text = [text(t) for t in attrs.get("slo", [])]
    choices = [text(c) for c in attrs.get("choices", [])] or \
        sorted(set(text(c) for c in plan["choice"]))
    ounit = metric_unit(objective)
    names = plan.dtype.names

    def col(m, what):
        c = "%s_%s" % (m, what)
        return plan[c].astype(float) if c in names else np.full(len(plan), np.nan)

    omean, olo, ohi = col(objective, "mean"), col(objective, "lo"), col(objective, "hi")
    gpus = plan["gpus"].astype(float)
    meets = plan["meets"].astype(bool)
    front = plan["frontier"].astype(bool)
    chosen = plan["chosen"].astype(bool) if "chosen" in names else np.zeros(len(plan), bool)
    best = plan["best"].astype(bool) if "best" in names else np.zeros(len(plan), bool)
    pchoice = np.array([text(c) for c in plan["choice"]])

    # the cost frontier: objective against GPUs, one series per choice
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for ci, c in enumerate(choices):
        sel = np.where(pchoice == c)[0]
        if not len(sel):
            continue
        sel = sel[np.argsort(gpus[sel])]
        color = "C%d" % (ci % 10)
        ax.errorbar(gpus[sel], omean[sel], yerr=[omean[sel] - olo[sel], ohi[sel] - omean[sel]],
                    color=color, lw=1, capsize=3, label=c, alpha=0.8)
        ax.scatter(gpus[sel][meets[sel]], omean[sel][meets[sel]], color=color, zorder=3)
        ax.scatter(gpus[sel][~meets[sel]], omean[sel][~meets[sel]], facecolors="none",
                   edgecolors=color, zorder=3)
    if chosen.any():
        k = np.where(chosen)[0][0]
        ax.scatter([gpus[k]], [omean[k]], marker="*", s=220, color="k", zorder=4, label="chosen")
    fr = np.where(front)[0]
    if len(fr):
        fr = fr[np.argsort(gpus[fr])]
        ax.plot(gpus[fr], omean[fr], ls=":", color="grey", lw=1, label="frontier")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("%s%s" % (objective, " (%s)" % ounit if ounit else ""))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    rep.figure(fig, "plan_frontier", "Cost frontier",
               "The objective <code>%s</code> of every evaluated fleet (mean over the "
               "replications with its %g%% Student-t interval), one series per choice; filled: "
               "meets every SLO, hollow: misses one; the star is the chosen plan; the dotted "
               "line joins the frontier (no other point is better in the objective and every "
               "SLO metric)." % (html.escape(objective), conf * 100))

    # SLO margins: each SLO metric against GPUs, with its bound
    if slo_metric:
        fig, axes = plt.subplots(1, len(slo_metric), figsize=(5 * len(slo_metric), 4),
                                 squeeze=False)
        for ax, m, kind, bound, txt in zip(axes[0], slo_metric, slo_kind, slo_bound, slo_text):
            mean, lo, hi = col(m, "mean"), col(m, "lo"), col(m, "hi")
            for ci, c in enumerate(choices):
                sel = np.where(pchoice == c)[0]
                sel = sel[np.argsort(gpus[sel])]
                ax.errorbar(gpus[sel], mean[sel], yerr=[mean[sel] - lo[sel], hi[sel] - mean[sel]],
                            marker="o", ms=3, lw=1, capsize=3, color="C%d" % (ci % 10), label=c)
            ax.axhline(bound, color="r", ls="--", lw=1, label="bound (%s)" % kind)
            ax.set_xlabel("GPUs")
            ax.set_ylabel(m + (" (%s)" % metric_unit(m) if metric_unit(m) else ""))
            ax.set_title(txt, fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        rep.figure(fig, "plan_slo", "SLO margins",
                   "Each SLO metric of every evaluated fleet with its %g%% interval and the bound "
                   "(dashed): an SLO <code>max</code> holds when the upper end of the interval is "
                   "at or below the bound, <code>min</code> when the lower end is at or above."
                   % (conf * 100))

    # each choice's smallest fleet that meets the SLOs, with the SLO margins
    header = ["choice", "pool", "GPU", "nodes", "GPUs", "%s (mean [%g%% interval])" %
              (html.escape(objective), conf * 100)]
    header += ["margin of %s" % html.escape(t) for t in slo_text]
    rows = []
    for c in choices:
        sel = np.where((pchoice == c) & best)[0]
        if not len(sel):
            rows.append([html.escape(c), "", "", "none meets the SLOs", "", ""] +
                        [""] * len(slo_metric))
            continue
        k = sel[0]
        r = plan[k]
        cell = "%s [%s, %s]" % (fmt_value(omean[k], ounit), fmt_value(olo[k], ounit),
                                fmt_value(ohi[k], ounit))
        margins = []
        for m, kind, bound in zip(slo_metric, slo_kind, slo_bound):
            end = col(m, "hi")[k] if kind == "max" else col(m, "lo")[k]
            margin = bound - end if kind == "max" else end - bound
            margins.append("%s (interval end %s)" % (fmt_value(margin, metric_unit(m)),
                                                   fmt_value(end, metric_unit(m))))
        rows.append([html.escape(c), html.escape(text(r["pool"])), html.escape(text(r["gpu"])),
                     "%d" % int(r["nodes"]), "%d" % int(r["gpus"]),
                     cell + (" &larr; chosen" if chosen[k] else "")] + margins)
    rep.table("Each choice's smallest fleet that meets the SLOs", header, rows,
              "Margin: how far the interval end is inside the bound (a positive margin holds).")

    rows = []
    order = np.lexsort((gpus, pchoice))
    for k in order:
        r = plan[k]
        rows.append([html.escape(pchoice[k]), "%d" % int(r["nodes"]), "%d" % int(r["gpus"]),
                     fmt_value(omean[k], ounit)] +
                    [fmt_value(col(m, "mean")[k], metric_unit(m)) for m in slo_metric] +
                    ["yes" if meets[k] else "no", "yes" if front[k] else "",
                     "chosen" if chosen[k] else ""])
    rep.table("Every evaluated fleet (/plan)", ["choice", "nodes", "GPUs", html.escape(objective)] +
              [html.escape(m) for m in slo_metric] + ["meets", "frontier", ""], rows)
    if quarters is not None and len(quarters):
        report_plan_quarters(rep, quarters, sens, attrs, conf)
    sub = "%s &middot; %d fleets evaluated &middot; %d runs" % (
        html.escape(os.path.basename(path)), len(plan), int(attrs.get("runs", 0)))
    name = attrs.get("name")
    return "fleetsim plan report" + (": " + html.escape(text(name)) if name is not None and
                                     text(name) else ""), sub


def main(argv):
    ap = argparse.ArgumentParser(description="HTML report of a fleetsim results file or sweep index")
    ap.add_argument("results")
    ap.add_argument("-o", "--output", default="report.html")
    ap.add_argument("--warmup", type=float, default=0.0,
                    help="seconds: jobs submitted earlier are left out of the wait CDF")
    a = ap.parse_args(argv)
    if MISSING:
        for mod, pkg in MISSING:
            print("fleetsim report: the Python module '%s' is missing (Debian: apt-get install %s)"
                  % (mod, pkg), file=sys.stderr)
        return 3
    try:
        if not h5py.is_hdf5(a.results):
            raise BadInput("%s: not an HDF5 file" % a.results)
        check_layout(a.results)
        with h5py.File(a.results, "r") as f:
            sweep = "runs" in f
            plan = "plan" in f and "plan_runs" in f
        rep = Report(a.output)
        kind = report_plan if plan else report_sweep if sweep else report_run
        title, sub = kind(a.results, rep, a.warmup)
        rep.write(title, sub)
    except BadInput as e:
        print("fleetsim report: %s" % e, file=sys.stderr)
        return 2
    except (OSError, KeyError, ValueError) as e:
        print("fleetsim report: %s: %s" % (a.results, e), file=sys.stderr)
        return 1
    except Exception as e:     # no traceback for a layout this report does not know
        print("fleetsim report: %s: cannot read this file's layout (%s: %s)"
              % (a.results, type(e).__name__, e), file=sys.stderr)
        return 2
    print(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
