#!/usr/bin/env python3
"""Renders a terminal screen captured with `tmux capture-pane -e -p` (text with ANSI SGR
colour codes) to a PNG, for the screenshots in docs/. Needs Pillow (pip install pillow)
and the DejaVu Sans Mono font (Debian: fonts-dejavu-core).

    ansi_to_png.py SCREEN.ansi OUT.png [--cursor ROW,COL]
"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf'
FONT_BOLD = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf'
SIZE = 16
DEFAULT_FG, DEFAULT_BG = (0xe0, 0xe2, 0xea), (0x14, 0x16, 0x1b)
BASE16 = [(0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16), (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
          (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67), (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255)]


def xterm256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
    v = 8 + (n - 232) * 10
    return v, v, v


def parse(line):
    """Yields (char, fg, bg, bold) for one captured line."""
    fg, bg, bold, reverse = None, None, False, False
    pos = 0
    for m in re.finditer(r'\x1b\[([0-9;:]*)m|([^\x1b])', line):
        if m.group(2) is not None:
            f, b = (bg, fg) if reverse else (fg, bg)
            yield m.group(2), f or (DEFAULT_BG if reverse and fg is None else DEFAULT_FG), b or (DEFAULT_FG if reverse and bg is None else DEFAULT_BG), bold
            continue
        codes = [int(c) if c else 0 for c in re.split('[;:]', m.group(1))] or [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                fg, bg, bold, reverse = None, None, False, False
            elif c == 1:
                bold = True
            elif c == 22:
                bold = False
            elif c == 7:
                reverse = True
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
                fg = None
            elif c == 49:
                bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    col = xterm256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    col = tuple(codes[i + 2:i + 5])
                    i += 4
                else:
                    col = None
                if c == 38:
                    fg = col
                else:
                    bg = col
            i += 1


def main():
    src, out = sys.argv[1], sys.argv[2]
    cursor = None
    if len(sys.argv) > 4 and sys.argv[3] == '--cursor':
        cursor = tuple(int(x) for x in sys.argv[4].split(','))
    lines = open(src, encoding='utf-8').read().rstrip('\n').split('\n')
    font, font_bold = ImageFont.truetype(FONT, SIZE), ImageFont.truetype(FONT_BOLD, SIZE)
    cw = round(font.getlength('M'))
    ch = SIZE + 6
    cols = max(sum(1 for _ in parse(l)) for l in lines)
    if cursor:
        cols = max(cols, cursor[1] + 1)
    img = Image.new('RGB', (cols * cw + 20, len(lines) * ch + 20), DEFAULT_BG)
    d = ImageDraw.Draw(img)
    for row, line in enumerate(lines):
        cells = list(parse(line))
        cells += [(' ', DEFAULT_FG, DEFAULT_BG, False)] * (cols - len(cells))   # the pane's trimmed blanks
        for col, (c, fg, bg, bold) in enumerate(cells):
            x, y = 10 + col * cw, 10 + row * ch
            if cursor == (row, col):
                fg, bg = bg, fg
            if bg != DEFAULT_BG:
                d.rectangle([x, y, x + cw - 1, y + ch - 1], fill=bg)
            if c != ' ':
                d.text((x, y + 2), c, font=font_bold if bold else font, fill=fg)
    img.save(out)


if __name__ == '__main__':
    main()
