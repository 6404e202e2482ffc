// The play page. The server is the judge of every move: this script draws the state it sends
// (from the player's side: points 1..24, player's checkers positive, the bot's negative), sends
// each click or action, and shows the answer. No libraries, nothing loaded from elsewhere.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const W = 46, R = 21, TOP = 20, BOTTOM = 480, BAR_X = 296, BAR_W = 44, TRAY_X = 644;
const BAR = 25, OFF = 0;
const $ = (id) => document.getElementById(id);

let state = null;      // the last state the server sent
let selected = null;   // the point a checker was picked from
let dragFrom = null;   // set between pressing on a checker and releasing
let shownLog = 0;      // log lines of this game already shown (the server counts them)
let busy = false;

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

async function act(action, body) {
  if (!state || busy) return;
  busy = true;
  try {
    show(await api("POST", `/api/v1/games/${state.id}/${action}`, body || {}));
  } catch (e) {
    say(e.message, true);
    if (e.status === 404) localStorage.removeItem("bgnet-game");
  } finally {
    busy = false;
    selected = null;
    if (state) { draw(); controls(); }
    window.bgnetAnswers = (window.bgnetAnswers || 0) + 1;  // answers received, errors included
  }
}

async function newGame(length) {
  busy = true;
  try {
    show(await api("POST", "/api/v1/games", { match_length: length }));
    localStorage.setItem("bgnet-game", state.id);
  } catch (e) {
    say(e.message, true);
  } finally {
    busy = false;
    if (state) controls();
    window.bgnetAnswers = (window.bgnetAnswers || 0) + 1;
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
  await newGame(0);
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
  draw();
  controls();
  hintBox();
}

function statusText(s, news) {
  let text = news.slice(-3).join(" ");
  if (s.game_over) return text;
  if (s.turn === "you") {
    if (s.phase === "move") text += s.steps.length ? ` Played so far: ${s.steps_notation}.` : " Your move: click a checker, then where it goes.";
    else if (s.phase === "roll") text += " Roll or double.";
    else if (s.phase === "doubled") text += " Take or drop?";
  }
  return text.trim();
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
  $("players").textContent = `${s.names.you} (light) against ${s.names.bot} (dark)`;
  const len = s.match_length ? `${s.match_length}-point match` : "money";
  $("score").textContent = `${len}: ${s.names.you} ${s.score.you}, ${s.names.bot} ${s.score.bot}; pips ${s.pips.you} to ${s.pips.bot}` +
    (s.crawford ? " (Crawford game)" : "") + (s.match_over ? " - match over" : "");
}

function hintBox() {
  const box = $("hint-box"), h = state.hint;
  box.hidden = !h;
  box.innerHTML = "";
  if (!h) return;
  if (h.moves) {
    const title = document.createElement("div");
    title.textContent = `${h.legal_moves} legal move${h.legal_moves === 1 ? "" : "s"}; the best by ${h.by || "the legal order"}:`;
    box.appendChild(title);
    const table = document.createElement("table");
    h.moves.forEach((m, i) => {
      const tr = table.insertRow();
      const win = m.probabilities ? `${(100 * m.probabilities.win).toFixed(1)}%` : "";
      for (const text of [`${i + 1}.`, m.notation, m.equity === null ? "" : (m.equity >= 0 ? "+" : "") + m.equity.toFixed(3), win]) {
        tr.insertCell().textContent = text;
      }
    });
    box.appendChild(table);
  } else {
    for (const line of h.text) {
      const div = document.createElement("div");
      div.textContent = line;
      box.appendChild(div);
    }
  }
}

// ---- the board --------------------------------------------------------------------------------

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// Column 0..11 left to right; the top row holds points 13..24, the bottom row 12..1.
function columnX(c) { return c < 6 ? 20 + c * W : BAR_X + BAR_W + (c - 6) * W; }
function pointPlace(p) {
  return p >= 13 ? { c: p - 13, top: true } : { c: 12 - p, top: false };
}

function checker(g, cx, cy, mine, label) {
  el("circle", { cx, cy, r: R, fill: mine ? "var(--light)" : "var(--dark)", stroke: mine ? "#8a7d66" : "#000", "stroke-width": 1.5, class: mine ? "checker mine" : "checker theirs" }, g);
  if (label) el("text", { x: cx, y: cy + 5, "text-anchor": "middle", "font-size": 15, "font-weight": "bold", fill: mine ? "#222" : "#eee" }, g, label);
}

function draw() {
  const svg = $("board"), s = state;
  svg.innerHTML = "";
  el("rect", { x: 0, y: 0, width: 636, height: 500, fill: "var(--wood)", rx: 8 }, svg);
  el("rect", { x: 20, y: TOP, width: 6 * W, height: BOTTOM - TOP, fill: "var(--felt)" }, svg);
  el("rect", { x: BAR_X + BAR_W, y: TOP, width: 6 * W, height: BOTTOM - TOP, fill: "var(--felt)" }, svg);
  for (let p = 1; p <= 24; p++) drawPoint(svg, p, s.points[p]);
  drawBar(svg, s);
  drawTrays(svg, s);
  drawCube(svg, s);
  drawDice(svg, s);
}

function drawPoint(svg, p, n) {
  const { c, top } = pointPlace(p), x = columnX(c), cx = x + W / 2;
  const g = el("g", { class: "point" + (selected === p ? " sel" : ""), id: `pt-${p}`, "data-point": p }, svg);
  el("rect", { x, y: top ? TOP : 250, width: W, height: 230, fill: "transparent" }, g);
  const tip = top ? TOP + 190 : BOTTOM - 190, base = top ? TOP : BOTTOM;
  el("polygon", { points: `${x + 1},${base} ${x + W - 1},${base} ${cx},${tip}`, fill: p % 2 ? "#c9b48a" : "#8c3b2e" }, g);
  el("text", { x: cx, y: top ? 14 : 495, "text-anchor": "middle", "font-size": 11, fill: "#f0e6d0" }, svg, p);
  const count = Math.abs(n);
  for (let k = 0; k < Math.min(count, 5); k++) {
    const cy = top ? TOP + R + k * 2 * R : BOTTOM - R - k * 2 * R;
    checker(g, cx, cy, n > 0, k === 4 && count > 5 ? String(count) : "");
  }
}

function drawBar(svg, s) {
  const cx = BAR_X + BAR_W / 2;
  const mine = el("g", { class: "point" + (selected === BAR ? " sel" : ""), id: "pt-25", "data-point": BAR }, svg);
  el("rect", { x: BAR_X, y: 270, width: BAR_W, height: 190, fill: "transparent" }, mine);
  for (let k = 0; k < Math.min(s.bar.you, 4); k++) checker(mine, cx, 300 + k * 32, true, k === 3 && s.bar.you > 4 ? String(s.bar.you) : "");
  const theirs = el("g", { id: "bar-bot" }, svg);
  for (let k = 0; k < Math.min(s.bar.bot, 4); k++) checker(theirs, cx, 200 - k * 32, false, k === 3 && s.bar.bot > 4 ? String(s.bar.bot) : "");
}

function drawTrays(svg, s) {
  el("rect", { x: TRAY_X - 4, y: 0, width: 80, height: 500, fill: "var(--wood)", rx: 8 }, svg);
  el("rect", { x: TRAY_X, y: TOP, width: 60, height: 206, fill: "#4a3320" }, svg);
  const off = el("g", { class: "point tray", id: "pt-0", "data-point": OFF }, svg);
  el("rect", { x: TRAY_X, y: 274, width: 60, height: 206, fill: "#4a3320" }, off);
  for (let k = 0; k < s.off.bot; k++) el("rect", { x: TRAY_X + 6, y: TOP + 4 + k * 13, width: 48, height: 11, rx: 3, fill: "var(--dark)", stroke: "#000" }, svg);
  for (let k = 0; k < s.off.you; k++) el("rect", { x: TRAY_X + 6, y: BOTTOM - 15 - k * 13, width: 48, height: 11, rx: 3, fill: "var(--light)", stroke: "#8a7d66" }, off);
  el("text", { x: TRAY_X + 30, y: 244, "text-anchor": "middle", "font-size": 13, fill: "#ddd", id: "pips-bot" }, svg, `${s.pips.bot}`);
  el("text", { x: TRAY_X + 30, y: 264, "text-anchor": "middle", "font-size": 13, fill: "#fff", id: "pips-you" }, svg, `${s.pips.you}`);
}

function drawCube(svg, s) {
  const y = s.cube.owner === "bot" ? 24 : s.cube.owner === "you" ? 440 : 232;
  const g = el("g", { id: "cube" }, svg);
  el("rect", { x: BAR_X + 4, y, width: 36, height: 36, rx: 5, fill: "#f7f3ea", stroke: "#333" }, g);
  el("text", { x: BAR_X + 22, y: y + 24, "text-anchor": "middle", "font-size": 17, "font-weight": "bold", fill: "#222" }, g, s.cube.owner === "centre" && s.cube.value === 1 ? "64" : String(s.cube.value));
}

const PIPS = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]], 4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]], 6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };

function drawDice(svg, s) {
  if (!s.dice || s.game_over || s.phase !== "move") return;
  const all = s.dice[0] === s.dice[1] ? [s.dice[0], s.dice[0], s.dice[0], s.dice[0]] : [Math.max(...s.dice), Math.min(...s.dice)];
  const left = s.turn === "you" ? [...s.dice_left] : [];
  const size = all.length === 4 ? 32 : 40;
  const x0 = s.on_roll === "you" ? 420 : 80;
  all.forEach((d, i) => {
    const k = left.indexOf(d);
    const used = s.on_roll === "you" && k < 0;
    if (k >= 0) left.splice(k, 1);
    const g = el("g", { class: "die" + (used ? " used" : ""), opacity: used ? 0.35 : 1 }, svg);
    const x = x0 + i * (size + 10), y = 250 - size / 2;
    el("rect", { x, y, width: size, height: size, rx: 6, fill: s.on_roll === "you" ? "#fffaf0" : "#2b1d14", stroke: "#111" }, g);
    for (const [dx, dy] of PIPS[d]) el("circle", { cx: x + size / 2 + dx * size / 4, cy: y + size / 2 + dy * size / 4, r: size / 11, fill: s.on_roll === "you" ? "#111" : "#eee" }, g);
  });
}

// ---- clicks and drags -------------------------------------------------------------------------

function pointAt(x, y) {
  let e = document.elementFromPoint(x, y);
  while (e && e !== document.body) {
    if (e.dataset && e.dataset.point !== undefined) return Number(e.dataset.point);
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

function onDown(ev) {
  if (!canPick()) return;
  const p = pointAt(ev.clientX, ev.clientY);
  if (p === null) return;
  ev.preventDefault();
  if (selected === null) {
    if (!mineAt(p)) { say(p === OFF ? "Pick a checker first, then click the tray to bear it off." : "Click one of your checkers (the light ones) first.", true); return; }
    selected = p;
    dragFrom = p;
    draw();
  } else if (p === selected) {
    selected = null;
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
  $("resign").addEventListener("click", () => act("resign", { kind: $("resign-kind").value }));
  $("typed").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("move-text").value.trim();
    if (text) act("move", { move: text }).then(() => { if (!$("message").classList.contains("error")) $("move-text").value = ""; });
  });
  $("new-match").addEventListener("submit", (ev) => { ev.preventDefault(); newGame(Number($("length").value)); });
  for (const b of document.querySelectorAll("button.copy")) {
    b.addEventListener("click", () => copy($(b.dataset.copy).textContent));
  }
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

wire();
resume();
