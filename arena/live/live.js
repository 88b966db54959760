// The live view's script (arena serve), beside the report's viewer.js.
//
// It listens to the server's event stream: each "state" event holds the
// run's status line and the games in progress (their boards already
// replayed by the server through the engine); when the stored results
// changed, it fetches the page again and swaps its parts in, then starts
// the viewer again on them.  Every text from the results goes in as text
// (textContent), never as markup.
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
  let resultsVersion = null;
  let fetching = false;
  let again = false;

  function showStatus() {
    const line = $("status");
    if (status === null || !line) return;
    line.textContent = status.line;
    line.className = "status " + status.state;
    document.body.dataset.run = status.state;
  }

  // The page as the server builds it now: its parts replace ours.
  async function refreshPage() {
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      const response = await fetch("page", { cache: "no-store", credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
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
    } finally {
      fetching = false;
      if (again) { again = false; refreshPage(); }
    }
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
    if (resultsVersion !== null && data.results !== resultsVersion) refreshPage();
    resultsVersion = data.results;
  });
  source.addEventListener("problem", (event) => {
    const line = $("status");
    if (line) line.textContent = "The live view cannot read the results: " + JSON.parse(event.data).error;
  });
  source.addEventListener("error", () => {
    const line = $("status");
    if (line && status !== null && status.state === "running") line.textContent = status.line + " (reconnecting…)";
  });
})();
