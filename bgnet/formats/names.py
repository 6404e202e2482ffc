"""Players' names: the one rule for a name that goes into a match and its files.

A player's name is 1 to :data:`MAX_NAME` printable characters (``str.isprintable``: no control
characters such as a line break, a carriage return or a tab, no invisible formatting marks, no
separators other than the plain space) without ``:``, which a ``.mat`` file's score line puts
between a name and its score. Spaces around it are dropped and a run of spaces inside counts as
one, as GNU Backgammon reads names back.

Where a name comes from a person (the play page's new game, ``bgnet play --name``, ``bgnet export
--name``) it is checked by :func:`player_name`, and refused with the reason; where bgnet makes one
(from a bot's name or a file's) :func:`fit_player_name` makes it keep the rule; the ``.mat`` and
``.sgf`` writers refuse a name that breaks it (:func:`check_player_names`), so a file they write
can always be read back.

>>> player_name("  Ann   Lee ")
'Ann Lee'
>>> name_problem("Ann\\rLee")
"holds a control character (U+000D) at position 4: 'Ann\\\\rLee'"
>>> fit_player_name("gnubg: 2-ply")
'gnubg- 2-ply'
"""
from __future__ import annotations

import unicodedata

MAX_NAME = 40
RULE = (f"a player's name is 1 to {MAX_NAME} printable characters without ':' (no line breaks, "
        "tabs or other control characters)")
_QUOTED = 60  # characters of a refused name quoted in the message


def name_problem(name) -> str | None:
    """Why ``name`` breaks the rule (a phrase that quotes it, cut to a readable length), or None
    when it keeps it."""
    if not isinstance(name, str):
        return f"is not text (a {type(name).__name__})"
    quoted = repr(name[:_QUOTED]) + ("... (cut)" if len(name) > _QUOTED else "")
    for i, c in enumerate(name):
        if not c.isprintable():
            kind = "a control character" if unicodedata.category(c) == "Cc" else "an unprintable character"
            return f"holds {kind} (U+{ord(c):04X}) at position {i + 1}: {quoted}"
    if ":" in name:
        return f"holds ':', which a .mat file puts between a name and its score: {quoted}"
    kept = " ".join(name.split())
    if not kept:
        return "is empty"
    if len(kept) > MAX_NAME:
        return f"is {len(kept)} characters long, over the limit of {MAX_NAME}: {quoted}"
    return None


def player_name(name) -> str:
    """``name`` as kept (spaces around it dropped, runs of spaces made one) when it keeps the
    rule; ValueError saying why otherwise."""
    problem = name_problem(name)
    if problem is not None:
        raise ValueError(f"{RULE}; this one {problem}")
    return " ".join(name.split())


def fit_player_name(text: str, fallback: str = "bot", limit: int = MAX_NAME) -> str:
    """``text`` made into a name that keeps the rule, for names bgnet makes itself (a bot's, a
    file's): ``:`` becomes ``-``, unprintable characters spaces, and it is cut at ``limit``
    characters; ``fallback`` when nothing is left."""
    clean = "".join(c if c.isprintable() else " " for c in str(text).replace(":", "-"))
    kept = " ".join(clean.split())[:limit].rstrip()
    return kept or fallback


def check_player_names(names) -> None:
    """ValueError unless both of a match's ``names`` keep the rule (for the writers of match
    files: a name is written as it is or not at all)."""
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            raise ValueError(f"{RULE}; the name {problem}")


__all__ = ["MAX_NAME", "RULE", "name_problem", "player_name", "fit_player_name", "check_player_names"]
