/*
 * A Totem Arena bot in Java that plays a random legal move.
 *
 * Standard library only, no JSON library: the arena writes each message as
 * one line of compact JSON with "type" first (docs/protocol.md, "Reading
 * the messages without a JSON library"), so a small scanner finds the few
 * top-level keys the bot needs ("type", "seed", "legal_moves").
 *
 * Build: javac RandomBot.java          (writes RandomBot.class here)
 * Run:   java RandomBot                (from this folder: the class path is
 *                                       the working directory, so a tournament
 *                                       file gives the bot cwd: bots/java)
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

public final class RandomBot {
    private RandomBot() {}

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // autoflush off: each answer is flushed by hand, right after its newline.
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Random random = new Random();
        String line;
        while ((line = in.readLine()) != null) {
            String type = stringValue(line, "type");
            if (type == null) {
                continue; // not a message: nothing to answer
            }
            switch (type) {
                case "hello":
                    send(out, "{\"type\":\"ready\",\"name\":\"JavaRandomBot\",\"version\":\"1.0\",\"author\":\"Totem Arena\"}");
                    break;
                case "new_game":
                    // The same seed replays the same game.
                    Long seed = integerValue(line, "seed");
                    random = seed != null ? new Random(seed) : new Random();
                    System.err.println("new game " + stringValue(line, "game_id") + " as " + stringValue(line, "you"));
                    break;
                case "turn":
                    List<String> moves = stringArray(topLevelValue(line, "legal_moves"));
                    String move = moves.get(random.nextInt(moves.size()));
                    // Moves are letters, digits and one space: no JSON escaping needed.
                    send(out, "{\"type\":\"move\",\"move\":\"" + move + "\"}");
                    break;
                case "quit":
                    return;
                default:
                    break; // game_over, or a type added later: no answer
            }
        }
    }

    private static void send(PrintStream out, String message) {
        out.print(message);
        out.print('\n');
        out.flush(); // the arena waits for the whole line: without this it times out
    }

    /*
     * The raw text of `key`'s value in the outermost object of `line`, from
     * its first character to the end of the line, or null.  Depth is tracked
     * and strings are skipped, so a key of the same name inside "state" or
     * "options", or text inside a string, is never taken for the message's own.
     */
    static String topLevelValue(String line, String key) {
        int depth = 0;
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '"') {
                int end = skipString(line, i);
                if (depth == 1 && end < line.length() && line.charAt(end) == ':'
                        && line.regionMatches(i + 1, key, 0, key.length()) && end - i == key.length() + 2) {
                    return line.substring(end + 1);
                }
                i = end;
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            }
            i++;
        }
        return null;
    }

    /* The index just past the string that starts with the quote at `start`. */
    private static int skipString(String line, int start) {
        int i = start + 1;
        while (i < line.length() && line.charAt(i) != '"') {
            i += line.charAt(i) == '\\' ? 2 : 1;
        }
        return i + 1;
    }

    /* A top-level string value without escapes (a type, a game id, a colour), or null. */
    static String stringValue(String line, String key) {
        String value = topLevelValue(line, key);
        if (value == null || value.isEmpty() || value.charAt(0) != '"') {
            return null;
        }
        return value.substring(1, value.indexOf('"', 1));
    }

    /* A top-level integer value (the seed, the ply), or null. */
    static Long integerValue(String line, String key) {
        String value = topLevelValue(line, key);
        if (value == null) {
            return null;
        }
        int end = 0;
        while (end < value.length() && (Character.isDigit(value.charAt(end)) || (end == 0 && value.charAt(0) == '-'))) {
            end++;
        }
        return end == 0 ? null : Long.valueOf(value.substring(0, end));
    }

    /* The strings of an array of moves, `value` starting at its '['. */
    static List<String> stringArray(String value) {
        List<String> items = new ArrayList<>();
        int i = 1;
        while (value.charAt(i) == '"') {
            int end = value.indexOf('"', i + 1);
            items.add(value.substring(i + 1, end));
            i = end + 1;
            if (value.charAt(i) == ',') {
                i++;
            }
        }
        return items;
    }
}
