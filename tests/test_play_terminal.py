"""``bgnet play``: a scripted person plays through the same prompts a terminal shows."""
from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

from bgnet.bots import load_bot, with_ply
from bgnet.cli.play import play_main
from bgnet.engine.board import start_position
from bgnet.engine.game import Game, Match
from bgnet.engine.notation import IllegalMoveError, parse_move
from bgnet.engine.position_id import position_id
from bgnet.engine.sampling import apply_steps, sample_positions
from bgnet.errors import BadArgument
from bgnet.formats.mat import load_mat, read_mat
from bgnet.play.advisor import Advisor
from bgnet.play.terminal import BOT, HUMAN, PlaySession

HINT_RE = re.compile(r"^\s+1\. (.+?)(?:\s{2,}(?:MWC|cubeful equity|equity \(cubeless\)|win) .*)?$")
# A hinted move's figures, labelled by what the moves are ranked by.
MATCH_FIGURES = re.compile(r"^\s+\d+\. (.+?)\s{2,}MWC (\d+\.\d\d)%  EMG ([+-]\d\.\d{3})  cubeless "
                           r"equity ([+-]\d\.\d{3})$")
MONEY_FIGURES = re.compile(r"^\s+\d+\. (.+?)\s{2,}cubeful equity ([+-]\d\.\d{3})  cubeless equity "
                           r"([+-]\d\.\d{3})$")
CUBELESS_FIGURES = re.compile(r"^\s+\d+\. (.+?)\s{2,}equity \(cubeless\) ([+-]\d\.\d{3})$")
# The line under each hinted move: its probabilities.
PROBABILITIES = re.compile(r"^ {7}win \d+\.\d% \(gammon \d+\.\d%, bg \d+\.\d%\)  lose \d+\.\d% ")


class Person:
    """Someone at the keyboard: sees everything written and answers each prompt with
    ``policy(person, prompt)`` (None ends the input). ``typed`` keeps every line typed."""

    def __init__(self, policy, limit: int = 2000):
        self.lines: list[str] = []
        self.typed: list[str] = []
        self.moves: list[str] = []
        self.policy = policy
        self.limit = limit

    def write(self, text) -> None:
        self.lines.extend(str(text).split("\n"))

    def read_line(self, prompt: str) -> str | None:
        self.lines.append(prompt)
        if len(self.typed) >= self.limit:
            return None
        answer = self.policy(self, prompt)
        if answer is not None:
            self.typed.append(answer)
        return answer

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def advice(self) -> str:
        """What the last hint said: its first move, or its cube advice."""
        for line in reversed(self.lines):
            m = HINT_RE.match(line)
            if m:
                return m.group(1).strip()
            if " says: " in line:
                return line.split(" says: ", 1)[1]
            if line.startswith("No cube advice"):
                return "roll"
        raise AssertionError("no hint was shown")


def follow_hints(person: Person, prompt: str) -> str:
    """Ask for a hint at every decision, then do what it says."""
    last = person.typed[-1] if person.typed else ""
    if not last.startswith("hint"):
        return "hint"
    advice = person.advice()
    if prompt.startswith("Your move"):
        person.moves.append(advice)
        return advice
    if prompt.startswith("Roll or double"):
        return "double" if advice.startswith("double") else "roll"
    if "take or drop" in prompt:
        return "take" if advice.startswith("take") else "drop"
    return "no"


def _after(action) -> np.ndarray:
    """The position after a move, ``[opponent, mover]``, hits included."""
    return apply_steps(action.board.astype(np.int8), action.steps)


def moves_of(record) -> list:
    """Every game's moves and cube actions: player, dice, position before and after."""
    return [(g.number, a.player, a.kind, tuple(sorted(a.dice)), position_id(a.board),
             position_id(_after(a)) if a.kind == "move" else None)
            for g in record.games for a in g.actions if a.kind in ("move", "double", "take", "drop")]


def side(**points) -> np.ndarray:
    """One side's checkers, e.g. side(p6=3, p5=2): counts on its own points."""
    s = np.zeros(25, np.int8)
    for name, n in points.items():
        s[int(name[1:]) - 1] = n
    return s


RACE = side(p6=3, p5=3, p4=3, p3=3, p2=3)  # 60 pips


def behind(from_point: int, to_point: int) -> np.ndarray:
    """RACE with one checker moved back from one point to a higher one."""
    s = RACE.copy()
    s[from_point - 1] -= 1
    s[to_point - 1] += 1
    return s


@pytest.fixture(scope="module")
def net_bot():
    """A network bot with random weights: the real bgnet bot path (moves, hints, cube)."""
    torch = pytest.importorskip("torch")
    from bgnet.bots.net import NetBot
    from bgnet.nn.model import ValueNet

    net = ValueNet("tesauro", [20], "silu")
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return NetBot(net.eval(), name="testnet")


@pytest.fixture(scope="module")
def gnubg_advisor():
    pytest.importorskip("gnubg_nn")
    return Advisor(load_bot("gnubg:0"))


def session_for(advisor, person: Person, **kw) -> PlaySession:
    kw.setdefault("seed", 1)
    return PlaySession(advisor, read_line=person.read_line, write=person.write, **kw)


# ---------------------------------------------------------------------------------------------
# whole matches


def test_hint_follower_plays_a_match_and_saves_it(net_bot, tmp_path):
    person = Person(follow_hints)
    path = tmp_path / "match.mat"
    s = session_for(Advisor(net_bot), person, match_length=3, seed=11, name="Ann", save_path=path)
    assert s.run() == 0
    m = s.match
    assert m.over and "Illegal move" not in person.text
    assert re.search(r"wins? the match \d+-\d+", person.text)
    # Every move the person made is the hint's first move, in the record in that order.
    played = [a.notation for g in m.games for a in g.record.actions
              if a.kind == "move" and a.player == HUMAN and a.steps]
    assert played == person.moves and len(played) > 10
    # The saved file reads back (replayed by the rules) to the same moves and results.
    back = load_mat(path)
    assert back.names == ("Ann", "testnet") and back.length == 3
    assert moves_of(back) == moves_of(m.record())
    assert [(g.winner, g.points) for g in back.games] == [(g.winner, g.points) for g in m.games]
    # The board was shown with its IDs at the person's decisions.
    assert person.text.count("Position ID:") >= len(played)


def test_illegal_moves_are_explained_and_change_nothing():
    tries = iter(["24/1", "hello world", "13/7(5)", "take", "double"])
    seen = []
    rolls = []

    def policy(person, prompt):
        if prompt.startswith("Roll or double"):
            rolls.append(prompt)
            return "8/5 6/5" if len(rolls) == 1 else ""
        if prompt.startswith("Your move"):
            game = s.match.game
            seen.append((position_id(game.board), game.dice, len(game.record.actions)))
            nxt = next(tries, None)
            if nxt is not None:
                return nxt
            return "quit"
        return "no"

    person = Person(policy)
    s = session_for(Advisor(load_bot("random:1"), judge=None), person, seed=4)
    s.run()
    assert len(set(seen)) == 1 and len(seen) == 6  # the same moment each time
    text = person.text
    pid, dice, _ = seen[0]
    board = s.match.game.board
    for typed in ("24/1", "hello world", "13/7(5)"):
        with pytest.raises(IllegalMoveError) as e:
            parse_move(typed, board, *dice)
        assert f"Illegal move: {e.value}." in text
    assert "There is no double to answer" in text and "You have rolled" in text
    if "Roll or double> " in text:  # the person was asked before rolling
        assert "Roll the dice first" in text


# ---------------------------------------------------------------------------------------------
# the bot's cube and answers


def _scripted(*answers):
    """A person typing ``answers`` in order, then following hints."""
    queue_ = list(answers)

    def policy(person, prompt):
        return queue_.pop(0) if queue_ else follow_hints(person, prompt)
    return policy


def test_a_hint_count_is_a_few_ascii_digits(net_bot):
    """'١' is a digit to str.isdigit and int(), and 5,000 nines too many for int(): both are a
    line saying what hint takes, and the game goes on."""
    person = Person(_scripted("hint \u0663", "hint " + "9" * 5000, "hint 0", "hint"), limit=8)
    s = session_for(Advisor(net_bot), person)
    s.play_game(s.match.new_game())
    text = person.text
    assert "hint takes a number of moves to show, e.g. hint 3; got '\u0663'." in text
    assert "got '99999999999999999999'." in text and "got '0'." in text


def test_bot_doubles_in_a_race_and_the_person_takes(gnubg_advisor):
    person = Person(_scripted("take"))
    s = session_for(gnubg_advisor, person)
    game = s.match.new_game(board=np.stack([behind(6, 8), RACE]), player_on_roll=BOT)
    assert s.play_game(game)
    assert f"{s.bot_name} doubles to 2." in person.text and "You take" in person.text
    cube = [(a.player, a.kind) for a in game.record.actions if a.kind != "move"]
    assert cube[:2] == [(BOT, "double"), (HUMAN, "take")]
    # A race has no gammons: the game is worth the cube (the person may have redoubled since).
    assert game.over and game.cube_value >= 2 and game.points == game.cube_value


def test_bot_drops_a_hopeless_double_and_takes_a_fair_one(gnubg_advisor):
    person = Person(_scripted("double"))
    s = session_for(gnubg_advisor, person, match_length=0, games=2)
    hopeless = s.match.new_game(board=np.stack([behind(6, 13), RACE]), player_on_roll=HUMAN)
    assert s.play_game(hopeless)
    assert hopeless.end == "drop" and hopeless.winner == HUMAN and hopeless.points == 1
    assert f"{s.bot_name} drops." in person.text

    person2 = Person(_scripted("double"))
    s2 = session_for(gnubg_advisor, person2)
    fair = s2.match.new_game(board=start_position(), player_on_roll=HUMAN)
    person2.limit = 3  # take, then stop the game after a few lines
    s2.play_game(fair)
    assert f"{s2.bot_name} takes" in person2.text and fair.cube_value == 2 and fair.cube_owner == BOT


def test_crawford_game_has_no_doubles_and_the_trailer_doubles_after_it(gnubg_advisor):
    person = Person(_scripted("double"))
    s = session_for(gnubg_advisor, person, match_length=3)
    s.match = Match(3, score=(2, 0), crawford_played=False, names=("You", s.bot_name))
    crushing = np.stack([behind(6, 8), RACE])
    game = s.match.new_game(board=crushing, player_on_roll=BOT)
    assert game.crawford
    person.limit = 6
    s.play_game(game)
    assert "doubles" not in person.text.replace("Crawford game: no doubling", "")
    s.match = Match(3, score=(2, 0), crawford_played=True, names=("You", s.bot_name))
    person2 = Person(_scripted("take"))
    s.read_line, s.write = person2.read_line, person2.write
    post = s.match.new_game(board=start_position(), player_on_roll=BOT)
    person2.limit = 2
    s.play_game(post)
    assert f"{s.bot_name} doubles to 2." in person2.text  # the trailer doubles at once


def test_resignations(gnubg_advisor):
    bot_home = side(p1=15)
    hopeless = np.stack([bot_home, side(p18=15)])  # the person's view: a certain gammon, no bg
    person = Person(_scripted("resign", "resign gammon"))
    s = session_for(gnubg_advisor, person)
    game = s.match.new_game(board=hopeless, player_on_roll=HUMAN)
    s.play_game(game)
    assert "rejects your resignation of a single game" in person.text
    assert "accepts your resignation of a gammon" in person.text
    assert game.end == "resign" and game.winner == BOT and game.points == 2


# ---------------------------------------------------------------------------------------------
# saving and quitting


def test_quit_offers_to_save(tmp_path):
    target = tmp_path / "kept.mat"
    person = Person(_scripted("", "quit", str(target)))
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    s.run()
    assert "Save the match first?" in person.text and target.exists()
    assert moves_of(read_mat(target.read_text())) == moves_of(s.match.record())

    person = Person(_scripted("", "quit", "no"))
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    s.run()
    assert "Bye." in person.text and list(tmp_path.iterdir()) == [target]


def test_save_never_replaces_a_file_without_asking(tmp_path):
    mine = tmp_path / "precious.mat"
    mine.write_text("not a match\n")
    person = Person(_scripted("", f"save {mine}", "n", "quit", ""))
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    s.run()
    assert "Replace it?" in person.text and "Not saved." in person.text
    assert mine.read_text() == "not a match\n"
    with pytest.raises(BadArgument, match="already exists"):
        play_main(["--bot", "random", "--save", str(mine)])
    assert mine.read_text() == "not a match\n"


def test_save_to_a_folder_or_into_a_missing_one_says_why_and_keeps_playing(tmp_path):
    person = Person(_scripted("", f"save {tmp_path}", f"save {tmp_path / 'no' / 'm.mat'}", "quit", ""))
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    s.run()
    assert f"Not saved: {tmp_path} is a folder; give a file name, e.g. save {tmp_path / 'match.mat'}" \
        in person.text
    assert f"Not saved: there is no folder {tmp_path / 'no'} (it does not exist" in person.text
    assert "Errno" not in person.text and list(tmp_path.iterdir()) == []


def test_end_of_input_saves_to_the_save_file(tmp_path):
    path = tmp_path / "s.mat"
    person = Person(_scripted(""), limit=1)  # one roll, then the input ends
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1, save_path=path)
    s.run()
    assert path.exists() and moves_of(load_mat(path)) == moves_of(s.match.record())


def test_when_the_session_is_over_the_person_is_offered_to_save(tmp_path):
    target = tmp_path / "whole.mat"
    person = Person(follow_hints)
    policy = person.policy

    def save_at_the_end(person, prompt):
        return str(target) if prompt.startswith("Save the match?") else policy(person, prompt)

    person.policy = save_at_the_end
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    assert s.run() == 0
    assert "The session is over." in person.text
    assert "Save the match? File name (.mat/.sgf), or Enter to finish without saving> " in person.lines
    assert moves_of(load_mat(target)) == moves_of(s.match.record()) and s.match.over


def test_a_file_saved_earlier_is_offered_again_at_the_end_and_gets_the_end(tmp_path):
    early = tmp_path / "early.mat"
    said = []

    def policy(person, prompt):
        if not said:
            said.append(prompt)
            return f"save {early}"
        if prompt.startswith("Save the match?"):
            said.append(prompt)
            return ""  # Enter: the same file again
        return follow_hints(person, prompt)

    person = Person(policy)
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    assert s.run() == 0
    assert said[-1] == f"Save the match? Enter saves it to {early} again; or another file name, or no> "
    back = load_mat(early)
    assert moves_of(back) == moves_of(s.match.record()) and back.games[-1].winner is not None


def test_ctrl_c_saves_the_match_so_far_to_a_named_file_and_says_where(tmp_path, monkeypatch, capsys):
    class Keyboard:
        """Standard input: a roll or two (an empty line each), then Ctrl-C."""

        def __init__(self):
            self.lines = ["\n", "\n", "8/5 6/5\n", "\n"]

        def readline(self):
            if not self.lines:
                raise KeyboardInterrupt
            return self.lines.pop(0)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Keyboard())
    assert play_main(["--bot", "random:3", "--seed", "5"]) == 130
    (saved,) = tmp_path.iterdir()
    assert re.fullmatch(r"bgnet-play-\d{8}-\d{6}\.mat", saved.name)
    out = capsys.readouterr().out
    assert f"Interrupted: the match so far is saved in {saved}." in out and out.endswith("Bye.\n")
    assert load_mat(saved).games  # the game so far, readable


def test_ctrl_c_after_a_save_brings_that_file_up_to_date(tmp_path):
    early = tmp_path / "mine.mat"
    person = Person(_scripted(f"save {early}", "", ""))
    s = session_for(Advisor(load_bot("random:2"), judge=None), person, seed=1)
    person.limit = 3  # the input ends after three lines
    s.run()
    before = len(moves_of(load_mat(early)))
    assert s.interrupted() == early and "Interrupted: the match so far is saved in" in person.text
    assert len(moves_of(load_mat(early))) >= before
    assert moves_of(load_mat(early)) == moves_of(s.match.record()) and list(tmp_path.iterdir()) == [early]


def test_cube_advice_fits_80_columns(net_bot):
    def policy(person, prompt):
        if prompt.startswith("Roll or double"):
            return None if asked else asked.append(prompt) or "hint"
        return follow_hints(person, prompt)

    asked: list[str] = []
    person = Person(policy)
    session_for(Advisor(net_bot), person, match_length=5, seed=3).run()
    at = max(i for i, line in enumerate(person.lines) if " says: " in line or "No cube" in line
             or "may not double" in line)
    advice = person.lines[at:at + 4]
    assert all(len(line) <= 80 for line in advice), advice
    assert any("no double" in line for line in advice) or "may not double" in advice[0]


def test_bot_specs_with_a_ply():
    """One resolver turns --bot and --ply into a spec for every verb."""
    assert with_ply(None, None) == "bgnet-default"
    assert with_ply(None, 1) == "bgnet-default@1"
    assert with_ply("run/ckpt.pt", 2) == "run/ckpt.pt@2"
    assert with_ply("run/ckpt.pt@1", 0) == "run/ckpt.pt@0"
    assert with_ply("me@home/ckpt.pt", 1) == "me@home/ckpt.pt@1"
    assert with_ply("gnubg", 1) == "gnubg:1"
    assert with_ply("random", None) == "random"
    with pytest.raises(BadArgument, match="no search depth"):
        with_ply("pubeval", 1)
    with pytest.raises(BadArgument, match="0 or more"):
        with_ply("bgnet-deep", -1)


# ---------------------------------------------------------------------------------------------
# the command through a pipe


def _drive(cmd: list[str], policy, timeout: float = 90.0) -> tuple[int, Person]:
    """Run ``cmd`` and answer each prompt (output ending in "> ") as a person would."""
    person = Person(policy)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)
    chunks: queue.Queue = queue.Queue()

    def pump():
        while chunk := os.read(proc.stdout.fileno(), 65536):
            chunks.put(chunk)
        chunks.put(None)

    threading.Thread(target=pump, daemon=True).start()
    out = ""
    try:
        while True:
            chunk = chunks.get(timeout=timeout)
            if chunk is None:
                break
            out += chunk.decode()
            if out.endswith("> "):
                *before, prompt = out.split("\n")
                person.lines = before
                answer = policy(person, prompt)
                if answer is None:
                    proc.stdin.close()
                    continue
                person.typed.append(answer)
                out += answer + "\n"
                proc.stdin.write((answer + "\n").encode())
                proc.stdin.flush()
        rc = proc.wait(timeout=timeout)
    finally:
        proc.kill()
    person.lines = out.split("\n")
    return rc, person


def test_play_command_through_a_pipe(tmp_path):
    path = tmp_path / "piped.mat"
    rc, person = _drive([sys.executable, "-m", "bgnet.cli", "play", "--bot", "random:5", "--seed", "3",
                         "--save", str(path), "--name", "Pipe"], follow_hints)
    assert rc == 0, person.text[-2000:]
    assert "The session is over." in person.text and path.exists()
    back = load_mat(path)
    assert back.names == ("Pipe", "random-5") and len(back.games) == 1
    assert back.games[0].winner is not None
    played = [a.notation for a in back.games[0].actions if a.kind == "move" and a.player == HUMAN and a.steps]
    assert played == person.moves


# ---------------------------------------------------------------------------------------------
# checker play by the match's own measure


class _Watched(Advisor):
    """An advisor that keeps the context each of the bot's moves was chosen in."""

    def __init__(self, bot, **kw):
        super().__init__(bot, **kw)
        self.contexts = []

    def choose(self, board, d1, d2, ctx=None):
        self.contexts.append(ctx)
        return super().choose(board, d1, d2, ctx)


def test_the_bot_moves_by_the_match_s_own_measure(net_bot):
    """In a match the bot's every move is chosen at the score and cube of its game, the bot on
    roll; the advisor's choice there is the bot's cubeful one, and --cubeless-play's is not."""
    from bgnet.engine.state import MatchContext

    advisor = _Watched(net_bot)
    session_for(advisor, Person(lambda p, prompt: "resign gammon" if "Your move" in prompt else
                                "roll" if "Roll" in prompt else "no" if "Save" in prompt else "drop"),
                match_length=3).run()
    assert advisor.contexts
    assert all(c.match_length == 3 and c.player_on_roll == BOT for c in advisor.contexts)
    dmp = MatchContext(match_length=3, score=(2, 2), player_on_roll=BOT, turn=BOT)
    boards, _ = sample_positions(200, seed=4)
    rng = np.random.default_rng(4)
    changed = 0
    for board in boards[:80]:
        d1, d2 = (int(x) for x in rng.integers(1, 7, 2))
        got = Advisor(net_bot).choose(board, d1, d2, dmp)
        plain = Advisor(net_bot, cubeless_play=True).choose(board, d1, d2, dmp)
        if got is None:
            continue
        want = net_bot.choose_moves(board[None], np.array([[d1, d2]]), dmp)[0][0]
        assert np.array_equal(got[0], want)
        assert np.array_equal(plain[0], net_bot.choose_moves(board[None], np.array([[d1, d2]]))[0][0])
        changed += not np.array_equal(got[0], plain[0])
    assert changed > 0


def _first_hint(advisor, **kw) -> tuple[list[str], Game]:
    """The hint asked for at the person's first move, and that game: its heading (its lines
    joined) and the lines of its moves, each checked to have its probabilities on the line
    under it and to fit 80 columns."""
    def policy(person, prompt):
        if prompt.startswith("Your move") and "hint" not in person.typed:
            return "hint"
        return None if prompt.startswith("Your move") else "roll"

    person = Person(policy)
    s = session_for(advisor, person, **kw)
    s.run()
    at = max(i for i, line in enumerate(person.lines) if "legal move" in line)
    heading, lines = [person.lines[at]], []
    rest = iter(person.lines[at + 1:])
    for line in rest:
        if re.match(r"^\s+\d+\. ", line):
            lines.append(line)
            under = next(rest)
            assert PROBABILITIES.match(under), under
            assert max(len(line), len(under)) <= 80, (line, under)
        elif not lines and line.startswith("  "):
            heading.append(line.strip())
        else:
            break
    assert all(len(line) <= 80 for line in heading)
    return [" ".join(heading)] + lines, s.match.games[-1]


def test_a_match_hint_shows_mwc_and_emg_with_the_cubeless_equity_beside(net_bot):
    advisor = Advisor(net_bot)
    lines, game = _first_hint(advisor, match_length=5, seed=2)
    assert "ranked by MWC (match winning chances) and EMG (equity at the score)" in lines[0]
    ranked = advisor.ranked_moves(game.board, *game.dice, game.context())
    shown = [MATCH_FIGURES.match(line) for line in lines[1:]]
    assert shown and all(shown), lines
    for m, got in zip(ranked, shown):
        assert got.group(1).strip() == m.notation
        assert float(got.group(2)) == pytest.approx(100 * m.mwc, abs=0.006)
        assert float(got.group(3)) == pytest.approx(m.value, abs=6e-4)
        assert float(got.group(4)) == pytest.approx(m.equity, abs=6e-4)
    emg = [float(g.group(3)) for g in shown]
    assert emg == sorted(emg, reverse=True)  # ranked by the labelled measure, not the cubeless one
    assert HINT_RE.match(lines[1]).group(1).strip() == ranked[0].notation


def test_a_money_hint_shows_cubeful_equity_and_a_cubeless_one_shows_equity_cubeless(net_bot):
    advisor = Advisor(net_bot)
    lines, game = _first_hint(advisor, seed=2)
    assert "ranked by cubeful equity" in lines[0]
    ranked = advisor.ranked_moves(game.board, *game.dice, game.context())
    shown = [MONEY_FIGURES.match(line) for line in lines[1:]]
    assert shown and all(shown), lines
    for m, got in zip(ranked, shown):
        assert got.group(1).strip() == m.notation
        assert (float(got.group(2)), float(got.group(3))) == pytest.approx((m.value, m.equity), abs=6e-4)
    plain = Advisor(net_bot, cubeless_play=True)
    lines, game = _first_hint(plain, match_length=5, seed=2)
    assert "ranked by equity (cubeless)" in lines[0] and "MWC" not in "".join(lines)
    ranked = plain.ranked_moves(game.board, *game.dice, game.context())
    shown = [CUBELESS_FIGURES.match(line) for line in lines[1:]]
    assert shown and all(shown), lines
    for m, got in zip(ranked, shown):
        assert got.group(1).strip() == m.notation and float(got.group(2)) == pytest.approx(m.equity, abs=6e-4)
    assert HINT_RE.match(lines[1]).group(1).strip() == ranked[0].notation
