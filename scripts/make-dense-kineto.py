#!/usr/bin/env python3
"""Scales a real Kineto trace up to a dense, many-step GPU trace for the render bench.

Reads one PyTorch profiler (Kineto) JSON file (plain or .gz), takes the span
of its ProfilerStep#N annotations, and writes one Kineto JSON file per rank
into OUT_DIR: the steps repeated, each copy shifted in time by the steps'
span (plus a small gap), with its step numbers, correlation ids and External
ids shifted so that launches and GPU records still pair up, until the ranks
together hold about --gpu-records GPU records (kernel, gpu_memcpy,
gpu_memset, gpu_user_annotation). Every rank gets the same copies
(distributedInfo.rank set to its rank). By default only the GPU records and
the ProfilerStep annotations are written; --with-host also keeps the host
side (cpu_op, cuda_runtime, flows, ...), several times as many events.

No third-party modules. Example (docs/benchmarks.md), TRACE being the
Kineto fixture ns_resolution_trace's rank-0 file (5 steps, 5,087 GPU
records in them):

  scripts/make-dense-kineto.py TRACE \\
    --gpu-records 10000000 --ranks 8 --out /work/traces-render/kineto10m
  build/cli/bubblescope-cli import /work/traces-render/kineto10m/rank-*.json \\
    --trace /work/traces-render/kineto10m.db
"""

import argparse
import gzip
import json
import os
import re
import sys

GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
STEP_PREFIX = "ProfilerStep#"


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def to_ns(us):
    """Kineto times are µs with up to three decimals: whole ns."""
    return int(round(float(us) * 1000))


def us_text(ns):
    return "%d.%03d" % divmod(ns, 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", help="a Kineto JSON trace with ProfilerStep#N annotations")
    parser.add_argument("--gpu-records", type=int, default=10_000_000,
                        help="GPU records of all ranks together (about; whole step copies)")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--out", required=True, help="folder for rank-N.json")
    parser.add_argument("--with-host", action="store_true",
                        help="also keep host events (cpu_op, cuda_runtime, flows)")
    args = parser.parse_args()

    doc = load(args.trace)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = [e for e in events
             if e.get("ph") == "X" and str(e.get("name", "")).startswith(STEP_PREFIX)]
    if not steps:
        sys.exit("no ProfilerStep#N annotations in " + args.trace)
    start = min(to_ns(e["ts"]) for e in steps)
    end = max(to_ns(e["ts"]) + to_ns(e.get("dur", 0)) for e in steps)
    period = end - start + 100_000  # the steps' span and a 100 µs gap
    step_numbers = [int(e["name"][len(STEP_PREFIX):]) for e in steps]
    first_step, step_count = min(step_numbers), max(step_numbers) - min(step_numbers) + 1

    def kept(e):
        if e.get("ph") == "M":
            return True
        if "ts" not in e or not (start <= to_ns(e["ts"]) < end):
            return False
        if e.get("ph") == "X" and str(e.get("name", "")).startswith(STEP_PREFIX):
            return True
        if e.get("cat") in GPU_CATEGORIES:
            return True
        return args.with_host and e.get("ph") in ("X", "s", "f")

    template = [e for e in events if kept(e)]
    metadata = [e for e in template if e.get("ph") == "M"]
    timed = [e for e in template if e.get("ph") != "M"]
    gpu_per_copy = sum(1 for e in timed if e.get("cat") in GPU_CATEGORIES)
    if gpu_per_copy == 0:
        sys.exit("no GPU records inside the steps of " + args.trace)
    copies = max(1, round(args.gpu_records / (gpu_per_copy * args.ranks)))
    max_corr = max([int(e.get("args", {}).get("correlation", 0)) for e in timed] +
                   [int(e.get("id", 0)) for e in timed if isinstance(e.get("id"), int)] + [0]) + 1
    max_ext = max([int(e.get("args", {}).get("External id", 0)) for e in timed] + [0]) + 1

    # Each event once as JSON text with holes for what a copy shifts (its
    # time, correlation, External id, flow id, step number): the copies
    # only fill them in.
    sentinel = re.compile(r'"@@(TS|CORR|EXT|ID)@@"|@@(STEP)@@')
    compiled = []
    for e in timed:
        c = dict(e)
        base = {}
        c["ts"] = "@@TS@@"
        if "dur" in e:
            c["dur"] = "@@DUR@@"
        a = dict(e.get("args", {}))
        if "correlation" in a:
            base["CORR"] = int(a["correlation"])
            a["correlation"] = "@@CORR@@"
        if "External id" in a:
            base["EXT"] = int(a["External id"])
            a["External id"] = "@@EXT@@"
        if a:
            c["args"] = a
        if isinstance(c.get("id"), int):
            base["ID"] = c["id"]
            c["id"] = "@@ID@@"
        name = str(c.get("name", ""))
        step_name = c.get("ph") == "X" and name.startswith(STEP_PREFIX)
        if step_name:
            base["STEP"] = int(name[len(STEP_PREFIX):])
            c["name"] = STEP_PREFIX + "@@STEP@@"
        text = json.dumps(c)
        if "dur" in e:
            text = text.replace('"@@DUR@@"', us_text(to_ns(e["dur"])))
        keys = [a or b for a, b in sentinel.findall(text)]
        pieces = sentinel.split(text)[::3]
        compiled.append(((to_ns(e["ts"]), base), pieces, keys))

    header = {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else {}
    header.pop("baseTimeNanoseconds", None)
    os.makedirs(args.out, exist_ok=True)
    for rank in range(args.ranks):
        info = dict(header.get("distributedInfo", {}))
        info["rank"] = rank
        info["world_size"] = args.ranks
        if "pg_config" in info:
            info["pg_config"] = [dict(pg, pg_size=args.ranks, ranks=list(range(args.ranks)))
                                 for pg in info["pg_config"]]
        head = dict(header, distributedInfo=info)
        path = os.path.join(args.out, "rank-%d.json" % rank)
        with open(path, "w", encoding="utf-8") as out:
            text = json.dumps(head)
            out.write(text[:-1] + (", " if head else "") + '"traceEvents": [\n')
            first = True
            for e in metadata:
                out.write(("" if first else ",\n") + json.dumps(e))
                first = False
            for k in range(copies):
                shift = k * period
                values = {"TS": None, "CORR": k * max_corr, "EXT": k * max_ext,
                          "ID": k * max_corr, "STEP": k * step_count}
                for (base_ns, base), pieces, keys in compiled:
                    text = pieces[0]
                    for key, piece in zip(keys, pieces[1:]):
                        if key == "TS":
                            text += us_text(base_ns + shift)
                        else:
                            text += str(base[key] + values[key])
                        text += piece
                    out.write(("" if first else ",\n") + text)
                    first = False
            out.write("\n]}\n")
        print("%s: %d copies of %d steps, %d GPU records" %
              (path, copies, step_count, copies * gpu_per_copy), flush=True)
    print("gpu_records: %d" % (copies * gpu_per_copy * args.ranks))
    print("first_step: %d, steps: %d" % (first_step, copies * step_count))


if __name__ == "__main__":
    main()
