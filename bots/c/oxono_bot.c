/*
 * A Totem Arena bot in C99 for OXONO that keeps its own board.
 *
 * It answers hello with "compact_turns": true, so the arena sends it turns
 * without "state" and "legal_moves" (only game id, ply, the opponent's last
 * move and the clock): it reads the start position from new_game, applies
 * every move itself, and generates the legal moves with its own bitboard
 * move generator (the rules of docs/engine.md).  It plays a move that wins
 * at once when there is one, else a random legal move, seeded by new_game's
 * "seed" so that a tournament replays identically.
 *
 * If the arena's last_move or ply does not fit its own board, it says so with
 * an "error" message (forfeit bot_error) rather than playing on a wrong board.
 * Given full turns anyway (by an arena without compact turns), it checks its
 * own legal moves against "legal_moves" and gives up if they differ: the
 * tests use that to hold its move generator to the arena's rules engine.
 *
 * Build: gcc -O2 -Wall -Wextra -o oxono_bot oxono_bot.c
 * Run:   ./oxono_bot
 */
#define _POSIX_C_SOURCE 200809L /* for getline */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZE 6
#define SQUARES 36
#define PER_SYMBOL 8
#define MAX_PLIES 32
#define MAX_MOVES (2 * 35 * 35) /* 2 totems x 35 destinations x 35 placements: no position has more */

enum { WON = 1, EXHAUSTED = 2 };

typedef uint64_t squares; /* a set of squares: bit rank * 6 + file, a1 is bit 0 */

#define BIT(sq) ((squares)1 << (sq))
#define ALL (BIT(SQUARES) - 1)

struct position {
    squares pink, black; /* pieces of each colour */
    squares xs;          /* pieces with the symbol X, of either colour */
    int totem[2];        /* squares of totem X (0) and totem O (1) */
    int ply;             /* pieces placed so far; pink moves at even plies */
    int over;            /* WON (the last placer made a row of four), EXHAUSTED, or 0 */
};

struct move {
    int totem, dest, place;
};

/* Walking directions: up, down, left, right. */
static const int STEP_FILE[4] = {0, 0, -1, 1};
static const int STEP_RANK[4] = {1, -1, 0, 0};

static squares neighbours[SQUARES];

static void init_tables(void)
{
    for (int sq = 0; sq < SQUARES; sq++) {
        neighbours[sq] = 0;
        for (int d = 0; d < 4; d++) {
            int f = sq % SIZE + STEP_FILE[d], r = sq / SIZE + STEP_RANK[d];
            if (f >= 0 && f < SIZE && r >= 0 && r < SIZE)
                neighbours[sq] |= BIT(r * SIZE + f);
        }
    }
}

static int count(squares set)
{
    int n = 0;
    for (; set; set &= set - 1)
        n++;
    return n;
}

/*
 * Where a totem on `from` may go; `occupied` holds every piece and the other
 * totem.  It slides over empty squares in its rank and file; an enclosed
 * totem jumps to the first empty square past the run next to it, in each
 * direction where there is one; with no such square it may go anywhere empty.
 */
static int destinations(int from, squares occupied, int *out)
{
    int n = 0, enclosed = !(neighbours[from] & ~occupied);
    for (int d = 0; d < 4; d++) {
        int f = from % SIZE + STEP_FILE[d], r = from / SIZE + STEP_RANK[d];
        for (; f >= 0 && f < SIZE && r >= 0 && r < SIZE; f += STEP_FILE[d], r += STEP_RANK[d]) {
            int sq = r * SIZE + f;
            if (!(occupied & BIT(sq))) {
                out[n++] = sq;
                if (enclosed)
                    break;
            } else if (!enclosed) {
                break;
            }
        }
    }
    if (n == 0)
        for (int sq = 0; sq < SQUARES; sq++)
            if (sq != from && !(occupied & BIT(sq)))
                out[n++] = sq;
    return n;
}

static int legal_moves(const struct position *p, struct move *out)
{
    if (p->over)
        return 0;
    squares own = (p->ply & 1) ? p->black : p->pink;
    int n = 0;
    for (int t = 0; t < 2; t++) {
        /* A totem moves only if the mover still holds a piece of its symbol. */
        if (count(t == 0 ? own & p->xs : own & ~p->xs) == PER_SYMBOL)
            continue;
        squares occupied = p->pink | p->black | BIT(p->totem[1 - t]);
        squares empty = ALL & ~occupied; /* the square the totem leaves is empty again */
        int dests[SQUARES];
        int nd = destinations(p->totem[t], occupied, dests);
        for (int i = 0; i < nd; i++) {
            int dest = dests[i];
            squares places = neighbours[dest] & empty;
            if (!places)
                places = empty & ~BIT(dest);
            for (; places; places &= places - 1) {
                struct move m = {t, dest, __builtin_ctzll(places)};
                out[n++] = m;
            }
        }
    }
    return n;
}

/* Whether `set` holds four in a row in the rank or file of `sq`. */
static int row_of_four(squares set, int sq)
{
    for (int axis = 0; axis < 4; axis += 2) {
        int run = 1;
        for (int d = axis; d < axis + 2; d++) {
            int f = sq % SIZE + STEP_FILE[d], r = sq / SIZE + STEP_RANK[d];
            for (; f >= 0 && f < SIZE && r >= 0 && r < SIZE && (set & BIT(r * SIZE + f));
                 f += STEP_FILE[d], r += STEP_RANK[d])
                run++;
        }
        if (run >= 4)
            return 1;
    }
    return 0;
}

/* Plays a move known to be legal. */
static void play(struct position *p, struct move m)
{
    int seat = p->ply & 1;
    squares bit = BIT(m.place);
    if (seat)
        p->black |= bit;
    else
        p->pink |= bit;
    if (m.totem == 0)
        p->xs |= bit;
    p->totem[m.totem] = m.dest;
    p->ply++;
    squares own = seat ? p->black : p->pink;
    squares symbol = m.totem == 0 ? p->xs : (p->pink | p->black) & ~p->xs;
    if (row_of_four(own, m.place) || row_of_four(symbol, m.place))
        p->over = WON;
    else if (p->ply == MAX_PLIES)
        p->over = EXHAUSTED;
}

/* --- notation ------------------------------------------------------------ */

static int square_at(const char *s)
{
    if (s[0] < 'a' || s[0] >= 'a' + SIZE || s[1] < '1' || s[1] >= '1' + SIZE)
        return -1;
    return (s[1] - '1') * SIZE + (s[0] - 'a');
}

/* "Xc5 c6" -> move; returns 0 when the text is not of that shape. */
static int parse_move(const char *s, size_t len, struct move *m)
{
    if (len != 6 || (s[0] != 'X' && s[0] != 'O') || s[3] != ' ')
        return 0;
    m->totem = s[0] == 'O';
    m->dest = square_at(s + 1);
    m->place = square_at(s + 4);
    return m->dest >= 0 && m->place >= 0;
}

static void print_move(struct move m)
{
    printf("{\"type\":\"move\",\"move\":\"%c%c%c %c%c\"}\n", "XO"[m.totem], 'a' + m.dest % SIZE, '1' + m.dest / SIZE,
           'a' + m.place % SIZE, '1' + m.place / SIZE);
}

static int same_move(struct move a, struct move b)
{
    return a.totem == b.totem && a.dest == b.dest && a.place == b.place;
}

/* --- a little JSON ------------------------------------------------------- */

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

/* p points at an opening quote; returns the character after the closing one. */
static const char *skip_string(const char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p + 1 : p;
}

/*
 * The value of `key` in the object that starts at `object` (not in objects
 * nested in it), or NULL.
 */
static const char *find_key(const char *object, const char *key)
{
    size_t len = strlen(key);
    int depth = 0;
    for (const char *p = object; *p;) {
        if (*p == '"') {
            const char *end = skip_string(p);
            if (depth == 1 && (size_t)(end - p) == len + 2 && memcmp(p + 1, key, len) == 0) {
                const char *colon = skip_space(end);
                if (*colon == ':')
                    return skip_space(colon + 1);
            }
            p = end;
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']') {
            if (--depth == 0)
                return NULL; /* the end of this object */
        }
        p++;
    }
    return NULL;
}

static int string_is(const char *value, const char *expected)
{
    size_t len = strlen(expected);
    return value && *value == '"' && strncmp(value + 1, expected, len) == 0 && value[len + 1] == '"';
}

/* Reads the 6x6 "board" of a state object into `p`; returns 0 if it is not one. */
static int read_board(const char *board, struct position *p)
{
    static const char *codes[] = {"", "TX", "TO", "PX", "PO", "BX", "BO"};
    int totems_seen = 0;
    const char *s = skip_space(board);
    if (*s++ != '[')
        return 0;
    for (int r = 0; r < SIZE; r++) {
        s = skip_space(s);
        if (*s++ != '[')
            return 0;
        for (int f = 0; f < SIZE; f++) {
            s = skip_space(s);
            if (*s != '"')
                return 0;
            const char *end = skip_string(s);
            size_t len = (size_t)(end - s) - 2;
            int code = -1;
            for (int c = 0; c < 7; c++)
                if (strlen(codes[c]) == len && strncmp(s + 1, codes[c], len) == 0)
                    code = c;
            int sq = r * SIZE + f;
            switch (code) {
            case 0: break;
            case 1: p->totem[0] = sq; totems_seen |= 1; break;
            case 2: p->totem[1] = sq; totems_seen |= 2; break;
            case 3: p->pink |= BIT(sq); p->xs |= BIT(sq); break;
            case 4: p->pink |= BIT(sq); break;
            case 5: p->black |= BIT(sq); p->xs |= BIT(sq); break;
            case 6: p->black |= BIT(sq); break;
            default: return 0;
            }
            s = skip_space(end);
            if (*s == ',')
                s++;
        }
        s = skip_space(s);
        if (*s++ != ']')
            return 0;
        s = skip_space(s);
        if (*s == ',')
            s++;
    }
    return totems_seen == 3;
}

/* --- the bot --------------------------------------------------------------- */

static uint64_t rng_state;

/* splitmix64: tiny, fast, and the same sequence on every platform. */
static uint64_t next_random(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static struct position board;
static int have_board;

static void fail(const char *message)
{
    printf("{\"type\":\"error\",\"message\":\"%s\"}\n", message);
}

static void new_game(const char *line)
{
    const char *seed = find_key(line, "seed");
    const char *state = find_key(line, "state");
    const char *ply = state ? find_key(state, "ply") : NULL;
    const char *cells = state ? find_key(state, "board") : NULL;
    memset(&board, 0, sizeof board);
    have_board = cells && ply && read_board(cells, &board);
    if (have_board) {
        board.ply = atoi(ply);
        have_board = board.ply >= 0 && board.ply < MAX_PLIES;
    }
    if (seed && (*seed == '-' || (*seed >= '0' && *seed <= '9')))
        rng_state = (uint64_t)strtoll(seed, NULL, 10);
}

/* Whether the array `listed` (or no array at all) holds exactly `moves`. */
static int agrees(const char *listed, const struct move *moves, int n)
{
    int seen = 0;
    if (!listed || *listed != '[')
        return 1;
    for (const char *p = skip_space(listed + 1); *p == '"'; seen++) {
        const char *end = skip_string(p);
        struct move m;
        int i = 0;
        if (!parse_move(p + 1, (size_t)(end - p) - 2, &m))
            return 0;
        while (i < n && !same_move(moves[i], m))
            i++;
        if (i == n)
            return 0;
        p = skip_space(end);
        if (*p == ',')
            p = skip_space(p + 1);
    }
    return seen == n; /* the arena lists each move once */
}

static void turn(const char *line)
{
    static struct move moves[MAX_MOVES];
    const char *last = find_key(line, "last_move");
    const char *ply = find_key(line, "ply");
    struct move m;
    int n;

    if (!have_board) {
        fail("no game in progress, or a start position this bot cannot read");
        return;
    }
    if (last && *last == '"') {
        if (!parse_move(last + 1, (size_t)(skip_string(last) - last) - 2, &m)) {
            fail("cannot read last_move");
            return;
        }
        n = legal_moves(&board, moves);
        int i = 0;
        while (i < n && !same_move(moves[i], m))
            i++;
        if (i == n) {
            fail("last_move is not legal on this bot's board");
            return;
        }
        play(&board, m);
    }
    if (!ply || atoi(ply) != board.ply) {
        fail("the turn's ply does not match this bot's board");
        return;
    }
    n = legal_moves(&board, moves);
    if (n == 0) {
        fail("no legal move on this bot's board");
        return;
    }
    if (!agrees(find_key(line, "legal_moves"), moves, n)) {
        fail("legal_moves differs from this bot's own move generator");
        return;
    }
    m = moves[next_random() % (uint64_t)n];
    for (int i = 0; i < n; i++) {
        struct position after = board;
        play(&after, moves[i]);
        if (after.over == WON) {
            m = moves[i];
            break;
        }
    }
    play(&board, m);
    print_move(m);
}

int main(void)
{
    char *line = NULL;
    size_t capacity = 0;

    setvbuf(stdout, NULL, _IOLBF, 0); /* every answer leaves as soon as its newline is written */
    init_tables();
    rng_state = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);

    while (getline(&line, &capacity, stdin) != -1) {
        const char *type = find_key(line, "type");
        if (string_is(type, "hello")) {
            if (string_is(find_key(line, "game"), "oxono"))
                printf("{\"type\":\"ready\",\"name\":\"OxonoBot-C\",\"version\":\"1.0\",\"author\":\"Totem Arena\","
                       "\"compact_turns\":true}\n");
            else
                fail("oxono_bot plays only oxono");
        } else if (string_is(type, "new_game")) {
            new_game(line);
        } else if (string_is(type, "turn")) {
            turn(line);
        } else if (string_is(type, "game_over")) {
            have_board = 0;
        } else if (string_is(type, "quit")) {
            break;
        }
        /* Other types (any added later) need no answer. */
    }
    free(line);
    return 0;
}
