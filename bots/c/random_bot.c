/*
 * A Totem Arena bot in C99 that plays a random legal move.
 *
 * No JSON library: a small scanner finds the few top-level keys it needs
 * ("type", "seed", "legal_moves") and copies one move string back.
 *
 * Build: gcc -O2 -Wall -Wextra -o random_bot random_bot.c
 * Run:   ./random_bot
 */
#define _POSIX_C_SOURCE 200809L /* for getline */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state;

/* splitmix64: tiny, fast, and the same sequence on every platform (rand() is not). */
static uint64_t next_random(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

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
 * The value of `key` in the outermost object of `line`, or NULL.  Depth is
 * tracked so that a key of the same name inside "state" or "options" is
 * never mistaken for the message's own.
 */
static const char *find_key(const char *line, const char *key)
{
    size_t len = strlen(key);
    int depth = 0;
    const char *p = line;
    while (*p) {
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
        else if (*p == '}' || *p == ']')
            depth--;
        p++;
    }
    return NULL;
}

/* True when `value` (from find_key) is the JSON string `expected`. */
static int string_is(const char *value, const char *expected)
{
    size_t len = strlen(expected);
    return value && *value == '"' && strncmp(value + 1, expected, len) == 0 && value[len + 1] == '"';
}

/* Answers a turn with a random string of its "legal_moves" array. */
static void play_turn(const char *line)
{
    const char *moves = find_key(line, "legal_moves");
    const char *p;
    long count = 0, pick;

    if (!moves || *moves != '[') {
        printf("{\"type\":\"error\",\"message\":\"turn without legal_moves\"}\n");
        return;
    }
    for (p = skip_space(moves + 1); *p == '"'; count++) {
        p = skip_space(skip_string(p));
        if (*p == ',')
            p = skip_space(p + 1);
    }
    if (count == 0) {
        printf("{\"type\":\"error\",\"message\":\"no legal moves\"}\n");
        return;
    }
    pick = (long)(next_random() % (uint64_t)count);
    for (p = skip_space(moves + 1); pick > 0; pick--) {
        p = skip_space(skip_string(p));
        if (*p == ',')
            p = skip_space(p + 1);
    }
    /* The move is echoed exactly as received, escapes and all, so it stays valid JSON. */
    printf("{\"type\":\"move\",\"move\":%.*s}\n", (int)(skip_string(p) - p), p);
}

int main(void)
{
    char *line = NULL;
    size_t capacity = 0;

    setvbuf(stdout, NULL, _IOLBF, 0); /* every answer leaves as soon as its newline is written */
    rng_state = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);

    while (getline(&line, &capacity, stdin) != -1) {
        const char *type = find_key(line, "type");
        if (string_is(type, "hello")) {
            printf("{\"type\":\"ready\",\"name\":\"RandomBot-C\",\"version\":\"1.0\",\"author\":\"Totem Arena\"}\n");
        } else if (string_is(type, "new_game")) {
            const char *seed = find_key(line, "seed");
            if (seed && (*seed == '-' || (*seed >= '0' && *seed <= '9')))
                rng_state = (uint64_t)strtoll(seed, NULL, 10);
            fprintf(stderr, "random_bot.c: new game\n");
        } else if (string_is(type, "turn")) {
            play_turn(line);
        } else if (string_is(type, "quit")) {
            break;
        }
        /* Other types (game_over, or any added later) need no answer. */
    }
    free(line);
    return 0;
}
