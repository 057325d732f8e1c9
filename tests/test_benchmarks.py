"""The benchmark scripts run end to end at their smallest settings, so they cannot rot.

Their figures are not checked (performance lives in the benchmarks, not in tests); only
that every table row is printed with positive numbers. benchmarks/distributed.py had
stopped working when the parameter server's push tags changed, unnoticed until it ran.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
NUMBER = r"\d+(?:\.\d+)?"


def _run(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _rows(out: str, first_column: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(first_column)]


def test_run_prints_every_framework_for_the_workload(tmp_path) -> None:
    out = _run("run.py", "--steps", "2", "--settle", "0", "--workloads", "mlp", "--json",
               str(tmp_path / "b.json"), "--png", str(tmp_path / "b.png"))
    written = json.loads((tmp_path / "b.json").read_text())
    rows = written["rows"]
    # CD-1 on the digits, lamina then scikit-learn: both train to a reconstruction error
    # well below the 0.25 of a machine that predicts 0.5 everywhere
    assert [r["framework"] for r in written["rbm"]] == ["lamina", "sklearn"]
    assert all(r["seconds"] > 0 and 0.02 < r["recon_error"] < 0.15 for r in written["rbm"])
    assert re.search(rf"^lamina\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}$", out,
                     re.MULTILINE)
    assert sorted(rows) == ["mlp", "mlp@1"] and {"eager", "planned"} <= set(rows["mlp"])
    assert rows["mlp"]["planned"]["median"] > 0 and "compile_s" in rows["mlp"]["planned"]
    # two rounds by default: a process per framework in each, one step each
    assert rows["mlp"]["eager"]["processes"] == 2
    assert len(rows["mlp"]["eager"]["first_losses"]) == 2
    assert (tmp_path / "b.png").read_bytes()[:4] == b"\x89PNG"
    assert written["fused"].startswith("lamina's fused kernels: ")  # numba's or NumPy's
    assert written["fused"] in out
    for workload in ("mlp ", "mlp@1 "):  # a training step, then batch-1 inference
        rows = _rows(out, workload)
        names = [row.split()[1] for row in rows]
        assert names[:2] == ["eager", "planned"]  # torch follows where it is installed
        for row in rows:  # times, samples/s, RSS, the ratio and the first loss
            assert all(float(v) > 0 for v in row.split()[2:9] if v != "-"), row
    assert "disagree" not in out


def test_overhead_and_plan_print_their_tables() -> None:
    out = _run("overhead.py", "--repeats", "1")
    assert re.search(rf"elementwise chain, per op \(us\)\s+{NUMBER}", out)
    out = _run("plan.py", "--repeats", "2", "--rounds", "1")
    for case in ("mlp/32", "mlp/128", "cnn/64", "lstm/32"):
        (row,) = _rows(out, case)
        assert len(re.findall(NUMBER, row)) >= 7, row


def test_recurrent_prints_both_layers_with_equal_outputs() -> None:
    out = _run("recurrent.py", "--repeats", "1", "--length", "4", "--batch", "3")
    for layer in ("LSTM", "GRU"):
        rows = _rows(out, layer)
        assert len(rows) == 2, out
        for row in rows:  # lamina ms, PyTorch ms, ratio, both outputs' sums of squares
            m = re.search(rf"(?:backward|inference)\s+({NUMBER})\s+(\S+)\s+(\S+)\s+(\S+), (\S+)$",
                          row)
            assert m and float(m[1]) > 0, row
            if m[2] != "-":  # PyTorch ran: the same weights must give the same output
                assert abs(float(m[4]) - float(m[5])) <= 1e-4 * abs(float(m[5])), row


def test_distributed_prints_round_times_and_throughput(tmp_path) -> None:
    pytest.importorskip("ray")
    env_dir = str(tmp_path)[:40]  # Ray's socket paths must stay short
    os.environ["RAY_TMPDIR"] = env_dir
    try:
        out = _run("distributed.py", "--steps", "3", "--epochs", "1", "--sizes", "1e6",
                   "--workers", "1", "2", "--shards", "1", "2", "--json",
                   str(tmp_path / "d.json"), "--out-dir", str(tmp_path / "runs"))
    finally:
        os.environ.pop("RAY_TMPDIR", None)
    assert len(re.findall(rf"^\s+1,000,000\s+[12]\s+1\s+{NUMBER}\s+{NUMBER}$", out,
                          re.MULTILINE)) == 2
    assert len(re.findall(rf"^\s+1,000,000\s+[12]\s+2\s+{NUMBER}\s*$", out, re.MULTILINE)) == 2
    assert len(json.loads((tmp_path / "d.json").read_text())["rounds"]) == 4
    assert re.search(rf"2 workers:\s+{NUMBER}", out)


def test_sweep_and_stability_print_a_row_per_point(tmp_path) -> None:
    out = _run("sweep.py", "--steps", "2", "--points", "mlp/16", "lstm:32", "--json",
               str(tmp_path / "s.json"), "--png", str(tmp_path / "s.png"))
    written = json.loads((tmp_path / "s.json").read_text())
    rows = written["rows"]
    assert sorted(rows) == ["lstm:32", "mlp/16"]
    assert all(rows[p][fw] > 0 for p in rows for fw in ("eager", "planned", "torch"))
    # two rounds by default: a process per framework and point in each
    processes = written["processes"]
    assert all(processes[p][fw] == 2 for p in rows for fw in ("eager", "planned", "torch"))
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    assert re.search(rf"^lstm:32(\s+{NUMBER}){{5}}$", out, re.MULTILINE)
    out = _run("stability.py", "--processes", "2", "--steps", "2", "--points", "mlp/16")
    for step in ("planned", "eager"):  # the plan, and the control that compiles nothing
        assert re.search(rf"^mlp/16\s+{step}(\s+{NUMBER}){{4}}\s+\({NUMBER}, {NUMBER}\)$", out,
                         re.MULTILINE), out


@pytest.mark.torch
def test_roofline_counts_the_operations_of_each_step() -> None:
    bench = BENCHMARKS / "results" / "bench.json"
    out = _run("roofline.py", "--workloads", "mlp", "lstm", "--bench", str(bench))
    peak = float(re.search(r"^peak: (\d+) GFLOP/s", out, re.MULTILINE).group(1))
    assert peak > 1
    gflops = {row.split()[0]: float(row.split()[1]) for row in out.splitlines()[2:]}
    # mlp 784-1024-1024-10 at batch 128: forward, then every weight's gradient and the
    # inputs' gradients of the two layers that take another's output
    forward = 2 * 128 * (784 * 1024 + 1024 * 1024 + 1024 * 10)
    backward = forward + 2 * 128 * (1024 * 1024 + 1024 * 10)
    assert gflops["mlp"] == pytest.approx((forward + backward) / 1e9, abs=1e-5)
    assert gflops["mlp@1"] == pytest.approx(forward / 128 / 1e9, abs=1e-5)
    # the LSTM layer (50 steps, batch 32, 128 -> 256), which the counter does not see,
    # three times over (forward, the inputs' and the weights' gradients), and the output
    # layer's 256 -> 64 at every step, three times over as well
    lstm = 3 * 2 * 50 * 32 * 1024 * (128 + 256)
    assert gflops["lstm"] == pytest.approx((lstm + 3 * 2 * 1600 * 256 * 64) / 1e9, abs=1e-5)
    for row in out.splitlines()[2:]:  # PyTorch's time and the shares, from the JSON
        assert row.count("%") == 5, row
