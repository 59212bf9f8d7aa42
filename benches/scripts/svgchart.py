"""A line chart as an SVG file, with nothing beyond the standard library:
what plot-scaling.py and plot-sustained.py draw.

    line_chart(path, xs, lines, xlabel, y_tick)

`xs`: the x-axis labels, evenly spaced. `lines`: (label, colour, dash,
points) with points as (x index, value) pairs; dash is an SVG
`stroke-dasharray` value or "". `y_tick(value)` formats a y-axis label.
"""

W, H, PAD = 680, 420, 60


def line_chart(path, xs, lines, xlabel, y_tick):
    top = max(v for (_, _, _, pts) in lines for (_, v) in pts) * 1.1
    x = lambda i: PAD + i * (W - 2 * PAD) / max(1, len(xs) - 1)
    y = lambda v: H - PAD - v / top * (H - 2 * PAD)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="black"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>',
        f'<text x="{W / 2}" y="{H - 15}" text-anchor="middle">{xlabel}</text>',
        f'<text x="15" y="{H / 2}" transform="rotate(-90 15 {H / 2})" text-anchor="middle">ops/s</text>',
    ]
    for i, label in enumerate(xs):
        parts.append(f'<text x="{x(i)}" y="{H - PAD + 18}" text-anchor="middle">{label}</text>')
    for t in range(5):
        v = top * t / 4
        parts.append(f'<text x="{PAD - 6}" y="{y(v) + 4}" text-anchor="end">{y_tick(v)}</text>')
    for n, (label, colour, dash, pts) in enumerate(lines):
        style = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{style}/>')
        ly = PAD + 16 * n
        parts.append(f'<line x1="{W - PAD - 170}" y1="{ly}" x2="{W - PAD - 145}" y2="{ly}" stroke="{colour}" stroke-width="2"{style}/>')
        parts.append(f'<text x="{W - PAD - 140}" y="{ly + 4}">{label}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
