#!/usr/bin/env python3
"""Plots live bytes over a training step from memopt-run --trace files as an
SVG (standard library only).

Usage: plot_memory.py OUT.svg LABEL=trace.json [LABEL=trace.json ...]
Each trace gives one line: arena plus persistent bytes live while each kernel
runs, against the kernel's index in the step.
"""
import json
import sys

COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]
W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 360, 70, 20, 30, 50


def series(path):
    with open(path) as f:
        trace = json.load(f)
    points = [e["args"]["arena"] + e["args"]["persistent"]
              for e in trace["traceEvents"]
              if e.get("ph") == "C" and e.get("name") == "live bytes"]
    return trace["otherData"]["function"], points


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    if not specs:
        sys.exit(__doc__)
    lines = []
    for spec in specs:
        label, path = spec.split("=", 1)
        function, points = series(path)
        lines.append((label, points))
    top = max(max(p) for _, p in lines) * 1.05
    steps = max(len(p) for _, p in lines) - 1
    sx = lambda i: LEFT + (W - LEFT - RIGHT) * i / max(steps, 1)
    sy = lambda v: TOP + (H - TOP - BOTTOM) * (1 - v / top)
    mib = 1024 * 1024
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{LEFT}" y="18" font-size="14">Bytes held over one '
           f'training step: {function}</text>']
    for k in range(5):
        v = top * k / 4
        y = sy(v)
        svg.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" '
                   f'y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f'{v / mib:.0f} MiB</text>')
    svg.append(f'<text x="{(LEFT + W) / 2}" y="{H - 12}" text-anchor="middle">'
               f'kernel index in the step</text>')
    for n, (label, points) in enumerate(lines):
        color = COLORS[n % len(COLORS)]
        # Step function: each kernel's live bytes hold until the next kernel.
        d = f"M{sx(0):.1f},{sy(points[0]):.1f}" + "".join(
            f" H{sx(i):.1f} V{sy(v):.1f}" for i, v in enumerate(points[1:], 1))
        svg.append(f'<path d="{d}" fill="none" stroke="{color}" '
                   f'stroke-width="2"/>')
        peak = max(points)
        svg.append(f'<text x="{LEFT + 10}" y="{TOP + 16 * (n + 1)}" '
                   f'fill="{color}">{label}: peak {peak / mib:.1f} MiB</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
