#!/usr/bin/env node
// A Totem Arena bot for node that plays a random legal move.
// No npm dependencies.  Run: node bots/js/random_bot.js
"use strict";

const readline = require("readline");

// mulberry32: Math.random cannot be seeded, and a seed must replay a game exactly.
function makeRandom(seed) {
  // Fold the high bits in too: seeds may be far larger than 32 bits.
  let a = (seed % 4294967296) ^ Math.floor(seed / 4294967296);
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function send(message) {
  // Writes to a pipe are synchronous in node on POSIX, so nothing waits in a buffer.
  process.stdout.write(JSON.stringify(message) + "\n");
}

let random = makeRandom(Date.now());
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

input.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      send({ type: "ready", name: "RandomBot-JS", version: "1.0", author: "Totem Arena" });
      break;
    case "new_game":
      random = makeRandom(Number.isInteger(message.seed) ? message.seed : Date.now());
      console.error(`new game ${message.game_id} as ${message.you}`);
      break;
    case "turn": {
      const moves = message.legal_moves;
      send({ type: "move", move: moves[Math.floor(random() * moves.length)] });
      break;
    }
    case "quit":
      process.exit(0);
    // Anything else (game_over, or a type added later) needs no answer.
  }
});

input.on("close", () => process.exit(0));
