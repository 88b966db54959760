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

  let lastLive = [];

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
    const box = document.createElement("article");
    box.className = "live-game";
    box.dataset.game = game.id;
    box.dataset.ply = String(game.moves.length);
    const title = document.createElement("h3");
    title.textContent = game.id + " · round " + game.round;
    const players = document.createElement("div");
    players.className = "live-players";
    game.players.forEach((name, seat) => {
      const who = document.createElement("span");
      who.className = "live-name";
      who.textContent = name + " (" + (colors[seat] || "seat " + seat) + ")";
      const clock = document.createElement("span");
      clock.className = "clock" + (seat === game.to_move ? " to-move" : "");
      clock.dataset.seat = String(seat);
      clock.textContent = game.per_move ? "per move" : clockText(game.clock_ms[seat]);
      players.append(who, clock);
    });
    const last = document.createElement("p");
    last.className = "live-move";
    const moves = game.moves.length;
    last.textContent = moves ? "move " + moves + ": " + game.moves[moves - 1] : "starting";
    box.append(title, players, boardOf(game.cells), last);
    return box;
  }

  function renderLive(games) {
    lastLive = games;
    const colors = JSON.parse($("report-data").textContent).colors;
    grid.textContent = "";
    games.forEach((game) => grid.appendChild(card(game, colors)));
    none.hidden = games.length > 0;
  }

  // ---- the event stream ---------------------------------------------------------------

  const source = new EventSource("events");
  source.addEventListener("state", (event) => {
    const data = JSON.parse(event.data);
    status = data.status;
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
