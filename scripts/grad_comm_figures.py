#!/usr/bin/env python3
"""The two pictures of docs/parallel.md's gradient-communication section.

grad_comm_figures.py MEASURED.json OUT_DIR

MEASURED.json (written by scripts/bench-grad-comm.sh):
  {"compression": [{"spec", "losses": [per step], "bytes_sent", "bytes_predicted",
                    "bytes_uncompressed"}],
   "link": [{"gbps", "algorithm", "engine_ms", "predicted_ms"}],
   "conditions": "text under the titles"}
Writes OUT_DIR/grad-compression.svg (loss per step of each compression beside the
bytes each sends per step, measured and predicted) and OUT_DIR/allreduce-link.svg
(flat against hierarchical all-reduce time over the emulated inter-node Gb/s,
measured and the cost model's prediction). Plain SVG, no dependencies.
"""
import json
import math
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Svg:
    def __init__(self, width, height):
        self.width, self.height, self.parts = width, height, []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", weight="normal", color="#222"):
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'font-weight="{weight}" fill="{color}">{esc(s)}</text>')

    def line(self, x1, y1, x2, y2, color="#999", width=1, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                 f'stroke="{color}" stroke-width="{width}"{d}/>')

    def polyline(self, points, color, width=2, dash=None, marker=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.add(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="{width}"{d}/>')
        if marker:
            for x, y in points:
                self.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>')

    def rect(self, x, y, w, h, color, stroke="none"):
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{color}" '
                 f'stroke="{stroke}"/>')

    def write(self, path):
        with open(path, "w") as f:
            f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                    f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
                    f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n')
            f.write("\n".join(self.parts))
            f.write("\n</svg>\n")


class Axes:
    """A plot area mapping data to pixels; log x optional."""

    def __init__(self, svg, x, y, w, h, xr, yr, logx=False):
        self.svg, self.x, self.y, self.w, self.h = svg, x, y, w, h
        self.xr, self.yr, self.logx = xr, yr, logx

    def px(self, v):
        lo, hi = self.xr
        if self.logx:
            v, lo, hi = math.log10(v), math.log10(lo), math.log10(hi)
        return self.x + (v - lo) / (hi - lo) * self.w

    def py(self, v):
        lo, hi = self.yr
        return self.y + self.h - (v - lo) / (hi - lo) * self.h

    def frame(self, xticks, yticks, xlabel, ylabel, fmt_x=str, fmt_y=str):
        s = self.svg
        for t in yticks:
            s.line(self.x, self.py(t), self.x + self.w, self.py(t), "#e5e5e5")
            s.text(self.x - 6, self.py(t) + 4, fmt_y(t), 11, "end")
        for t in xticks:
            s.line(self.px(t), self.y + self.h, self.px(t), self.y + self.h + 4, "#666")
            s.text(self.px(t), self.y + self.h + 17, fmt_x(t), 11, "middle")
        s.line(self.x, self.y + self.h, self.x + self.w, self.y + self.h, "#444")
        s.line(self.x, self.y, self.x, self.y + self.h, "#444")
        s.text(self.x + self.w / 2, self.y + self.h + 34, xlabel, 12, "middle")
        s.add(f'<text transform="translate({self.x - 44:.1f},{self.y + self.h / 2:.1f}) rotate(-90)" '
              f'font-size="12" text-anchor="middle" fill="#222">{esc(ylabel)}</text>')


def nice_max(v):
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def compression_figure(data, cond, path):
    runs = data
    svg = Svg(960, 420)
    svg.text(20, 24, "Gradient compression: loss per step and bytes sent per step (dp 4, tiny, 20 steps)",
             15, weight="bold")
    svg.text(20, 42, cond, 11, color="#555")
    losses = [l for r in runs for l in r["losses"]]
    lo, hi = math.floor(min(losses) * 2) / 2, math.ceil(max(losses) * 2) / 2
    steps = max(len(r["losses"]) for r in runs)
    ax = Axes(svg, 70, 70, 380, 280, (0, steps - 1), (lo, hi))
    yt = [lo + i * 0.5 for i in range(int((hi - lo) / 0.5) + 1)]
    ax.frame(range(0, steps, 5), yt, "step", "loss (rank 0)", fmt_y=lambda v: f"{v:.1f}")
    for i, r in enumerate(runs):
        pts = [(ax.px(k), ax.py(v)) for k, v in enumerate(r["losses"])]
        svg.polyline(pts, COLORS[i % len(COLORS)], 1.8, dash="5,3" if i == 0 else None)
        svg.rect(330, 80 + 16 * i, 12, 3, COLORS[i % len(COLORS)])
        svg.text(348, 86 + 16 * i, f'{r["spec"]}: {r["losses"][-1]:.3f}', 11)
    # bytes per step: measured bars, predicted ticks
    top = nice_max(max(r["bytes_uncompressed"] for r in runs) / 1e3)
    bx = Axes(svg, 580, 70, 350, 280, (0, len(runs)), (0, top))
    bx.frame([], [top * i / 4 for i in range(5)], "", "kB sent per step (ring bus bytes, rank 0)",
             fmt_y=lambda v: f"{v:.0f}")
    bw = 350 / len(runs)
    for i, r in enumerate(runs):
        x0 = bx.px(i) + bw * 0.15
        kb = r["bytes_sent"] / 1e3
        svg.rect(x0, bx.py(kb), bw * 0.7, bx.py(0) - bx.py(kb), COLORS[i % len(COLORS)])
        pk = r["bytes_predicted"] / 1e3
        svg.line(x0 - 3, bx.py(pk), x0 + bw * 0.7 + 3, bx.py(pk), "#000", 2, dash="3,2")
        svg.text(x0 + bw * 0.35, bx.py(0) + 15, r["spec"], 10, "middle")
        ratio = r["bytes_uncompressed"] / r["bytes_sent"]
        svg.text(x0 + bw * 0.35, bx.py(kb) - 5, f"{ratio:.2f}x", 10, "middle")
    svg.line(600, 395, 624, 395, "#000", 2, dash="3,2")
    svg.text(630, 399, "cost model's bytes (grad_reduction_cost.h); bars: measured, ratio above", 11)
    svg.write(path)


def link_figure(points, cond, path):
    svg = Svg(720, 420)
    svg.text(20, 24, "Flat against hierarchical all-reduce behind an emulated inter-node link", 15,
             weight="bold")
    svg.text(20, 42, cond, 11, color="#555")
    gbps = sorted({p["gbps"] for p in points})
    top = nice_max(max(max(p["engine_ms"], p["predicted_ms"]) for p in points))
    ax = Axes(svg, 80, 70, 420, 280, (gbps[0], gbps[-1]), (0, top), logx=True)
    ax.frame(gbps, [top * i / 5 for i in range(6)], "inter-node link, Gb/s (log scale)",
             "ms per reduction of small's gradients", fmt_x=lambda v: f"{v:g}",
             fmt_y=lambda v: f"{v:.0f}")
    for i, algo in enumerate(["flat", "hierarchical"]):
        ps = sorted((p for p in points if p["algorithm"] == algo), key=lambda p: p["gbps"])
        c = COLORS[i]
        svg.polyline([(ax.px(p["gbps"]), ax.py(p["engine_ms"])) for p in ps], c, 2, marker=True)
        svg.polyline([(ax.px(p["gbps"]), ax.py(p["predicted_ms"])) for p in ps], c, 1.5, dash="6,4")
        svg.rect(520, 90 + 40 * i, 24, 3, c)
        svg.text(550, 95 + 40 * i, f"{algo}, measured", 12)
        svg.line(520, 110 + 40 * i, 544, 110 + 40 * i, c, 1.5, dash="6,4")
        svg.text(550, 114 + 40 * i, f"{algo}, cost model", 12)
    svg.text(520, 190, "4 ranks, 2 emulated nodes of 2,", 11, color="#555")
    svg.text(520, 205, "buckets of 4 MiB, median of 5", 11, color="#555")
    svg.text(520, 220, "iterations, least of the runs", 11, color="#555")
    svg.write(path)


def main():
    data = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    compression_figure(data["compression"], data["conditions"], f"{out}/grad-compression.svg")
    link_figure(data["link"], data["conditions"], f"{out}/allreduce-link.svg")


if __name__ == "__main__":
    main()
