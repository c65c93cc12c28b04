#!/usr/bin/env python3
"""Cross-checks `bubblescope-cli import` + `report --json` against Holistic
Trace Analysis (HTA) on the real Kineto traces of ../shared/fixtures/kineto.

For each job (a folder of per-rank traces) it runs HTA's
get_temporal_breakdown and get_comm_comp_overlap (include_last_profiler_step:
every ProfilerStep, as the import analyses them), imports the same files
into a fresh trace and compares per rank: idle, compute and non-compute time
as shares of the step time, and the time communication overlaps compute.
Each must agree within --tolerance (default 0.01, i.e. 1% of the step time).

Exit codes: 0 all agree, 1 a figure differs (or a step failed), 77 skipped
(HTA not installed or fixtures absent; the reason is printed).
Install HTA: python3 -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis,
then run this script with /tmp/hta/bin/python (docs/import.md).
"""
import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile

SKIP = 77
# Jobs with GPU kernels and ProfilerStep annotations (the others have no
# kernels or no steps; HTA's breakdown is undefined there).
JOBS = ["nccl_parser_config", "ns_resolution_trace", "trace_filter"]


def hta_figures(folder):
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=folder, include_last_profiler_step=True)
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    out = {}
    for _, row in breakdown.iterrows():
        kernel_us = float(row["kernel_time(us)"])
        out[int(row["rank"])] = {
            "step_time_ms": kernel_us / 1e3,
            "idle_ratio": float(row["idle_time(us)"]) / kernel_us,
            "compute_ratio": float(row["compute_time(us)"]) / kernel_us,
            "non_compute_ratio": float(row["non_compute_time(us)"]) / kernel_us,
        }
    for _, row in overlap.iterrows():
        value = float(row["comp_comm_overlap_pctg"]) / 100.0
        out[int(row["rank"])]["overlap"] = None if value != value else value  # NaN: no comm
    return out


def export_kineto(cli, db, out):
    subprocess.run([cli, "export", db, out, "--run", "1", "--format", "kineto"], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def engine_run_loads(cli, tmp):
    """A CPU run of Bubblescope's own engine, exported, loads in HTA."""
    from hta.trace_analysis import TraceAnalysis

    db = os.path.join(tmp, "engine.db")
    subprocess.run([cli, "train", "--model", "tiny", "--steps", "3", "--trace", db], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    analysis = TraceAnalysis(trace_dir=export_kineto(cli, db, os.path.join(tmp, "engine")))
    ranks = sorted(analysis.t.traces)
    print(f"engine run: HTA loaded the export, ranks {ranks}")
    return ranks == [0]


def bubblescope_figures(cli, files, db):
    subprocess.run([cli, "import", *files, "--trace", db], check=True, stdout=subprocess.DEVNULL)
    report = json.loads(subprocess.run([cli, "report", db, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    out = {}
    for rank in report["runs"][0]["ranks"]:
        if rank["gpu"] is not None:
            out[rank["rank"]] = rank["gpu"]
    return out


def compare(job, hta, ours, tolerance):
    ok = True
    if sorted(hta) != sorted(ours):
        print(f"{job}: ranks differ: HTA {sorted(hta)}, bubblescope {sorted(ours)}")
        return False
    for rank in sorted(hta):
        h, b = hta[rank], ours[rank]
        for key in ("idle_ratio", "compute_ratio", "non_compute_ratio"):
            diff = abs(h[key] - b[key])
            verdict = "ok" if diff <= tolerance else "DIFFERS"
            ok &= diff <= tolerance
            print(f"{job} rank {rank} {key}: hta {h[key]:.4f} bubblescope {b[key]:.4f} "
                  f"diff {diff:.4f} {verdict}")
        # Overlap is a share of communication time: compare the overlapped
        # time as a share of the step time.
        if h.get("overlap") is None or b["overlap"] is None:
            same = h.get("overlap") is None and b["overlap"] is None
            ok &= same or b["comm_ratio"] <= tolerance
            print(f"{job} rank {rank} overlap: hta {h.get('overlap')} bubblescope {b['overlap']}")
            continue
        diff = abs(h["overlap"] - b["overlap"]) * b["comm_ratio"]
        verdict = "ok" if diff <= tolerance else "DIFFERS"
        ok &= diff <= tolerance
        print(f"{job} rank {rank} overlap: hta {h['overlap']:.4f} bubblescope {b['overlap']:.4f} "
              f"(comm {b['comm_ratio']:.4f} of the step) diff {diff:.4f} of the step {verdict}")
        print(f"{job} rank {rank} step time: hta {h['step_time_ms']:.3f} ms "
              f"bubblescope {b['step_time_ms']:.3f} ms")
    return ok


def same_figures(job, original, exported, tolerance):
    """HTA's figures on the original files and on Bubblescope's export of them.

    Shares within `tolerance`; the step time within `tolerance` of itself:
    HTA holds an original ts such as 1712195495519695.8 µs in a double (0.25
    µs apart at that size), the export's ts are relative to its
    baseTimeNanoseconds and keep every nanosecond."""
    ok = sorted(original) == sorted(exported)
    for rank in sorted(original):
        for key, value in original[rank].items():
            other = exported.get(rank, {}).get(key)
            bound = tolerance * value if key == "step_time_ms" and value else tolerance
            same = (value is None and other is None) or (
                value is not None and other is not None and abs(value - other) <= bound)
            ok &= same
            print(f"{job} rank {rank} {key}: original {value} exported {other} "
                  f"{'ok' if same else 'DIFFERS'}")
    return ok


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="path to bubblescope-cli")
    parser.add_argument("--fixtures", default=os.path.join(here, "..", "..", "shared",
                                                           "fixtures", "kineto"))
    parser.add_argument("--tolerance", type=float, default=0.01)
    args = parser.parse_args()
    try:
        import hta  # noqa: F401
    except ImportError:
        print("skipped: Holistic Trace Analysis is not installed "
              "(pip install HolisticTraceAnalysis; docs/import.md)")
        return SKIP
    if not os.path.isdir(args.fixtures):
        print(f"skipped: no Kineto fixtures at {args.fixtures}")
        return SKIP
    logging.disable(logging.WARNING)
    # HTA rounds ns-resolution traces to whole microseconds by default (ceil
    # the start, floor the end: up to 1 µs less per kernel); the importer
    # keeps the nanoseconds, so compare with HTA's rounding off.
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for job in JOBS:
            folder = os.path.join(args.fixtures, job)
            files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                           if f.endswith((".json", ".json.gz")))
            db = os.path.join(tmp, job + ".db")
            hta = hta_figures(folder)
            ok &= compare(job, hta, bubblescope_figures(args.cli, files, db), args.tolerance)
            # export --format kineto of the imported run: HTA reads the same figures.
            exported = hta_figures(export_kineto(args.cli, db, os.path.join(tmp, job)))
            ok &= same_figures(job + " (exported)", hta, exported, 1e-6)
        ok &= engine_run_loads(args.cli, tmp)
    print("hta_crosscheck: all figures agree" if ok else "hta_crosscheck: FIGURES DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
