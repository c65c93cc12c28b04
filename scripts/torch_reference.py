#!/usr/bin/env python3
"""An independent PyTorch reference for the engine's maths (docs/engine.md).

Written from docs/engine.md alone: it shares no code with the engine. From a
checkpoint (the state before a step), the step's dumped batch
(`train --dump-batch`), the engine's gradients of that step
(`train --save-grads`) and the checkpoint after it, it recomputes in float64
the loss, the gradients, the global norm and clipping, and one AdamW step,
and compares them with the engine's (fp32). It also regenerates, from the
documented generators, the built-in corpus, the step's batch (the sampler)
and the initial weights (`train --steps 0 --save`).

  torch_reference.py compare BEFORE.safetensors BATCH.json GRADS.safetensors AFTER.safetensors
  torch_reference.py check --cli build/cli/bubblescope-cli --dir /tmp/ref
  torch_reference.py check-parallel --cli build/cli/bubblescope-cli --dir /tmp/ref

`check` runs the whole cross-check with the CLI: tiny at step 0 (from the
initial checkpoint) and at step 3 (warm-up and cosine, non-zero moments),
small at step 0. `check-parallel` starts a tp 2 x pp 2 run (`run --save`,
mpirun) and checks the step the engine trains from its checkpoint. Exits 0 when everything agrees, 1 when not, 77 (ctest's
skip) when PyTorch is not installed.

Criteria (fp32 engine against float64 here; see tests/parallel/agreement.h
for why parameters are not compared element by element with one bound):
loss and gradient norm within 1e-5 relative; each gradient, m and v tensor
within 1e-4 of its norm (a tensor whose norm is below 1e-4 of the global
one, as the key bias's, which is zero in exact arithmetic, is compared with
that floor instead); after the AdamW step at most 1% of the elements off by
more than 1e-3 lr, and the others' root mean square error at most 1e-4 lr.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"skipped: PyTorch is not installed ({e}); on Debian: apt-get install python3-torch")
    sys.exit(77)

torch.set_default_dtype(torch.float64)

# ---------------------------------------------------------------- files


def read_safetensors(path):
    """{name: float64 tensor}, metadata (F32 files only)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, h in header.items():
        assert h["dtype"] == "F32", (path, name, h["dtype"])
        begin, end = h["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype="<f4").reshape(h["shape"])
        tensors[name] = torch.from_numpy(a.astype(np.float64))
    return tensors, meta


def split_checkpoint(tensors):
    params, m, v = {}, {}, {}
    for name, t in tensors.items():
        if name.startswith("optimizer.m."):
            m[name[len("optimizer.m."):]] = t
        elif name.startswith("optimizer.v."):
            v[name[len("optimizer.v."):]] = t
        else:
            params[name] = t
    return params, m, v


# ---------------------------------------------------------------- generators


MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def mix_seed(a, b):
    return mix64((a ^ ((b + GAMMA + ((a << 6) & MASK) + (a >> 2)) & MASK)) & MASK)


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + GAMMA) & MASK
        return mix64(self.state)

    def below(self, n):
        return self.next() % n


def fnv1a(name):
    h = 1469598103934665603
    for c in name.encode():
        h = ((h ^ c) * 1099511628211) & MASK
    return h


def normals(seed, count):
    """count standard normals of SplitMix64(seed), Box-Muller, one per two draws (numpy)."""
    u64 = np.uint64
    i = np.arange(1, 2 * count + 1, dtype=u64)
    with np.errstate(over="ignore"):
        z = u64(seed) + i * u64(GAMMA)
        z = (z ^ (z >> u64(30))) * u64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
        z = z ^ (z >> u64(31))
    u = (z >> u64(11)).astype(np.float64) * 2.0**-53
    u1 = 1.0 - u[0::2]
    u2 = u[1::2]
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)


ADJECTIVES = ["quick", "lazy", "small", "big", "red", "old", "young", "happy"]
NOUNS = ["fox", "dog", "cat", "bird", "horse", "mouse", "owl", "fish"]
VERBS = ["chases", "sees", "likes", "follows", "finds", "helps"]
PLACES = ["by the river", "in the garden", "on the hill", "under the tree", "near the house"]


def synthetic_corpus(size=1 << 18):
    rng = SplitMix64(0x5EEDB0BB1E5C0DE5)
    pick = lambda words: words[rng.below(len(words))]
    parts, n = [], 0
    while n < size:
        s = "the " + pick(ADJECTIVES) + " " + pick(NOUNS) + " " + pick(VERBS)
        s += " a " if rng.below(2) == 0 else " the "
        s += pick(ADJECTIVES) + " " + pick(NOUNS)
        if rng.below(2) == 0:
            s += " " + pick(PLACES)
        s += ".\n" if rng.below(4) == 0 else ". "
        parts.append(s)
        n += len(s)
    return "".join(parts)[:size].encode()


def sample_batch(stream, seed, step, micro_batches, b, t):
    """tokens, targets [M][B][T] of (0-based) step `step` (docs/engine.md, Data)."""
    data_seed = mix_seed(seed, 0xDA7A)
    tokens, targets = [], []
    for mb in range(micro_batches):
        base = mix_seed(mix_seed(data_seed, step), mb)
        rows, rows_t = [], []
        for i in range(b):
            offset = SplitMix64(mix_seed(base, i)).below(len(stream) - t)
            rows.append(list(stream[offset:offset + t]))
            rows_t.append(list(stream[offset + 1:offset + t + 1]))
        tokens.append(rows)
        targets.append(rows_t)
    return tokens, targets


def initial_value(name, shape, seed, layers):
    """The documented initialisation of parameter `name`."""
    if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
        return np.ones(shape)
    if name.endswith(".bias"):
        return np.zeros(shape)
    std = 0.02
    if name == "wpe.weight":
        std = 0.01
    elif name.endswith("attn.proj.weight") or name.endswith("mlp.proj.weight"):
        std = 0.02 / math.sqrt(2 * layers)
    count = int(np.prod(shape))
    return (std * normals(mix_seed(seed, fnv1a(name)), count)).astype(np.float32).reshape(shape)


# ---------------------------------------------------------------- the model


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def forward(p, cfg, tokens, targets):
    """Mean cross-entropy of one micro-batch; tokens, targets (B, T) int64."""
    b, t = tokens.shape
    c, nh = cfg["hidden"], cfg["heads"]
    hs = c // nh
    x = p["wte.weight"][tokens] + p["wpe.weight"][torch.arange(t)]
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
    for layer in range(cfg["layers"]):
        h = f"h.{layer}."
        a = layer_norm(x, p[h + "ln_1.weight"], p[h + "ln_1.bias"])
        qkv = a @ p[h + "attn.qkv.weight"].T + p[h + "attn.qkv.bias"]  # weights (out, in)
        q, k, v = qkv.split(c, dim=-1)  # q, k, v in this order
        q, k, v = (z.view(b, t, nh, hs).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hs)
        att = torch.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + y @ p[h + "attn.proj.weight"].T + p[h + "attn.proj.bias"]
        a = layer_norm(x, p[h + "ln_2.weight"], p[h + "ln_2.bias"])
        f = gelu(a @ p[h + "mlp.fc.weight"].T + p[h + "mlp.fc.bias"])
        x = x + f @ p[h + "mlp.proj.weight"].T + p[h + "mlp.proj.bias"]
    x = layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
    logits = x @ p["lm_head.weight"].T
    return torch.nn.functional.cross_entropy(logits.view(b * t, -1), targets.view(b * t))


def lr_at(s, tr):
    """docs/engine.md, learning-rate schedule."""
    peak, floor = tr["lr"], tr["lr"] * tr["min_lr_ratio"]
    w, k = tr["warmup_steps"], tr["total_steps"]
    if s < w:
        return peak * (s + 1) / w
    progress = min(max((s - w) / max(1, k - w), 0.0), 1.0)
    return floor + (peak - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def reference_step(params, m, v, meta, batch):
    """loss, norm, clipped grads, params/m/v after one step (float64)."""
    cfg = json.loads(meta["model"])
    cfg = {"hidden": cfg["hidden"], "heads": cfg["heads"], "layers": cfg["layers"]}
    tr = json.loads(meta["trainer"])
    p = {n: t.clone().requires_grad_(True) for n, t in params.items()}
    micro = len(batch["tokens"])
    loss = 0.0
    for mb in range(micro):
        tokens = torch.tensor(batch["tokens"][mb], dtype=torch.int64)
        targets = torch.tensor(batch["targets"][mb], dtype=torch.int64)
        loss = loss + forward(p, cfg, tokens, targets) / micro
    loss.backward()
    grads = {n: t.grad.detach() for n, t in p.items()}
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if tr["grad_clip"] > 0 and norm > tr["grad_clip"]:
        grads = {n: g * (tr["grad_clip"] / (norm + 1e-6)) for n, g in grads.items()}
    step = int(meta["step"])
    t = int(meta.get("optimizer_step", step)) + 1
    lr = lr_at(step, tr)
    b1, b2, eps, wd = tr["beta1"], tr["beta2"], tr["eps"], tr["weight_decay"]
    after, m1, v1 = {}, {}, {}
    for n, g in grads.items():
        m1[n] = b1 * m[n] + (1 - b1) * g
        v1[n] = b2 * v[n] + (1 - b2) * g * g
        mhat, vhat = m1[n] / (1 - b1**t), v1[n] / (1 - b2**t)
        decay = wd if params[n].dim() == 2 else 0.0  # matrices and embeddings only
        after[n] = params[n] - lr * (mhat / (torch.sqrt(vhat) + eps) + decay * params[n])
    return float(loss), norm, grads, after, m1, v1, lr


# ---------------------------------------------------------------- comparison


class Verdict:
    def __init__(self, what):
        self.what, self.failures = what, []

    def check(self, ok, line):
        if not ok:
            self.failures.append(line)


def tensor_errors(got, ref, global_norm):
    """Worst over tensors of |got − ref| / max(|ref|, 1e-4 · global norm)."""
    worst, name = 0.0, ""
    for n, r in ref.items():
        err = float((got[n] - r).norm()) / max(float(r.norm()), 1e-4 * global_norm, 1e-30)
        if not err <= worst:  # NaN-aware
            worst, name = (err if not math.isnan(err) else float("inf")), n
    return worst, name


def compare(before_path, batch_path, grads_path, after_path, what=""):
    before, meta = read_safetensors(before_path)
    params, m, v = split_checkpoint(before)
    with open(batch_path) as f:
        batch = json.load(f)
    egrads, gmeta = read_safetensors(grads_path)
    eafter, ameta = read_safetensors(after_path)
    eparams, em, ev = split_checkpoint(eafter)
    verdict = Verdict(what or before_path)
    step = int(meta["step"])
    verdict.check(batch["step"] == step == int(gmeta["step"]),
                  f"steps differ: checkpoint {step}, batch {batch['step']}, grads {gmeta['step']}")
    loss, norm, grads, after, m1, v1, lr = reference_step(params, m, v, meta, batch)
    loss_rel = abs(float(gmeta["loss"]) - loss) / loss
    norm_rel = abs(float(gmeta["grad_norm"]) - norm) / norm
    lr_rel = abs(float(gmeta["lr"]) - lr) / lr
    grad_err, grad_name = tensor_errors(egrads, grads, norm)
    gm = math.sqrt(sum(float((x * x).sum()) for x in m1.values()))
    gv = math.sqrt(sum(float((x * x).sum()) for x in v1.values()))
    m_err, m_name = tensor_errors(em, m1, gm)
    v_err, v_name = tensor_errors(ev, v1, gv)
    off, total, bulk = 0, 0, 0.0
    for n, r in after.items():
        err = (eparams[n] - r).abs().flatten()
        bad = ~(err <= 1e-3 * lr)  # NaN counts as off
        off += int(bad.sum())
        total += err.numel()
        bulk += float((err[~bad] ** 2).sum())
    bulk_rms = math.sqrt(bulk / max(1, total - off)) / lr
    print(f"{verdict.what}: step {step} | loss {loss:.6f} rel {loss_rel:.1e} | norm {norm:.4f} "
          f"rel {norm_rel:.1e} | lr {lr:.3e} | grads {grad_err:.1e} ({grad_name}) | m {m_err:.1e} "
          f"| v {v_err:.1e} | params off {off}/{total}, bulk rms {bulk_rms:.1e} lr")
    verdict.check(loss_rel <= 1e-5, f"loss {gmeta['loss']} vs {loss} (rel {loss_rel:.2e})")
    verdict.check(norm_rel <= 1e-5, f"gradient norm {gmeta['grad_norm']} vs {norm}")
    verdict.check(lr_rel <= 1e-12, f"learning rate {gmeta['lr']} vs {lr}")
    verdict.check(grad_err <= 1e-4, f"gradient of {grad_name} off by {grad_err:.2e} of its norm")
    verdict.check(m_err <= 1e-4, f"AdamW m of {m_name} off by {m_err:.2e}")
    verdict.check(v_err <= 1e-4, f"AdamW v of {v_name} off by {v_err:.2e}")
    verdict.check(off <= 0.01 * total, f"{off} of {total} parameters off by more than 1e-3 lr")
    verdict.check(bulk_rms <= 1e-4, f"parameters' bulk rms error {bulk_rms:.2e} lr")
    return verdict


def check_generated(init_path, batch_path, data_path=None):
    """The documented generators reproduce the initial weights and the batch."""
    tensors, meta = read_safetensors(init_path)
    params, _, _ = split_checkpoint(tensors)
    tr = json.loads(meta["trainer"])
    layers = json.loads(meta["model"])["layers"]
    verdict = Verdict(f"generators ({init_path})")
    for n, t in params.items():
        want = torch.from_numpy(initial_value(n, tuple(t.shape), tr["seed"], layers).astype(np.float64))
        err = float((t - want).abs().max())
        verdict.check(err <= 1e-6 * 0.02, f"initial {n} differs from the documented init by {err:.2e}")
    with open(batch_path) as f:
        batch = json.load(f)
    stream = open(data_path, "rb").read() if data_path else synthetic_corpus()
    tokens, targets = sample_batch(stream, tr["seed"], batch["step"], batch["micro_batches"],
                                   batch["batch_size"], batch["seq_len"])
    verdict.check(tokens == batch["tokens"] and targets == batch["targets"],
                  f"the documented sampler does not give the dumped batch of step {batch['step']}")
    print(f"{verdict.what}: {len(params)} initial tensors and the batch of step {batch['step']} "
          f"({'as documented' if not verdict.failures else 'DIFFER'})")
    return verdict


# ---------------------------------------------------------------- driver


def run(cli, *args):
    out = subprocess.run([cli, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {cli} {' '.join(args)} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return out.stdout


def check(cli, work):
    os.makedirs(work, exist_ok=True)
    f = lambda name: os.path.join(work, name)
    verdicts = []
    # tiny from its initial checkpoint: step 0 (warm-up 2, clipping at 1 active).
    common = ["--batch-size", "2", "--micro-batches", "2", "--total-steps", "6", "--warmup", "2"]
    run(cli, "train", "--model", "tiny", "--steps", "0", "--save", f("tiny0.st"), *common)
    run(cli, "train", "--load", f("tiny0.st"), "--steps", "1", "--save", f("tiny1.st"),
        "--dump-batch", "0", f("tiny_b0.json"), "--save-grads", f("tiny_g0.st"))
    verdicts.append(check_generated(f("tiny0.st"), f("tiny_b0.json")))
    verdicts.append(compare(f("tiny0.st"), f("tiny_b0.json"), f("tiny_g0.st"), f("tiny1.st"),
                            "tiny step 0"))
    # tiny at step 3: cosine decay, moments from three steps.
    run(cli, "train", "--model", "tiny", "--steps", "3", "--save", f("tiny3.st"), *common)
    run(cli, "train", "--load", f("tiny3.st"), "--steps", "4", "--save", f("tiny4.st"),
        "--dump-batch", "3", f("tiny_b3.json"), "--save-grads", f("tiny_g3.st"))
    verdicts.append(compare(f("tiny3.st"), f("tiny_b3.json"), f("tiny_g3.st"), f("tiny4.st"),
                            "tiny step 3"))
    # small at step 0, one micro-batch of 2 sequences.
    run(cli, "train", "--model", "small", "--steps", "0", "--save", f("small0.st"),
        "--batch-size", "2", "--micro-batches", "1")
    run(cli, "train", "--load", f("small0.st"), "--steps", "1", "--save", f("small1.st"),
        "--dump-batch", "0", f("small_b0.json"), "--save-grads", f("small_g0.st"))
    verdicts.append(compare(f("small0.st"), f("small_b0.json"), f("small_g0.st"), f("small1.st"),
                            "small step 0"))
    return verdicts


def check_parallel(cli, work):
    """A parallel layout's checkpoint (`run --save`, tp 2 x pp 2) is a whole
    model: the step the engine trains from it agrees with the one here."""
    os.makedirs(work, exist_ok=True)
    f = lambda name: os.path.join(work, name)
    run(cli, "run", "--model", "tiny", "--seed", "7", "--lr", "0.003", "--steps", "2", "--tp", "2",
        "--pp", "2", "--micro-batches", "2", "--micro-batch-size", "2", "--save", f("par2.st"))
    run(cli, "train", "--load", f("par2.st"), "--steps", "3", "--save", f("par3.st"),
        "--dump-batch", "2", f("par_b2.json"), "--save-grads", f("par_g2.st"))
    return [compare(f("par2.st"), f("par_b2.json"), f("par_g2.st"), f("par3.st"),
                    "tiny tp 2 x pp 2 checkpoint, step 2")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="compare one step from its files")
    c.add_argument("before")
    c.add_argument("batch")
    c.add_argument("grads")
    c.add_argument("after")
    k = sub.add_parser("check", help="run the whole cross-check with the CLI")
    k.add_argument("--cli", required=True)
    k.add_argument("--dir", required=True)
    k = sub.add_parser("check-parallel", help="the same from a parallel layout's checkpoint (mpirun)")
    k.add_argument("--cli", required=True)
    k.add_argument("--dir", required=True)
    args = parser.parse_args()
    if args.command == "compare":
        verdicts = [compare(args.before, args.batch, args.grads, args.after)]
    elif args.command == "check":
        verdicts = check(args.cli, args.dir)
    else:
        verdicts = check_parallel(args.cli, args.dir)
    failed = [(v.what, line) for v in verdicts for line in v.failures]
    for what, line in failed:
        print(f"error: {what}: {line}", file=sys.stderr)
    print("torch reference: " + ("agrees" if not failed else f"{len(failed)} disagreements"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
