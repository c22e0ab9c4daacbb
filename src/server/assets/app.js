// The mancaladb web board: talks to the JSON API of `mancaladb serve` only.
"use strict";

const $ = (id) => document.getElementById(id);
const DEFAULT_BOARD = [1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0];
// Most seeds a pit can hold: all 48 of the game's.
const MAX_PIT = 48;
const RULES = ["awari", "abapa"];

// Seeds in a whole game: captures and the board's seeds add up to it.
const GAME_SEEDS = 48;
// The players: A is to move when a board is set, B is the other. The board
// turns after every move (the player to move has the bottom row), so the
// page names them wherever the two sides are told apart.
const PLAYERS = ["A", "B"];
// Seconds an answer may take before the page gives up and offers a retry:
// just above the server's own limit (30 s, after which it answers 503), so
// that a longer wait is a server stopped or hung, not one at work.
const ANSWER_SECONDS = 35;
// Plies of the principal line shown before "show all".
const LINE_SHOWN = 24;

const state = {
  board: null, // set from the address at start
  rules: "awari",
  // The rule sets with levels here, once /api/levels has answered.
  served: null,
  // The answer of /api/levels asked for at start (a promise).
  levelsServed: null,
  // Seeds taken so far by the player to move and by the opponent: counted
  // from the moves played since the board was set, or given by the address
  // (captured=M,O, as the API takes it).
  captured: [0, 0],
  // Who is to move: 0 for A, 1 for B (PLAYERS).
  side: 0,
  // Whether the address's moves are being played (replay): no step may
  // be taken meanwhile.
  pending: false,
  // The address written for the game shown (writeAddress), to tell a
  // Back or Forward to another one.
  address: null,
  // The steps taken back, to go forward to again (redo), nearest first,
  // shaped as history's; tip is the position after the last of them
  // ({ board, captured, side, rules }). A new step other than the next of
  // them drops them.
  ahead: [],
  tip: null,
  // What the retry button does after a failure: null to ask for the board
  // shown again.
  retry: null,
  // The positions before each step taken since the board was set, oldest
  // first: { board, captured, side, rules, step }, where step is
  // { kind: "move", pit, captures }, { kind: "edit" } (a run of edits in
  // edit mode, taken back as one), { kind: "set" } (a board typed in) or
  // { kind: "rules", to } (the rule set changed).
  history: [],
  // Whether the last step was an edit, which the next edit joins.
  editing: false,
  // What the user did to get the board shown ("You sowed pit 5 ..."),
  // said with its value once the answer comes.
  done: "",
  analysis: null, // the last answer of /api/awari for state.board
  // The pit the principal line of state.board plays first, once it is in:
  // the best move that b and the button play (the lowest best pit could
  // go round for ever where the line cashes the win).
  linePit: null,
  // What the address asked for that is not shown (a bad board, rules not
  // served): said with every answer until the board is changed.
  notices: [],
  // The newest request of each kind: answers to older ones are dropped,
  // so that a slow answer never overwrites a newer one.
  request: 0,
  typedRequest: 0,
  histRequest: 0,
  levelsRequest: 0,
  omwesoRequest: 0,
  // Where the keyboard focus goes back to once the board can take it: the
  // pit that had it when a redraw disabled or replaced it, and whether it
  // was on the moves table (whose rows go with every new board).
  focusPit: null,
  focusMoves: false,
};

function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// One AbortController per kind of request: a new request of a kind
// aborts the one before it, whose answer would be dropped anyway, so that
// it neither holds one of the browser's few connections to the server nor
// keeps the server working.
const controllers = {};
function freshSignal(kind) {
  if (controllers[kind]) controllers[kind].abort();
  controllers[kind] = new AbortController();
  return controllers[kind].signal;
}

// The JSON answer of url; an error answer throws with the API's message,
// or with the HTTP status where the body is not JSON (a 414 or 431 has
// none); a server that cannot be reached, or that has not answered within
// ANSWER_SECONDS, throws saying so. The error's status is the
// HTTP status, 0 for a server not reached or not answering. A request
// aborted through signal throws its AbortError, which callers drop with the
// answers of requests no longer current.
async function getJSON(url, signal) {
  const seconds = ANSWER_SECONDS;
  const failure = (message, status) => Object.assign(new Error(message), { status });
  // The request stops at the caller's abort or at the time limit,
  // whichever comes first.
  const own = new AbortController();
  const abort = () => own.abort();
  if (signal) {
    if (signal.aborted) own.abort();
    signal.addEventListener("abort", abort);
  }
  let late = false;
  const timer = setTimeout(() => { late = true; own.abort(); }, seconds * 1000);
  const why = (e) => late ? failure(`the server has not answered within ${seconds} s`, 0) : e;
  try {
    let r;
    try {
      r = await fetch(url, { signal: own.signal });
    } catch (e) {
      if (e.name === "AbortError") throw why(e);
      throw failure("the server cannot be reached (is mancaladb serve still running?)", 0);
    }
    const status = `HTTP ${r.status} ${r.statusText}`.trim();
    let body;
    try {
      body = await r.json();
    } catch (e) {
      if (e.name === "AbortError") throw why(e);
      throw failure(r.ok ? status + ": the answer is not JSON" : status, r.status);
    }
    // A 404 of one level missing names it (missing_level), for the
    // message that says so (boardErrorText).
    if (!r.ok) throw Object.assign(failure((body && body.error) || status, r.status),
      { missingLevel: body && body.missing_level });
    return body;
  } finally {
    clearTimeout(timer);
    if (signal) signal.removeEventListener("abort", abort);
  }
}

// Whether error e may go away when the request is made again: the server
// not reached, not answering or failing.
function retryable(e) {
  return e.status === 0 || e.status >= 500;
}

// The message of error e, with how to retry in the view that shows it
// (retry) when a retry may mend it: the server not reached or failing.
function withRetry(e, retry) {
  return retryable(e) ? e.message + "; " + retry : e.message;
}

// A path and its query string, built by URLSearchParams so that every
// value is encoded.
function apiURL(path, params) {
  return path + "?" + new URLSearchParams(params);
}

// The board in text ("1,1,1,...", "1 1 1 ...", or the API's
// "[1,1,1,...]"): { board }, twelve whole pit counts of 0..MAX_PIT that
// hold at most a game's seeds, or { error } saying what is wrong. The
// total is checked here, before anything changes: the server refuses it
// too, but only once the board shown and its moves were gone.
function parseBoard(text) {
  const words = String(text).trim().replace(/^\[|\]$/g, "").split(/[\s,]+/).filter((w) => w);
  const count = (w) => /^\d{1,3}$/.test(w) && Number(w) <= MAX_PIT;
  if (words.length !== 12 || !words.every(count)) return { error: `is not twelve pit counts from 0 to ${MAX_PIT}, separated by commas or spaces` };
  const board = words.map(Number);
  const seeds = seedsOn(board);
  if (seeds > GAME_SEEDS) return { error: `holds ${seeds} seeds, more than a game's ${GAME_SEEDS}` };
  return { board };
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
}

function signed(v) {
  return v >= 0 ? "+" + v : String(v);
}

function mode() {
  return document.querySelector("input[name=mode]:checked").value;
}

// ---- the board ----

// Whether the keyboard focus is on nothing, or waits on the status line
// for the board to take it back.
function focusWaiting() {
  const a = document.activeElement;
  return !a || a === document.body || a === $("status");
}

// The pit whose redrawn button is to get the keyboard focus: the one that
// has it, or the one a redraw took it from (focus then waits) while the
// user has not moved it elsewhere; null otherwise.
function pitToFocus() {
  const a = document.activeElement;
  if (a && a.classList && a.classList.contains("pit")) return Number(a.dataset.pit);
  if (focusWaiting()) return state.focusPit;
  return null;
}

// Gives the keyboard focus to pit p, or to the first pit that takes a
// click if p does not; while none does (the game is over, a move's answer
// is on its way or failed), p is kept for the next redraw and the focus
// waits on the status line, which says why, rather than falling to the
// page's body, where a screen reader or keyboard user loses their place.
function restorePitFocus(p) {
  const pits = [p, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((q) => $("pit-" + q));
  const target = pits.find((b) => b && !b.disabled);
  state.focusPit = p;
  if (!target) {
    $("status").focus();
    return;
  }
  target.focus();
  if (document.activeElement === target) state.focusPit = null;
}

// Focus the user moves to anything else is not taken back by a redraw
// (the status line only holds it for the board).
function forgetFocus(ev) {
  const t = ev.target;
  if (t === $("status")) return;
  if (!(t.classList && t.classList.contains("pit"))) state.focusPit = null;
  if (!(t.closest && t.closest("#moves"))) state.focusMoves = false;
}

// The board's buttons, drawn afresh; the pit that had the keyboard focus
// keeps it, or gets it back once the answer enables it (else the first
// pit that takes a click does).
function renderBoard() {
  const top = $("row-top"), bottom = $("row-bottom");
  const focused = pitToFocus();
  top.replaceChildren();
  bottom.replaceChildren();
  const legal = new Set((state.analysis ? state.analysis.moves : []).map((m) => m.pit));
  const best = new Set(state.analysis ? state.analysis.best : []);
  for (const [row, pits] of [[top, [11, 10, 9, 8, 7, 6]], [bottom, [0, 1, 2, 3, 4, 5]]]) {
    for (const p of pits) {
      const b = document.createElement("button");
      b.className = "pit";
      b.id = "pit-" + p;
      b.dataset.pit = p;
      b.textContent = state.board[p];
      const label = document.createElement("small");
      label.textContent = p;
      b.appendChild(label);
      const seeds = state.board[p] === 1 ? "1 seed" : state.board[p] + " seeds";
      let name = `pit ${p}, ${seeds}, ${p < 6 ? "player to move" : "opponent"}`;
      if (mode() === "play") {
        b.disabled = !(p < 6 && legal.has(p));
        if (best.has(p) && p < 6) {
          b.classList.add("best");
          name += ", best move";
        }
      }
      b.setAttribute("aria-label", name);
      // What clicks and keys do on a pit in the mode shown.
      b.setAttribute("aria-describedby", "mode-hint");
      // A click (Enter, Space) plays the pit, or in edit mode does what
      // the edit tools say (shift reverses it).
      b.addEventListener("click", (ev) => clickPit(p, ev.shiftKey ? -1 : 1));
      b.addEventListener("keydown", (ev) => {
        if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
        // Left and right go to the next pit of the row that takes a click.
        const step = { ArrowLeft: -1, ArrowRight: 1 }[ev.key];
        if (step) {
          ev.preventDefault();
          focusAlongRow(p, step);
          return;
        }
        // In edit mode the keyboard adds and takes away seeds, whatever
        // the edit tools say.
        const delta = { "-": -1, Delete: -1, Backspace: -1, ArrowDown: -1, "+": 1, ArrowUp: 1 }[ev.key];
        if (mode() !== "edit" || !delta) return;
        ev.preventDefault();
        editPit(p, delta);
      });
      // Taking a seed away is for edit mode; in play mode the menu stays.
      b.addEventListener("contextmenu", (ev) => {
        if (mode() !== "edit") return;
        ev.preventDefault();
        clickPit(p, -1);
      });
      row.appendChild(b);
    }
  }
  if (focused !== null) restorePitFocus(focused);
  // A move is played in play mode only; edit mode sets seeds.
  const playing = mode() === "play";
  $("best").disabled = !playing;
  $("edit-tools").hidden = playing;
  for (const table of ["moves", "line"]) {
    $(table).classList.toggle("inactive", !playing);
    for (const button of $(table).querySelectorAll("button")) button.disabled = !playing;
  }
  // Undo is offered only with a move to take back; the focus it had waits
  // on the status line rather than falling to the page's body.
  const undoFocused = document.activeElement === $("undo");
  $("undo").disabled = !state.history.length;
  if (undoFocused && $("undo").disabled) $("status").focus();
}

// Moves the keyboard focus from pit p to the nearest pit in direction step
// (-1 left, 1 right) of the same row that takes a click, if there is one.
function focusAlongRow(p, step) {
  const row = p < 6 ? [0, 1, 2, 3, 4, 5] : [11, 10, 9, 8, 7, 6];
  for (let i = row.indexOf(p) + step; i >= 0 && i < row.length; i += step) {
    const b = $("pit-" + row[i]);
    if (b && !b.disabled) {
      b.focus();
      return;
    }
  }
}

// A click on pit p: in play mode it plays the pit; in edit mode it adds a
// seed or takes one away, as the edit tools say, the other way round with
// reverse (a shift-click).
function clickPit(p, reverse) {
  if (mode() === "play") {
    if (reverse > 0) play(p);
    return;
  }
  const tool = Number(document.querySelector("input[name=edit-delta]:checked").value);
  editPit(p, tool * reverse);
}

// Adds delta seeds to pit p (edit mode).
function editPit(p, delta) {
  if (delta > 0 && seedsOn(state.board) >= GAME_SEEDS) {
    // Refused as a typed board is: the board shown stays.
    showError(`an Oware board holds at most ${GAME_SEEDS} seeds: take one away first`);
    return;
  }
  const b = state.board.slice();
  b[p] = Math.min(MAX_PIT, Math.max(0, b[p] + delta));
  // Nothing to take from an empty pit: no step.
  if (b[p] === state.board[p]) return;
  edited(b, state.captured, state.side, `${delta > 0 ? "Added a seed to" : "Took a seed from"} pit ${p}.`);
}

// Shows board, edited from the one shown (the captures and the player to
// move as given): a step that undo takes back, together with the edits
// just before it. Captures that no longer fit beside the board's seeds in
// a game are counted from 0 again.
function edited(board, captured, side, done) {
  if (state.pending) return;
  if (!state.editing) pushStep({ kind: "edit" });
  state.ahead = [];
  const fits = seedsOn(board) + captured[0] + captured[1] <= GAME_SEEDS;
  setBoard(board, { captured: fits ? captured : [0, 0], side, done, editing: true });
}

// Records the position shown before step, so that undo comes back to it.
function pushStep(step) {
  state.history.push({ board: state.board, captured: state.captured, side: state.side, rules: state.rules, step });
}

function play(pit) {
  // Edit mode sets seeds; no move is played, from the pits or the table;
  // nor while the address's moves are played.
  if (mode() !== "play" || state.pending) return;
  const m = state.analysis && state.analysis.moves.find((x) => x.pit === pit);
  if (!m) return;
  pushStep({ kind: "move", pit, captures: m.captures });
  // The move taken back before, played again, keeps those after it.
  const [redone] = state.ahead;
  state.ahead = redone && redone.step.kind === "move" && redone.step.pit === pit ? state.ahead.slice(1) : [];
  const next = turned(state, m.captures);
  const took = m.captures ? " and took " + m.captures : "";
  const done = `${PLAYERS[state.side]} sowed pit ${pit}${took}; the board turns: ${PLAYERS[next.side]} to move.`;
  setBoard(m.board, { ...next, done });
}

// The captures and the player to move after a move that takes captures
// from a position with these: the board turns, the opponent moves next,
// and the mover's captures are now the opponent's.
function turned({ captured: [mover, opponent], side }, captures) {
  return { captured: [opponent, mover + captures], side: 1 - side };
}

// What step i of the game did, from the position history[i] (the pieces
// of the Game list and of the status line).
// What step is, as the object of "Took back ..." and "Played again: ...".
function stepObject(step) {
  return { move: `pit ${step.pit}`, edit: "the edits", set: "the board typed in", rules: `rules: ${step.to}` }[step.kind];
}

function stepText({ side, step }) {
  if (step.kind === "edit") return "board edited";
  if (step.kind === "set") return "board typed in";
  if (step.kind === "rules") return `rules: ${step.to}`;
  return `${PLAYERS[side]} sowed pit ${step.pit}` + (step.captures ? `, took ${step.captures}` : "");
}

// Shows board (seen by the player to move). Options: captured, the seeds
// the player to move and the opponent have taken (zero by default, for a
// board set afresh); side, who is to move (0 for A, the default); clear,
// to forget the moves to take back (a board set by the address); notices,
// said with every answer; done, how the board came (a move, an undo), for
// screen readers; editing, whether this is an edit (the next one joins it);
// known, the answer for the position when it is in already.
function setBoard(board, { captured = [0, 0], side = 0, clear = false, notices = [], done = "", editing = false, known = null, pending = "" } = {}) {
  if (clear) {
    state.history = [];
    state.ahead = [];
  }
  state.editing = editing;
  state.notices = notices;
  state.done = done;
  state.board = board;
  state.captured = captured;
  state.side = side;
  state.analysis = null;
  state.linePit = null;
  // The text field follows the board only when the board changes, so that
  // text being typed survives the redraws of answers.
  $("board-text").value = board.join(",");
  if (pending) {
    // Not asked for yet (the address's moves are being played): nothing
    // to play, the address kept as given, nothing of another position.
    ++state.request;
    state.address = location.search;
    state.retry = null;
    $("value").textContent = pending;
    $("value").className = "";
    $("source").textContent = "";
    // The board's seeds and the captures so far are known without an
    // answer.
    showSeeds(board);
    $("score").textContent = scoreText(null);
    $("moves").tBodies[0].replaceChildren();
    $("line").replaceChildren();
    $("line-more").hidden = true;
    $("line-end").textContent = "";
    renderBoard();
    renderGame();
    return;
  }
  state.pending = false;
  state.retry = null;
  writeAddress();
  renderBoard();
  renderGame();
  analyze(known);
}

// Puts the game in the address, to share it or come back to it: the
// position after the last step that was not a move (an edit, a board typed
// in) or where the board was set, as board= and captured=, and the moves
// played from there as moves= (edits and boards typed in before them are
// not kept: the address holds the game since then).
function writeAddress() {
  let from = state.history.length;
  while (from > 0 && state.history[from - 1].step.kind === "move") from--;
  const base = from < state.history.length ? state.history[from] : state;
  const played = state.history.slice(from).map((e) => e.step.pit);
  // The moves taken back too, up to the first other step, and where the
  // game shown stands among them (at=).
  let after = 0;
  while (after < state.ahead.length && state.ahead[after].step.kind === "move") after++;
  const redo = state.ahead.slice(0, after).map((e) => e.step.pit);
  const q = new URLSearchParams({ board: base.board.join(",") });
  if (state.rules !== "awari") q.set("rules", state.rules);
  if (base.captured[0] || base.captured[1]) q.set("captured", base.captured.join(","));
  if (played.length + redo.length) q.set("moves", [...played, ...redo].join(","));
  if (redo.length) q.set("at", played.length);
  // Commas unescaped, so that the address reads as it is shared.
  state.address = "?" + q.toString().replace(/%2C/g, ",");
  history.replaceState(null, "", state.address + location.hash);
}

// Plays pits, the moves of the address, from the position shown, asking
// the server for each position's moves in turn; a pit that cannot be
// played stops them there, with a notice. Dropped once anything newer is
// asked for.
async function replay(pits, stop = pits.length) {
  const shown = state.request;
  state.pending = true;
  // The moves of an earlier try are in the history already.
  const done = state.history.length;
  const steps = [];
  let at = { board: state.board, captured: state.captured, side: state.side };
  let notice = "";
  for (const [k, pit] of pits.entries()) {
    $("value").textContent = `playing the address's moves: ${done + k + 1} of ${done + pits.length}`;
    let a;
    try {
      a = await getJSON(apiURL("api/awari", positionQuery(at.board, at.captured)), freshSignal("replay"));
    } catch (e) {
      if (e.name === "AbortError" || shown !== state.request) return;
      // Where it stopped, the moves played so far to take back, and a
      // retry that goes on from there while nothing else was done.
      state.history.push(...steps);
      setBoard(at.board, { ...at, notices: state.notices, pending: "no value" });
      state.pending = false;
      // (setBoard took a new request: anything newer drops this one.)
      const id = state.request;
      const message = await boardErrorText(e, at.board);
      if (id !== state.request) return;
      showError([...state.notices, `moves=: the position before move ${done + k + 1}: ${message}`].join("; "));
      // (Any other board shown since drops it: setBoard.)
      state.retry = () => replay(pits.slice(k), stop);
      $("retry").hidden = !retryable(e);
      return;
    }
    if (shown !== state.request) return;
    const m = a.moves.find((x) => x.pit === pit);
    if (!m) {
      notice = `moves=: pit ${pit} cannot be played at move ${done + k + 1}: showing the position before it`;
      break;
    }
    steps.push({ ...at, rules: state.rules, step: { kind: "move", pit, captures: m.captures } });
    at = { board: m.board, ...turned(at, m.captures) };
  }
  state.history.push(...steps);
  // The moves after the first stop (at=) are taken back, to go forward
  // to again.
  if (stop < state.history.length) {
    state.ahead = state.history.splice(stop);
    state.tip = { ...at, rules: state.rules };
    at = state.ahead[0];
  }
  setBoard(at.board, { captured: at.captured, side: at.side, notices: [...state.notices, notice].filter((n) => n) });
}

// The Game list: the position the board was set to, then each step taken
// since; each but the last (the position shown) is a button that goes back
// to the position after it.
function renderGame() {
  const ol = $("played");
  ol.replaceChildren();
  const n = state.history.length;
  $("turn").textContent = `${PLAYERS[state.side]} to move` + (n ? ` (last: ${stepText(state.history[n - 1])}),` : ",");
  // Redo is offered only with a step to play again; the focus it had
  // waits on the status line.
  const redoFocused = document.activeElement === $("redo");
  $("redo").disabled = !state.ahead.length;
  if (redoFocused && $("redo").disabled) $("status").focus();
  if (!n && !state.ahead.length) return;
  const first = n ? state.history[0] : state;
  // The start, the steps taken (back to them), the position shown, and
  // the steps taken back (forward to them), greyed.
  const items = ["start: " + first.board.join(" "), ...state.history.map(stepText), ...state.ahead.map(stepText)];
  items.forEach((text, i) => {
    const li = document.createElement("li");
    if (i === n) {
      li.textContent = text;
      li.setAttribute("aria-current", "step");
    } else {
      const forward = i > n;
      li.className = forward ? "ahead" : "";
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = text;
      button.setAttribute("aria-label", `go ${forward ? "forward" : "back"} to the position after: ${text}`);
      button.addEventListener("click", () => {
        const said = `Went ${forward ? "forward" : "back"} to the position after: ${text}.`;
        if (forward) goForward(i - n - 1, said);
        else goBack(i, said);
        // The list is drawn afresh: the focus waits on the status line.
        $("status").focus();
      });
      li.appendChild(button);
    }
    ol.appendChild(li);
  });
  // The position shown in sight, in the list's own scroll.
  const current = ol.querySelector("[aria-current]");
  ol.scrollTop = current.offsetTop - ol.clientHeight / 2;
}

// Shows the position before step k of the game, taking back that step and
// those after it (to go forward to again); done says so to screen readers.
function goBack(k, done) {
  if (k >= state.history.length || state.pending) return;
  if (!state.ahead.length) state.tip = { board: state.board, captured: state.captured, side: state.side, rules: state.rules };
  state.ahead = [...state.history.splice(k), ...state.ahead];
  show(state.ahead[0], done);
}

// Shows the position after step i of those taken back, going forward
// through it and those before it.
function goForward(i, done) {
  if (i >= state.ahead.length || state.pending) return;
  state.history.push(...state.ahead.splice(0, i + 1));
  show(state.ahead.length ? state.ahead[0] : state.tip, done);
}

// Shows position p of the game (a step's entry, or the tip), under its
// rules.
function show(p, done) {
  if (p.rules !== state.rules) setRules(p.rules);
  setBoard(p.board, { captured: p.captured, side: p.side, done });
}

function redo() {
  if (!state.ahead.length) return;
  const { step } = state.ahead[0];
  goForward(0, `Played again: ${stepObject(step)}.`);
}

// The query of board's position with captured: with the whole game's
// seeds accounted for, the answer says what each side ends with (the
// principal line takes no captures).
function positionQuery(board, captured) {
  const q = { board: board.join(","), rules: state.rules };
  const whole = seedsOn(board) + captured[0] + captured[1] === GAME_SEEDS;
  return whole ? { ...q, captured: captured.join(",") } : q;
}

// Asks for the answers of the board shown, or takes known, the answer of
// its position already in.
async function analyze(known = null) {
  const id = ++state.request;
  const q = { board: state.board.join(","), rules: state.rules };
  const say = (error) => showError([...state.notices, error].filter((m) => m).join("; "));
  if (state.notices.length) say("");
  else $("error").hidden = true;
  $("retry").hidden = true;
  // The moves table's rows go: focus in it waits on the status line, and
  // comes back to the new first row.
  if ($("moves").contains(document.activeElement)) state.focusMoves = true;
  $("moves").tBodies[0].replaceChildren();
  if (state.focusMoves && focusWaiting()) $("status").focus();
  $("line").replaceChildren();
  $("line-more").hidden = true;
  $("line-end").textContent = "";
  $("value").textContent = "waiting for the server's answer";
  // Not in the colour of the last position's value.
  $("value").className = "";
  $("source").textContent = "";
  showSeeds(state.board);
  $("score").textContent = scoreText(null);
  $("said").textContent = "";
  const signal = freshSignal("board");
  try {
    const a = known || await getJSON(apiURL("api/awari", positionQuery(state.board, state.captured)), signal);
    if (id !== state.request) return;
    state.analysis = a;
    state.retry = null;
    renderAnalysis(a);
    $("score").textContent = scoreText(a);
    renderBoard();
  } catch (e) {
    if (id !== state.request) return;
    const message = await boardErrorText(e);
    if (id !== state.request) return;
    say(message); // announced: role=alert
    $("retry").hidden = !retryable(e);
    $("value").textContent = "no value";
    $("said").textContent = state.done;
    renderBoard();
    return;
  }
  $("said").textContent = announcement(state.analysis);
  try {
    const line = await getJSON(apiURL("api/awari/mainline", q), signal);
    if (id !== state.request) return;
    renderLine(line);
    if (line.line.length) state.linePit = line.line[0].pit;
  } catch (e) {
    if (id !== state.request) return;
    say("principal line: " + e.message);
    $("retry").hidden = !retryable(e);
  }
}

// The message for error e of board's answer (the board shown by
// default). A level not here is said with the levels that are, or as the
// one level missing (the server's 404 names its directory, which tells
// the user nothing).
async function boardErrorText(e, board = state.board) {
  if (e.status !== 404) return e.message;
  const beyond = await beyondLevels(board);
  if (beyond) return beyond;
  if (Number.isInteger(e.missingLevel)) return `level ${e.missingLevel} of the ${state.rules} tables, which this position needs, is not built here`;
  return e.message;
}

// Why board cannot be valued here, if it has more seeds than the highest
// readable level of the rules shown ("this position has 20 seeds; ...");
// "" when it has not, or the levels are not known.
async function beyondLevels(board) {
  // A player to move without seeds: valued by the rules, from no level.
  if (board.slice(0, 6).every((n) => n === 0)) return "";
  const info = await state.levelsServed.catch(() => null);
  const served = info && info.rules.find((r) => r.rules === state.rules);
  const levels = served ? served.levels.filter((l) => !l.error).map((l) => l.seeds) : [];
  const seeds = seedsOn(board);
  if (!levels.length || seeds <= Math.max(...levels)) return "";
  return `this position has ${seeds} seeds; the ${state.rules} tables here go up to ${Math.max(...levels)}`;
}

// What a screen reader is told once the answer for the board is in: one
// message with what was done and the new position's value, rather than
// the pieces of the status line as they are cleared and refilled.
function announcement(a) {
  const status = [$("seeds"), $("value"), $("source")].map((e) => e.textContent).filter((t) => t).join(" ");
  const over = a.moves.length ? "" : " " + $("moves").tBodies[0].textContent + ".";
  return [state.done, status + "." + over].filter((t) => t).join(" ");
}

// The status line's seed count of board.
function showSeeds(board) {
  const seeds = seedsOn(board);
  $("seeds").textContent = (seeds === 1 ? "1 seed" : seeds + " seeds") + ",";
}

function seedsOn(board) {
  return board.reduce((a, b) => a + b, 0);
}

// The seeds A and B have taken so far, and with final (the API's answer
// when the whole game's seeds are accounted for) what each ends with.
// The seeds A and B have taken so far, and with the answer a for the
// position, how the game ends under best play: what each ends with when
// the whole game's seeds are accounted for (the API's final), else who
// ends ahead, by the captures so far and the value.
function scoreText(a) {
  const [ca, cb] = byPlayer(state.captured);
  let text = `captured so far: A ${ca}, B ${cb}`;
  if (a && a.final) {
    const [fa, fb] = byPlayer([a.final.mover, a.final.opponent]);
    text += ` · with best play A ends with ${fa} and B with ${fb} of ${GAME_SEEDS}`;
  } else if (a && (ca || cb)) {
    const ahead = ca - cb + (state.side === 0 ? a.value : -a.value);
    text += " · with best play " + (ahead === 0 ? "the game is a draw" : `${ahead > 0 ? "A" : "B"} ends ${Math.abs(ahead)} ahead`);
  }
  return text;
}

// A pair of counts for the player to move and the opponent, as [A's, B's].
function byPlayer([mover, opponent]) {
  return state.side === 0 ? [mover, opponent] : [opponent, mover];
}

function renderAnalysis(a) {
  const v = $("value");
  // With no move left and the whole game's seeds known, the game's result
  // (a value of 0 is no draw of a game 22 to 26).
  const [m, o] = a.final && !a.moves.length ? [a.final.mover, a.final.opponent] : [null, null];
  const mover = PLAYERS[state.side], opponent = PLAYERS[1 - state.side];
  const says = m === null ? `${a.category} for ${mover}, to move`
    : "game over: " + (m === o ? "a drawn game" : `${m > o ? mover : opponent} wins the game`);
  v.textContent = "value " + signed(a.value) + " (" + says + ")";
  v.className = a.category;
  const sources = { "one-ply": "· not stored: valued from its moves", rules: "· no move: valued by the rules" };
  $("source").textContent = sources[a.source] || "";
  const body = $("moves").tBodies[0];
  for (const m of a.moves) {
    const tr = document.createElement("tr");
    tr.className = m.category;
    tr.dataset.pit = m.pit;
    for (const cell of [m.pit, signed(m.value), m.captures, m.category]) {
      const td = document.createElement("td");
      td.textContent = cell;
      tr.appendChild(td);
    }
    // The pit is a button, for the keyboard.
    buttonInFirstCell(tr, m.pit, "play pit " + m.pit);
    tr.addEventListener("click", () => play(m.pit));
    body.appendChild(tr);
  }
  const first = body.querySelector("button");
  if (state.focusMoves && first && focusWaiting()) {
    first.focus();
    state.focusMoves = false;
  }
  if (a.moves.length === 0) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = 4;
    td.textContent = a.seeds === 0 ? "the board is empty: the game is over" : "no move: the opponent takes the rest";
    tr.appendChild(td);
    body.appendChild(tr);
  }
}

// The principal line: its first LINE_SHOWN plies, the rest behind a
// button; each ply after the first is a button that plays the line up to
// it.
function renderLine(l) {
  const ol = $("line");
  const plies = l.line.map((p, k) => {
    const li = document.createElement("li");
    const who = PLAYERS[(state.side + k) % 2];
    const text = `${who}: ${p.board.join(" ")}  pit ${p.pit}` + (p.captures ? " takes " + p.captures : "") + " (" + signed(p.value) + ")";
    if (k === 0) {
      li.textContent = text;
    } else {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "ply";
      button.textContent = text;
      button.setAttribute("aria-label", `play the line up to ply ${k + 1}: ${text}`);
      button.disabled = mode() !== "play";
      button.addEventListener("click", () => followLine(l.line, k));
      li.appendChild(button);
    }
    return li;
  });
  ol.replaceChildren(...plies.slice(0, LINE_SHOWN));
  const more = $("line-more");
  more.hidden = plies.length <= LINE_SHOWN;
  more.textContent = `show all ${plies.length} plies`;
  more.onclick = () => {
    // Playable as the mode is now, not as it was when they were made.
    for (const button of plies.slice(LINE_SHOWN).flatMap((li) => [...li.querySelectorAll("button")])) {
      button.disabled = mode() !== "play";
    }
    ol.append(...plies.slice(LINE_SHOWN));
    more.hidden = true;
    // The focus goes on to the first ply shown (the button is gone).
    const next = plies[LINE_SHOWN].querySelector("button");
    if (next) next.focus();
  };
  const ends = {
    "game-over": "game over",
    "cycle": "the position before ply " + ((l.cycle_ply || 0) + 1) + " repeats: endless play, the rest is split",
    "no-progress": "the position before ply " + ((l.cycle_ply || 0) + 1) + " repeats at a value other than 0: "
      + "the search for progress gave up at this level, so this line does not show how the side ahead gets its value",
    "limit": "cut at " + l.line.length + " plies",
    "level-missing": "level " + l.missing_level + " is not present",
  };
  $("line-end").textContent = "end: " + (ends[l.line_end] || l.line_end);
}

// Plays the first k plies of the principal line (its plies from the
// position shown), each a step undo takes back.
function followLine(line, k) {
  // The line of the position shown only, once its answer is in.
  if (mode() !== "play" || state.pending || !state.analysis) return;
  let at = { captured: state.captured, side: state.side };
  // The steps taken back stay when the line plays them again.
  const again = line.slice(0, k).every((p, j) => state.ahead[j] && state.ahead[j].step.kind === "move" && state.ahead[j].step.pit === p.pit);
  state.ahead = again ? state.ahead.slice(k) : [];
  // Ply p of the line is played from p.board, the position before it.
  for (const p of line.slice(0, k)) {
    state.history.push({ board: p.board, ...at, rules: state.rules, step: { kind: "move", pit: p.pit, captures: p.captures } });
    at = turned(at, p.captures);
  }
  const done = `Played the principal line for ${k} ${k === 1 ? "ply" : "plies"}; ${PLAYERS[at.side]} to move.`;
  setBoard(line[k].board, { ...at, done });
  // The button clicked is gone with the old line: the keyboard focus waits
  // on the status line, which says what came of it.
  $("status").focus();
}

// Makes the first cell of table row tr a button showing text, named label
// for screen readers; its click, like one anywhere on the row, reaches the
// row's handler.
function buttonInFirstCell(tr, text, label) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = text;
  button.setAttribute("aria-label", label);
  tr.cells[0].replaceChildren(button);
}

// ---- levels ----

// The Levels view of the rule set chosen on the board. A newer call, the
// view left or the rules changed (each takes state.levelsRequest on) stops
// it at its next answer.
async function showLevels() {
  const rules = state.rules;
  const id = ++state.levelsRequest;
  const current = () => id === state.levelsRequest;
  const signal = freshSignal("levels");
  $("levels-error").hidden = true;
  let info;
  try {
    info = await getJSON("api/levels", signal);
  } catch (e) {
    if (current()) levelsError(withRetry(e, "open Levels again to retry"));
    return;
  }
  if (!current()) return;
  // A level that cannot be read is listed with its error and not charted.
  const served = info.rules.find((r) => r.rules === rules);
  const all = served ? served.levels : [];
  const levels = all.filter((l) => !l.error);
  $("levels-rules").textContent = rules;
  const body = $("levels-table").tBodies[0];
  body.replaceChildren();
  if (!levels.length) {
    ++state.histRequest; // an answer still on its way is not shown
    if (controllers.histogram) controllers.histogram.abort();
    $("hist-title").textContent = "Values of a level";
    $("hist").textContent = "No level of " + rules + " rules is here.";
  }
  const shares = new Map(); // seeds -> the row's won/drawn/lost cell
  for (const l of all) {
    const tr = document.createElement("tr");
    const cells = l.error
      ? [l.seeds, l.error]
      : [l.seeds, l.positions.toLocaleString(), l.bytes.toLocaleString(), l.verified === null ? "?" : l.verified ? "yes" : "no", l.uncompressed ? "yes" : "no", "…"];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    if (l.error) {
      tr.className = "loss";
      tr.cells[1].colSpan = 5;
    } else {
      shares.set(l.seeds, tr.cells[5]);
      // The seed count is a button, for the keyboard.
      buttonInFirstCell(tr, l.seeds, "show the values of level " + l.seeds);
      tr.addEventListener("click", () => showHistogram(rules, l.seeds));
    }
    body.appendChild(tr);
  }
  if (levels.length) showHistogram(rules, levels[levels.length - 1].seeds);
  // One stacked bar per level, filled in as each level's counts arrive.
  const w = 24, h = 160;
  const range = levels.length ? `, levels ${levels[0].seeds} to ${levels[levels.length - 1].seeds} seeds` : "";
  const chart = chartSVG("wdl-chart", levels.length * w + 40, h + 30,
    `Win, draw and loss shares of the ${rules} levels${range}; the table below gives them as text`);
  $("wdl").replaceChildren(chart);
  for (const [i, l] of levels.entries()) {
    chart.appendChild(svg("text", { x: 30 + i * w + w / 2, y: h + 20, "text-anchor": "middle" }, l.seeds));
  }
  for (const [i, l] of levels.entries()) {
    let s;
    try {
      s = await getJSON(statsURL(rules, l.seeds), signal);
    } catch (e) {
      if (!current()) return;
      const t = svg("text", { x: 30 + i * w + w / 2, y: h - 5, "text-anchor": "middle", class: "loss" }, "?");
      t.appendChild(svg("title", {}, `${l.seeds} seeds: ${e.message}`));
      chart.appendChild(t);
      shares.get(l.seeds).textContent = e.message;
      continue;
    }
    if (!current()) return;
    const pct = (count) => (100 * count / s.positions).toFixed(1) + " %";
    shares.get(l.seeds).textContent = `${pct(s.wins)} / ${pct(s.draws)} / ${pct(s.losses)}`;
    let y = 5;
    for (const [count, cls] of [[s.wins, "win"], [s.draws, "draw"], [s.losses, "loss"]]) {
      const bh = (h - 5) * count / s.positions;
      const r = svg("rect", { x: 30 + i * w + 2, y, width: w - 4, height: bh, class: cls });
      r.appendChild(svg("title", {}, `${l.seeds} seeds: ${cls} ${(100 * count / s.positions).toFixed(1)}%`));
      r.addEventListener("click", () => showHistogram(rules, l.seeds));
      chart.appendChild(r);
      y += bh;
    }
  }
}

// An empty chart of width by height named label for screen readers; its
// viewBox lets the style sheet shrink it to a narrow or zoomed page.
function chartSVG(id, width, height, label) {
  return svg("svg", { id, width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
}

// Says message in the Levels view, announced (role=alert).
function levelsError(message) {
  $("levels-error").textContent = message;
  $("levels-error").hidden = false;
}

// The address of the statistics of level n of rules.
function statsURL(rules, n) {
  return "api/stats/" + encodeURIComponent(rules) + "/" + encodeURIComponent(n);
}

// The histogram of the values of level n of rules; a newer call drops
// this one's answer.
async function showHistogram(rules, n) {
  const id = ++state.histRequest;
  $("hist-title").textContent = "Values of level " + n + " (" + rules + ")";
  $("hist").textContent = "counting…";
  $("levels-error").hidden = true;
  let s;
  try {
    s = await getJSON(statsURL(rules, n), freshSignal("histogram"));
  } catch (e) {
    if (id !== state.histRequest) return;
    $("hist").textContent = "";
    levelsError(`values of level ${n}: ` + withRetry(e, "click the level's seed count to retry"));
    return;
  }
  if (id !== state.histRequest) return;
  const max = Math.max(...s.histogram), w = Math.max(6, Math.floor(600 / s.histogram.length)), h = 160;
  const chart = chartSVG("hist-chart", s.histogram.length * w + 20, h + 30,
    `Values of level ${n} (${rules}), from ${-n} to +${n}: ${s.positions.toLocaleString()} positions, mean ${s.mean.toFixed(3)}`);
  s.histogram.forEach((c, i) => {
    const v = i - n, bh = max ? (h * c) / max : 0;
    const cls = v > 0 ? "win" : v < 0 ? "loss" : "draw";
    const r = svg("rect", { x: 10 + i * w, y: h - bh, width: w - 1, height: bh, class: cls });
    r.appendChild(svg("title", {}, `value ${signed(v)}: ${c.toLocaleString()} positions`));
    chart.appendChild(r);
    if (v % 4 === 0) chart.appendChild(svg("text", { x: 10 + i * w + w / 2, y: h + 14, "text-anchor": "middle" }, v));
  });
  chart.appendChild(svg("text", { x: 10, y: h + 28 }, `${s.positions.toLocaleString()} positions, mean ${s.mean.toFixed(3)}`));
  $("hist").replaceChildren(chart);
}

// ---- Omweso ----

async function decideOmweso(ev) {
  ev.preventDefault();
  const words = (id) => $(id).value.trim().split(/[\s,]+/).filter((w) => w).join(",");
  const q = new URLSearchParams({ side: words("om-side") });
  // An empty field leaves the server's default.
  if ($("om-laps").value.trim()) q.set("max_laps", $("om-laps").value.trim());
  if (words("om-opp")) q.set("opponent", words("om-opp"));
  if ($("om-first").checked) q.set("first_turn", "true");
  const id = ++state.omwesoRequest;
  const body = $("om-starts").tBodies[0];
  body.replaceChildren();
  $("om-error").hidden = true;
  try {
    const r = await getJSON("api/omweso/loops?" + q, freshSignal("omweso"));
    if (id !== state.omwesoRequest) return;
    for (const s of r.starts) {
      const tr = document.createElement("tr");
      tr.className = s.verdict === "terminates" ? "win" : s.verdict === "undecided" ? "draw" : "loss";
      // An undecided start's laps are those followed before the budget ran
      // out, not a lap it was decided at.
      const laps = (s.verdict === "undecided" ? "not within " : "") + s.laps.toLocaleString();
      for (const c of [s.pit, s.direction, s.verdict, laps, s.period ?? ""]) {
        const td = document.createElement("td");
        td.textContent = c;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
  } catch (e) {
    if (id !== state.omwesoRequest) return;
    $("om-error").textContent = withRetry(e, "retry with the decide button");
    $("om-error").hidden = false;
  }
}

// ---- views and start ----

function showView() {
  // An address with another anchor shows the board, not an empty page.
  const asked = location.hash.slice(1);
  const view = ["board", "levels", "omweso"].includes(asked) ? asked : "board";
  for (const v of ["board", "levels", "omweso"]) {
    $("view-" + v).hidden = v !== view;
    // The link of the view shown says so to screen readers, and is marked.
    if (v === view) $("nav-" + v).setAttribute("aria-current", "page");
    else $("nav-" + v).removeAttribute("aria-current");
  }
  if (view === "levels") showLevels();
  else stopLevels();
}

// The Levels view's requests stop: their answers are dropped and those
// still on their way aborted.
function stopLevels() {
  ++state.levelsRequest;
  ++state.histRequest;
  for (const kind of ["levels", "histogram"]) if (controllers[kind]) controllers[kind].abort();
}

// Sets the rule set shown; the Levels view, when shown, follows it.
function setRules(rules) {
  state.rules = rules;
  $("rules").value = rules;
  if (!$("view-levels").hidden) showLevels();
  else stopLevels();
}

// The position the address asks for (board=, rules=, captured=) and the
// moves played from it (moves=): what of it can be shown, with a notice for
// each part that cannot.
function addressPosition() {
  const params = new URLSearchParams(location.search);
  const notices = [];
  const given = params.get("board");
  const parsed = given === null ? { board: DEFAULT_BOARD.slice() } : parseBoard(given);
  const board = parsed.board || DEFAULT_BOARD.slice();
  if (parsed.error) notices.push("board=" + given + " " + parsed.error + ": showing the default position");
  for (const key of new Set(params.keys())) {
    if (!["board", "rules", "captured", "moves", "at"].includes(key)) notices.push(key + "= is not a setting of this page (board, rules, captured, moves, at): ignored");
    else if (params.getAll(key).length > 1) notices.push(key + "= is given " + params.getAll(key).length + " times: the first is used");
  }
  const askedRules = params.get("rules");
  let rules = "awari";
  if (RULES.includes(askedRules)) rules = askedRules;
  else if (askedRules !== null) notices.push("rules=" + askedRules + " is not a rule set (" + RULES.join(" or ") + "): showing awari");
  if (state.served && !state.served.has(rules) && state.served.has("awari")) {
    notices.push(rules + " values are not served here: showing awari");
    rules = "awari";
  }
  let captured = parseCaptured(params.get("captured"), board);
  if (parsed.error && params.get("captured") !== null) {
    // The captures of a board not shown would make a game no one asked for.
    notices.push("captured=" + params.get("captured") + " goes with the board not shown: counting from 0");
    captured = [0, 0];
  } else if (captured === null) {
    notices.push("captured=" + params.get("captured") + " is not two seed counts that fit beside the board's: counting from 0");
    captured = [0, 0];
  }
  const givenMoves = params.get("moves");
  let moves = [];
  if (givenMoves !== null && parsed.error) {
    notices.push("moves=" + givenMoves + " go with the board not shown: ignored");
  } else if (givenMoves !== null) {
    const words = givenMoves.split(",").filter((w) => w.trim());
    if (words.every((w) => /^\s*[0-5]\s*$/.test(w))) moves = words.map(Number);
    else notices.push("moves=" + givenMoves + " is not pits 0 to 5 separated by commas: ignored");
  }
  const givenAt = params.get("at");
  let at = null;
  if (givenAt !== null) {
    if (/^\d+$/.test(givenAt) && Number(givenAt) <= moves.length) at = Number(givenAt);
    else notices.push(`at=${givenAt} is not a number of moves from 0 to ${moves.length}: showing them all played`);
  }
  return { board, rules, captured, notices, moves, at };
}

// Shows what the address asks for: its view and its position. Back and
// Forward come here too: the board then set aside (moves rewrite the
// address in place) is not kept, so that the screen matches the address;
// a position that is the one shown keeps its moves to take back.
async function showAddress() {
  showView();
  // Back or Forward to another view leaves the game as it is; to the
  // board with another game, shows that one.
  const started = state.board !== null;
  if (started && ($("view-board").hidden || state.address === location.search)) return;
  const p = addressPosition();
  state.rules = p.rules;
  $("rules").value = p.rules;
  if (!p.moves.length) {
    setBoard(p.board, { clear: true, notices: p.notices, captured: p.captured });
    return;
  }
  setBoard(p.board, { clear: true, notices: p.notices, captured: p.captured, pending: "playing the address's moves" });
  state.pending = true;
  const mark = state.request;
  // Rules not served here give way to awari before the moves are played
  // (the moves of abapa tables not here would each be a 404).
  if (p.rules !== "awari") {
    const info = await state.levelsServed.catch(() => null);
    if (state.request !== mark) return;
    const served = info ? info.rules.filter((r) => r.levels.length).map((r) => r.rules) : [];
    if (info && !served.includes(p.rules) && served.includes("awari")) {
      state.notices.push(p.rules + " values are not served here: showing awari");
      setRules("awari");
    }
  }
  replay(p.moves, p.at ?? p.moves.length);
}

function start() {
  // The position shown, asked for again (under other rules, or after a
  // failure), with its moves to take back.
  const again = (done = "") => setBoard(state.board, { captured: state.captured, side: state.side, done });
  // Another rule set is a step of the game: undo comes back to the moves
  // played under the one before, and the address's moves start after it.
  $("rules").addEventListener("change", () => {
    const to = $("rules").value;
    if (state.pending) {
      $("rules").value = state.rules;
      return;
    }
    pushStep({ kind: "rules", to });
    state.ahead = [];
    setRules(to);
    again(`Now ${to} rules.`);
  });
  $("retry").addEventListener("click", () => {
    // The button goes: the focus waits on the status line.
    $("status").focus();
    (state.retry || again)();
  });
  $("redo").addEventListener("click", redo);
  // The view links add an entry to the browser's history that holds the
  // game shown, so that Back comes back to it (a plain #levels link kept
  // the address of the entry it left, with an older game).
  for (const v of ["board", "levels", "omweso"]) {
    $("nav-" + v).addEventListener("click", (ev) => {
      ev.preventDefault();
      if (location.hash === "#" + v) return;
      history.pushState(null, "", (state.address ?? location.search) + "#" + v);
      showView();
    });
  }
  const setTyped = async () => {
    if (state.pending) return;
    const typed = parseBoard($("board-text").value);
    // A board refused changes nothing: the one shown keeps its moves to
    // take back. So does one above the levels here, which the server
    // would refuse only once the board shown was gone.
    if (typed.error) {
      showError("the board typed " + typed.error);
      return;
    }
    // What comes of it is dropped once anything newer has been asked for
    // (another board typed, a move, an edit), which it must not replace.
    const id = ++state.typedRequest, shown = state.request;
    const stale = () => id !== state.typedRequest || shown !== state.request;
    // The levels as the server has them now (it may have been restarted
    // over more levels since the page asked).
    if (await beyondLevels(typed.board)) state.levelsServed = getJSON("api/levels");
    const beyond = await beyondLevels(typed.board);
    if (stale()) return;
    // The board shown, set again (a stray Enter), is asked for again; any
    // other is a step that undo takes back.
    const same = typed.board.every((n, i) => n === state.board[i]);
    let known = null;
    if (beyond && !same) {
      // Some boards above the levels are valued all the same (every
      // opponent pit filled: from their moves); the server says which,
      // and its answer is the one shown.
      try {
        known = await getJSON(apiURL("api/awari", positionQuery(typed.board, [0, 0])), freshSignal("typed"));
      } catch (e) {
        if (e.name === "AbortError" || stale()) return;
        showError(e.status === 404 ? beyond : "the board typed: " + e.message);
        return;
      }
      if (stale()) return;
    }
    if (same) return again();
    pushStep({ kind: "set" });
    state.ahead = [];
    setBoard(typed.board, { done: "Set the board typed in.", known });
  };
  $("set-board").addEventListener("click", setTyped);
  $("board-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") setTyped();
  });
  $("undo").addEventListener("click", undo);
  $("best").addEventListener("click", playBest);
  // The other player to move: the board turned, captures with it.
  $("swap-sides").addEventListener("click", () => {
    const b = state.board;
    edited([...b.slice(6), ...b.slice(0, 6)], [state.captured[1], state.captured[0]], 1 - state.side,
      `Swapped sides: ${PLAYERS[1 - state.side]} to move.`);
  });
  $("clear-board").addEventListener("click", () => {
    // An empty board cleared is no step.
    if (seedsOn(state.board)) edited(new Array(12).fill(0), state.captured, state.side, "Cleared the board.");
  });
  // The hint says what clicks do in the mode shown (a reload may restore
  // either).
  const hint = () => {
    $("mode-hint").textContent = mode() === "edit"
      ? "Click a pit to add a seed or take one away, as chosen above; shift-click or right-click does the other. "
        + "Keys on a pit: + or ↑ adds, - ↓ or Delete takes away, ← → go along the row."
      : "Click one of your pits (bottom row) to sow it; the board turns for the next player. "
        + "Keys, with the focus on the board: b best move, u undo, r redo, ← → go along the row.";
  };
  hint();
  for (const r of document.querySelectorAll("input[name=mode]")) {
    r.addEventListener("change", () => {
      hint();
      renderBoard();
    });
  }
  // b and u act on the board when it is shown, only while the keyboard
  // focus is on its pits (or the status line, where it waits for them) or
  // on no control (a single-key shortcut must not fire from a control the
  // key was meant for, or typed into by speech: WCAG 2.1.4), and not with
  // a modifier (Ctrl+U is the browser's).
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    const onBoard = t === document.body || $("pits").contains(t) || t === $("status");
    if (!onBoard || ev.ctrlKey || ev.metaKey || ev.altKey || $("view-board").hidden) return;
    if (ev.key === "b") playBest();
    if (ev.key === "u") undo();
    if (ev.key === "r") redo();
  });
  document.addEventListener("focusin", forgetFocus);
  $("omweso-form").addEventListener("submit", decideOmweso);
  // Back and Forward, and the view links: popstate comes with every change
  // of the address's history entry, hashchange only when nothing but the
  // anchor differs (not once a move has rewritten the address).
  window.addEventListener("popstate", showAddress);
  state.levelsServed = getJSON("api/levels");
  showAddress();
  // Offer only the rule sets with levels here (a VU directory holds awari
  // values only; a table directory may hold no abapa level); rules asked
  // for that are not served give way to awari, with a notice.
  state.levelsServed.then((info) => {
    const served = new Set(info.rules.filter((r) => r.levels.length).map((r) => r.rules));
    state.served = served;
    for (const o of $("rules").options) o.disabled = !served.has(o.value);
    // (While the address's moves are played, showAddress did this.)
    if (!served.has(state.rules) && served.has("awari") && !state.pending) {
      const notice = state.rules + " values are not served here: showing awari";
      setRules("awari");
      setBoard(state.board, { captured: state.captured, side: state.side, notices: [...state.notices, notice] });
    }
  }, () => {});
}

function playBest() {
  if (mode() !== "play" || !state.analysis || !state.analysis.best.length) return;
  const best = state.analysis.best;
  play(best.includes(state.linePit) ? state.linePit : best[0]);
}

function undo() {
  const n = state.history.length;
  if (!n) return;
  const { step } = state.history[n - 1];
  goBack(n - 1, `Took back ${stepObject(step)}.`);
}

// The address's captured=M,O beside board: [M, O], [0, 0] when not given,
// null when not two counts that fit beside the board's seeds in a game.
function parseCaptured(text, board) {
  if (text === null) return [0, 0];
  const m = /^(\d{1,2}),(\d{1,2})$/.exec(text.trim());
  if (!m) return null;
  const taken = [Number(m[1]), Number(m[2])];
  return seedsOn(board) + taken[0] + taken[1] <= GAME_SEEDS ? taken : null;
}

start();
