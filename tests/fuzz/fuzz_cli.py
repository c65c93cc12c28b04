#!/usr/bin/env python3
"""Adversarial trials of bubblescope-cli (ctest label `fuzz`).

Four kinds of case, drawn from one seeded generator:
  layout   a sample layout mutated (huge, negative, fractional, non-numeric
           and overflowing numbers, duplicate keys, truncation, stray bytes),
           read by `simulate --layout` and `train --layout-json`
  argv     random argument vectors for the cheap commands (values at and
           beyond every type's range, empty, text)
  corrupt  a real trace with bytes flipped or cut off, read by info, report
           and export
  kill     `simulate --trace NEW` / `train --trace NEW` killed (SIGKILL or
           SIGTERM) at a random moment, creation included; afterwards `info`
           must answer with a message and a new writer must succeed

Every command must end by itself within its time limit, with exit code 0, 1
or 2 (never a signal, never "terminate called"), and a failing command's last
line on stderr starts with "error:". A failure prints the case, the command,
its output and the seed that reproduces the whole run:

  BUBBLESCOPE_FUZZ_SEED=S BUBBLESCOPE_FUZZ_CASES=N fuzz_cli.py --cli ... --samples ...

Cases: --cases (CI's bounded number), or BUBBLESCOPE_FUZZ_CASES for more.
Seed: BUBBLESCOPE_FUZZ_SEED, else a fresh one (printed first).
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HUGE_NUMBERS = ["1e400", "-1e400", "2147483648", "-2147483649", "9223372036854775808",
                "18446744073709551616", "4294967296", "1e19", "0", "-1", "2.5", "-0", "1e-400",
                "99999999999999999999999999"]
BAD_TEXT = ["", "abc", "nan", "inf", "-inf", "0x10", " 4", "4 ", "1,2", "--steps", "-", "\u00e9"]


class Failure(Exception):
    pass


class Fuzzer:
    def __init__(self, cli, samples, work, rng):
        self.cli, self.samples, self.work, self.rng = cli, samples, work, rng
        self.env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        self.trace = None

    # One command: returns (rc, stdout, stderr); checks the rules above.
    def run(self, args, timeout=30, allowed=(0, 1, 2)):
        try:
            p = subprocess.run([self.cli] + args, capture_output=True, timeout=timeout,
                               env=self.env, cwd=self.work, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise Failure("did not end within %d s: %r" % (timeout, args))
        out = p.stdout.decode(errors="replace")
        err = p.stderr.decode(errors="replace")
        problem = None
        if p.returncode < 0:
            problem = "killed by signal %d" % -p.returncode
        elif p.returncode not in allowed:
            problem = "exit code %d" % p.returncode
        elif "terminate called" in err or "Assertion" in err:
            problem = "uncaught exception or assertion"
        elif p.returncode != 0:
            lines = [l for l in err.splitlines() if l.strip()]
            if not lines or not lines[-1].startswith("error:"):
                problem = "failed without an 'error:' line"
        if problem:
            raise Failure("%s: %r\n--- stdout\n%s\n--- stderr\n%s" % (problem, args, out[-2000:],
                                                                     err[-2000:]))
        return p.returncode, out, err

    def fresh(self, name):
        path = os.path.join(self.work, name)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return path

    def base_trace(self):
        if self.trace is None:
            self.trace = self.fresh("base.db")
            self.run(["simulate", "--model", "tiny", "--pp", "2", "--micro-batches", "2",
                      "--steps", "2", "--trace", self.trace], allowed=(0,))
        return self.trace

    # --- layout: a sample, mutated
    def mutate_layout(self):
        name = self.rng.choice(sorted(f for f in os.listdir(self.samples) if f.endswith("jsonc")))
        with open(os.path.join(self.samples, name)) as f:
            text = "\n".join(l for l in f.read().splitlines() if not l.strip().startswith("//"))
        try:
            layout = json.loads(text)
        except ValueError:
            layout = {"model": "tiny", "dp": 2}
        keys = ["dp", "tp", "pp", "ep", "zero_stage", "micro_batches", "micro_batch_size",
                "steps", "seed", "global_batch", "bucket_mb", "learning_rate", "virtual_chunks",
                "ranks_per_node", "inter_node_gbps"]
        for _ in range(self.rng.randint(1, 3)):
            key = self.rng.choice(keys)
            if self.rng.random() < 0.2:
                model = layout.get("model")
                if not isinstance(model, dict):
                    model = {"preset": model if isinstance(model, str) else "tiny"}
                layout["model"] = model
                key = self.rng.choice(["seq_len", "hidden", "layers", "heads", "vocab_size",
                                       "experts", "top_k", "capacity_factor"])
                model[key] = "@" + self.rng.choice(HUGE_NUMBERS) + "@"
            else:
                layout[key] = "@" + self.rng.choice(HUGE_NUMBERS + ['"x"', "null", "[]"]) + "@"
        text = json.dumps(layout)
        # Raw numbers (json.dumps would quote or refuse 1e400).
        text = text.replace('"@', "").replace('@"', "")
        roll = self.rng.random()
        if roll < 0.15:  # a key twice
            text = text.rstrip("}") + ', "dp": 1}'
        elif roll < 0.25:  # cut short
            text = text[:self.rng.randint(0, len(text))]
        elif roll < 0.3:  # a stray byte
            i = self.rng.randint(0, len(text))
            text = text[:i] + self.rng.choice(["\x00", "\xff", "{", "]", ","]) + text[i:]
        return text

    def case_layout(self):
        text = self.mutate_layout()
        path = os.path.join(self.work, "layout.json")
        with open(path, "w", errors="replace") as f:
            f.write(text)
        trace = self.fresh("layout.db")
        self.run(["simulate", "--layout", path, "--steps", "2", "--trace", trace])
        if "\x00" not in text and self.rng.random() < 0.15:  # one MPI singleton rank: slower
            self.run(["train", "--layout-json", text, "--steps", "1"], timeout=60)

    # --- argv: random flags of the cheap commands
    def value(self):
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(HUGE_NUMBERS)
        if r < 0.8:
            return self.rng.choice(BAD_TEXT)
        return str(self.rng.randint(1, 4))

    def case_argv(self):
        trace = self.base_trace()
        commands = {
            "info": ([trace], []),
            "report": ([trace], ["--run", "--memory-per-rank", "--json", "--markdown"]),
            "export": ([trace, os.path.join(self.work, "out.json")], ["--run", "--format"]),
            "compare": ([trace], ["--run", "--run"]),
            "plan": ([], ["--world", "--model", "--top", "--micro-batch-size", "--memory-per-rank",
                          "--ranks-per-node", "--inter-node-gbps", "--grad-compression",
                          "--experts", "--top-k", "--capacity-factor", "--json"]),
            "simulate": (["--trace", self.fresh("argv.db")],
                         ["--dp", "--pp", "--tp", "--micro-batches", "--steps", "--schedule",
                          "--costs", "--unit-ms", "--chunks", "--model", "--seed", "--lr"]),
            "train": (["--steps", "1"], ["--batch-size", "--micro-batches", "--lr", "--warmup",
                                         "--total-steps", "--seed", "--grad-clip", "--trace",
                                         "--dump-batch", "--experts", "--top-k"]),
        }
        command = self.rng.choice(sorted(commands))
        fixed, flags = commands[command]
        args = [command] + list(fixed)
        for _ in range(self.rng.randint(0, 3) if flags else 0):
            flag = self.rng.choice(flags)
            if flag in ("--json", "--markdown"):
                args.append(flag)
                continue
            value = self.value()
            if command == "plan" and flag == "--world" and value.isdigit():
                value = str(min(int(value), 64))  # a valid world: keep the plan small
            if command == "train" and flag in ("--batch-size", "--micro-batches"):
                # a valid size stays small; an invalid one must be refused
                if value.isdigit() and 0 < int(value) <= 4:
                    pass
                elif value.lstrip("-").isdigit() and int(value) > 4:
                    value = "-" + value
            args += [flag, value]
        if command == "plan" and "--world" not in args:
            args += ["--world", str(self.rng.randint(1, 8))]
        self.run(args, timeout=60)

    # --- corrupt: a real trace, damaged
    def case_corrupt(self):
        with open(self.base_trace(), "rb") as f:
            data = bytearray(f.read())
        if self.rng.random() < 0.3:
            data = data[:self.rng.randint(0, len(data))]
        else:
            for _ in range(self.rng.randint(1, 20)):
                if data:
                    data[self.rng.randrange(len(data))] = self.rng.randrange(256)
        path = self.fresh("corrupt.db")
        with open(path, "wb") as f:
            f.write(bytes(data))
        self.run(["info", path])
        self.run(["report", path])
        self.run(["export", path, "--run", "1", "--format", "chrome",
                  os.path.join(self.work, "corrupt.json")])

    # --- kill: a writer stopped at a random moment, creation included
    def case_kill(self):
        trace = self.fresh("killed.db")
        if self.rng.random() < 0.5:
            args = ["simulate", "--model", "tiny", "--pp", "2", "--steps", "50", "--trace", trace]
        else:
            args = ["train", "--model", "tiny", "--steps", "20", "--trace", trace]
        p = subprocess.Popen([self.cli] + args, env=self.env, cwd=self.work,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL)
        # Until the file appears, then 0-30 ms more (or at a random time).
        deadline = time.monotonic() + 5
        if self.rng.random() < 0.6:
            while not os.path.exists(trace) and time.monotonic() < deadline and p.poll() is None:
                time.sleep(0.0005)
        time.sleep(self.rng.random() * 0.03)
        p.send_signal(self.rng.choice([signal.SIGKILL, signal.SIGTERM]))
        p.wait()
        if os.path.exists(trace):
            rc, out, err = self.run(["info", trace])
        # Whatever the moment, the next writer succeeds and info reads it.
        self.run(["simulate", "--model", "tiny", "--steps", "2", "--trace", trace], allowed=(0,))
        self.run(["info", trace], allowed=(0,))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--cases", type=int, default=120)
    args = ap.parse_args()
    cases = int(os.environ.get("BUBBLESCOPE_FUZZ_CASES", args.cases))
    seed = int(os.environ.get("BUBBLESCOPE_FUZZ_SEED", random.SystemRandom().randrange(1 << 31)))
    print("fuzz seed %d, %d cases (BUBBLESCOPE_FUZZ_SEED=%d BUBBLESCOPE_FUZZ_CASES=%d to repeat)"
          % (seed, cases, seed, cases), flush=True)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="bubblescope-fuzz-")
    fuzzer = Fuzzer(os.path.abspath(args.cli), os.path.abspath(args.samples), work, rng)
    kinds = [("layout", fuzzer.case_layout, 4), ("argv", fuzzer.case_argv, 4),
             ("corrupt", fuzzer.case_corrupt, 2), ("kill", fuzzer.case_kill, 1)]
    counts = {name: 0 for name, _, _ in kinds}
    start = time.monotonic()
    try:
        for i in range(cases):
            name, case, _ = rng.choices(kinds, weights=[w for _, _, w in kinds])[0]
            counts[name] += 1
            try:
                case()
            except Failure as f:
                print("FAILED case %d (%s), seed %d:\n%s" % (i, name, seed, f))
                print("repeat: BUBBLESCOPE_FUZZ_SEED=%d BUBBLESCOPE_FUZZ_CASES=%d" % (seed, cases))
                return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("fuzz passed: %s in %.0f s" % (", ".join("%d %s" % (counts[n], n) for n, _, _ in kinds),
                                        time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
