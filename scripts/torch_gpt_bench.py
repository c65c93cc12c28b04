#!/usr/bin/env python3
"""PyTorch reference for `bubblescope-cli bench train --torch`.

Trains a GPT of the engine's shape (learned position embeddings, pre-norm
blocks with biases, GELU MLP of mlp_ratio * hidden, causal attention, final
layer norm, an output matrix of its own: not tied) eagerly (no
torch.compile) with AdamW on random tokens, and prints `tokens_per_s: X`
over the timed steps. Causal attention is scaled_dot_product_attention where
PyTorch has it (2.0+), else computed explicitly (Debian's torch 1.13). One
CPU thread unless --threads says otherwise (the engine trains on one). One warm-up step is untimed. Precision: fp32, or bf16
autocast on the matmuls with fp32 weights (the engine's bf16 mode).

  scripts/torch_gpt_bench.py --vocab 50257 --seq-len 1024 --layers 12 \
      --hidden 768 --heads 12 --mlp-ratio 4 --batch-size 8 --steps 5 \
      --device cuda --precision fp32
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(hs) + causal mask) v: PyTorch's fused kernel where
    it has one (2.0 and later), else the explicit computation (1.13, Debian's
    python3-torch), which is what 1.13's own GPT examples do."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    mask = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    return F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v


class Block(nn.Module):
    def __init__(self, hidden, heads, mlp_ratio):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, mlp_ratio * hidden)
        self.fc_proj = nn.Linear(mlp_ratio * hidden, hidden)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        y = causal_attention(q, k, v)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.wte = nn.Embedding(a.vocab, a.hidden)
        self.wpe = nn.Embedding(a.seq_len, a.hidden)
        self.blocks = nn.ModuleList(
            Block(a.hidden, a.heads, a.mlp_ratio) for _ in range(a.layers))
        self.ln_f = nn.LayerNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("vocab", "seq-len", "layers", "hidden", "heads", "batch-size", "steps"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--mlp-ratio", type=int, default=4)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    p.add_argument("--threads", type=int, default=1,
                   help="CPU threads (intra- and inter-op; default 1, as the engine)")
    a = p.parse_args()
    if a.steps <= 0 or a.hidden % a.heads != 0:
        p.error("--steps must be positive and --hidden divisible by --heads")

    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(a.threads)
    torch.manual_seed(1337)
    if a.device == "cuda":
        # The engine's fp32 path uses no TF32; neither does this reference.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    model = Gpt(a).to(a.device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    gen = torch.Generator(device=a.device).manual_seed(1)
    shape = (a.batch_size, a.seq_len)

    def step():
        idx = torch.randint(0, a.vocab, shape, device=a.device, generator=gen)
        targets = torch.randint(0, a.vocab, shape, device=a.device, generator=gen)
        with torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = model(idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def sync():
        if a.device == "cuda":
            torch.cuda.synchronize()

    step()  # warm-up, untimed
    sync()
    start = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    sync()
    seconds = time.perf_counter() - start
    print(f"torch: {torch.__version__}")
    print(f"threads: {torch.get_num_threads()}")
    print(f"attention: {'sdpa' if hasattr(F, 'scaled_dot_product_attention') else 'explicit'}")
    print(f"loss: {loss.item():.4f}")
    print(f"step_ms: {seconds * 1e3 / a.steps:.2f}")
    print(f"tokens_per_s: {a.batch_size * a.seq_len * a.steps / seconds:.1f}")


if __name__ == "__main__":
    main()
