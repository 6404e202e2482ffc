// The play page. The server is the judge of every move: this script draws the state it sends
// (from the player's side: points 1..24, player's checkers positive, the bot's negative), sends
// each click or action, and shows the answer. No libraries, nothing loaded from elsewhere.
//
// The board is drawn in one set of coordinates, "landscape" (the player's home board bottom
// right, the tray on the right). On a narrow screen it is drawn taller and turned a quarter turn
// (the tray at the bottom, the player's home board bottom left), so that points are wide enough
// to touch; its texts are turned back so that they read upright.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const BAR = 25, OFF = 0;
const NARROW = 600;  // px: below this width the board is drawn upright (portrait)
const STEP_MS = 260;  // one step of the bot's move, animated
const $ = (id) => document.getElementById(id);

// Two geometries (units of the drawing): W point width, R checker radius, M margin for the
// point numbers, H height, STACK checkers drawn on a point before a count, LEFT board's left
// edge, BAR_W bar width, GAP from the board to the tray, TRAY_W the tray, FONT point numbers.
const WIDE = { W: 46, R: 21, M: 20, H: 500, STACK: 5, LEFT: 20, BAR_W: 44, GAP: 28, TRAY_W: 80, FONT: 12, portrait: false };
const TALL = { W: 44, R: 20, M: 28, H: 420, STACK: 4, LEFT: 14, BAR_W: 40, GAP: 14, TRAY_W: 84, FONT: 16, portrait: true };

let G = geometry(WIDE);  // the geometry in use
let state = null;      // the last state the server sent
let selected = null;   // the point a checker was picked from
let dragFrom = null;   // set between pressing on a checker and releasing
let shownLog = 0;      // log lines of this game already shown (the server counts them)
let busy = false;
let animation = null;  // the bot's move being shown in motion (a token; null when none)
let shownBotMove = null;  // id of the bot's last move already shown
let loaded = false;    // a state has been shown (the one found on opening the page is not animated)
let boardRoot = null;  // the group everything on the board is drawn in

function geometry(g) {
  const BAR_X = g.LEFT + 6 * g.W, RIGHT = BAR_X + g.BAR_W, END = RIGHT + 6 * g.W, TRAY_X = END + g.GAP;
  return Object.assign({}, g, { BAR_X, RIGHT, END, TRAY_X, WIDTH: TRAY_X + g.TRAY_W, MID: g.H / 2, LEN: g.H / 2 - g.M - 22 });
}

// ---- talking to the server ------------------------------------------------------------------

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = { message: `the server answered ${resp.status}` }; }
  if (!resp.ok) {
    const err = new Error(data && data.message ? data.message : `HTTP ${resp.status}`);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function answered() {
  window.bgnetAnswers = (window.bgnetAnswers || 0) + 1;  // answers received, errors included
}

async function act(action, body) {
  if (!state || busy) return;
  busy = true;
  selected = null;
  finishAnimation();
  try {
    show(await api("POST", `/api/v1/games/${state.id}/${action}`, body || {}));
  } catch (e) {
    say(e.message, true);
    if (e.status === 404) localStorage.removeItem("bgnet-game");
    if (state && !animation) draw();
  } finally {
    busy = false;
    if (state) controls();
    answered();
  }
}

async function newGame(length, jacoby) {
  busy = true;
  finishAnimation();
  try {
    const body = { match_length: length };
    if (jacoby && length === 0) body.jacoby = true;
    show(await api("POST", "/api/v1/games", body));
    localStorage.setItem("bgnet-game", state.id);
  } catch (e) {
    say(e.message, true);
  } finally {
    busy = false;
    if (state) controls();
    answered();
  }
}

async function resume() {
  const id = localStorage.getItem("bgnet-game");
  if (id) {
    try {
      show(await api("GET", `/api/v1/games/${id}`));
      return;
    } catch (e) { localStorage.removeItem("bgnet-game"); }
  }
  await newGame(0, false);
}

// ---- showing a state --------------------------------------------------------------------------

function say(text, isError) {
  const m = $("message");
  m.textContent = text || "";
  m.className = isError ? "error" : "";
}

function show(s) {
  const fresh = !state || state.id !== s.id;
  state = s;
  window.bgnetState = s;  // for people poking at the page, and for the browser tests
  const log = $("log");
  log.innerHTML = "";
  for (const line of s.log) {
    const li = document.createElement("li");
    li.textContent = line;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
  const newCount = fresh ? 2 : Math.min(s.log.length, s.log_count - shownLog);
  const news = s.log.slice(s.log.length - newCount);
  shownLog = s.log_count;
  say(statusText(s, news));
  if (fresh) showKind(s);
  askResign(null);
  // A bot's move not shown before is played out on the board, checker by checker.
  const last = s.bot_moves.length ? s.bot_moves[s.bot_moves.length - 1].id : null;
  const animate = loaded && last !== null && (last !== shownBotMove || fresh);
  shownBotMove = last === null ? shownBotMove : last;
  loaded = true;
  if (animate) animateBotMoves(s);
  else draw();
  controls();
  hintBox();
}

function statusText(s, news) {
  // Log lines such as "Game 2" carry no stop of their own: give each one, so they read as sentences.
  let text = news.slice(-3).map((line) => (/[.!?:]$/.test(line) ? line : `${line}.`)).join(" ");
  if (s.game_over) return text;
  if (s.turn === "you") {
    if (s.phase === "move") text += s.steps.length ? ` Played so far: ${s.steps_notation}.` : " Your move: pick a checker, then one of the marked points.";
    else if (s.phase === "roll") text += " Roll or double.";
    else if (s.phase === "doubled") text += ` ${s.names.bot} offers the cube at ${s.cube.offered}: take or drop?`;
  }
  return text.trim();
}

// The "New" form shows the kind of game being played, until the person changes it.
function showKind(s) {
  const sel = $("length"), value = String(s.match_length);
  if (![...sel.options].some((o) => o.value === value)) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = `${value}-point match`;
    sel.appendChild(o);
  }
  sel.value = value;
  $("jacoby").checked = Boolean(s.jacoby);
  jacobyAllowed();
}

function jacobyAllowed() {
  const money = $("length").value === "0";
  $("jacoby").disabled = !money;
  if (!money) $("jacoby").checked = false;
}

function kindText(s) {
  if (s.match_length) return `${s.match_length}-point match`;
  return s.jacoby ? "money game, Jacoby rule" : "money game";
}

function controls() {
  const s = state, mine = s.turn === "you" && !s.game_over;
  const on = (id, yes) => { $(id).disabled = !yes || busy; };
  on("roll", mine && s.phase === "roll");
  on("double", s.may_double);
  on("take", mine && s.phase === "doubled");
  on("drop", mine && s.phase === "doubled");
  on("undo", mine && s.phase === "move" && s.steps.length > 0);
  on("confirm", mine && s.complete);
  on("hint", !s.game_over);
  on("resign", !s.game_over);
  on("play-typed", mine && s.phase === "move");
  $("next").hidden = !(s.game_over && !s.match_over);
  $("next").disabled = false;
  $("pid").textContent = s.position_id || "-";
  $("mid").textContent = s.match_id || "-";
  $("save").href = `/api/v1/games/${s.id}/mat`;
  $("save-sgf").href = `/api/v1/games/${s.id}/sgf`;
  $("players").textContent = `${s.names.you} (light) against ${s.names.bot} (dark)`;
  $("score").textContent = `${kindText(s)}: ${s.names.you} ${s.score.you}, ${s.names.bot} ${s.score.bot}` +
    (s.crawford ? " (Crawford game)" : "") + (s.match_over ? " - match over" : "");
  $("pips").textContent = `Pips: ${s.names.you} ${s.pips.you}, ${s.names.bot} ${s.pips.bot}`;
}

function signed(x) { return (x >= 0 ? "+" : "") + x.toFixed(3); }
function pct(x) { return (100 * x).toFixed(1); }

// The hint: a table of the best moves (a click on a row plays it), or the cube advice in lines.
// The headings say what the moves are ranked by, as the server sends it: MWC % and EMG in a match,
// cubeful equity in money play with the cube, cubeless equity otherwise; a cubeful measure has
// the cubeless equity in a column of its own.
function hintBox() {
  const box = $("hint-box"), h = state.hint;
  box.hidden = !h;
  box.innerHTML = "";
  if (!h) return;
  if (!h.moves) {
    for (const line of h.text) {
      const div = document.createElement("div");
      div.textContent = line;
      box.appendChild(div);
    }
    return;
  }
  const playable = canPlay();
  const title = document.createElement("div");
  const depth = h.ply === null || h.ply === undefined ? "" : ` at ${h.ply}-ply`;
  const known = (x) => x !== null && x !== undefined;
  const match = h.moves.some((m) => known(m.mwc));
  const cubeful = match || h.moves.some((m) => known(m.cubeful_equity));
  const by = h.moves.some((m) => known(m.equity)) ? (match ? ", ranked by MWC and EMG" : cubeful ? ", ranked by cubeful equity" : ", ranked by cubeless equity") : "";
  title.textContent = `${h.legal_moves} legal move${h.legal_moves === 1 ? "" : "s"}; the best by ${h.by || "the legal order"}${depth}${by}` +
    (playable ? " (click a row to play it):" : ":");
  box.appendChild(title);
  const wrap = document.createElement("div");
  wrap.className = "scroll";
  const table = document.createElement("table");
  table.id = "hint-table";
  if (match) table.className = "match";
  else if (cubeful) table.className = "cubeful";
  const probs = h.moves.some((m) => m.probabilities);
  const ranked = (m) => (cubeful ? m.cubeful_equity : m.equity);
  // [heading, what it means, class]
  const cols = [["#", "rank", "rank"], ["Move", "", "move"]];
  if (match) cols.push(["MWC %", "match winning chances after the move, cubeful, at the score", "num"],
    ["EMG", "cubeful equity at the score after the move (normalised to the cube: EMG)", "num"]);
  else if (cubeful) cols.push(["Cubeful equity", "cubeful money equity after the move, per unit of the cube", "num"]);
  else cols.push(["Equity cubeless", "cubeless money equity after the move", "num"]);
  cols.push(["Diff", `${match ? "EMG" : cubeful ? "cubeful equity" : "equity"} minus the best move's`, "num"]);
  if (cubeful) cols.push(["Cubeless", "cubeless money equity after the move", "num cubeless"]);
  if (probs) cols.push(["Win", "win %", "num"], ["W g", "win a gammon or backgammon %", "num"], ["W bg", "win a backgammon %", "num bg"],
    ["L g", "lose a gammon or backgammon %", "num"], ["L bg", "lose a backgammon %", "num bg"]);
  const head = table.createTHead().insertRow();
  for (const [text, what, cls] of cols) {
    const th = document.createElement("th");
    th.textContent = text;
    th.scope = "col";
    th.className = cls;
    if (what) th.title = what;
    head.appendChild(th);
  }
  const body = table.createTBody();
  const best = ranked(h.moves[0]);
  h.moves.forEach((m, i) => {
    const tr = body.insertRow();
    tr.className = "hint-row";
    tr.dataset.move = m.notation;
    const value = ranked(m);
    const cells = [`${i + 1}.`, m.notation];
    if (match) cells.push(known(m.mwc) ? (100 * m.mwc).toFixed(2) : "");
    cells.push(known(value) ? signed(value) : "");
    cells.push(i === 0 || !known(value) || !known(best) ? "" : (value - best).toFixed(3));
    if (cubeful) cells.push(known(m.equity) ? signed(m.equity) : "");
    if (probs) {
      const p = m.probabilities;
      cells.push(...(p ? [pct(p.win), pct(p.win_gammon), pct(p.win_backgammon), pct(p.lose_gammon), pct(p.lose_backgammon)] : ["", "", "", "", ""]));
    }
    cells.forEach((text, k) => {
      const td = tr.insertCell();
      td.textContent = text;
      td.className = cols[k][2];
    });
    if (playable) {
      tr.tabIndex = 0;
      tr.title = `play ${m.notation}`;
      tr.addEventListener("click", () => act("move", { move: m.notation }));
      tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); act("move", { move: m.notation }); } });
    }
  });
  wrap.appendChild(table);
  box.appendChild(wrap);
  if (probs) {
    const note = document.createElement("div");
    note.className = "note";
    note.textContent = "Chances in %; gammons count backgammons too.";
    box.appendChild(note);
  }
}

function canPlay() {
  return state && state.turn === "you" && state.phase === "move" && !state.game_over;
}

// ---- resigning: asked first, then sent -------------------------------------------------------

const RESULT = { single: 1, gammon: 2, backgammon: 3 };
const RESULT_WORDS = { single: "a single game", gammon: "a gammon", backgammon: "a backgammon" };

function askResign(kind) {
  const box = $("resign-confirm");
  if (!kind || !state || state.game_over) { box.hidden = true; return; }
  const c = state.cube;
  // What the bot would win: the cube's value times the result (a gammon counts single under the
  // Jacoby rule while the cube has not been turned).
  const mult = state.jacoby && c.value === 1 ? 1 : RESULT[kind];
  const points = mult * c.value;
  $("resign-question").textContent = `Resign ${RESULT_WORDS[kind]}? You lose ${points} point${points === 1 ? "" : "s"} if ${state.names.bot} accepts.`;
  box.dataset.kind = kind;
  box.hidden = false;
  $("resign-yes").focus();
}

// ---- starting anew: asked first while a match (or money game) is in progress ----------------

// A match not over, or a money game not over (between money games nothing is left unfinished).
function inProgress(s) {
  return Boolean(s) && !s.match_over && !(s.match_length === 0 && s.game_over);
}

function askStart(length, jacoby) {
  const box = $("start-confirm");
  if (!inProgress(state)) { box.hidden = true; newGame(length, jacoby); return; }
  const wanted = kindText({ match_length: length, jacoby: jacoby && length === 0 });
  $("start-question").textContent = `Start a new ${wanted}? The ${kindText(state)} in progress ` +
    `(${state.names.you} ${state.score.you}, ${state.names.bot} ${state.score.bot}) ends unfinished; ` +
    "save it first (.mat, .sgf) to keep it.";
  box.dataset.length = String(length);
  box.dataset.jacoby = String(Boolean(jacoby));
  box.hidden = false;
  $("start-yes").focus();
}

// ---- the board --------------------------------------------------------------------------------

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// Text that reads upright in either orientation, centred on (x, y).
function label(parent, x, y, text, attrs) {
  const a = Object.assign({ x, y, "text-anchor": "middle", "dominant-baseline": "central" }, attrs || {});
  if (G.portrait) a.transform = `rotate(-90 ${x} ${y})`;
  return el("text", a, parent, text);
}

// Column 0..11 left to right; the top row holds points 13..24, the bottom row 12..1.
function columnX(c) { return c < 6 ? G.LEFT + c * G.W : G.RIGHT + (c - 6) * G.W; }
function pointPlace(p) { return p >= 13 ? { c: p - 13, top: true } : { c: 12 - p, top: false }; }

// The centre of the k-th checker (from the edge) on point p (1..24), the bar (25 yours, "bot"
// the bot's) or the tray (0 yours, "botoff" the bot's).
function spot(p, k) {
  if (p === BAR) return { x: G.BAR_X + G.BAR_W / 2, y: G.MID + G.R + 22 + Math.min(k, 3) * (2 * G.R - 8) };
  if (p === "bot") return { x: G.BAR_X + G.BAR_W / 2, y: G.MID - G.R - 22 - Math.min(k, 3) * (2 * G.R - 8) };
  if (p === OFF) return { x: G.TRAY_X + 30, y: G.H - G.M - 8 };
  if (p === "botoff") return { x: G.TRAY_X + 30, y: G.M + 8 };
  const { c, top } = pointPlace(p), cx = columnX(c) + G.W / 2, j = Math.min(k, G.STACK - 1);
  return { x: cx, y: top ? G.M + G.R + j * 2 * G.R : G.H - G.M - G.R - j * 2 * G.R };
}

function checker(g, cx, cy, mine, text) {
  el("circle", { cx, cy, r: G.R, fill: mine ? "var(--light)" : "var(--dark)", stroke: mine ? "#8a7d66" : "#000", "stroke-width": 1.5, class: mine ? "checker mine" : "checker theirs" }, g);
  if (text) label(g, cx, cy, text, { "font-size": 16, "font-weight": "bold", fill: mine ? "#222" : "#eee" });
}

function view(s) { return { points: s.points.slice(), bar: Object.assign({}, s.bar), off: Object.assign({}, s.off), pips: s.pips }; }

// Before the server's first answer the board is drawn at the opening (no dice, the cube centred),
// so that the page's first paint shows a board rather than an empty space.
const OPENING = (() => {
  const points = Array(26).fill(0);
  for (const [p, n] of [[24, 2], [13, 5], [8, 3], [6, 5]]) { points[p] = n; points[25 - p] = -n; }
  return { points, bar: { you: 0, bot: 0 }, off: { you: 0, bot: 0 }, pips: { you: 167, bot: 167 },
           cube: { value: 1, owner: "centre" }, names: { you: "You", bot: "the bot" }, bot_moves: [],
           steps: [], dice: null, game_over: false, phase: "opening", on_roll: null };
})();

// Draw the board: the state's (the opening before there is one), or ``v`` (a board on the way
// through the bot's move).
function draw(v, extra) {
  G = geometry($("table").clientWidth < NARROW ? TALL : WIDE);
  const svg = $("board"), s = state || OPENING;
  v = v || view(s);
  extra = extra || {};
  svg.innerHTML = "";
  svg.setAttribute("viewBox", G.portrait ? `0 0 ${G.H} ${G.WIDTH}` : `0 0 ${G.WIDTH} ${G.H}`);
  svg.classList.toggle("portrait", G.portrait);
  const defs = el("defs", {}, svg);
  const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "var(--accent)" }, marker);
  const root = el("g", G.portrait ? { transform: `translate(${G.H} 0) rotate(90)` } : {}, svg);
  boardRoot = root;
  el("rect", { x: 0, y: 0, width: G.TRAY_X - 8, height: G.H, fill: "var(--wood)", rx: 8 }, root);
  el("rect", { x: G.LEFT, y: G.M, width: 6 * G.W, height: G.H - 2 * G.M, fill: "var(--felt)" }, root);
  el("rect", { x: G.RIGHT, y: G.M, width: 6 * G.W, height: G.H - 2 * G.M, fill: "var(--felt)" }, root);
  const dests = destinations();
  for (let p = 1; p <= 24; p++) drawPoint(root, p, v.points[p], dests.includes(p));
  drawBar(root, v);
  drawTray(root, v, dests.includes(OFF), s);
  drawCube(root, s);
  drawDice(root, s, extra.botDice);
  if (extra.marks !== false) drawBotMarks(root, s);
  if (selected !== null) drawTargets(root, v, dests);
  window.bgnetLayout = G.portrait ? "portrait" : "landscape";
}

function destinations() {
  if (selected === null || !state || !state.destinations) return [];
  return state.destinations[String(selected)] || [];
}

function drawPoint(root, p, n, dest) {
  const { c, top } = pointPlace(p), x = columnX(c), cx = x + G.W / 2;
  const g = el("g", { class: "point" + (selected === p ? " sel" : "") + (dest ? " dest" : ""), id: `pt-${p}`, "data-point": p }, root);
  // The whole half column, its number included, takes a click.
  el("rect", { x, y: top ? 0 : G.MID, width: G.W, height: G.MID, fill: "transparent", class: "hit" }, g);
  const tip = top ? G.M + G.LEN : G.H - G.M - G.LEN, base = top ? G.M : G.H - G.M;
  el("polygon", { points: `${x + 1},${base} ${x + G.W - 1},${base} ${cx},${tip}`, fill: p % 2 ? "#c9b48a" : "#8c3b2e" }, g);
  label(g, cx, top ? G.M / 2 : G.H - G.M / 2, p, { "font-size": G.FONT, fill: "#f0e6d0", class: "label point-number" });
  const count = Math.abs(n);
  for (let k = 0; k < Math.min(count, G.STACK); k++) {
    const { x: sx, y: sy } = spot(p, k);
    checker(g, sx, sy, n > 0, k === G.STACK - 1 && count > G.STACK ? String(count) : "");
  }
}

function drawBar(root, v) {
  const mine = el("g", { class: "point" + (selected === BAR ? " sel" : ""), id: "pt-25", "data-point": BAR }, root);
  el("rect", { x: G.BAR_X, y: G.MID, width: G.BAR_W, height: G.MID - G.M, fill: "transparent", class: "hit" }, mine);
  for (let k = 0; k < Math.min(v.bar.you, 4); k++) {
    const { x, y } = spot(BAR, k);
    checker(mine, x, y, true, k === 3 && v.bar.you > 4 ? String(v.bar.you) : "");
  }
  const theirs = el("g", { id: "bar-bot" }, root);
  for (let k = 0; k < Math.min(v.bar.bot, 4); k++) {
    const { x, y } = spot("bot", k);
    checker(theirs, x, y, false, k === 3 && v.bar.bot > 4 ? String(v.bar.bot) : "");
  }
}

// The borne-off checkers in the tray, each side's pip count labelled in its own half.
function drawTray(root, v, dest, s) {
  const half = G.MID - G.M - 46, pitch = Math.min(13, half / 15), h = pitch - 2;
  el("rect", { x: G.TRAY_X - 4, y: 0, width: G.TRAY_W, height: G.H, fill: "var(--wood)", rx: 8 }, root);
  el("rect", { x: G.TRAY_X, y: G.M, width: 60, height: half + 6, fill: "#4a3320", id: "tray-bot" }, root);
  const off = el("g", { class: "point tray" + (dest ? " dest" : ""), id: "pt-0", "data-point": OFF }, root);
  el("rect", { x: G.TRAY_X, y: G.H - G.M - half - 6, width: 60, height: half + 6, fill: "#4a3320", class: "hit" }, off);
  for (let k = 0; k < v.off.bot; k++) el("rect", { x: G.TRAY_X + 6, y: G.M + 3 + k * pitch, width: 48, height: h, rx: 2, fill: "var(--dark)", stroke: "#000" }, root);
  for (let k = 0; k < v.off.you; k++) el("rect", { x: G.TRAY_X + 6, y: G.H - G.M - 3 - h - k * pitch, width: 48, height: h, rx: 2, fill: "var(--light)", stroke: "#8a7d66" }, off);
  const dy = G.portrait ? 38 : 20, size = G.portrait ? 14 : 13;
  label(root, G.TRAY_X + 30, G.MID - dy, `pips ${v.pips.bot}`, { "font-size": size, fill: "#ddd", id: "pips-bot", class: "label pips", "aria-label": `${s.names.bot}: ${v.pips.bot} pips` });
  label(root, G.TRAY_X + 30, G.MID + dy, `pips ${v.pips.you}`, { "font-size": size, fill: "#fff", "font-weight": "bold", id: "pips-you", class: "label pips", "aria-label": `${s.names.you}: ${v.pips.you} pips` });
}

function cubeAt(root, cx, cy, size, value, attrs) {
  const g = el("g", attrs, root);
  el("rect", { x: cx - size / 2, y: cy - size / 2, width: size, height: size, rx: 5, fill: "#f7f3ea", stroke: "#333", "stroke-width": 1.5 }, g);
  label(g, cx, cy, String(value), { "font-size": size * 0.5, "font-weight": "bold", fill: "#222" });
  return g;
}

// The cube on the bar (at its owner's side, or centred at 64); a cube offered is drawn turned to
// the value offered, in the middle of the doubler's half of the board.
function drawCube(root, s) {
  const c = s.cube, cx = G.BAR_X + G.BAR_W / 2, size = Math.min(36, G.BAR_W - 6);
  if (c.offered && !s.game_over) {
    const x = c.offered_by === "bot" ? G.LEFT + 3 * G.W : G.RIGHT + 3 * G.W;
    cubeAt(root, x, G.MID, 50, c.offered, { id: "cube", class: "offered", "data-value": c.offered, "data-owner": "offered", "data-offered-by": c.offered_by });
    return;
  }
  const y = c.owner === "bot" ? G.M + size / 2 + 4 : c.owner === "you" ? G.H - G.M - size / 2 - 4 : G.MID;
  cubeAt(root, cx, y, size, c.owner === "centre" && c.value === 1 ? 64 : c.value, { id: "cube", "data-value": c.value, "data-owner": c.owner });
}

const PIPS = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]], 4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]], 6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };

function die(root, x, y, size, d, light, cls) {
  const g = el("g", { class: cls, "data-value": d }, root);
  el("rect", { x, y, width: size, height: size, rx: 6, fill: light ? "#fffaf0" : "#2b1d14", stroke: "#111" }, g);
  for (const [dx, dy] of PIPS[d]) el("circle", { cx: x + size / 2 + dx * size / 4, cy: y + size / 2 + dy * size / 4, r: size / 11, fill: light ? "#111" : "#eee" }, g);
  return g;
}

// The dice: the bot's last roll in its half (the left) until you roll, yours in the right half
// (a used die fades).
function drawDice(root, s, botDice) {
  const bot = botDice || (s.bot_moves.length && !s.game_over && !s.cube.offered ? s.bot_moves[s.bot_moves.length - 1].dice : null);
  if (bot) {
    const size = 40, x0 = G.LEFT + 3 * G.W - size - 5;
    bot.forEach((d, i) => die(root, x0 + i * (size + 10), G.MID - size / 2, size, d, false, "die bot"));
  }
  if (botDice || !s.dice || s.game_over || s.phase !== "move" || s.on_roll !== "you") return;
  const all = s.dice[0] === s.dice[1] ? [s.dice[0], s.dice[0], s.dice[0], s.dice[0]] : [Math.max(...s.dice), Math.min(...s.dice)];
  const left = [...s.dice_left];
  const sz = all.length === 4 ? 32 : 40;
  const x0 = G.RIGHT + 3 * G.W - (all.length * (sz + 8) - 8) / 2;
  all.forEach((d, i) => {
    const k = left.indexOf(d);
    const used = k < 0;
    if (k >= 0) left.splice(k, 1);
    const g = die(root, x0 + i * (sz + 8), G.MID - sz / 2, sz, d, true, "die you" + (used ? " used" : ""));
    if (used) g.setAttribute("opacity", 0.35);
  });
}

// Where a step of the bot's move starts and ends on the drawing ("bot" its bar, "botoff" its tray).
function botPoint(p) { return p === 25 ? "bot" : p === 0 ? "botoff" : 25 - p; }
function pointOf(p) { return p === "bot" ? 25 : p === "botoff" ? 0 : p; }

function count(v, p) {
  if (p === "bot") return v.bar.bot;
  if (p === "botoff" || p === OFF || p === BAR) return 0;
  return Math.abs(v.points[p]);
}

// The steps of a move joined where one checker goes on (13/9 9/6 is one checker, 13/6): lists
// of the points each checker passes, numbered from the bot's side.
function chains(steps) {
  const out = [];
  for (const st of steps) {
    const open = out.find((c) => c[c.length - 1] === st.from && c.open);
    if (open) open.push(st.to);
    else { const c = [st.from, st.to]; c.open = true; out.push(c); }
    if (st.hit) out.forEach((c) => { if (c[c.length - 1] === st.to) c.open = false; });
  }
  return out;
}

// The bot's last move: each checker's start ringed (dashed), its end ringed, an arrow between.
function drawBotMarks(root, s) {
  if (!s.bot_moves.length || s.steps.length) return;
  const m = s.bot_moves[s.bot_moves.length - 1];
  const marks = el("g", { id: "bot-move", "data-move": m.notation, "pointer-events": "none" }, root);
  const v = view(s);
  const hits = new Set(m.steps.filter((st) => st.hit).map((st) => st.to));
  for (const chain of chains(m.steps)) {
    const a = botPoint(chain[0]), b = botPoint(chain[chain.length - 1]);
    const from = spot(a, Math.min(count(v, a), G.STACK - 1)), to = spot(b, Math.max(count(v, b) - 1, 0));
    const via = chain.slice(1, -1).map((p) => spot(botPoint(p), Math.max(count(v, botPoint(p)), 0)));
    const path = [from, ...via, to].map((q) => `${q.x},${q.y}`).join(" ");
    const hit = chain.slice(1).some((p) => hits.has(p));
    el("circle", { cx: from.x, cy: from.y, r: G.R - 2, class: "bot-from", "data-point": pointOf(a), fill: "none" }, marks);
    el("polyline", { points: path, class: "bot-arrow" + (hit ? " hit" : ""), fill: "none", "marker-end": "url(#arrow)" }, marks);
    el("circle", { cx: to.x, cy: to.y, r: G.R + 2, class: "bot-to" + (hit ? " hit" : ""), "data-point": pointOf(b), fill: "none" }, marks);
  }
}

// Where the picked checker may go: a dot on each point it may reach (the tray to bear off); a
// ring round the top checker of a stack too tall to show a free place.
function drawTargets(root, v, dests) {
  const g = el("g", { id: "targets", "pointer-events": "none" }, root);
  for (const p of dests) {
    const n = p === OFF ? 0 : v.points[p];
    const full = n >= G.STACK;
    const at = p === OFF ? spot(OFF, 0) : spot(p, n < 0 ? 0 : Math.min(n, G.STACK - 1));
    el("circle", { cx: at.x, cy: at.y, r: full ? G.R + 2 : G.R * 0.55, class: full ? "target ring" : "target", "data-point": p }, g);
  }
}

// ---- the bot's move, in motion ------------------------------------------------------------------

function applyStep(v, st, back) {
  const a = botPoint(st.from), b = botPoint(st.to);
  const take = (p, d) => { if (p === "bot") v.bar.bot += d; else if (p === "botoff") v.off.bot += d; else v.points[p] -= d; };
  if (!back) {
    take(a, -1);
    if (st.hit) { v.points[b] = 0; v.bar.you += 1; }
    take(b, 1);
  } else {
    take(b, -1);
    if (st.hit) { v.points[b] = 1; v.bar.you -= 1; }
    take(a, 1);
  }
}

function sleep(ms) { return new Promise((ok) => setTimeout(ok, ms)); }

// The board as it was before the bot's moves, then each checker sliding to its point; the last
// drawing is the state's own, with the move marked.
async function animateBotMoves(s) {
  const reduce = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  if (reduce) { draw(); return; }
  const token = {};
  animation = token;
  window.bgnetAnimating = true;
  const v = view(s);
  for (const m of s.bot_moves.slice().reverse()) for (const st of m.steps.slice().reverse()) applyStep(v, st, true);
  try {
    for (const m of s.bot_moves) {
      draw(v, { botDice: m.dice, marks: false });
      await sleep(STEP_MS);
      for (const st of m.steps) {
        if (animation !== token) return;
        const a = botPoint(st.from), b = botPoint(st.to);
        const start = spot(a, Math.max(count(v, a) - 1, 0));
        const lifted = view(v);
        if (a === "bot") lifted.bar.bot -= 1; else lifted.points[a] += 1;
        const end = spot(b, st.hit ? 0 : count(v, b));
        draw(lifted, { botDice: m.dice, marks: false });
        const ghost = el("circle", { cx: start.x, cy: start.y, r: G.R, fill: "var(--dark)", stroke: "var(--accent)", "stroke-width": 2, class: "ghost" }, boardRoot);
        const t0 = performance.now();
        while (animation === token) {
          const f = Math.min(1, (performance.now() - t0) / STEP_MS);
          ghost.setAttribute("cx", start.x + (end.x - start.x) * f);
          ghost.setAttribute("cy", start.y + (end.y - start.y) * f);
          if (f >= 1) break;
          await new Promise((ok) => requestAnimationFrame(ok));
        }
        applyStep(v, st, false);
      }
    }
  } finally {
    if (animation === token) finishAnimation();
  }
}

function finishAnimation() {
  if (animation === null) return;
  animation = null;
  window.bgnetAnimating = false;
  if (state) draw();
}

// ---- clicks and drags -------------------------------------------------------------------------

function pointAt(x, y) {
  let e = document.elementFromPoint(x, y);
  while (e && e !== document.body) {
    if (e.dataset && e.dataset.point !== undefined && e.tagName.toLowerCase() === "g") return Number(e.dataset.point);
    e = e.parentNode;
  }
  return null;
}

function mineAt(p) {
  if (p === BAR) return state.bar.you > 0;
  return p >= 1 && p <= 24 && state.points[p] > 0;
}

function canPick() {
  return state && !busy && state.turn === "you" && state.phase === "move" && !state.game_over;
}

function movable(p) { return Boolean((state.destinations || {})[String(p)]); }

function onDown(ev) {
  if (animation) { finishAnimation(); return; }
  if (!canPick()) return;
  const p = pointAt(ev.clientX, ev.clientY);
  if (p === null) return;
  ev.preventDefault();
  if (selected === null) {
    if (!mineAt(p)) { say(p === OFF ? "Pick a checker first, then click the tray to bear it off." : "Pick one of your checkers (the light ones) first.", true); return; }
    if (!movable(p)) {
      say(state.bar.you > 0 && p !== BAR ? "Your checker on the bar must enter first: pick it." : "That checker cannot move with the dice left.", true);
      return;
    }
    selected = p;
    dragFrom = p;
    say(`From ${p === BAR ? "the bar" : p}: the marked points are where it may go.`);
    draw();
  } else if (p === selected) {
    selected = null;
    draw();
  } else if (mineAt(p) && movable(p) && !destinations().includes(p)) {
    selected = p;  // another checker picked instead
    dragFrom = p;
    draw();
  } else {
    act("step", { from: selected, to: p });
  }
}

function onUp(ev) {
  if (dragFrom === null) return;
  const from = dragFrom;
  dragFrom = null;
  const p = pointAt(ev.clientX, ev.clientY);
  if (p !== null && p !== from && selected === from) act("step", { from, to: p });
}

// ---- wiring -----------------------------------------------------------------------------------

function wire() {
  const svg = $("board");
  svg.addEventListener("pointerdown", onDown);
  window.addEventListener("pointerup", onUp);
  for (const b of document.querySelectorAll("#controls button")) {
    b.addEventListener("click", () => act(b.dataset.action));
  }
  $("resign").addEventListener("click", () => askResign($("resign-kind").value));
  $("resign-yes").addEventListener("click", () => {
    const kind = $("resign-confirm").dataset.kind;
    askResign(null);
    act("resign", { kind });
  });
  $("resign-no").addEventListener("click", () => { askResign(null); say("Not resigned: play on."); });
  $("typed").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("move-text").value.trim();
    if (text) act("move", { move: text }).then(() => { if (!$("message").classList.contains("error")) $("move-text").value = ""; });
  });
  $("length").addEventListener("change", jacobyAllowed);
  $("new-match").addEventListener("submit", (ev) => { ev.preventDefault(); askStart(Number($("length").value), $("jacoby").checked); });
  $("start-yes").addEventListener("click", () => {
    const box = $("start-confirm"), length = Number(box.dataset.length), jacoby = box.dataset.jacoby === "true";
    box.hidden = true;
    newGame(length, jacoby);
  });
  $("start-no").addEventListener("click", () => { $("start-confirm").hidden = true; say("Not started: play on."); });
  for (const b of document.querySelectorAll("button.copy")) {
    b.addEventListener("click", () => copy($(b.dataset.copy).textContent));
  }
  let portrait = null;
  window.addEventListener("resize", () => {
    const now = $("table").clientWidth < NARROW;
    if (state && now !== portrait && !animation) draw();
    portrait = now;
  });
}

function copy(text) {
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(() => say(`Copied ${text}.`));
  } else {
    const t = document.createElement("textarea");
    t.value = text;
    document.body.appendChild(t);
    t.select();
    try { document.execCommand("copy"); say(`Copied ${text}.`); } catch (e) { say("Select the ID and copy it.", true); }
    t.remove();
  }
}

window.bgnetAnimating = false;
wire();
draw();  // the board at once, before the server's answer
say("Setting up the game...");
resume();
