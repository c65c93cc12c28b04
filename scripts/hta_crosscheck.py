#!/usr/bin/env python3
"""Cross-checks `bubblescope-cli import` + `report --json` against Holistic
Trace Analysis (HTA) on real Kineto traces (../shared/fixtures/kineto, and
any folders given with --extra).

For each job (a folder of per-rank traces) and for both of HTA's last-step
modes (include_last_profiler_step True and False; `report` without and with
--exclude-last-step) it runs HTA's get_temporal_breakdown,
get_comm_comp_overlap and get_idle_time_breakdown, imports the same files into
a fresh trace and compares every rank: idle, compute and non-compute time as
shares of the GPU time, the time communication overlaps compute, and each
stream's host-wait, kernel-wait and other idle time (as shares of the GPU
time). Each must agree within --tolerance (default 0.005: half a point).
It also runs HTA's get_gpu_kernel_breakdown (every kernel, memory kernels
included) and compares the kernel tables: each type's summed time over the
ranks (from HTA's per-name table: HTA's type pie partitions busy time into
merged intervals with "X overlapping Y" slices, a different measure), and
each rank's total and longest record of every kernel name, as shares of the
rank's kernel time, within the same tolerance.

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


def hta_analysis(folder, include_last_step=True):
    from hta.trace_analysis import TraceAnalysis

    return TraceAnalysis(trace_dir=folder, include_last_profiler_step=include_last_step)


def hta_figures(analysis):
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    idle, _ = analysis.get_idle_time_breakdown(ranks=analysis.t.get_ranks(), visualize=False)
    out = {}
    for _, row in breakdown.iterrows():
        kernel_us = float(row["kernel_time(us)"])
        out[int(row["rank"])] = {
            "step_time_ms": kernel_us / 1e3,
            "idle_ratio": float(row["idle_time(us)"]) / kernel_us,
            "compute_ratio": float(row["compute_time(us)"]) / kernel_us,
            "non_compute_ratio": float(row["non_compute_time(us)"]) / kernel_us,
            "idle_by_stream": {},
        }
    for _, row in overlap.iterrows():
        value = float(row["comp_comm_overlap_pctg"]) / 100.0
        out[int(row["rank"])]["overlap"] = None if value != value else value  # NaN: no comm
    for _, row in idle.iterrows():
        streams = out[int(row["rank"])]["idle_by_stream"]
        ms = float(row["idle_time"]) / 1e3
        streams.setdefault(int(row["stream"]), {})[str(row["idle_category"])] = \
            0.0 if ms != ms else ms
    return out


def hta_kernel_tables(analysis):
    """HTA's kernel breakdown, every kernel, memory kernels too: {type: us
    summed over the ranks' names} and {(rank, name): (type, sum us, max us)}."""
    _, kernels = analysis.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=10**9, include_memory_kernels=True)
    by_type, by_name = {}, {}
    for _, row in kernels.iterrows():
        kind = str(row["kernel_type"]).lower()
        by_type[kind] = by_type.get(kind, 0.0) + float(row["sum (us)"])
        by_name[(int(row["rank"]), str(row["name"]))] = (kind, float(row["sum (us)"]),
                                                         float(row["max (us)"]))
    return by_type, by_name


def compare_kernels(job, hta_tables, ours, tolerance):
    """Bubblescope's kernel tables (report --json: gpu_kernels of every rank)
    against HTA's, as shares of the kernel time (a type's: of all ranks'; a
    name's: of its rank's)."""
    hta_types, hta_names = hta_tables
    ok = True
    total_ms = sum(k["kernel_ms"] for k in ours.values())
    for kind in ("computation", "communication", "memory"):
        hv = hta_types.get(kind, 0.0) / 1e3
        bv = sum(k["by_type"][kind]["ms"] for k in ours.values())
        diff = abs(hv - bv) / total_ms if total_ms > 0 else 0.0
        ok &= diff <= tolerance
        print(f"{job} kernel type {kind}: hta {hv:.3f} ms bubblescope {bv:.3f} ms "
              f"({diff:.4f} of the kernel time) {'ok' if diff <= tolerance else 'DIFFERS'}")
    names = 0
    worst = (0.0, "")
    for rank, kernels in sorted(ours.items()):
        for k in kernels["top"]:
            _, hsum, hmax = hta_names.get((rank, k["name"]), ("", 0.0, 0.0))
            for what, hv, bv in (("total", hsum / 1e3, k["total_ms"]),
                                 ("longest", hmax / 1e3, k["max_ms"])):
                diff = abs(hv - bv) / kernels["kernel_ms"] if kernels["kernel_ms"] > 0 else 0.0
                names += what == "total"
                if diff > worst[0]:
                    worst = (diff, f"rank {rank} {what} of {k['name'][:60]}")
                if diff > tolerance:
                    ok = False
                    print(f"{job} rank {rank} kernel {k['name'][:80]} {what}: hta {hv:.3f} ms "
                          f"bubblescope {bv:.3f} ms ({diff:.4f} of the rank's kernel time) DIFFERS")
        # Memory records are in the report's memory copies table, not its top.
        listed = {k["name"] for k in kernels["top"]}
        missing = [n for (r, n), (kind, _, _) in hta_names.items()
                   if r == rank and kind != "memory" and n not in listed]
        if missing:
            ok = False
            print(f"{job} rank {rank}: HTA lists {len(missing)} kernel names the report does "
                  f"not, e.g. {missing[0][:80]}")
    print(f"{job} kernel names: {names} rank totals and longest records compared, largest "
          f"difference {worst[0]:.4f} of the rank's kernel time ({worst[1] or 'none'})")
    return ok


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


def bubblescope_figures(cli, db, include_last_step=True):
    """({rank: report's gpu}, {rank: report's gpu_kernels, every name listed})."""
    command = [cli, "report", db, "--json", "--top-kernels", str(ALL_KERNELS)] + (
        [] if include_last_step else ["--exclude-last-step"])
    report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    out, kernels = {}, {}
    for rank in report["runs"][0]["ranks"]:
        if rank["gpu"] is not None:
            out[rank["rank"]] = rank["gpu"]
        if rank.get("gpu_kernels") is not None:
            kernels[rank["rank"]] = rank["gpu_kernels"]
    return out, kernels


# report --top-kernels at its most (enough for every kernel name of a fixture;
# a name HTA lists and the report does not fails the check).
ALL_KERNELS = 1000
IDLE_KEYS = {"host_wait": "host_wait_ms", "kernel_wait": "kernel_wait_ms", "other": "other_ms"}


def compare_idle(job, rank, h, b, tolerance):
    """Each stream's idle categories, as shares of the GPU time."""
    ok = True
    ours = {s["stream"]: s for s in b.get("idle_by_stream", [])}
    step_ms = h["step_time_ms"]
    for stream in sorted(set(h["idle_by_stream"]) | set(ours)):
        hs = h["idle_by_stream"].get(stream, {})
        bs = ours.get(stream, {})
        for category, key in IDLE_KEYS.items():
            hv, bv = hs.get(category, 0.0), bs.get(key, 0.0)
            diff = abs(hv - bv) / step_ms if step_ms > 0 else 0.0
            ok &= diff <= tolerance
            if diff > tolerance or hv or bv:
                print(f"{job} rank {rank} stream {stream} {category}: hta {hv:.3f} ms "
                      f"bubblescope {bv:.3f} ms ({diff:.4f} of the GPU time) "
                      f"{'ok' if diff <= tolerance else 'DIFFERS'}")
    return ok


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
        else:
            diff = abs(h["overlap"] - b["overlap"]) * b["comm_ratio"]
            verdict = "ok" if diff <= tolerance else "DIFFERS"
            ok &= diff <= tolerance
            print(f"{job} rank {rank} overlap: hta {h['overlap']:.4f} "
                  f"bubblescope {b['overlap']:.4f} (comm {b['comm_ratio']:.4f} of the GPU "
                  f"time) diff {diff:.4f} of the GPU time {verdict}")
        print(f"{job} rank {rank} step time: hta {h['step_time_ms']:.3f} ms "
              f"bubblescope {b['step_time_ms']:.3f} ms")
        for w in b.get("launched_before_profile", []):
            print(f"{job} rank {rank}: GPU work launched before the profile: {w['ms']:.3f} ms "
                  f"on stream {w['stream']} (not counted, as in HTA)")
    for rank in sorted(hta):
        ok &= compare_idle(job, rank, hta[rank], ours[rank], tolerance)
    return ok


def same_figures(job, ours, exported, tolerance):
    """Bubblescope's figures and HTA's on Bubblescope's export of the run.

    Shares within `tolerance` (the overlap within HTA's rounding); the GPU
    time within `tolerance` of itself (the export's ts are relative to its
    baseTimeNanoseconds and keep every nanosecond, so a double holds them)."""
    ok = sorted(ours) == sorted(exported)
    for rank in sorted(ours):
        for key in ("step_time_ms", "idle_ratio", "compute_ratio", "non_compute_ratio",
                    "overlap"):
            value, other = ours[rank].get(key), exported.get(rank, {}).get(key)
            bound = tolerance * value if key == "step_time_ms" and value else tolerance
            if key == "overlap":
                bound = max(bound, 5e-5)  # HTA rounds it to a hundredth of a percent
            same = (value is None and other is None) or (
                value is not None and other is not None and abs(value - other) <= bound)
            ok &= same
            print(f"{job} rank {rank} {key}: bubblescope {value} hta on the export {other} "
                  f"{'ok' if same else 'DIFFERS'}")
    return ok


def job_folders(root):
    """`root` itself when it holds traces, else its subfolders that do."""
    def has_traces(folder):
        return any(f.endswith((".json", ".json.gz")) for f in os.listdir(folder))
    if has_traces(root):
        return [root]
    return [os.path.join(root, d) for d in sorted(os.listdir(root))
            if os.path.isdir(os.path.join(root, d)) and has_traces(os.path.join(root, d))]


def check_job(cli, folder, db, tolerance, tmp):
    job = os.path.basename(os.path.normpath(folder))
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.endswith((".json", ".json.gz")))
    subprocess.run([cli, "import", *files, "--trace", db], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    ok = True
    for include in (True, False):
        mode = "last step included" if include else "last step excluded"
        print(f"== {job}, {mode}")
        ours, our_kernels = bubblescope_figures(cli, db, include)
        try:
            analysis = hta_analysis(folder, include)
            hta = hta_figures(analysis)
        except Exception as e:  # HTA has no breakdown without GPU kernels
            print(f"{job}: HTA gives no breakdown ({type(e).__name__}: {e}); "
                  f"bubblescope has GPU figures for ranks {sorted(ours)}")
            ok &= not ours
            continue
        ok &= compare(f"{job} ({mode})", hta, ours, tolerance)
        ok &= compare_kernels(f"{job} ({mode})", hta_kernel_tables(analysis), our_kernels,
                              tolerance)
        if include:
            # export --format kineto of the imported run: HTA reads Bubblescope's
            # figures from it (even where HTA reads the original differently:
            # cuda_sync events, host ops with a stream; docs/analysis.md).
            exported = hta_figures(
                hta_analysis(export_kineto(cli, db, os.path.join(tmp, job)), include))
            ok &= same_figures(job + " (exported)", ours, exported, 1e-6)
    return ok


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="path to bubblescope-cli")
    parser.add_argument("--fixtures", default=os.path.join(here, "..", "..", "shared",
                                                           "fixtures", "kineto"))
    parser.add_argument("--extra", action="append", default=[],
                        help="another folder of per-rank traces, or of such folders (repeatable)")
    parser.add_argument("--tolerance", type=float, default=0.005)
    args = parser.parse_args()
    try:
        import hta  # noqa: F401
    except ImportError:
        print("skipped: Holistic Trace Analysis is not installed "
              "(pip install HolisticTraceAnalysis; docs/import.md)")
        return SKIP
    folders = [os.path.join(args.fixtures, job) for job in JOBS
               if os.path.isdir(os.path.join(args.fixtures, job))]
    for extra in args.extra:
        folders += job_folders(extra)
    if not folders:
        print(f"skipped: no Kineto fixtures at {args.fixtures}")
        return SKIP
    logging.disable(logging.WARNING)
    # HTA rounds ns-resolution traces to whole microseconds by default (ceil
    # the start, floor the end: up to 1 µs less per kernel); the importer
    # keeps the nanoseconds, so compare with HTA's rounding off.
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i, folder in enumerate(folders):
            ok &= check_job(args.cli, folder, os.path.join(tmp, f"job{i}.db"), args.tolerance, tmp)
        if os.path.isdir(args.fixtures):
            ok &= engine_run_loads(args.cli, tmp)
    print("hta_crosscheck: all figures agree" if ok else "hta_crosscheck: FIGURES DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
