"""Near-duplicate sources: the same text under different URLs, found with 64-bit SimHash.

Two sources whose texts differ by a few words get fingerprints a few bits apart (Charikar's
SimHash over word bigrams): the same text with other case, spacing or punctuation gives the same
fingerprint, one word changed in a 75-word snippet about 5 bits. :class:`SimHashIndex` finds
fingerprints within :data:`MAX_DISTANCE` bits through six bands of 10–11 bits: by the
pigeonhole principle two fingerprints at most 5 bits apart agree exactly on at least one band,
so a lookup compares the few candidates sharing a band, not the whole pool.

Why not a library: ``datasketch`` (maintained, MinHash LSH) needs numpy and scipy — tens of
megabytes for one optional check in a core that imports no heavy library — and the PyPI
``simhash`` package has had no release since 2022. This module is 100 lines of stdlib.
"""

from __future__ import annotations

import hashlib
import itertools
import re

BITS = 64
BANDS = 6
#: Largest Hamming distance reported as a near duplicate (≤ BANDS - 1 keeps lookups exact).
MAX_DISTANCE = BANDS - 1
#: Fewest words a text needs before its fingerprint means anything.
MIN_WORDS = 8
#: Most features hashed per text (each lane of the vote counter holds 16 bits).
MAX_FEATURES = 65_535

_WORD = re.compile(r"\w+", re.UNICODE)
#: (shift, mask) of each band: the first BITS % BANDS bands are one bit wider
_BANDS = [
    (sum(BITS // BANDS + (i < BITS % BANDS) for i in range(band)),
     (1 << (BITS // BANDS + (band < BITS % BANDS))) - 1)
    for band in range(BANDS)
]
_LANE = 16
#: byte value → its 8 bits spread into 8 lanes of 16 bits (bit i → bit 16·i)
_SPREAD = [sum(1 << (_LANE * i) for i in range(8) if b >> i & 1) for b in range(256)]


def features(text: str) -> list[str]:
    """The word bigrams of ``text`` (lower-cased words; one word alone is its own feature)."""
    words = _WORD.findall(text.lower())
    if len(words) < 2:
        return words
    return [f"{a} {b}" for a, b in itertools.pairwise(words)]


def simhash(text: str) -> int | None:
    """The 64-bit SimHash of ``text``, or None when it has fewer than :data:`MIN_WORDS` words.

    Each distinct feature votes with its 64-bit BLAKE2b hash; bit j of the result is set when
    more than half the features have bit j set. The votes are counted in one big integer with a
    16-bit lane per bit position (bytes spread through a table), so hashing costs a few integer
    operations per feature instead of 64.
    """
    unique = list(dict.fromkeys(features(text)))[:MAX_FEATURES]
    if len(unique) + 1 < MIN_WORDS:
        return None
    total = 0
    for feature in unique:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        spread = 0
        for k, byte in enumerate(digest):
            spread |= _SPREAD[byte] << (8 * _LANE * k)
        total += spread
    votes = len(unique)
    result = 0
    for bit in range(BITS):
        if ((total >> (_LANE * bit)) & 0xFFFF) * 2 > votes:
            result |= 1 << bit
    return result


def hamming(a: int, b: int) -> int:
    """Bits in which ``a`` and ``b`` differ."""
    return (a ^ b).bit_count()


class SimHashIndex:
    """Distinct fingerprints by band, for near-duplicate lookups among many sources.

    Each distinct fingerprint is indexed once, under the first sid that had it, so a pool full
    of one boilerplate text costs one comparison, not one per copy.
    """

    def __init__(self) -> None:
        self._bands: list[dict[int, list[int]]] = [{} for _ in range(BANDS)]
        self._first: dict[int, int] = {}  # fingerprint → first sid

    def __len__(self) -> int:
        return len(self._first)

    def add(self, sid: int, fingerprint: int) -> None:
        """Index ``sid``'s fingerprint (a fingerprint already indexed keeps its first sid)."""
        if fingerprint in self._first:
            return
        self._first[fingerprint] = sid
        for (shift, mask), table in zip(_BANDS, self._bands, strict=True):
            table.setdefault((fingerprint >> shift) & mask, []).append(fingerprint)

    def near(
        self, fingerprint: int, max_distance: int = MAX_DISTANCE, limit: int = 3
    ) -> list[tuple[int, int]]:
        """``(sid, distance)`` of up to ``limit`` indexed fingerprints within ``max_distance``
        bits (each named by its first sid), nearest first, then by sid."""
        seen: set[int] = set()
        found: list[tuple[int, int]] = []
        for (shift, mask), table in zip(_BANDS, self._bands, strict=True):
            for other in table.get((fingerprint >> shift) & mask, ()):
                if other in seen:
                    continue
                seen.add(other)
                distance = hamming(fingerprint, other)
                if distance <= max_distance:
                    found.append((self._first[other], distance))
        return sorted(found, key=lambda item: (item[1], item[0]))[:limit]
