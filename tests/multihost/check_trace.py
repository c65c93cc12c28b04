#!/usr/bin/env python3
"""check_trace.py TRACE SINGLE HOST_A HOST_B OFFSET_S CHROME_JSON INFO_TXT: the
multihost test's checks of the two-host trace (multihost_test.sh says which).
The events are read from the trace's Chrome export (CHROME_JSON, made by
`bubblescope-cli export --format chrome`): since schema v6 they are stored in
encoded blocks that only the project's reader decodes. INFO_TXT is what
`bubblescope-cli info TRACE` printed."""
import json
import math
import re
import sqlite3
import sys

trace, single, host_a, host_b, offset_s, chrome, info_txt = sys.argv[1:8]
offset_ns = -float(offset_s) * 1e9  # hostB's clock is ahead: its times move back
problems = []

db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
status, world = db.execute("SELECT status, world_size FROM runs WHERE id = 1").fetchone()
if status != "finished":
    problems.append(f"run status {status}, not finished")
ranks = db.execute(
    "SELECT rank, host, clock_offset_ns, clock_uncertainty_ns FROM ranks WHERE run = 1 "
    "ORDER BY rank").fetchall()
if [r[0] for r in ranks] != list(range(4)) or world != 4:
    problems.append(f"expected ranks 0..3 (world {world}), got {[r[0] for r in ranks]}")
hosts = {r[0]: r[1] for r in ranks}
if sorted(set(hosts.values())) != sorted([host_a, host_b]):
    problems.append(f"hosts {hosts}, expected {host_a} and {host_b}")
for rank, host, off, unc in ranks:
    print(f"rank {rank}: host {host}, clock offset {off / 1e9:+.6f} s +- {unc / 1e6:.3f} ms")
    expected = offset_ns if host == host_b else 0.0
    # The offset is measured within its uncertainty; the time namespace's
    # offset is exact, the hosts share one TSC, so it is the whole truth.
    if abs(off - expected) > max(unc, 1000):
        problems.append(f"rank {rank} on {host}: offset {off} ns, expected {expected:.0f} +- {unc}")
# `info` shows every rank's host, offset and bound as stored (6 decimals of
# a second, 3 of a millisecond).
shown = {}
with open(info_txt) as f:
    for line in f:
        m = re.match(r"^  rank (\d+) .* host (\S+) pid \d+  clock offset ([-+]\d+\.\d{6}) s "
                     r"\+- (\d+\.\d{3}) ms$", line.rstrip("\n"))
        if m:
            shown[int(m[1])] = (m[2], float(m[3]), float(m[4]))
for rank, host, off, unc_ns in ranks:
    if rank not in shown:
        problems.append(f"info shows no clock offset for rank {rank}")
    elif (shown[rank][0] != host or abs(shown[rank][1] - off / 1e9) > 6e-7
          or abs(shown[rank][2] - unc_ns / 1e6) > 6e-4):
        problems.append(f"info shows rank {rank} as {shown[rank]}, stored {host} {off} ns +- {unc_ns} ns")
per_rank = dict(db.execute("SELECT rank, SUM(count) FROM event_blocks WHERE run = 1 GROUP BY rank"))
if sorted(per_rank) != list(range(4)):
    problems.append(f"events of ranks {sorted(per_rank)}, expected 0..3")

# Every pipeline send starts before its receive ends (the data cannot arrive
# earlier), matched by direction, sender, receiver, step, micro-batch, chunk.
# Alignment puts each rank's times within its stated bound of the truth, so
# an order can only be wrong by up to the two ranks' bounds together; the
# 7 s offset, if it were not corrected, would break it by seconds.
unc = {r[0]: r[3] for r in ranks}
with open(chrome) as f:
    exported = json.load(f)
sends, recvs = {}, {}
for e in exported["traceEvents"] if isinstance(exported, dict) else exported:
    if e.get("ph") != "X" or e.get("cat") not in ("send", "recv"):
        continue
    what, args = e["name"], e.get("args", {})
    if not what.endswith(("_activation", "_grad")):
        continue
    # The export writes the stored (aligned) nanoseconds as microseconds
    # with three decimals: exact to the nanosecond.
    rank, start = e["pid"], round(e["ts"] * 1000)
    end = round((e["ts"] + e.get("dur", 0)) * 1000)
    step, mb, chunk, peer = (args.get(k, -1) for k in ("step", "mb", "chunk", "peer"))
    direction = what.split("_", 1)[1]
    if e["cat"] == "send":
        sends[(direction, rank, peer, step, mb, chunk)] = start
    else:
        recvs[(direction, peer, rank, step, mb, chunk)] = end
pairs = [k for k in sends if k in recvs]
cross = [k for k in pairs if hosts[k[1]] != hosts[k[2]]]
late = [k for k in pairs if sends[k] > recvs[k]]
worst = max((sends[k] - recvs[k] for k in pairs), default=0)
print(f"pipeline transfers: {len(pairs)} matched ({len(cross)} across hosts); "
      f"{len(pairs) - len(late)} with the send before its receive's end, {len(late)} after it "
      f"(within the two ranks' clock bounds); latest send relative to its receive's end: "
      f"{worst / 1e6:+.3f} ms")
if len(cross) < 8:
    problems.append(f"only {len(cross)} matched pipeline transfers cross the hosts")
for k in late:
    bound = unc[k[1]] + unc[k[2]]
    if sends[k] - recvs[k] > bound:
        problems.append(f"send {k} starts {(sends[k] - recvs[k]) / 1e6:.3f} ms after its receive "
                        f"ends, beyond the ranks' clock bounds ({bound / 1e6:.3f} ms)")

# The loss of every step equals the single-rank run's (1e-5 relative).
def losses(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    for step, loss in con.execute("SELECT step, loss FROM steps WHERE run = 1"):
        if loss is not None and not math.isnan(loss):
            out[step] = loss
    return out
got, want = losses(trace), losses(single)
if sorted(got) != sorted(want) or not want:
    problems.append(f"steps with a loss: {sorted(got)} vs single-rank {sorted(want)}")
for step in sorted(want):
    if step in got and abs(got[step] - want[step]) > 1e-5 * abs(want[step]):
        problems.append(f"step {step}: loss {got[step]!r} vs single-rank {want[step]!r}")
print("losses: " + ", ".join(f"{got.get(s, float('nan')):.6f}" for s in sorted(want)) +
      " (single rank: " + ", ".join(f"{want[s]:.6f}" for s in sorted(want)) + ")")

for p in problems:
    print("problem: " + p)
sys.exit(1 if problems else 0)
