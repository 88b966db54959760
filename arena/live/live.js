// The live view's script (arena serve), beside the report's viewer.js.
//
// It listens to the server's event stream: each "state" event holds the
// run's status line and the games in progress (their boards already
// replayed by the server through the engine); when the stored results
// changed, a "page" event says how the page's text changed (pieces of the
// text it had, and the new ones: a few KB where the page is MBs).  The
// script keeps the page's text, makes the new one and swaps its parts in,
// then starts the viewer again on them.  It fetches the page whole the first
// time, and again only when it missed a change.  Every text from the results
// goes in as text (textContent), never as markup; the page's own markup is
// the server's, as when it is fetched whole.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  if (params.get("screen") === "1") document.body.classList.add("screen");

  const section = document.createElement("section");
  section.id = "live";
  const heading = document.createElement("h2");
  heading.textContent = "Games in progress";
  const none = document.createElement("p");
  none.id = "live-none";
  none.textContent = "None now.";
  const grid = document.createElement("div");
  grid.id = "live-games";
  grid.className = "live-games";
  section.append(heading, none, grid);

  function place() {
    const main = document.querySelector("main");
    main.insertBefore(section, main.firstChild);
    if (document.body.classList.contains("screen")) screenColumns();
  }

  // On the big screen the ranking keeps the columns read from afar (the
  // place, the bot, its score and points where points rank, its rating):
  // chosen by their headings, which differ from one ranking rule to another.
  const SCREEN_COLUMNS = new Set(["#", "bot", "score", "points", "rating", "Elo"]);
  function screenColumns() {
    const table = document.querySelector("#standings table.data");
    if (!table) return;
    const keep = Array.from(table.querySelectorAll("thead th"), (th) => SCREEN_COLUMNS.has(th.textContent.trim()));
    table.querySelectorAll("tr").forEach((row) => {
      Array.from(row.children).forEach((cell, i) => cell.classList.toggle("screen-off", keep[i] === false));
    });
  }
  place();

  let status = null;
  // The results the page shows (the server's count of its readings, as the page loaded says), and its text once fetched.
  const loaded = document.querySelector('meta[name="arena-results"]');
  let shown = loaded ? Number(loaded.content) : null;
  let text = null;
  // The latest results the stream announced.
  let latest = null;
  let fetching = false;

  function showStatus() {
    const line = $("status");
    if (status === null || !line) return;
    line.textContent = status.line;
    line.className = "status " + status.state;
    document.body.dataset.run = status.state;
  }

  // The page as the server builds it now, whole: the first time, or after a missed change.
  async function refreshPage() {
    if (fetching) return;
    fetching = true;
    let behind = false;
    try {
      const response = await fetch("page", { cache: "no-store", credentials: "same-origin" });
      if (!response.ok) return;  // the next state fetches it again
      const fetched = await response.text();
      text = fetched;
      shown = Number(response.headers.get("X-Arena-Results"));
      swapIn(fetched);
      behind = latest !== null && shown < latest;  // announced while it was on its way
    } finally {
      fetching = false;
    }
    if (behind) refreshPage();
  }

  // A change of the page: [start, end] copies those UTF-16 units of the text we have, a string is itself.
  function applyChange(change) {
    latest = Math.max(latest === null ? change.to : latest, change.to);
    if (text === null || shown !== change.from) {
      if (shown !== change.to) refreshPage();
      return;
    }
    const old = text;
    text = change.steps.map((step) => (typeof step === "string" ? step : old.slice(step[0], step[1]))).join("");
    shown = change.to;
    swapIn(text);
  }

  // The page's parts from its text replace ours.
  function swapIn(html) {
    const fresh = new DOMParser().parseFromString(html, "text/html");
    const scroll = window.scrollY;
    ["header", "main", "#viewer"].forEach((selector) => {
      const old = document.querySelector(selector);
      const replacement = fresh.querySelector(selector);
      if (old && replacement) old.replaceWith(document.adoptNode(replacement));
    });
    $("report-data").textContent = fresh.getElementById("report-data").textContent;
    place();
    window.arenaReport.start();
    showStatus();
    renderLive(lastLive);
    window.scrollTo(0, scroll);
  }

  // ---- games in progress ------------------------------------------------------------

  // The cards' places: slots[i] is the id of the game shown there, or null (free).  A game keeps its
  // slot while it lasts, and a finished one for the hold (a card that moved would be lost by the room):
  // a new game takes a free slot, else a new one, and past MOST_SLOTS the slot of the game that ended first.
  const MOST_SLOTS = 16;
  let slots = [];
  let lastLive = [];
  let holdS = 10;
  // The server's clock minus ours (ms), as of the last state: clocks run by the server's time, not ours.
  let skew = 0;
  const serverNow = () => Date.now() + skew;

  // A game ended (its record read) is shown for the hold, by the server's time: the stream may be quiet.
  function held(game) {
    return game.ended === undefined || (game.ended + holdS) * 1000 > serverNow();
  }

  function placeGames(games) {
    const byId = new Map(games.map((game) => [game.id, game]));
    slots = slots.map((id) => (id !== null && byId.has(id) ? id : null));
    games.forEach((game) => {
      if (slots.includes(game.id)) return;
      let at = slots.indexOf(null);
      if (at < 0 && slots.length >= MOST_SLOTS) at = firstEnded(byId);
      slots[at < 0 ? slots.length : at] = game.id;
    });
    while (slots.length && slots[slots.length - 1] === null) slots.pop();
  }

  function firstEnded(byId) {
    let first = -1;
    slots.forEach((id, at) => {
      const ended = byId.get(id).ended;
      if (ended !== undefined && (first < 0 || ended < byId.get(slots[first]).ended)) first = at;
    });
    return first;
  }

  function clockText(ms) {
    const tenths = Math.max(0, Math.round(ms / 100));
    return Math.floor(tenths / 600) + ":" + ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
  }

  // A board like the viewer's: its SVG cloned, pieces set from the cells.
  function boardOf(cells) {
    const template = document.querySelector("#viewer svg.board");
    const board = template.cloneNode(true);
    const size = Math.round(Math.sqrt(cells.length));
    board.querySelectorAll("[data-square]").forEach((sq) => {
      const name = sq.dataset.square;
      const index = (parseInt(name.slice(1), 10) - 1) * size + "abcdefg".indexOf(name[0]);
      const code = cells[index];
      const use = sq.querySelector("use.pc");
      sq.classList.remove("last");
      if (code && code !== "#") {
        sq.setAttribute("data-piece", code);
        use.setAttribute("href", "#pc-" + code);
      } else {
        sq.removeAttribute("data-piece");
        use.removeAttribute("href");
      }
    });
    return board;
  }

  function card(game, colors) {
    const ended = game.ended !== undefined;
    const box = document.createElement("article");
    box.className = "live-game" + (ended ? " finished" : "") + (game.ending ? " ending" : "");
    box.dataset.game = game.id;
    box.dataset.ply = String(game.moves.length);
    const title = document.createElement("h3");
    title.textContent = game.title + (ended ? " · finished" : "");
    const players = document.createElement("div");
    players.className = "live-players";
    game.players.forEach((name, seat) => {
      const who = document.createElement("span");
      who.className = "live-name" + (ended && game.winner === seat ? " winner" : "");
      who.textContent = name + " (" + (colors[seat] || "seat " + seat) + ")";
      const clock = document.createElement("span");
      const running = !ended && !game.ending && !game.per_move && seat === game.to_move;
      clock.className = "clock" + (!ended && seat === game.to_move ? " to-move" : "");
      clock.dataset.seat = String(seat);
      if (game.per_move) clock.textContent = "per move";
      else clock.textContent = game.clock_ms === null ? "–" : clockText(game.clock_ms[seat]);
      if (running) {  // counts down from the time it held when the state was read (tick)
        clock.dataset.ms = String(game.clock_ms[seat]);
        clock.dataset.at = String(game.clock_at);
      }
      players.append(who, clock);
    });
    const last = document.createElement("p");
    last.className = ended ? "live-result" : "live-move";
    const moves = game.moves.length;
    if (ended) last.textContent = game.result;
    else last.textContent = moves ? "move " + moves + ": " + game.moves[moves - 1] : "starting";
    box.append(title, players, boardOf(game.cells), last);
    return box;
  }

  function renderLive(games) {
    lastLive = games;
    const shown = games.filter(held);
    placeGames(shown);
    const byId = new Map(shown.map((game) => [game.id, game]));
    const colors = JSON.parse($("report-data").textContent).colors;
    grid.textContent = "";
    slots.forEach((id, at) => {
      const box = id === null ? document.createElement("div") : card(byId.get(id), colors);
      if (id === null) box.className = "live-free";
      box.dataset.slot = String(at);
      grid.appendChild(box);
    });
    none.hidden = shown.length > 0;
    tick();
  }

  // The side to move's clock runs down between states; a card whose hold is over leaves.
  function tick() {
    grid.querySelectorAll(".clock[data-at]").forEach((clock) => {
      clock.textContent = clockText(Number(clock.dataset.ms) - (serverNow() - Number(clock.dataset.at) * 1000));
    });
  }
  setInterval(() => {
    if (lastLive.some((game) => slots.includes(game.id) && !held(game))) renderLive(lastLive);
    else tick();
  }, 100);

  // ---- the event stream ---------------------------------------------------------------

  const source = new EventSource("events");
  source.addEventListener("state", (event) => {
    const data = JSON.parse(event.data);
    status = data.status;
    skew = data.time * 1000 - Date.now();
    holdS = data.hold_s;
    showStatus();
    renderLive(data.live);
    // Newer results than the page shows (a game stored between its load and this stream, or a
    // "page" event missed, dropped for a slow reader) are fetched whole.  A page that does not
    // say which it shows is taken as the results of the first state.
    if (shown === null) shown = data.results;
    else if (data.results !== shown && data.results !== latest) refreshPage();
    latest = data.results;
  });
  source.addEventListener("page", (event) => applyChange(JSON.parse(event.data)));
  source.addEventListener("problem", (event) => {
    const line = $("status");
    if (line) line.textContent = "The live view cannot read the results: " + JSON.parse(event.data).error;
  });
  source.addEventListener("error", () => {
    const line = $("status");
    if (line && status !== null && status.state === "running") line.textContent = status.line + " (reconnecting…)";
  });
})();
