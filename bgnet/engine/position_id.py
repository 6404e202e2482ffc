"""GNU Backgammon's Position ID and position key, for boards in bgnet's layout.

Both encode the same 80-bit string. For each side in board order (``board[0]``, the opponent,
first, then ``board[1]``, the side on roll), and for each of its 25 slots (points 1..24, then the
bar), the slot's checker count is written as that many 1 bits followed by one 0 bit. With 15
checkers a side that is at most 2 * (15 + 25) = 80 bits; unused bits at the end are 0. The bits are
packed into 10 bytes least significant bit first.

* The Position ID is those 10 bytes in base64 without the ``==`` padding: 14 characters.
* The position key is the 10 bytes as 20 letters, high half-byte first, each half-byte ``n``
  written as the letter ``chr(ord('A') + n)`` (so only ``A``..``P`` occur).

These are the strings ``gnubg_nn.position_id`` and ``gnubg_nn.key_of_board`` produce for the same
``[opponent, player on roll]`` list.

>>> from bgnet.engine.board import start_position
>>> position_id(start_position())
'4HPwATDgc/ABMA'
>>> position_key(start_position())
'OAHDPAABDAOAHDPAABDA'
>>> bool((board_from_position_id('4HPwATDgc/ABMA') == start_position()).all())
True
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.engine.board import as_board

__all__ = ["ID_LENGTH", "KEY_LENGTH", "position_id", "board_from_position_id", "position_key",
           "board_from_position_key"]

ID_LENGTH = 14
KEY_LENGTH = 20
_NBYTES = 10
_NBITS = 8 * _NBYTES
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_INDEX = {c: i for i, c in enumerate(_B64)}
_SIDE_NAMES = ("opponent", "player on roll")
# The same alphabet as bytes, and its inverse (255: not base64), for the compiled coder below.
_B64_CODES = np.frombuffer(_B64.encode("ascii"), np.uint8).copy()
_B64_VALUES = np.full(256, 255, np.uint8)
_B64_VALUES[_B64_CODES] = np.arange(64, dtype=np.uint8)


# ---------------------------------------------------------------------------------------------
# board <-> 10 bytes


def _board_bytes(board) -> bytes:
    """The 10-byte key of a (checked) board."""
    b = as_board(board)
    value = 0  # the 80-bit string as an integer; bit k is the k-th bit written
    k = 0
    for side in (0, 1):
        for slot in range(25):
            n = int(b[side, slot])
            value |= ((1 << n) - 1) << k  # n one bits ...
            k += n + 1  # ... and the zero bit after them
    return value.to_bytes(_NBYTES, "little")


def _board_from_bytes(data: bytes, what: str) -> np.ndarray:
    """Read a 10-byte key back into a board, naming what is wrong with a bad one."""
    value = int.from_bytes(data, "little")
    counts = [[0] * 25, [0] * 25]
    k = 0
    for side in (0, 1):
        for slot in range(25):
            n = 0
            while k < _NBITS and (value >> k) & 1:
                n += 1
                k += 1
            if k >= _NBITS:
                raise ValueError(f"{what}: the bits run out before the {_SIDE_NAMES[side]}'s "
                                 f"{_slot_name(slot)} is complete (too many checkers)")
            k += 1  # the zero that ends this slot
            counts[side][slot] = n
        total = sum(counts[side])
        if total > 15:
            raise ValueError(f"{what}: the {_SIDE_NAMES[side]} has {total} checkers; at most 15 are allowed")
    if value >> k:
        raise ValueError(f"{what}: bit {_first_set(value >> k) + k} of 80 is set after the last "
                         "point; the ID is corrupt")
    for i in range(24):
        if counts[1][i] > 0 and counts[0][23 - i] > 0:
            raise ValueError(
                f"{what}: both colours on the player on roll's point {i + 1} "
                f"({counts[1][i]} of the player on roll's, {counts[0][23 - i]} of the opponent's)"
            )
    return np.array(counts, dtype=np.int8)


def _slot_name(slot: int) -> str:
    return "the bar" if slot == 24 else f"point {slot + 1}"


def _first_set(v: int) -> int:
    return (v & -v).bit_length() - 1


# ---------------------------------------------------------------------------------------------
# Position ID (base64)


def position_id(board) -> str:
    """The 14-character GNU Backgammon Position ID of ``board`` (``[opponent, player on roll]``).

    Raises ValueError for a board that is not a legal position (shape, counts, overlaps).
    """
    data = _board_bytes(board)
    value = int.from_bytes(data, "big") << 4  # 80 bits + 4 zero bits = 14 six-bit characters
    return "".join(_B64[(value >> (6 * (ID_LENGTH - 1 - i))) & 63] for i in range(ID_LENGTH))


def board_from_position_id(pid: str) -> np.ndarray:
    """The board (int8[2, 25], ``[opponent, player on roll]``) a Position ID describes.

    Accepts the 14-character ID, optionally followed by GNU Backgammon's ``==`` padding and
    surrounding spaces; raises ValueError naming the problem with anything else.

    >>> board_from_position_id('4HPwATDgc/ABMA')[1, :8].tolist()
    [0, 0, 0, 0, 0, 5, 0, 3]
    """
    if not isinstance(pid, str):
        raise ValueError(f"a Position ID is a string of 14 characters; got {type(pid).__name__}")
    text = pid.strip()
    if text.endswith("=="):
        text = text[:-2]
    if len(text) != ID_LENGTH:
        raise ValueError(f"a Position ID has 14 characters; {pid!r} has {len(text)}")
    bad = [c for c in text if c not in _B64_INDEX]
    if bad:
        raise ValueError(
            f"Position ID {pid!r} has character {bad[0]!r}, which is not base64 "
            "(only A-Z, a-z, 0-9, + and / are used)"
        )
    value = 0
    for c in text:
        value = (value << 6) | _B64_INDEX[c]
    if value & 0xF:
        raise ValueError(f"Position ID {pid!r}: its last character {text[-1]!r} sets bits beyond the "
                         f"80 a position uses; the ID is corrupt")
    data = (value >> 4).to_bytes(_NBYTES, "big")
    return _board_from_bytes(data, f"Position ID {pid!r}")


# ---------------------------------------------------------------------------------------------
# position key (20 letters)


def position_key(board) -> str:
    """The 20-letter position key of ``board``, as ``gnubg_nn.key_of_board`` writes it."""
    return "".join(chr(65 + (byte >> 4)) + chr(65 + (byte & 15)) for byte in _board_bytes(board))


def board_from_position_key(key: str) -> np.ndarray:
    """The board a 20-letter position key describes (the inverse of :func:`position_key`).

    >>> board_from_position_key('OAHDPAABDAOAHDPAABDA')[0, 23]
    np.int8(2)
    """
    if not isinstance(key, str):
        raise ValueError(f"a position key is a string of 20 letters; got {type(key).__name__}")
    text = key.strip()
    if len(text) != KEY_LENGTH:
        raise ValueError(f"a position key has 20 letters; {key!r} has {len(text)}")
    bad = [c for c in text if not "A" <= c <= "P"]
    if bad:
        raise ValueError(f"position key {key!r} has character {bad[0]!r}; only the letters A to P are used")
    data = bytes(((ord(text[2 * i]) - 65) << 4) | (ord(text[2 * i + 1]) - 65) for i in range(_NBYTES))
    return _board_from_bytes(data, f"position key {key!r}")


# ---------------------------------------------------------------------------------------------
# compiled coder: the same bits, for the per-call API (no checks beyond what decoding needs)


@njit(cache=True)
def write_position_id(first, second, out, pos):
    """Write the Position ID of the board ``[first, second]`` (two 25-long rows; ``second`` on
    roll) as 14 ASCII bytes into ``out[pos:pos + 14]``; returns ``pos + 14``.

    The caller vouches for the board (what :func:`position_id` checks). Passing the rows of an
    afterstate in swapped order gives the ID of the position with the opponent on roll.
    """
    # The 80 bits as two words: bit k of the string is bit k of lo (k < 64) or of hi.
    lo = np.uint64(0)
    hi = np.uint64(0)
    k = 0
    for side in range(2):
        row = first if side == 0 else second
        for slot in range(25):
            cnt = row[slot]
            if cnt > 0:
                ones = (np.uint64(1) << np.uint64(cnt)) - np.uint64(1)
                if k >= 64:
                    hi |= ones << np.uint64(k - 64)
                elif k + cnt <= 64:
                    lo |= ones << np.uint64(k)
                else:  # the run crosses into the second word
                    lo |= ones << np.uint64(k)
                    hi |= ones >> np.uint64(64 - k)
                k += cnt
            k += 1
    # Standard base64 of the 10 bytes (byte i = bits 8i..8i+7, least significant first): three
    # groups of three bytes, then the last byte with 4 zero bits after it.
    mask = np.uint64(255)
    for g in range(3):
        v = 0
        for j in range(3):
            i = 3 * g + j
            byte = (lo >> np.uint64(8 * i)) & mask if i < 8 else (hi >> np.uint64(8 * (i - 8))) & mask
            v = (v << 8) | int(byte)
        out[pos + 4 * g] = _B64_CODES[(v >> 18) & 63]
        out[pos + 4 * g + 1] = _B64_CODES[(v >> 12) & 63]
        out[pos + 4 * g + 2] = _B64_CODES[(v >> 6) & 63]
        out[pos + 4 * g + 3] = _B64_CODES[v & 63]
    last = int((hi >> np.uint64(8)) & mask)
    out[pos + 12] = _B64_CODES[last >> 2]
    out[pos + 13] = _B64_CODES[(last & 3) << 4]
    return pos + ID_LENGTH


@njit(cache=True)
def read_position_id(text, board):
    """Decode a 14-character Position ID (any sequence of 14 character codes) into ``board``
    (int8[2, 25]); True when it is a valid position, False for anything
    :func:`board_from_position_id` would refuse (which then says why)."""
    if len(text) != ID_LENGTH:
        return False
    # Stream bit s (6 per character, most significant first) is string bit 8 (s // 8) + 7 - s % 8.
    lo = np.uint64(0)
    hi = np.uint64(0)
    for i in range(ID_LENGTH):
        c = text[i]
        if c > 255 or _B64_VALUES[c] == 255:
            return False
        v = int(_B64_VALUES[c])
        for j in range(6):
            if (v >> (5 - j)) & 1:
                s = 6 * i + j
                if s >= _NBITS:
                    return False  # the 4 bits after the 80 are set
                b = 8 * (s >> 3) + 7 - (s & 7)
                if b < 64:
                    lo |= np.uint64(1) << np.uint64(b)
                else:
                    hi |= np.uint64(1) << np.uint64(b - 64)
    k = 0
    for side in range(2):
        total = 0
        for slot in range(25):
            cnt = 0
            while k < _NBITS and ((lo if k < 64 else hi) >> np.uint64(k & 63)) & np.uint64(1):
                cnt += 1
                k += 1
            if k >= _NBITS:
                return False
            k += 1
            total += cnt
            if total > 15:
                return False
            board[side, slot] = cnt
    if k < 64:
        if lo >> np.uint64(k) != 0 or hi != 0:
            return False
    elif hi >> np.uint64(k - 64) != 0:
        return False
    for i in range(24):
        if board[1, i] > 0 and board[0, 23 - i] > 0:
            return False
    return True


def fast_board_from_position_id(pid: str) -> np.ndarray:
    """:func:`board_from_position_id` through the compiled decoder, falling back to the checked
    reader (and its message) for anything unusual."""
    board = np.empty((2, 25), np.int8)
    if isinstance(pid, str) and len(pid) == ID_LENGTH and pid.isascii():
        if read_position_id(pid.encode("ascii"), board):
            return board
    return board_from_position_id(pid)
