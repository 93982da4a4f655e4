"""``render_mode="rgb_array"``: a picture of one lane as a NumPy uint8 image
(H, W, 3), drawn with a 5 x 7 bitmap font and no plotting library, so that
Gymnasium's ``RecordVideo`` films an episode (the paper's movies).

The frame shows, top to bottom: the board window around the head (one row
on a tape, five on a grid), the head's cell in yellow; the targets (``Y``),
the one due now lightly shaded; what has been written (``P``), correct
outputs in green and a wrong one in red.  Digits are black, the markers
(``q e p l u d``) blue.  The size is fixed for an environment (every frame of
a film has the same shape) and a multiple of 16 (video encoders' blocks).
"""
from __future__ import annotations

import numpy as np

_FONT_ROWS = {
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.", "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####", "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.", "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.", "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.", "9": ".###. #...# #...# .#### ....# ...#. .##..",
    "A": ".###. #...# #...# ##### #...# #...# #...#", "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.", "D": "###.. #..#. #...# #...# #...# #..#. ###..",
    "E": "##### #.... #.... ####. #.... #.... #####", "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####", "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.", "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#", "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#", "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.", "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#", "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.", "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.", "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.", "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..", "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "q": "..... .#### #...# #...# .#### ....# ....#", "e": "..... ..... .###. #...# ##### #.... .###.",
    "p": "..... ..... ####. #...# ####. #.... #....", "l": ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "u": "..... ..... #...# #...# #...# #..## .##.#", "d": "....# ....# .##.# #..## #...# #...# .####",
    "_": "..... ..... ..... ..... ..... ..... #####", " ": "..... ..... ..... ..... ..... ..... .....",
}
GLYPHS = "".join(_FONT_ROWS)                       # the characters the font draws, in FONT's order
SCALE, CELL_W, CELL_H, PAD = 2, 14, 18, 2          # glyph pixels, a cell's size, the glyph's offset in it
FONT = np.array([[[c == "#" for c in row] for row in rows.split()] for rows in _FONT_ROWS.values()])
_BIG = FONT.repeat(SCALE, axis=1).repeat(SCALE, axis=2)        # (G, 14, 10)

PAGE, CELL, LINE = (246, 246, 240), (255, 255, 255), (214, 214, 208)
HEAD, DUE, RIGHT, WRONG = (255, 214, 10), (255, 244, 196), (166, 226, 166), (240, 146, 146)
INK, MARK, FAINT = (20, 20, 20), (36, 72, 204), (130, 130, 130)
HALF_WIDTH, HALF_HEIGHT = 8, 2                    # the board window: 17 columns, 5 rows on a grid


def glyph(ch: str) -> int:
    """The font's index of character ``ch`` (ValueError if it has none)."""
    i = GLYPHS.find(ch)
    if i < 0:
        raise ValueError(f"the font has no glyph for {ch!r}")
    return i


def symbol_glyphs(chars) -> tuple:
    """(glyph index, ink colour) per symbol, for a sequence of its printable
    characters: digits and letters in black, the markers blue, none grey."""
    index = np.array([glyph(c) for c in chars], dtype=np.int64)
    ink = np.array([INK if c.isdigit() or c.isupper() else FAINT if c in "_ " else MARK for c in chars],
                   dtype=np.uint8)
    return index, ink


def _draw(glyphs: np.ndarray, ink: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """Cells (R, C) of glyph indices, ink and paper colours (R, C, 3) -> image (R*CELL_H, C*CELL_W, 3)."""
    R, C = glyphs.shape
    tiles = np.empty((R, C, CELL_H, CELL_W, 3), dtype=np.uint8)
    tiles[:] = paper[:, :, None, None, :]
    bits = _BIG[glyphs]                                               # (R, C, 14, 10)
    inner = tiles[:, :, PAD:PAD + bits.shape[2], PAD:PAD + bits.shape[3]]
    inner[:] = np.where(bits[..., None], ink[:, :, None, None, :], inner)
    tiles[:, :, 0, :] = LINE
    tiles[:, :, :, 0] = LINE
    return tiles.transpose(0, 2, 1, 3, 4).reshape(R * CELL_H, C * CELL_W, 3)


def frame_shape(grid: bool) -> tuple:
    """The (H, W, 3) of every frame of a tape (``grid`` False) or grid task."""
    rows = (2 * HALF_HEIGHT + 1 if grid else 1) + 2
    h, w = rows * CELL_H + CELL_H // 2 + 2 * PAD, (2 * HALF_WIDTH + 2) * CELL_W + 2 * PAD
    return -(-h // 16) * 16, -(-w // 16) * 16, 3


def rgb_frame(env, lane: int, glyphs: np.ndarray, inks: np.ndarray, none: int) -> np.ndarray:
    """The picture (H, W, 3) uint8 of ``lane`` of tinyalgo's ``Environment``
    ``env``; ``glyphs``, ``inks`` (V,), (V, 3): how each symbol of the
    vocabulary is drawn (``symbol_glyphs``); ``none`` the vocabulary's none."""
    grid = env.task.interface != "tape"
    C = 2 * HALF_WIDTH + 1
    hx, hy = int(env.input.x[lane]), int(env.input.y[lane])
    xs = np.arange(hx - HALF_WIDTH, hx + HALF_WIDTH + 1)
    ys = np.arange(hy - HALF_HEIGHT, hy + HALF_HEIGHT + 1) if grid else np.array([1])
    cells = env.input.board.window(lane, xs, ys)
    if env.time[lane] >= env.clock[lane]:              # walk: every cell reads q from the clock on
        cells[:] = env.vocab.Q
    label = glyph(" ")
    board_g = np.concatenate([np.full((len(ys), 1), label), glyphs[cells]], axis=1)
    board_ink = np.concatenate([np.zeros((len(ys), 1, 3), np.uint8), inks[cells]], axis=1)
    board_paper = np.empty(board_g.shape + (3,), dtype=np.uint8)
    board_paper[:] = CELL
    board_paper[:, 0] = PAGE
    board_paper[len(ys) // 2 if grid else 0, 1 + HALF_WIDTH] = HEAD
    # the targets and the outputs, a window from a few before the one due
    n, k = int(env.n_outputs[lane]), int(env.target_index[lane])
    targets = env.output.targets[lane, :n].astype(np.int64)
    start = max(0, min(k - HALF_WIDTH, n - C))
    pos = start + np.arange(C)
    inside = pos < n
    y_syms = np.where(inside, targets[np.minimum(pos, max(n - 1, 0))] if n else none, none)
    wrong = bool(env.prev_write[lane] == 1 and k >= 1 and k <= n and env.prev_written[lane] != targets[k - 1])
    written = inside & (pos < k)
    p_syms = np.where(written, y_syms, none)
    if wrong:
        p_syms = np.where(pos == k - 1, int(env.prev_written[lane]), p_syms)
    out_g = np.stack([np.concatenate([[glyph("Y")], np.where(inside, glyphs[y_syms], label)]),
                      np.concatenate([[glyph("P")], np.where(written, glyphs[p_syms], label)])])
    out_ink = np.stack([np.concatenate([[FAINT], inks[y_syms]]), np.concatenate([[FAINT], inks[p_syms]])])
    out_paper = np.empty((2, C + 1, 3), dtype=np.uint8)
    out_paper[:] = CELL
    out_paper[:, 0] = PAGE
    out_paper[0, 1:][inside & (pos == k)] = DUE
    out_paper[1, 1:][written] = RIGHT
    if wrong:
        out_paper[1, 1:][pos == k - 1] = WRONG
    h, w, _ = frame_shape(grid)
    image = np.empty((h, w, 3), dtype=np.uint8)
    image[:] = PAGE
    top = _draw(board_g, board_ink, board_paper)
    bottom = _draw(out_g, out_ink.astype(np.uint8), out_paper)
    image[PAD:PAD + top.shape[0], PAD:PAD + top.shape[1]] = top
    y0 = PAD + top.shape[0] + CELL_H // 2
    image[y0:y0 + bottom.shape[0], PAD:PAD + bottom.shape[1]] = bottom
    return image
