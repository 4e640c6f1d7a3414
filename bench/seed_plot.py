#!/usr/bin/python3
"""seed_plot.py: the chart of bench/seed.sh's results, as SVG (standard library only).

Usage: /usr/bin/python3 bench/seed_plot.py TSV SVG

TSV is the file bench/seed.sh writes (docs/img/seed-latency.tsv with --write-docs): a header line,
then one line per row of Archil's published latency script with the columns row, archil_p50,
archil_p95, ours_p50, ours_p95, floor_p50 (ms; an empty field is a figure that is missing). SVG is
a horizontal grouped bar chart: one group per row, bars for Archil's p50, ours and the floor on a
logarithmic axis in ms, each p95 as a thin whisker from the end of its bar.
"""

import csv
import math
import sys
from xml.sax.saxutils import escape

SERIES = [  # column of p50, column of p95, legend, colour
    ("archil_p50", "archil_p95", "Archil (published)", "#8c96a8"),
    ("ours_p50", "ours_p95", "archil-oss (this machine)", "#2b6cb0"),
    ("floor_p50", None, "floor (this machine)", "#c3d9a5"),
]

FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"
LEFT, RIGHT, TOP, BOTTOM = 170, 70, 64, 44
WIDTH = 860
BAR, GAP = 11, 16  # bar height; space between groups


def number(text):
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 else None


def label(text):
    """A figure as the TSV has it when short (Archil's "0.50"), else to 3 significant digits."""
    text = text.strip()
    if len(text) <= 4:
        return text
    value = float(text)
    digits = max(0, 2 - math.floor(math.log10(value)))
    return f"{value:.{digits}f}"


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        sys.stderr.write(f"seed_plot.py: no rows in {argv[1]}\n")
        return 1

    values = [v for r in rows for c in ("archil_p50", "archil_p95", "ours_p50", "ours_p95",
                                        "floor_p50") if (v := number(r.get(c))) is not None]
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values)))
    if hi / lo < 100:
        hi = lo * 100
    plot_w = WIDTH - LEFT - RIGHT

    def x(v):
        return LEFT + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    group_h = len(SERIES) * BAR + GAP
    plot_h = len(rows) * group_h
    height = TOP + plot_h + BOTTOM
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
           f"viewBox='0 0 {WIDTH} {height}' {FONT} font-size='12'>",
           f"<rect width='{WIDTH}' height='{height}' fill='white'/>",
           f"<text x='{LEFT}' y='20' font-size='14' font-weight='bold'>"
           "Rows of Archil's published latency script: p50, whisker to p95 (ms, log scale)</text>"]

    # Legend.
    lx = LEFT
    for _, _, name, colour in SERIES:
        out.append(f"<rect x='{lx}' y='32' width='14' height='11' fill='{colour}'/>")
        out.append(f"<text x='{lx + 19}' y='42'>{escape(name)}</text>")
        lx += 19 + 7 * len(name) + 24

    # Grid: a line at every 1..9 x decade, labelled at each decade.
    decade = lo
    while decade <= hi * 1.0001:
        for m in range(1, 10):
            v = decade * m
            if v > hi * 1.0001:
                break
            xv = x(v)
            major = m == 1
            out.append(f"<line x1='{xv:.1f}' y1='{TOP}' x2='{xv:.1f}' y2='{TOP + plot_h}' "
                       f"stroke='{'#bbbbbb' if major else '#eeeeee'}' stroke-width='1'/>")
            if major:
                out.append(f"<text x='{xv:.1f}' y='{TOP + plot_h + 16}' text-anchor='middle'>"
                           f"{v:g}</text>")
        decade *= 10
    out.append(f"<text x='{LEFT + plot_w / 2}' y='{TOP + plot_h + 34}' text-anchor='middle'>"
               "ms (log scale)</text>")

    for i, r in enumerate(rows):
        gy = TOP + i * group_h + GAP / 2
        out.append(f"<text x='{LEFT - 8}' y='{gy + len(SERIES) * BAR / 2 + 4:.1f}' "
                   f"text-anchor='end'>{escape(r['row'])}</text>")
        for j, (c50, c95, _, colour) in enumerate(SERIES):
            y = gy + j * BAR
            p50 = number(r.get(c50))
            p95 = number(r.get(c95)) if c95 else None
            if p50 is None:
                out.append(f"<text x='{LEFT + 4}' y='{y + BAR - 2}' font-size='10' "
                           f"fill='#555555'>not run</text>")
                continue
            out.append(f"<rect x='{LEFT}' y='{y + 1}' width='{max(x(p50) - LEFT, 1):.1f}' "
                       f"height='{BAR - 2}' fill='{colour}'/>")
            end = x(p50)
            if p95 is not None and p95 > p50:
                cy = y + BAR / 2
                end = x(p95)
                out.append(f"<line x1='{x(p50):.1f}' y1='{cy}' x2='{end:.1f}' y2='{cy}' "
                           "stroke='#333333' stroke-width='1'/>")
                out.append(f"<line x1='{end:.1f}' y1='{cy - 3}' x2='{end:.1f}' y2='{cy + 3}' "
                           "stroke='#333333' stroke-width='1'/>")
            text = label(r[c50]) + (f" / {label(r[c95])}" if p95 is not None else "")
            out.append(f"<text x='{end + 4:.1f}' y='{y + BAR - 2}' font-size='10' "
                       f"fill='#333333'>{text}</text>")
    out.append(f"<line x1='{LEFT}' y1='{TOP}' x2='{LEFT}' y2='{TOP + plot_h}' stroke='#555555'/>")
    out.append("</svg>")
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
