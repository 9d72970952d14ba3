#!/usr/bin/env python3
"""Regenerate assets/demo.png from a real run of the demo.

Runs `stackless-tui --demo` (the 0.4.0 demo) in tmux at 120x40, waits
until its stand-in controller has run the queue and the reaper has reaped
the lease that runs out (about 32 s), captures the pane with its colours
(`tmux capture-pane -e`), and draws the cells with DejaVu Sans Mono.

Usage: python3 scripts/screenshot.py [--wait SECONDS] [--out assets/demo.png]
Needs: tmux, a release build (built if missing), pillow (installed with pip
if missing), the DejaVu fonts (Debian: fonts-dejavu-core).
"""

import argparse
import os
import re
import subprocess
import sys
import time
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
COLS, ROWS = 120, 40

# xterm's 16 colours.
BASE16 = [
    (0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16),
    (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
    (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67),
    (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255),
]
FG, BG = (220, 220, 220), (24, 24, 28)


def xterm256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


def ensure_pillow():
    try:
        import PIL  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "pillow"], check=True)


def capture(wait):
    binary = os.path.join(ROOT, "target", "release", "stackless-tui")
    if not os.path.exists(binary):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    session = "stackless-tui-shot"
    subprocess.run(["tmux", "kill-session", "-t", session], stderr=subprocess.DEVNULL)
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS),
         f"TERM=xterm-256color {binary} --demo"],
        check=True,
    )
    try:
        time.sleep(wait)
        out = subprocess.run(
            ["tmux", "capture-pane", "-e", "-p", "-t", session],
            check=True, capture_output=True, text=True,
        ).stdout
    finally:
        subprocess.run(["tmux", "send-keys", "-t", session, "q"])
        time.sleep(1)
        subprocess.run(["tmux", "kill-session", "-t", session], stderr=subprocess.DEVNULL)
    return out


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def parse(text):
    """Cells as (char, fg, bg, bold) per row."""
    rows = []
    for line in text.split("\n")[:ROWS]:
        fg, bg, bold, reverse, dim = FG, BG, False, False, False
        cells = []
        pos = 0
        for match in list(SGR.finditer(line)) + [None]:
            end = match.start() if match else len(line)
            for ch in line[pos:end]:
                f, b = (bg, fg) if reverse else (fg, bg)
                if dim:
                    f = tuple(int(c * 0.6 + b_ * 0.4) for c, b_ in zip(f, b))
                cells.append((ch, f, b, bold))
                if unicodedata.east_asian_width(ch) in "WF":
                    cells.append(("", f, b, bold))
            if not match:
                break
            pos = match.end()
            codes = [int(c) if c else 0 for c in match.group(1).split(";")]
            i = 0
            while i < len(codes):
                c = codes[i]
                if c == 0:
                    fg, bg, bold, reverse, dim = FG, BG, False, False, False
                elif c == 1:
                    bold = True
                elif c == 2:
                    dim = True
                elif c == 7:
                    reverse = True
                elif c == 22:
                    bold = dim = False
                elif c == 27:
                    reverse = False
                elif 30 <= c <= 37:
                    fg = BASE16[c - 30]
                elif 90 <= c <= 97:
                    fg = BASE16[c - 90 + 8]
                elif 40 <= c <= 47:
                    bg = BASE16[c - 40]
                elif 100 <= c <= 107:
                    bg = BASE16[c - 100 + 8]
                elif c == 39:
                    fg = FG
                elif c == 49:
                    bg = BG
                elif c in (38, 48) and i + 1 < len(codes):
                    if codes[i + 1] == 5 and i + 2 < len(codes):
                        col = xterm256(codes[i + 2])
                        i += 2
                    elif codes[i + 1] == 2 and i + 4 < len(codes):
                        col = tuple(codes[i + 2:i + 5])
                        i += 4
                    else:
                        col = FG if c == 38 else BG
                    if c == 38:
                        fg = col
                    else:
                        bg = col
                i += 1
        rows.append(cells)
    return rows


def draw(rows, out):
    from PIL import Image, ImageDraw, ImageFont

    size = 15
    font = ImageFont.truetype(FONT, size)
    bold_font = ImageFont.truetype(FONT_BOLD, size) if os.path.exists(FONT_BOLD) else font
    cw = round(font.getlength("M"))
    ch = size + 4
    image = Image.new("RGB", (COLS * cw + 16, ROWS * ch + 16), BG)
    pen = ImageDraw.Draw(image)
    for y, cells in enumerate(rows):
        for x, (char, fg, bg, bold) in enumerate(cells[:COLS]):
            left, top = 8 + x * cw, 8 + y * ch
            if bg != BG:
                pen.rectangle([left, top, left + cw, top + ch], fill=bg)
            if char.strip():
                pen.text((left, top + 1), char, fill=fg, font=bold_font if bold else font)
    image.save(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=32.0)
    parser.add_argument("--out", default=os.path.join(ROOT, "assets", "demo.png"))
    args = parser.parse_args()
    ensure_pillow()
    text = capture(args.wait)
    with open(os.path.join(os.path.dirname(args.out), "demo.ansi"), "w") as f:
        f.write(text)
    draw(parse(text), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
