"""Tiny PNG encoder for the demo shop's generated product thumbnails."""

from __future__ import annotations

import hashlib
import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    # PNG spec §5.3: length, type, data, CRC over type and data.
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_rgb(width: int, height: int, pixels: bytes) -> bytes:
    """Encode `pixels`, rows of 8-bit RGB triples top to bottom, as a PNG file."""
    if len(pixels) != width * height * 3:
        raise ValueError(f"expected {width * height * 3} bytes of RGB for {width}x{height}, got {len(pixels)}")
    stride = width * 3
    # Filter type 0 (None) before every scanline, PNG spec §9.
    raw = b"".join(b"\x00" + pixels[y * stride : (y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit truecolour, no interlace
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")


def thumbnail(seed: str, size: int = 32) -> bytes:
    """A deterministic two-colour checkered square PNG, different for each `seed`."""
    digest = hashlib.sha256(seed.encode()).digest()
    fg, bg = digest[0:3], bytes(255 - b // 3 for b in digest[3:6])
    cell = max(size // 4, 1)
    pixels = b"".join(fg if ((x // cell) + (y // cell)) % 2 == 0 else bg for y in range(size) for x in range(size))
    return encode_rgb(size, size, pixels)
