"""Just enough PNG to draw a bar chart and a tool icon without an imaging library."""

import base64
import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
WHITE = (255, 255, 255, 255)
INK = (60, 64, 72, 255)
GRID = (226, 229, 234, 255)
CLEAR = (0, 0, 0, 0)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


class Canvas:
    """An RGBA pixel grid, origin at the top left."""

    def __init__(self, width: int, height: int, background: tuple = WHITE):
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def fill(self, x0: int, y0: int, x1: int, y1: int, rgba: tuple) -> None:
        """Paint the rectangle [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, x0), min(self.width, x1)
        if x0 >= x1:
            return
        run = bytes(rgba) * (x1 - x0)
        for y in range(max(0, y0), min(self.height, y1)):
            start = (y * self.width + x0) * 4
            self.pixels[start : start + len(run)] = run

    def png(self) -> bytes:
        stride = self.width * 4
        # Filter type 0 (None) on every row: the images are small and flat, so zlib alone does well.
        raw = b"".join(b"\x00" + self.pixels[y * stride : (y + 1) * stride] for y in range(self.height))
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 6, 0, 0, 0)
        return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")


def bar_chart(values: list[float], color: tuple, width: int = 384, height: int = 216) -> bytes:
    """Bars for `values` left to right on four gridlines, scaled so the tallest bar nearly fills the plot."""
    canvas = Canvas(width, height)
    left, right, top, bottom = 16, width - 16, 16, height - 24
    peak = max(values, default=0) or 1
    for step in range(5):
        y = bottom - (bottom - top) * step // 4
        canvas.fill(left, y, right, y + 1, GRID)
    slot = (right - left) // max(len(values), 1)
    for index, value in enumerate(values):
        x = left + index * slot
        bar_top = bottom - round((bottom - top) * value / peak)
        canvas.fill(x + slot // 6, bar_top, x + slot - slot // 6, bottom, color)
        canvas.fill(x + slot // 2, bottom + 4, x + slot // 2 + 1, bottom + 8, INK)
    canvas.fill(left, bottom, right, bottom + 2, INK)
    return canvas.png()


def disc_icon(color: tuple, size: int = 24) -> str:
    """A filled disc on a transparent square, as a data: URI an icon entry can carry."""
    canvas = Canvas(size, size, CLEAR)
    radius = size / 2 - 1
    for y in range(size):
        for x in range(size):
            if (x + 0.5 - size / 2) ** 2 + (y + 0.5 - size / 2) ** 2 <= radius**2:
                canvas.fill(x, y, x + 1, y + 1, color)
    return "data:image/png;base64," + base64.b64encode(canvas.png()).decode("ascii")
