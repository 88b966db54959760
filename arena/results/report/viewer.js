// The report's script: the game list (filters, sorting, pages) and the game
// viewer.  Inlined into the page (served as a file by arena serve); it reads
// the games from the JSON block #report-data.  A large report's page holds
// the list of its games only: their moves are in files beside it (or served
// by arena serve), each a script of a few hundred games, loaded when one of
// them is opened.  A script, since a page opened from disk may load scripts
// from disk but fetch nothing.
//
// Positions are not stored in the page: each game keeps its moves, and the
// viewer replays them from the game's start position.  The referee accepted
// every stored move through the engine, so replaying needs no legality check,
// only the effect of a move: a totem moves, a piece is placed.
(function () {
  "use strict";

  // The live view (arena serve) swaps the page's parts for fresh ones and
  // starts again: the listeners on the document and the window go with the
  // old parts, through this signal.
  let previous = null;
  // Where a file of games hands its games: the page started last.
  let receive = () => {};

  // A board's SVG set to `cells` (rank 1 first, as the protocol's rows), the
  // cells in `touched` marked as the last move's: the viewer's board, and
  // the live view's cards (arena serve), drawn alike.
  function paintBoard(board, cells, touched) {
    const size = Math.round(Math.sqrt(cells.length));
    const marked = new Set(touched);
    board.querySelectorAll("[data-square]").forEach((sq) => {
      const name = sq.dataset.square;
      const index = (parseInt(name.slice(1), 10) - 1) * size + "abcdefg".indexOf(name[0]);
      const code = cells[index];
      const use = sq.querySelector("use.pc");
      if (code && code !== "#") {
        sq.setAttribute("data-piece", code);
        use.setAttribute("href", "#pc-" + code);
      } else {
        sq.removeAttribute("data-piece");
        use.removeAttribute("href");
      }
      sq.classList.toggle("last", marked.has(index));
    });
  }

  // The pieces each seat has left to place, by seat, as text.
  function reserves(game, cells) {
    if (game === "oxono") {
      return ["P", "B"].map((c) => "X " + (8 - cells.filter((x) => x === c + "X").length) +
        ", O " + (8 - cells.filter((x) => x === c + "O").length));
    }
    const full = { 1: 5, 2: 5, 3: 5, 4: 3 };
    return ["W", "R"].map((c) => [1, 2, 3, 4].map((v) => v + "×" + (full[v] - cells.filter((x) => x === c + v).length)).join("  "));
  }

  function start() {
  if (previous !== null) previous.abort();
  const listening = new AbortController();
  previous = listening;
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const GAME = DATA.game;
  const COLORS = DATA.colors;
  const BOTS = DATA.bots;
  const SIZE = GAME === "oxono" ? 6 : 7;
  const FILES = "abcdefg";
  const PAGE_ROWS = 100;
  const STATE_KEY = "totem-arena-report:" + location.pathname;
  const $ = (id) => document.getElementById(id);

  // ---- rules replayer --------------------------------------------------------

  function squareIndex(name) {
    return (parseInt(name.slice(1), 10) - 1) * SIZE + FILES.indexOf(name[0]);
  }

  // Applies one recorded move for `seat` to the flat cell array (rank 1
  // first, as the protocol's board rows); returns the squares it touched.
  function applyMove(cells, move, seat) {
    let totem, dest, piece, place;
    if (GAME === "oxono") {            // "Xc5 c6": totem X to c5, an X piece on c6
      const symbol = move[0];
      totem = "T" + symbol;
      dest = squareIndex(move.slice(1, 3));
      place = squareIndex(move.slice(4));
      piece = (seat === 0 ? "P" : "B") + symbol;
    } else {                           // "d5 3e6": the totem to d5, a 3 on e6
      const parts = move.split(" ");
      totem = "T";
      dest = squareIndex(parts[0]);
      place = squareIndex(parts[1].slice(1));
      piece = (seat === 0 ? "W" : "R") + parts[1][0];
    }
    const from = cells.indexOf(totem);
    cells[from] = "";
    cells[dest] = totem;
    cells[place] = piece;
    return [from, dest, place];
  }

  // Every position of a game: [{cells, touched}], index = ply.
  function replay(game) {
    const start = DATA.starts[game.s];
    let cells = start.cells.slice();
    const out = [{ cells: cells, touched: [] }];
    game.moves.forEach((move, k) => {
      cells = cells.slice();
      const touched = applyMove(cells, move, (start.ply + k) % 2);
      out.push({ cells: cells, touched: touched });
    });
    return out;
  }

  // ---- games: derived fields ----------------------------------------------------

  // A large report's list is in columns (see data.py's game_list): each
  // game written as what changed from the one before, its moves elsewhere.
  function expandList(list) {
    const out = [];
    let id = "", index = 0, round = 0;
    list.id.forEach((text, row) => {
      const colon = text.indexOf(":");
      id = id.slice(0, Number(text.slice(0, colon))) + text.slice(colon + 1);
      index += list.i[row];
      round += list.rd[row];
      const g = {
        id: id, i: index, rd: round, o: list.o[row], p: [list.p0[row], list.p1[row]],
        w: list.w[row] < 0 ? null : list.w[row], r: list.reasons[list.r[row]], s: list.s[row], tc: list.tc[row],
        plies: list.l[row], time: list.bt[row] / 100, row: row,
      };
      if (list.sc && list.sc[row]) g.sc = list.sc[row];
      out.push(Object.assign(g, list.extra[row]));
    });
    return out;
  }

  // The moves, their times and infos, the stderr ends: in the entry, or from a file of games.
  function takeBody(g, body) {
    g.moves = body.m ? body.m.split(",") : [];
    g.t = body.t;
    g.rt = body.rt;
    if (body.n) g.n = body.n;
    if (body.e) g.e = body.e;
  }

  const GAMES = DATA.games || expandList(DATA.list);
  const BY_ID = new Map();
  GAMES.forEach((g) => {
    if (g.m !== undefined) {
      takeBody(g, g);
      g.plies = g.moves.length;
      g.time = g.t.reduce((a, b) => a + b, 0) / 1000;
    }
    g.first = BOTS[g.p[0]];
    g.second = BOTS[g.p[1]];
    g.result = g.w === null ? "½–½" : g.w === 0 ? "1–0" : "0–1";
    BY_ID.set(g.id, g);
  });

  // ---- a large report's files of games -------------------------------------------

  const loading = new Map();  // file number -> a promise kept once its games have their moves
  const waiting = new Map();  // file number -> that promise's resolve, until the file hands its games

  // The file holding the list's `row`: the last whose first row is not after it.
  function fileOf(row) {
    const starts = DATA.chunks.starts;
    let low = 0, high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle] <= row) low = middle; else high = middle - 1;
    }
    return low;
  }

  receive = (file) => {
    const number = DATA.chunks.names.indexOf(file.name);
    if (number < 0) return;  // not this page's: its load event says so
    file.games.forEach((body, n) => takeBody(GAMES[DATA.chunks.starts[number] + n], body));
    if (waiting.has(number)) waiting.get(number)();
    waiting.delete(number);
  };

  function loadFile(number) {
    if (!loading.has(number)) {
      loading.set(number, new Promise((resolve, reject) => {
        const name = DATA.chunks.href + DATA.chunks.names[number];
        const failed = (why) => {
          script.remove();
          waiting.delete(number);
          loading.delete(number);  // asked again, tried again
          reject(new Error(why));
        };
        const script = document.createElement("script");
        waiting.set(number, resolve);
        script.onload = () => {
          if (!waiting.has(number)) script.remove();
          else failed("The file " + name + " is not this page's: reload the page.");
        };
        // A file's name changes with its games: one gone is of an older page than the one open.
        script.onerror = () => failed("Cannot load " + name + ": the report's games are in that folder beside it " +
          "(written again since this page was opened? reload it).");
        script.src = name;
        document.head.appendChild(script);
      }));
    }
    return loading.get(number);
  }

  // Kept once every game of `games` has its moves.
  function withMoves(games) {
    const files = new Set(games.filter((g) => g.moves === undefined).map((g) => fileOf(g.row)));
    return Promise.all(Array.from(files, loadFile));
  }

  function notLoaded(error) {
    $("status").textContent = error.message;
  }

  // ---- logs and the page shown: the whole report, or one bot's page -----------

  // The bot whose page is shown (#bot=NAME), or null for the whole report.
  const page = { bot: null };

  // The link to a bot's stderr in a game: relative to the page, names encoded.
  function logHref(bot, id) {
    return DATA.logs_href ? DATA.logs_href + encodeURIComponent(bot) + "/games/" + encodeURIComponent(id) + ".log" : null;
  }

  // The link to a bot's protocol log of a game, for a bot that played with debug on.
  function protocolHref(bot, id) {
    return DATA.logs_href && (DATA.protocol_bots || []).includes(bot)
      ? DATA.logs_href + encodeURIComponent(bot) + "/games/" + encodeURIComponent(id) + ".protocol.log" : null;
  }

  function hashFor(id, ply) {
    return (page.bot && !DATA.only_bot ? "bot=" + encodeURIComponent(page.bot) + "&" : "") +
      "game=" + encodeURIComponent(id) + "&ply=" + ply;
  }

  function stderrBlock(text) {
    const pre = document.createElement("pre");
    pre.className = "stderr";
    pre.textContent = text;
    return pre;
  }

  // A stderr block opens on its end, which is what explains a forfeit.
  function endsInView() {
    document.querySelectorAll("pre.stderr").forEach((pre) => { pre.scrollTop = pre.scrollHeight; });
  }

  function gameLink(id) {
    const link = document.createElement("a");
    link.href = "#" + hashFor(id, 0);
    link.textContent = id;
    return link;
  }

  function winnerName(g) {
    return g.w === null ? null : BOTS[g.p[g.w]];
  }

  // ---- game list -------------------------------------------------------------------

  const filters = {
    bot: $("f-bot"), opponent: $("f-opponent"), result: $("f-result"), reason: $("f-reason"), opening: $("f-opening"),
  };
  const view = { sort: "index", desc: false, page: 0 };

  function addOptions(select, items) {
    items.forEach(([value, label]) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = label;
      select.appendChild(option);
    });
  }

  const used = Array.from(new Set(GAMES.flatMap((g) => g.p))).sort((a, b) => a - b);
  addOptions(filters.bot, used.map((i) => [BOTS[i], BOTS[i]]));
  addOptions(filters.opponent, used.map((i) => [BOTS[i], BOTS[i]]));
  addOptions(filters.result, [
    ["bot-won", "selected bot won"], ["bot-lost", "selected bot lost"], ["draw", "draw"],
    ...COLORS.map((c, i) => ["seat-" + i, c + " won"]), ["forfeit", "any forfeit"],
  ]);
  addOptions(filters.reason, Array.from(new Set(GAMES.map((g) => g.r))).sort().map((r) => [r, r]));
  addOptions(filters.opening, Array.from(new Set(GAMES.map((g) => g.o))).sort((a, b) => a - b)
    .map((o) => [String(o), DATA.openings[o]]));
  $("col-first").textContent = COLORS[0];
  $("col-second").textContent = COLORS[1];

  function matches(g, f) {
    const a = g.first, b = g.second;
    if (f.bot && a !== f.bot && b !== f.bot) return false;
    if (f.opponent) {
      if (a !== f.opponent && b !== f.opponent) return false;
      if (f.bot && f.bot !== f.opponent && !((a === f.bot && b === f.opponent) || (b === f.bot && a === f.opponent))) return false;
    }
    switch (f.result) {
      case "draw": if (g.w !== null) return false; break;
      case "seat-0": if (g.w !== 0) return false; break;
      case "seat-1": if (g.w !== 1) return false; break;
      case "forfeit": if (g.f === undefined) return false; break;
      case "bot-won": if (!f.bot || winnerName(g) !== f.bot) return false; break;
      case "bot-lost": if (!f.bot || g.w === null || winnerName(g) === f.bot) return false; break;
    }
    if (f.reason && g.r !== f.reason) return false;
    if (f.opening !== "" && String(g.o) !== f.opening) return false;
    return true;
  }

  const SORT_KEYS = {
    index: (g) => g.i, id: (g) => g.id, round: (g) => g.rd, opening: (g) => g.o, first: (g) => g.first,
    second: (g) => g.second, result: (g) => g.result, reason: (g) => g.r, plies: (g) => g.plies, time: (g) => g.time,
  };

  function currentFilter() {
    const f = {};
    for (const key in filters) f[key] = filters[key].value;
    return f;
  }

  function selected() {
    const f = currentFilter();
    const rows = GAMES.filter((g) => matches(g, f));
    const key = SORT_KEYS[view.sort] || SORT_KEYS.index;
    rows.sort((x, y) => {
      const a = key(x), b = key(y);
      const order = a < b ? -1 : a > b ? 1 : x.i - y.i;
      return view.desc ? -order : order;
    });
    return rows;
  }

  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  // On a bot's page: its stderr in the game, a link to the file or, in a
  // page of its own, shown in the viewer.
  function logCell(g) {
    const td = cell("", "log");
    const href = logHref(page.bot, g.id);
    const seat = g.first === page.bot ? 0 : 1;
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = "log";
      td.appendChild(a);
      const protocol = protocolHref(page.bot, g.id);
      if (protocol) {
        const p = document.createElement("a");
        p.href = protocol;
        p.textContent = "protocol";
        td.append(" ", p);
      }
    } else if (g.e && g.e[seat] !== null && g.e[seat] !== undefined) {
      td.textContent = g.e[seat].split("\n").length + " lines";
      td.title = "shown in the game's viewer";
    } else if (g.moves === undefined) {
      td.textContent = "in the viewer";
      td.title = "the end of its stderr, if it wrote any, is shown in the game's viewer";
    } else {
      td.textContent = "-";
    }
    return td;
  }

  function renderList() {
    const rows = selected();
    const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
    view.page = Math.min(Math.max(0, view.page), pages - 1);
    const body = document.createElement("tbody");
    rows.slice(view.page * PAGE_ROWS, (view.page + 1) * PAGE_ROWS).forEach((g) => {
      const tr = document.createElement("tr");
      tr.dataset.game = g.id;
      const id = cell("");
      id.appendChild(gameLink(g.id));
      const opening = cell(DATA.openings[g.o], "opening");
      opening.title = DATA.openings[g.o];
      tr.append(cell(String(g.i), "num"), id, cell(String(g.rd), "num"), opening, cell(g.first),
        cell(g.second), cell(g.result), cell(g.f !== undefined ? g.r + " (" + COLORS[g.f] + ")" : g.r),
        cell(String(g.plies), "num"), cell(g.time.toFixed(2), "num"));
      if (page.bot) tr.appendChild(logCell(g));
      body.appendChild(tr);
    });
    $("game-list").replaceChild(body, $("game-list").tBodies[0]);
    $("game-count").textContent = rows.length + " of " + GAMES.length + " games";
    const first = rows.length ? view.page * PAGE_ROWS + 1 : 0;
    $("page-label").textContent = "rows " + first + "–" + Math.min(rows.length, (view.page + 1) * PAGE_ROWS) +
      " (page " + (view.page + 1) + " of " + pages + ")";
    $("page-prev").disabled = view.page === 0;
    $("page-next").disabled = view.page >= pages - 1;
    document.querySelectorAll("#game-list th[data-sort]").forEach((th) => {
      th.classList.toggle("sorted-asc", th.dataset.sort === view.sort && !view.desc);
      th.classList.toggle("sorted-desc", th.dataset.sort === view.sort && view.desc);
    });
    saveState();
  }

  // A live report reloads itself: filters, sorting and page survive the reload.
  function saveState() {
    try {
      sessionStorage.setItem(STATE_KEY, JSON.stringify({ filter: currentFilter(), view: view }));
    } catch (e) { /* storage may be off for file:// pages; the list still works */ }
  }

  function restoreState() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(STATE_KEY) || "null");
      if (!saved) return;
      for (const key in filters) {
        const value = saved.filter[key];
        if (Array.from(filters[key].options).some((o) => o.value === value)) filters[key].value = value;
      }
      Object.assign(view, saved.view);
    } catch (e) { /* a damaged entry: start afresh */ }
  }

  for (const key in filters) filters[key].addEventListener("change", () => { view.page = 0; renderList(); });
  $("f-clear").addEventListener("click", () => {
    for (const key in filters) filters[key].value = "";
    view.page = 0;
    renderList();
  });
  document.querySelectorAll("#game-list th[data-sort]").forEach((th) => th.addEventListener("click", () => {
    view.desc = view.sort === th.dataset.sort ? !view.desc : false;
    view.sort = th.dataset.sort;
    renderList();
  }));
  $("page-prev").addEventListener("click", () => { view.page -= 1; renderList(); });
  $("page-next").addEventListener("click", () => { view.page += 1; renderList(); });
  $("game-list").addEventListener("click", (event) => {
    const tr = event.target.closest("tr[data-game]");
    if (tr && !event.target.closest("a")) location.hash = hashFor(tr.dataset.game, 0);
  });

  // ---- viewer ---------------------------------------------------------------------

  const viewer = $("viewer");
  const slider = $("v-slider");
  // wanted: the game asked for last, which a file of games being loaded opens.
  const open = { game: null, positions: null, ply: 0, wanted: null };

  function clockText(ms) {
    const tenths = Math.max(0, Math.round(ms / 100));
    const minutes = Math.floor(tenths / 600);
    const seconds = ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
    return minutes + ":" + seconds;
  }

  // The clocks after `ply` moves: [{text, title}] by seat.
  function clocks(g, ply) {
    const control = DATA.controls[g.tc];
    const startPly = DATA.starts[g.s].ply;
    if (control.per_move_ms !== undefined) {
      const last = [null, null];
      for (let k = 0; k < ply; k++) last[(startPly + k) % 2] = g.t[k];
      return last.map((ms) => ({
        text: clockText(control.per_move_ms),
        title: "per move " + control.per_move_ms + " ms" + (ms === null ? "" : "; last move took " + ms + " ms"),
      }));
    }
    const left = [control.initial_ms, control.initial_ms];
    for (let k = 0; k < ply; k++) left[(startPly + k) % 2] += control.increment_ms - g.t[k];
    return left.map((ms) => ({ text: clockText(ms), title: Math.round(ms) + " ms left" }));
  }


  function show(ply) {
    const g = open.game;
    const n = g.moves.length;
    ply = Math.max(0, Math.min(n, ply));
    open.ply = ply;
    const position = open.positions[ply];
    paintBoard(document.querySelector("#viewer svg.board"), position.cells, position.touched);
    const label = $("v-ply");
    label.dataset.ply = String(ply);
    label.textContent = "ply " + ply + " / " + n;
    slider.max = String(n);
    slider.value = String(ply);
    const startPly = DATA.starts[g.s].ply;
    const toMove = (startPly + ply) % 2;
    const over = ply === n;
    const clockNow = clocks(g, ply);
    const reserve = reserves(GAME, position.cells);
    const players = $("v-players");
    players.textContent = "";
    COLORS.forEach((color, seat) => {
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = { pink: "#e4579b", black: "#262626", white: "#fbf8ef", red: "#c62828" }[color] || "#999";
      const name = document.createElement("span");
      name.textContent = BOTS[g.p[seat]] + " (" + color + ")";
      const clock = document.createElement("span");
      clock.className = "clock" + (!over && seat === toMove ? " to-move" : "");
      clock.dataset.seat = String(seat);
      clock.textContent = clockNow[seat].text;
      clock.title = clockNow[seat].title;
      const held = document.createElement("span");
      held.className = "reserve";
      held.textContent = "reserve: " + reserve[seat];
      players.append(swatch, name, clock, held);
    });
    const info = $("v-move");
    info.textContent = "";
    if (ply === 0) {
      const opening = DATA.openings[g.o];
      const after = opening.includes(": ") ? " after the opening's moves " + opening.split(": ")[1] : "";
      info.textContent = "Start position" + after + "; " + COLORS[toMove] + " (" + BOTS[g.p[toMove]] + ") to move.";
    } else {
      const seat = (startPly + ply - 1) % 2;
      const line = document.createElement("div");
      line.append("Move " + ply + ": " + COLORS[seat] + " (" + BOTS[g.p[seat]] + ") played ");
      const code = document.createElement("code");
      code.textContent = g.moves[ply - 1];
      line.append(code, " in " + g.t[ply - 1].toFixed(1) + " ms");
      info.appendChild(line);
      const note = g.n && g.n[String(ply)];
      if (note) {
        const extra = document.createElement("div");
        extra.className = "bot-info";
        extra.textContent = "info: " + note;
        info.appendChild(extra);
      }
    }
    document.querySelectorAll("#v-moves li").forEach((li) => {
      const current = Number(li.dataset.movePly) === ply;
      li.classList.toggle("current", current);
      if (current) li.scrollIntoView({ block: "nearest" });
    });
    $("v-first").disabled = $("v-prev").disabled = ply === 0;
    $("v-next").disabled = $("v-last").disabled = ply === n;
    history.replaceState(null, "", "#" + hashFor(g.id, ply));
  }

  function openGame(id, ply) {
    const g = BY_ID.get(id);
    if (!g) {
      $("status").textContent = "This report has no game " + JSON.stringify(id) + ".";
      closeViewer();
      return;
    }
    open.wanted = id;
    if (g.moves === undefined) {
      withMoves([g]).then(() => { if (open.wanted === id) openGame(id, ply); }, notLoaded);
      return;
    }
    if (open.game !== g) {
      open.game = g;
      open.positions = replay(g);
      $("v-title").textContent = "Game " + g.id + ": " + g.first + " (" + COLORS[0] + ") vs " + g.second + " (" + COLORS[1] +
        ") · round " + g.rd + " · opening " + DATA.openings[g.o];
      const list = $("v-moves");
      list.textContent = "";
      g.moves.forEach((move, k) => {
        const li = document.createElement("li");
        li.dataset.movePly = String(k + 1);
        li.textContent = move;
        const ms = document.createElement("span");
        ms.className = "ms";
        ms.textContent = g.t[k].toFixed(1) + " ms";
        li.appendChild(ms);
        list.appendChild(li);
      });
      const result = $("v-result");
      result.textContent = g.rt;
      if (g.d) {
        const detail = document.createElement("span");
        detail.className = "detail";
        detail.textContent = g.d;
        result.appendChild(detail);
      }
      renderGameLogs(g);
    }
    viewer.hidden = false;
    endsInView();
    show(ply);
  }

  // Beside the result: each shown bot's stderr in this game (the end of it,
  // inlined: beside a forfeit, or a bot's own page) and the link to its file.
  function renderGameLogs(g) {
    const box = $("v-logs");
    box.textContent = "";
    g.p.forEach((botIndex, seat) => {
      const name = BOTS[botIndex];
      if (DATA.only_bot && name !== DATA.only_bot) return;  // a team's page holds no other bot's log
      const tail = g.e ? g.e[seat] : null;
      const href = logHref(name, g.id);
      if ((tail === null || tail === undefined) && !href) return;
      const line = document.createElement("div");
      line.className = "log-line";
      line.append("stderr of " + name + " (" + COLORS[seat] + ") in this game");
      if (href) {
        const a = document.createElement("a");
        a.href = href;
        a.textContent = "the whole log";
        line.append(": ", a);
      }
      box.appendChild(line);
      if (tail !== null && tail !== undefined) {
        const label = document.createElement("div");
        label.className = "log-line";
        label.textContent = "its end:";
        box.append(label, stderrBlock(tail));
      }
    });
  }

  function closeViewer() {
    viewer.hidden = true;
    open.game = null;
    open.wanted = null;
    const back = page.bot && !DATA.only_bot ? "#bot=" + encodeURIComponent(page.bot) : "";
    if (location.hash !== back) history.replaceState(null, "", (location.pathname + location.search) + back);
  }

  // ---- a bot's page ----------------------------------------------------------------

  function row(cells) {
    const tr = document.createElement("tr");
    cells.forEach((c) => tr.appendChild(c instanceof Node ? c : cell(String(c[0]), c[1])));
    return tr;
  }

  // A large report's sheet names each game of a round by its row in the list:
  // [round, opponent, score, opponent's score, status, note, [row, seat, score, ...]].
  function roundsOf(sheet) {
    if (sheet.rounds) return sheet.rounds;
    return sheet.lines.map(([round, opponent, mine, theirs, status, note, games]) => {
      const played = [];
      for (let k = 0; k < games.length; k += 3) {
        played.push({ id: GAMES[games[k]].id, color: COLORS[games[k + 1]], score: games[k + 2] });
      }
      return { round: round, opponent: opponent, score: [mine, theirs], games: played, status: status, note: note };
    });
  }

  // The page's numbers come from the report's Python (DATA.sheets: the
  // standings' one scoring model); this only shows them.
  function renderBotPage(name) {
    $("b-name").textContent = name;
    $("b-back").hidden = Boolean(DATA.only_bot);
    const sheet = DATA.sheets[name];
    const summary = $("b-summary");
    summary.textContent = "";
    (sheet ? sheet.summary : ["Not in the ranking: the bot is no longer in the tournament."]).forEach((line) => {
      const li = document.createElement("li");
      li.textContent = line;
      summary.appendChild(li);
    });
    const forfeits = [];
    GAMES.forEach((g) => {
      const seat = g.first === name ? 0 : g.second === name ? 1 : -1;
      if (seat >= 0 && g.f === seat) forfeits.push({ g: g, seat: seat, opponent: BOTS[g.p[1 - seat]] });
    });
    const half = { 1: "1", 0.5: "½", 0: "0" };
    const rounds = document.createElement("tbody");
    (sheet ? roundsOf(sheet) : []).forEach((line) => {
      const games = cell("");
      line.games.forEach((game, k) => {
        if (k) games.append(", ");
        const a = gameLink(game.id);
        a.textContent = game.color + " " + (half[game.score] !== undefined ? half[game.score] : game.score);
        a.title = game.id;
        games.appendChild(a);
      });
      if (!line.games.length) games.textContent = "-";
      const score = line.status === "bye" ? String(line.score[0])
        : line.games.length ? line.score[0] + "–" + line.score[1] : "-";
      const tr = row([[line.round, "num"], [line.opponent === null ? "-" : line.opponent], games, [score, "num"],
        [line.status], [line.note]]);
      tr.className = "status-" + line.status.replace(/ /g, "-");
      rounds.appendChild(tr);
    });
    $("b-rounds").replaceChild(rounds, $("b-rounds").tBodies[0]);
    const opponents = document.createElement("tbody");
    (sheet ? sheet.opponents : []).forEach((t) => {
      opponents.appendChild(row([[t.name], [t.games, "num"], [t.wins, "num"], [t.draws, "num"], [t.losses, "num"],
        [t.score + " / " + t.games, "num"], [t.forfeits, "num"]]));
    });
    $("b-opponents").replaceChild(opponents, $("b-opponents").tBodies[0]);
    const versions = DATA.versions[name] || { now: null, played: {} };
    const played = Object.entries(versions.played).map(([v, n]) => v + " (" + n + " games)");
    $("b-versions").textContent = "Version now: " + (versions.now || "unknown") +
      (played.length ? "; its games were played by " + played.join(", ") : "") + ".";
    const list = document.createElement("tbody");
    forfeits.forEach(({ g, seat, opponent }) => {
      const id = cell("");
      id.appendChild(gameLink(g.id));
      const stderr = cell("");
      const tail = g.e ? g.e[seat] : null;
      if (tail !== null && tail !== undefined) stderr.appendChild(stderrBlock(tail));
      const href = logHref(name, g.id);
      if (href) {
        const a = document.createElement("a");
        a.href = href;
        a.textContent = "the whole log";
        stderr.appendChild(a);
      }
      if (g.moves === undefined) stderr.textContent = "…";
      else if (!stderr.childNodes.length) stderr.textContent = "no log";
      list.appendChild(row([id, [opponent], [g.r], [g.d || ""], stderr]));
    });
    const unread = forfeits.map((f) => f.g).filter((g) => g.moves === undefined);
    if (unread.length) {
      withMoves(unread).then(() => { if (page.bot === name) { renderBotPage(name); endsInView(); } }, notLoaded);
    }
    $("b-forfeits").replaceChild(list, $("b-forfeits").tBodies[0]);
    $("b-forfeits").hidden = forfeits.length === 0;
    $("b-no-forfeits").hidden = forfeits.length > 0;
    $("b-logs").textContent = DATA.logs_href
      ? "Its stderr in each game: the log link of each game below (the files are in the results directory's logs/" + name + "/games/)." +
        ((DATA.protocol_bots || []).includes(name) ? " It played with debug on: the protocol link is every line it was sent and sent back." : "")
      : "The end of its stderr in each game is shown in the game's viewer.";
  }

  // Shows the bot's page (its results, forfeits, versions; the game list
  // filtered to its games), or the whole report for null.
  function showPage(name) {
    if (name !== null && !BOTS.includes(name)) {
      $("status").textContent = "This report has no bot " + JSON.stringify(name) + ".";
      name = null;
    }
    if (DATA.only_bot) name = DATA.only_bot;
    const changed = page.bot !== name;
    page.bot = name;
    $("bot-page").hidden = name === null;
    if (!DATA.only_bot) {
      $("standings").hidden = name !== null;
      $("charts").hidden = name !== null;
    }
    $("col-log").hidden = name === null;
    if (name !== null) { renderBotPage(name); endsInView(); }
    if (changed) {
      // Another page: open it at its top (its place and points), not where the last one was scrolled to.
      window.scrollTo(0, 0);
      for (const key in filters) filters[key].value = "";
      if (name !== null) filters.bot.value = name;
      view.page = 0;
      renderList();
    }
  }

  function followHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    showPage(params.get("bot"));
    const id = params.get("game");
    if (id === null) {
      if (!viewer.hidden) closeViewer();
      return;
    }
    const ply = parseInt(params.get("ply") || "0", 10);
    openGame(id, Number.isFinite(ply) ? ply : 0);
  }

  $("v-first").addEventListener("click", () => show(0));
  $("v-prev").addEventListener("click", () => show(open.ply - 1));
  $("v-next").addEventListener("click", () => show(open.ply + 1));
  $("v-last").addEventListener("click", () => show(Infinity));
  $("v-close").addEventListener("click", closeViewer);
  slider.addEventListener("input", () => show(Number(slider.value)));
  $("v-moves").addEventListener("click", (event) => {
    const li = event.target.closest("li[data-move-ply]");
    if (li) show(Number(li.dataset.movePly));
  });
  viewer.addEventListener("click", (event) => { if (event.target === viewer) closeViewer(); });
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  document.addEventListener("keydown", (event) => {
    if (viewer.hidden || event.altKey || event.ctrlKey || event.metaKey) return;
    // The focused slider moves itself with these keys and reports it through "input".
    if (event.target === slider && event.key !== "Escape") return;
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1 }[event.key];
    if (step !== undefined) show(open.ply + step);
    else if (event.key === "Home") show(0);
    else if (event.key === "End") show(Infinity);
    else if (event.key === "Escape") closeViewer();
    else return;
    event.preventDefault();
  }, { signal: listening.signal });
  window.addEventListener("hashchange", followHash, { signal: listening.signal });

  function addBotLinks() {
    const nav = $("bot-links");
    if (DATA.only_bot) { nav.hidden = true; return; }
    nav.append("Each bot's page: ");
    used.map((i) => BOTS[i]).sort().forEach((name) => {  // by name: a team looks for its own
      const a = document.createElement("a");
      a.href = "#bot=" + encodeURIComponent(name);
      a.textContent = name;
      nav.appendChild(a);
    });
  }

  // ---- the rating chart's search box: picks bots out of its grey lines ----------

  function findInChart() {
    const box = $("chart-find");
    if (!box) return;
    const wanted = box.value.trim().toLowerCase();
    const svg = document.querySelector("svg.chart g.series") && document.querySelector("svg.chart g.series").ownerSVGElement;
    svg.querySelectorAll("text.found-label").forEach((t) => t.remove());
    let found = 0;
    svg.querySelectorAll("g.series").forEach((g) => {
      const hit = wanted !== "" && g.dataset.bot.toLowerCase().includes(wanted);
      g.classList.toggle("found", hit);
      if (!hit) return;
      found += 1;
      g.parentNode.appendChild(g);  // on top of the others
      if (found > 12) return;  // names beside a dozen lines at most: more would cover the chart
      const points = g.querySelector("polyline").getAttribute("points").trim().split(" ");
      const [x, y] = points[points.length - 1].split(",").map(Number);
      const label = document.createElementNS("http://www.w3.org/2000/svg", "text");
      label.setAttribute("class", "found-label");
      label.setAttribute("x", String(x + 4));
      label.setAttribute("y", String(y + 4));
      label.textContent = g.dataset.bot;
      svg.appendChild(label);
    });
    $("chart-found").textContent = wanted === "" ? "" : found + " bot" + (found === 1 ? "" : "s") + " found";
  }

  if ($("chart-find")) $("chart-find").addEventListener("input", findInChart);

  // The live view steps a card through the moves it missed by the page's own rules.
  window.arenaReport.applyMove = applyMove;
  addBotLinks();
  restoreState();
  renderList();
  followHash();
  if (DATA.live) setTimeout(() => location.reload(), DATA.refresh_s * 1000);
  }

  window.arenaReport = { start: start, games: (file) => receive(file), paintBoard: paintBoard, reserves: reserves };
  start();
})();
