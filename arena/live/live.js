// The live view's script (arena serve), beside the report's viewer.js.
//
// It listens to the server's event stream: each "state" event holds the
// run's status line, the games in progress (their boards already replayed
// by the server through the engine, which games to show first when there
// are more than cards), the champion once the run is over, and whether the
// server has a QR code of its address for a room; when the stored results
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
  const more = document.createElement("p");
  more.id = "live-more";
  more.hidden = true;
  section.append(heading, none, grid, more);

  // The champion, once the run is over: the bot, and the rule that made it (the server's words).
  const banner = document.createElement("section");
  banner.id = "champion";
  banner.hidden = true;
  const crown = document.createElement("p");
  crown.className = "champion-title";
  crown.textContent = "Champion";
  const winner = document.createElement("p");
  winner.className = "champion-name";
  const rule = document.createElement("p");
  rule.className = "champion-rule";
  banner.append(crown, winner, rule);

  // The address other machines open, as a QR code (only when the server listens for them).
  const share = document.createElement("figure");
  share.id = "share";
  share.hidden = true;
  const code = document.createElement("img");
  code.alt = "QR code of this page's address";
  const caption = document.createElement("figcaption");
  caption.textContent = "scan to watch";
  share.append(code, caption);

  function place() {
    const main = document.querySelector("main");
    main.insertBefore(section, main.firstChild);
    main.insertBefore(banner, main.firstChild);
    const header = document.querySelector("header");
    if (header) header.appendChild(share);
    screenColumns();
  }

  // On the big screen the ranking keeps the columns read from afar (the
  // place, the bot, its points or score, its rating), and on a phone the
  // place and the points or score alone: chosen by their headings, which
  // differ from one ranking rule to another.  The stylesheet hides the others
  // there.  A Swiss's points where there are some, else the score: both, side
  // by side and different, need the legend a screen leaves out.
  const SCREEN_COLUMNS = ["#", "bot", "rating", "Elo"];
  const PHONE_COLUMNS = ["#", "bot"];
  function screenColumns() {
    const table = document.querySelector("#standings table.data");
    if (!table) return;
    const headings = Array.from(table.querySelectorAll("thead th"), (th) => th.textContent.trim());
    const points = headings.includes("points") ? "points" : "score";
    const screen = new Set(SCREEN_COLUMNS.concat([points])), phone = new Set(PHONE_COLUMNS.concat([points]));
    table.querySelectorAll("tr").forEach((row) => {
      Array.from(row.children).forEach((cell, i) => {
        if (i >= headings.length) return;
        cell.classList.toggle("screen-off", !screen.has(headings[i]));
        cell.classList.toggle("phone-off", !phone.has(headings[i]));
      });
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
    document.body.classList.remove("server-gone");
  }

  function showChampion(champion) {
    banner.hidden = champion === null;
    if (champion === null) return;
    winner.textContent = champion.name;
    rule.textContent = champion.rule;
  }

  function showShare(shared) {
    if (shared && !code.getAttribute("src")) code.src = "share.svg";
    share.hidden = !shared;
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
    colors = null;
    swaps += 1;
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
  // The finished games whose cards went (a game in progress took it, or the hold was over), and those shown now.
  let gaveWay = new Set();
  let endedShown = new Set();
  // What the grid was last fitted to (the cards, the window, the page around them: swapped in how many times).
  let fitted = "";
  let swaps = 0;
  let lastLive = [];
  let holdS = 10;
  // The server's clock minus ours (ms): clocks run by the server's time, not ours.  Each state says the
  // server's time when it was made, which reaches us later by the stream's delay: the largest of the last
  // few readings is the nearest (a late one would turn the clocks back, and bring a card whose hold was over back).
  let skew = 0;
  let skews = [];
  const serverNow = () => Date.now() + skew;

  // A game ended (its record read) is shown for the hold, by the server's time: the stream may be quiet.
  function held(game) {
    return game.ended === undefined || (game.ended + holdS) * 1000 > serverNow();
  }
  // A result stays on its card this long at the least, even when a game in progress wants the card: the
  // next round may start the instant a round ends, and the room reads the result first (the game waits).
  const SHOWN_S = 3;
  const shownLongEnough = (game) => game.ended !== undefined && (game.ended + SHOWN_S) * 1000 <= serverNow();
  // Games in progress that wait for a card (see placeGames).
  let waitingForCard = 0;

  // Games without a card wait for one, those in progress first, the most interesting first (the
  // server's `interest`: knockout games, then close ones); returns how many games in progress still wait.
  // A game in progress takes a free card, else the card of the finished game that ended first, once its
  // result was shown for SHOWN_S; a finished
  // game takes a free card alone, and once its card is taken it is not shown again (a card that came
  // and went would be lost by the room).
  function placeGames(games) {
    const byId = new Map(games.map((game) => [game.id, game]));
    const listed = new Set(lastLive.map((game) => game.id));
    gaveWay = new Set(Array.from(gaveWay).filter((id) => listed.has(id)));
    slots = slots.map((id) => {
      if (id === null || byId.has(id)) return id;
      if (endedShown.has(id)) gaveWay.add(id);  // its hold is over: the card goes for good
      return null;
    });
    const finished = (game) => game.ended !== undefined;
    const waiting = games.filter((game) => !slots.includes(game.id) && !(finished(game) && gaveWay.has(game.id)))
      .sort((a, b) => finished(a) - finished(b) || (b.interest || 0) - (a.interest || 0) || (a.id < b.id ? -1 : 1));
    let left = 0;
    waiting.forEach((game) => {
      let at = slots.indexOf(null);
      if (at < 0 && slots.length < MOST_SLOTS) at = slots.length;
      if (at < 0 && !finished(game)) {
        at = firstEnded(byId);
        if (at >= 0) gaveWay.add(slots[at]);
      }
      if (at >= 0) slots[at] = game.id;
      else if (!finished(game)) left += 1;
    });
    while (slots.length && slots[slots.length - 1] === null) slots.pop();
    endedShown = new Set(slots.filter((id) => id !== null && finished(byId.get(id))));
    return left;
  }

  function firstEnded(byId) {
    let first = -1;
    slots.forEach((id, at) => {
      const game = byId.get(id);
      if (shownLongEnough(game) && (first < 0 || game.ended < byId.get(slots[first]).ended)) first = at;
    });
    return first;
  }

  function clockText(ms) {
    const tenths = Math.max(0, Math.round(ms / 100));
    return Math.floor(tenths / 600) + ":" + ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
  }

  // A board as the viewer draws it (its SVG cloned, painted by the viewer's own code), the last move marked.
  function boardOf(game) {
    const board = document.querySelector("#viewer svg.board").cloneNode(true);
    window.arenaReport.paintBoard(board, game.cells, game.last || []);
    return board;
  }

  // Under the board: each side's pieces in reserve, and its bot's last `info` when it sent one.
  function notesOf(game, colors) {
    const notes = document.createElement("div");
    notes.className = "live-notes";
    const reserve = window.arenaReport.reserves(game.game, game.cells);
    game.players.forEach((name, seat) => {
      const line = document.createElement("div");
      line.className = "reserve";
      line.textContent = (colors[seat] || "seat " + seat) + ": " + reserve[seat];
      notes.appendChild(line);
      const info = game.infos && game.infos[seat];
      if (info) {
        const said = document.createElement("div");
        said.className = "bot-info";
        said.textContent = name + ": " + info;
        notes.appendChild(said);
      }
    });
    return notes;
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
    box.append(title);
    if (game.again) {  // back to move 0 before the room's eyes: say why
      const again = document.createElement("p");
      again.className = "live-again";
      again.textContent = "played again from its start: the run stopped during it";
      box.append(again);
    }
    box.append(players, boardOf(game), last, notesOf(game, colors));
    return box;
  }

  // Between two states a game of fast moves plays several plies: its card steps through them, one position
  // at a time, from the one it shows (a room follows the moves rather than seeing the board jump), fast
  // enough to catch up within CATCH_UP_MS.  A game that ended shows its final position and result at once:
  // the hold (and the card's place, which the next round's games may need) counts from its end.
  const STEP_MS = 350, CATCH_UP_MS = 2000;
  // The game as its card shows it now, by id; the pending step.
  let drawn = new Map();
  let stepTimer = null;

  function isPrefix(moves, of) {
    return moves.length <= of.length && moves.every((move, k) => move === of[k]);
  }

  // The position one ply on from the drawn one, while the card is behind its game; else the game itself.
  function nextStep(game) {
    const was = drawn.get(game.id);
    // A hidden page's timers are slowed to one a second: nobody would see the steps, and they would put its results late.
    if (document.hidden || game.ended !== undefined || was === undefined || was.moves.length >= game.moves.length - 1
        || !isPrefix(was.moves, game.moves)) return game;
    const ply = was.moves.length;
    const seat = (game.to_move + game.moves.length - ply) % 2;  // the sides alternate: who moved at that ply
    const cells = was.cells.slice();
    const last = window.arenaReport.applyMove(cells, game.moves[ply], seat);
    // The clocks stay the game's (the side to move's runs): only the board and its last move step.
    return Object.assign({}, game, { moves: game.moves.slice(0, ply + 1), cells: cells, last: last, catching: true });
  }

  function stepLater(shown) {
    const waits = shown.filter((game) => game.catching).map((game) => {
      const behind = lastLive.find((other) => other.id === game.id).moves.length - game.moves.length;
      return Math.min(STEP_MS, CATCH_UP_MS / behind);
    });
    if (waits.length === 0 || stepTimer !== null) return;
    stepTimer = setTimeout(() => { stepTimer = null; renderLive(lastLive); }, Math.max(60, Math.min(...waits)));
  }

  function renderLive(games) {
    lastLive = games;
    const shown = games.filter(held).map(nextStep);
    drawn = new Map(shown.map((game) => [game.id, game]));
    stepLater(shown);
    const left = placeGames(shown);
    waitingForCard = left;
    const byId = new Map(shown.map((game) => [game.id, game]));
    // A card is drawn again only when its game changed: four states a second would redraw every board
    // (an SVG each) and lay the page out again each time, which a busy machine's browser cannot keep up with.
    const boxes = Array.from(grid.children);
    slots.forEach((id, at) => {
      const key = id === null ? "" : JSON.stringify(byId.get(id));
      const old = boxes[at];
      if (old !== undefined && old.dataset.key === key) return;
      const box = id === null ? document.createElement("div") : card(byId.get(id), pageColors());
      if (id === null) box.className = "live-free";
      box.dataset.slot = String(at);
      box.dataset.key = key;
      if (old !== undefined) old.replaceWith(box);
      else grid.appendChild(box);
    });
    boxes.slice(slots.length).forEach((box) => box.remove());
    none.hidden = shown.length > 0;
    more.hidden = left === 0;
    more.textContent = "and " + left + " more game" + (left === 1 ? "" : "s");
    fitBoards();
    tick();
    markPlaying(games.filter((game) => game.ended === undefined));
  }

  // The page is built from the games recorded: a match whose first game is on a card would say "to be
  // played", and a team's round "not played", beside that very game.  The cards' games say otherwise.
  function markPlaying(playing) {
    const plays = (round, a, b) => playing.some((game) => game.round === round && game.players.includes(a)
                                                       && game.players.includes(b));
    document.querySelectorAll(".ko-round[data-round] .match.open").forEach((box) => {
      const names = Array.from(box.querySelectorAll(".bot .name"), (name) => name.title);
      const round = Number(box.closest(".ko-round").dataset.round);
      const on = names.length === 2 && plays(round, names[0], names[1]);
      box.classList.toggle("playing", on);
      const how = box.querySelector(".how");
      if (on && how) how.textContent = "being played";
    });
    const page = $("bot-page");
    if (!page || page.hidden) return;
    const bot = $("b-name").textContent;
    $("b-rounds").querySelectorAll("tbody tr.status-not-played").forEach((line) => {
      const [round, opponent, , , status] = line.children;
      if (!plays(Number(round.textContent), bot, opponent.textContent)) return;
      status.textContent = "being played";
      line.className = "status-being-played";
    });
  }

  // The sides' colours, from the page's data: read once a page (the data of a large tournament is megabytes).
  let colors = null;
  function pageColors() {
    if (colors === null) colors = JSON.parse($("report-data").textContent).colors;
    return colors;
  }

  // The big screen shows every card at once: the grid's columns chosen so that the boards are as large
  // as the panel allows, each card's type the smaller the more columns (`--card-scale`), its text (title,
  // players, last move, notes) as tall as a card drawn now shows it, in its own ems.
  function fitBoards() {
    if (!document.body.classList.contains("screen")) return;
    // Measured again only when what it depends on changed: measuring lays the whole page out.
    const layout = [slots.length, more.hidden, document.body.dataset.run, innerWidth, innerHeight, swaps].join();
    if (layout === fitted) return;
    fitted = layout;
    // Once the run is over the last cards go under the champion and the standings, at their own size.
    grid.style.height = "";
    if (document.body.dataset.run === "finished") return;
    const cards = Math.max(1, slots.length);
    // As tall as the window leaves below the grid's top, and the line of the games left out.
    const top = grid.getBoundingClientRect().top + window.scrollY;
    const below = more.hidden ? 8 : more.offsetHeight + 24;
    grid.style.height = Math.max(160, window.innerHeight - top - below) + "px";
    const width = grid.clientWidth, height = grid.clientHeight;
    if (!width || !height) return;
    const gap = parseFloat(getComputedStyle(grid).columnGap) || 0;
    const em = parseFloat(getComputedStyle(grid).fontSize);
    const sample = grid.querySelector("article.live-game");
    const textEm = sample === null ? TEXT_EM : textHeight(sample) / parseFloat(getComputedStyle(sample).fontSize);
    let best = { side: -Infinity, columns: 1, scale: 1 };
    for (let columns = 1; columns <= cards; columns++) {
      const rows = Math.ceil(cards / columns);
      const scale = Math.min(1, Math.max(0.45, 1.8 / columns));
      const cellWidth = (width - gap * (columns - 1)) / columns - em * scale;
      const cellHeight = (height - gap * (rows - 1)) / rows - textEm * em * scale;
      const side = Math.min(cellWidth, cellHeight);
      if (side > best.side) best = { side: side, columns: columns, scale: scale };
    }
    grid.style.setProperty("--columns", String(best.columns));
    grid.style.setProperty("--rows", String(Math.ceil(cards / best.columns)));
    grid.style.setProperty("--card-scale", String(best.scale));
  }
  // A card's text before one is drawn, in ems: some nine lines of type.
  const TEXT_EM = 11;

  // The height of a card's parts but its board, and of its padding and border: what the board cannot have.
  function textHeight(card) {
    const style = getComputedStyle(card);
    const frame = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"]
      .reduce((sum, side) => sum + parseFloat(style[side]), 0);
    return Array.from(card.children).filter((part) => part.tagName.toLowerCase() !== "svg")
      .reduce((sum, part) => sum + part.getBoundingClientRect().height + parseFloat(getComputedStyle(part).marginTop)
              + parseFloat(getComputedStyle(part).marginBottom), frame);
  }
  window.addEventListener("resize", fitBoards);
  // A team's page opened draws its rounds from the page's data again: after the viewer's own listener.
  window.addEventListener("hashchange", () => setTimeout(() => markPlaying(lastLive.filter((game) => game.ended === undefined))));

  // The side to move's clock runs down between states; a card whose hold is over leaves, and one whose
  // result was shown long enough goes to a game waiting for a card.
  function tick() {
    if (document.body.classList.contains("server-gone")) return;
    grid.querySelectorAll(".clock[data-at]").forEach((clock) => {
      clock.textContent = clockText(Number(clock.dataset.ms) - (serverNow() - Number(clock.dataset.at) * 1000));
    });
  }
  setInterval(() => {
    const onCards = lastLive.filter((game) => slots.includes(game.id));
    if (onCards.some((game) => !held(game)) || (waitingForCard > 0 && onCards.some(shownLongEnough))) {
      renderLive(lastLive);
    }
    else tick();
  }, 100);

  // ---- the event stream ---------------------------------------------------------------

  const source = new EventSource("events");
  source.addEventListener("state", (event) => {
    const data = JSON.parse(event.data);
    status = data.status;
    skews = skews.slice(-19).concat([data.time * 1000 - Date.now()]);
    skew = Math.max(...skews);
    holdS = data.hold_s;
    heartbeatS = data.heartbeat_s;
    showStatus();
    showChampion(data.champion);
    showShare(data.share);
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
  // A server gone says so at once, in red: a room must not watch a frozen page (the next state puts the line back).
  function gone() {
    const line = $("status");
    if (!line) return;
    line.textContent = (status !== null ? status.line + " · " : "") + "the live view's server does not answer (reconnecting…)";
    line.className = "status gone";
    // The boards are as last heard, no longer live: dimmed, their clocks stopped (they would run down to 0:00).
    document.body.classList.add("server-gone");
  }
  source.addEventListener("error", gone);
  // A network that drops without closing the connection never tells the stream: the server speaks at least every
  // heartbeat, so a silence of two and a half is taken as the server gone, until it speaks again.
  let heard = Date.now();
  let heartbeatS = 15;
  let silent = false;
  function hear() {
    heard = Date.now();
    if (silent) showStatus();
    silent = false;
  }
  ["state", "page", "problem", "alive"].forEach((name) => source.addEventListener(name, hear));
  setInterval(() => {
    if (!silent && Date.now() - heard > heartbeatS * 2500) {
      silent = true;
      gone();
    }
  }, 250);
})();
