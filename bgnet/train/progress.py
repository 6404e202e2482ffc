"""How a run's progress reads to a person: durations as H:MM:SS and the time left, estimated
from the rate once it means something. Plain Python, so the verbs that only read a run (``bgnet
plot``) use it without loading torch."""
from __future__ import annotations

RATE_SETTLES_S = 3.0  # seconds of games (after the first ones) before the rate makes an estimate


def clock(seconds: float) -> str:
    """Seconds as H:MM:SS.

    >>> clock(3725.4), clock(48)
    ('1:02:05', '0:00:48')
    """
    secs = int(max(0.0, seconds))
    return f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}"


def time_left(games_left: int, gps: float, measured_s: float) -> str:
    """The time ``games_left`` games take at ``gps`` games a second, as H:MM:SS, once the rate
    has been measured over :data:`RATE_SETTLES_S` seconds; '?' before (the very first games of
    a pool end together, a rate from them is no estimate). The rate is the mean since the first
    games came in, evaluations included, so the estimate includes the evaluations to come.

    >>> time_left(27000, 900.0, 4.0), time_left(27000, 900.0, 1.0), time_left(0, 900.0, 9.0)
    ('0:00:30', '?', '0:00:00')
    """
    if gps <= 0 or measured_s < RATE_SETTLES_S:
        return "?"
    return clock(max(0, games_left) / gps)
