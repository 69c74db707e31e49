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
    for k, v in cli.items():
        assert (np.isnan(v) and np.isnan(r.summary[k])) if isinstance(v, float) and np.isnan(v) \
            else r.summary[k] == v, k


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
