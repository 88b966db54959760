"""Tournament files: every default, every refusal with its line and key."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from arena.game.clock import TimeControl
from arena.results.sprt import SprtConfig
from arena.run.config import (
    BOT_KEYS,
    TOURNAMENT_KEYS,
    ConfigError,
    RaySettings,
    load_config,
    parse_config,
    sprt_from_option,
    with_executor,
)
from arena.bot.spec import split_command
from builders import ROOT, arena, assert_one_line_error


MINIMAL = """\
game: oxono
time_control: 5+0.1
bots:
  - name: a
    cmd: python -m bots.random_bot
  - name: b
    cmd: [python, -m, bots.greedy]
"""


def write(tmp_path: Path, text: str, name: str = "demo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def refusal(tmp_path: Path, text: str) -> str:
    """The one-line message with which the file ``demo.yaml`` holding ``text`` is refused."""
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message
    return message


# -- a valid file ------------------------------------------------------------


def test_minimal_file_gets_every_default(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL, "my-cup.yaml")
    config = load_config(path)
    assert config.name == "my-cup"
    assert config.competition.game == "oxono"
    assert config.time_control == TimeControl(initial_ms=5000, increment_ms=100)
    assert config.competition.rounds == 1
    assert config.competition.format == "round-robin"
    assert config.concurrency == (os.cpu_count() or 1)
    assert config.competition.seed == 0
    assert config.output == tmp_path.resolve() / "results" / "my-cup"
    assert config.time_margin_ms == 50
    assert config.startup_timeout_s == 10.0
    assert config.description == ""
    assert config.path == path.resolve()
    a, b = config.bots
    assert (a.name, b.name) == ("a", "b")
    assert a.options == {} and a.env == {}
    assert a.cwd == tmp_path.resolve()


def test_every_key_is_read(tmp_path: Path) -> None:
    (tmp_path / "bots" / "work").mkdir(parents=True)
    config = load_config(
        write(
            tmp_path,
            """\
            name: final
            description: |
              two lines
              of text
            game: YOXII
            time_control: move 0.5
            rounds: 3
            format: gauntlet
            concurrency: 4
            seed: -12
            output: out/final
            time_margin: 0.2
            startup_timeout: 2.5
            bots:
              - name: greedy
                cmd: ./greedy --fast
                options: {depth: 2, weights: [1.5, -2], deep: {x: null, y: true}}
                cwd: bots/work
                env: {GREEDY_LOG: "1", EMPTY: ""}
              - name: other.bot_2+
                cmd: ["node", "bot.js"]
            """,
        )
    )
    base = tmp_path.resolve()
    assert config.name == "final"
    assert config.description == "two lines\nof text\n"
    assert config.competition.game == "yoxii"
    assert config.time_control == TimeControl(per_move_ms=500)
    assert (config.competition.rounds, config.competition.format, config.concurrency, config.competition.seed) == (3, "gauntlet", 4, -12)
    assert config.output == base / "out" / "final"
    assert config.time_margin_ms == 200
    assert config.startup_timeout_s == 2.5
    greedy = config.bot("greedy")
    assert greedy.cmd == ("./greedy", "--fast")
    assert greedy.options == {"depth": 2, "weights": [1.5, -2], "deep": {"x": None, "y": True}}
    assert greedy.cwd == base / "bots" / "work"
    assert greedy.env == {"GREEDY_LOG": "1", "EMPTY": ""}
    assert config.bot("other.bot_2+").cmd == ("node", "bot.js")
    with pytest.raises(KeyError):
        config.bot("nobody")


def test_python_is_the_arenas_own_interpreter(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            game: oxono
            time_control: 5
            bots:
              - {name: a, cmd: python bot.py}
              - {name: b, cmd: [python3, -u, bot.py]}
              - {name: c, cmd: python3.11 bot.py}
              - {name: d, cmd: /usr/bin/python bot.py}
            """,
        )
    )
    assert config.bot("a").cmd == (sys.executable, "bot.py")
    assert config.bot("b").cmd == (sys.executable, "-u", "bot.py")
    # Only the bare names are replaced: an explicit interpreter is the user's choice.
    assert config.bot("c").cmd == ("python3.11", "bot.py")
    assert config.bot("d").cmd == ("/usr/bin/python", "bot.py")


def test_cmd_string_is_split_like_a_posix_shell(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            game: oxono
            time_control: 5+0
            bots:
              - name: a
                cmd: ./my\\ bot --name "two words" --path='/tmp/x y'
              - {name: b, cmd: [./my bot, "two words"]}
            """,
        )
    )
    assert config.bot("a").cmd == ("./my bot", "--name", "two words", "--path=/tmp/x y")
    assert config.bot("b").cmd == ("./my bot", "two words")


def test_split_command_for_command_line_tools() -> None:
    assert split_command("python -m bots.greedy 'a b'") == (sys.executable, "-m", "bots.greedy", "a b")
    assert split_command(["python3", "x y.py"]) == (sys.executable, "x y.py")
    assert split_command(("./bot", "--fast")) == ("./bot", "--fast")
    with pytest.raises(ValueError, match="empty command"):
        split_command("  ")
    with pytest.raises(ValueError, match="empty command"):
        split_command([])
    with pytest.raises(ValueError, match="No closing quotation"):
        split_command("python 'bot.py")


def test_paths_are_relative_to_the_file_not_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "sub" / "bots").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    path = write(
        tmp_path / "sub",
        """\
        game: oxono
        time_control: 5+0.1
        output: ../results/x
        bots:
          - {name: a, cmd: ./a, cwd: bots}
          - {name: b, cmd: ./b, cwd: ..}
          - {name: c, cmd: ./c}
        """,
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    config = load_config(Path("..") / "sub" / "demo.yaml")
    base = tmp_path.resolve()
    assert config.output == base / "results" / "x"
    assert config.bot("a").cwd == base / "sub" / "bots"
    assert config.bot("b").cwd == base
    assert config.bot("c").cwd == base / "sub"
    assert config.path == path.resolve()


def test_parse_config_resolves_against_base_dir(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    text = MINIMAL.replace("cmd: python -m bots.random_bot", "cmd: x\n    cwd: w") + "name: t\n"
    config = parse_config(text, base_dir=tmp_path)
    assert config.path is None
    assert config.output == tmp_path.resolve() / "results" / "t"
    assert config.bot("a").cwd == tmp_path.resolve() / "w"


def test_parse_config_without_a_file_needs_a_name() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(MINIMAL)
    assert str(info.value) == "<string>:1: name: required key missing (there is no file name to default to)"


def test_yaml_anchors_and_merge_keys_are_honoured(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            game: oxono
            time_control: 5+0.1
            bots:
              - &greedy {name: g1, cmd: python -m bots.greedy, options: {depth: 2}}
              - <<: *greedy
                name: g2
            """,
        )
    )
    assert config.bot("g2").cmd == config.bot("g1").cmd
    assert config.bot("g2").options == {"depth": 2}


def test_merge_keys_keep_duplicate_and_type_checks(tmp_path: Path) -> None:
    base = MINIMAL + "  - &c {name: c, cmd: x}\n"
    message = refusal(tmp_path, base + "  - {<<: *c, name: d, name: e}\n")
    assert message.endswith("demo.yaml:9: bots[3].name: duplicate key 'name' (first on line 9)")
    message = refusal(tmp_path, base + "  - {<<: *c}\n")
    assert message.endswith("demo.yaml:8: bots[3].name: duplicate bot name 'c' (first on line 8)")
    message = refusal(tmp_path, base + "  - {<<: [*c, 3], name: d}\n")
    assert message.endswith("demo.yaml:9: bots[3].<<: takes a mapping or a list of mappings")
    message = refusal(tmp_path, MINIMAL + "    options: &o {<<: *o}\n")
    assert message.endswith("demo.yaml:8: bots[1].options.<<: a merge key that includes its own mapping")


def test_configs_are_frozen(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    with pytest.raises(AttributeError):
        config.competition.rounds = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        config.bots[0].name = "z"  # type: ignore[misc]
    assert isinstance(config.bots, tuple) and isinstance(config.bots[0].cmd, tuple)


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_demo_files_load(game: str) -> None:
    config = load_config(ROOT / "tournaments" / f"{game}-demo.yaml")
    assert config.competition.game == game
    assert config.name == f"{game}-demo"
    assert [b.name for b in config.bots] == ["random", "greedy", "greedy-2"]
    assert config.bot("random").cmd == (sys.executable, "-m", "bots.random_bot")
    assert config.bot("greedy-2").cmd == (sys.executable, "-m", "bots.greedy")
    assert config.bot("greedy-2").options == {"seed": 7}
    assert config.competition.rounds == {"oxono": 8, "yoxii": 6}[game] and config.competition.seed == 1
    assert config.time_control == TimeControl(initial_ms=5000, increment_ms=100)
    assert config.output == ROOT / "results" / f"{game}-demo"
    # The bots run from the repository root, so `-m bots.x` finds the package.
    assert all(b.cwd == ROOT for b in config.bots)


# -- refusals: each names the file, the line and the key ------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.yaml")
    assert str(info.value) == f"{tmp_path / 'nope.yaml'}: no such file"


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_bytes(b"game: \xff\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    message = refusal(tmp_path, "game: oxono\ntime_control: 5+0.1\nbots: [a, b\nrounds: 2\n")
    assert message.endswith("demo.yaml:4: bad YAML: expected ',' or ']', but got ':'")
    message = refusal(tmp_path, "game: oxono\n\trounds: 2\n")
    assert message.endswith("demo.yaml:2: bad YAML: found character '\\t' that cannot start any token")


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    message = refusal(tmp_path, text)
    assert message.endswith("demo.yaml: the file is empty; it needs at least game, time_control and bots")


def test_not_a_mapping(tmp_path: Path) -> None:
    message = refusal(tmp_path, "\n- game\n- oxono\n")
    assert message.endswith(
        "demo.yaml:2: a tournament file must be a mapping of keys (game:, time_control:, bots:, ...)"
    )


def test_several_documents(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "---\n" + MINIMAL)
    assert "demo.yaml:8: bad YAML: but found another document" in message


def test_unknown_key_suggests_the_closest(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "round: 2\n")
    assert message.endswith("demo.yaml:8: round: unknown key 'round' (did you mean 'rounds'?)")


def test_unknown_key_without_a_close_one_lists_the_known(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "colour: pink\n")
    assert "demo.yaml:8: colour: unknown key 'colour'; known keys: name, " in message


def test_unknown_bot_key(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "    comand: x\n")
    assert message.endswith("demo.yaml:8: bots[1].comand: unknown key 'comand' (did you mean 'cmd'?)")


def test_duplicate_key(tmp_path: Path) -> None:
    message = refusal(tmp_path, "rounds: 1\n" + MINIMAL + "rounds: 2\n")
    assert message.endswith("demo.yaml:9: rounds: duplicate key 'rounds' (first on line 1)")


@pytest.mark.parametrize("key", ["game", "time_control", "bots"])
def test_missing_required_key(tmp_path: Path, key: str) -> None:
    text = "".join(
        line
        for line in MINIMAL.splitlines(keepends=True)
        if not line.startswith(key) and not (key == "bots" and line.startswith(" "))
    )
    assert refusal(tmp_path, text).endswith(f"demo.yaml:1: {key}: required key missing")


@pytest.mark.parametrize("key", ["name", "cmd"])
def test_missing_bot_key(tmp_path: Path, key: str) -> None:
    text = MINIMAL + f"  - {{{'cmd: x' if key == 'name' else 'name: c'}}}\n"
    assert refusal(tmp_path, text).endswith(f"demo.yaml:8: bots[2].{key}: required key missing")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("rounds: 0", "rounds: must be a positive integer, got 0"),
        ("rounds: -1", "rounds: must be a positive integer, got -1"),
        ("rounds: 2.5", "rounds: must be an integer, got number '2.5'"),
        ("rounds: '2'", "rounds: must be an integer, got string '2'"),
        ("rounds: yes", "rounds: must be an integer, got boolean 'yes'"),
        ("rounds: [2]", "rounds: must be an integer, got list"),
        ("concurrency: 0", "concurrency: must be a positive integer, got 0"),
        ("concurrency: true", "concurrency: must be an integer, got boolean 'true'"),
        ("seed: 1.0", "seed: must be an integer, got number '1.0'"),
        ("seed: false", "seed: must be an integer, got boolean 'false'"),
        ("seed:", "seed: must be an integer, got null ''"),
        ("seed: 9223372036854775808", "seed: must be from -9223372036854775808 to 9223372036854775807, got 9223372036854775808"),
        ("time_margin: -0.1", "time_margin: must be not negative, got -0.1"),
        ("time_margin: fast", "time_margin: must be a number of seconds, got string 'fast'"),
        ("startup_timeout: 0", "startup_timeout: must be positive, got 0"),
        ("startup_timeout: .inf", "startup_timeout: must be a number of seconds, got number '.inf'"),
        ("description: 12", "description: must be a string, got integer"),
        ("output: 12", "output: must be a string, got integer"),
        ("output: ''", "output: '' is not a path"),
        ("name: a/b", "name: 'a/b' is not usable as a directory name"),
        ("name: '..'", "name: '..' is not usable as a directory name"),
        ("time_control: 5+", "time_control: bad time control '5+'"),
        ("time_control: 0+1", "time_control: the initial time must be positive"),
        ("time_control: move 0", "time_control: the time per move must be positive"),
        ("time_control: [5, 0.1]", "time_control: must be a text like 5+0.1 or 'move 0.5'"),
        ("game: chess", "game: unknown game 'chess'; known games: oxono, yoxii"),
        ("game: 3", "game: unknown game 3; known games: oxono, yoxii"),
        ("format: ladder", "format: unknown format 'ladder'; known formats: round-robin, gauntlet"),
        ("bots: {a: 1}", "bots: must be a list of bots"),
        ("report: 1", "report: must be true or false, got integer '1'"),
        ("report: html", "report: must be true or false, got string 'html'"),
        ("executor: dask", "executor: unknown value 'dask'; use one of: local, ray"),
        ("ray: auto", "ray: must be a mapping"),
        ("ray: {adress: auto}", "ray.adress: unknown key 'adress' (did you mean 'address'?)"),
        ("ray: {address: 6379}", "ray.address: must be a string, got integer"),
        ("ray: {num_cpus: 0}", "ray.num_cpus: must be positive, got 0"),
        ("ray: {num_cpus: many}", "ray.num_cpus: must be a number of CPUs, got string 'many'"),
        ("ray: {working_dir: nowhere}", "ray.working_dir: no such directory:"),
        ("ray: {calibrate: 1}", "ray.calibrate: must be true or false, got integer '1'"),
        ("ray: {time_scaling: fast}", "ray.time_scaling: unknown value 'fast'; use one of: off, speed"),
        ("ray: {time_scaling: speed}",
         "ray.time_scaling: speed scales the clock by each node's measured speed: add calibrate: true"),
    ],
)
def test_bad_top_level_value(tmp_path: Path, line: str, problem: str) -> None:
    key = line.split(":")[0]
    others = MINIMAL.split("bots:")[0] if key == "bots" else MINIMAL
    others = "".join(l for l in others.splitlines(keepends=True) if not l.startswith(key + ":"))
    assert f"demo.yaml:1: {problem}" in refusal(tmp_path, f"{line}\n{others}")


def test_report_key(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, MINIMAL)).report is False
    assert load_config(write(tmp_path, "report: true\n" + MINIMAL)).report is True
    assert load_config(write(tmp_path, "report: false\n" + MINIMAL)).report is False
def test_ray_settings(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    config = load_config(write(tmp_path, "executor: ray\nconcurrency: 3\nray: {address: ' head:6379 ', working_dir: bots, num_cpus: 2}\n" + MINIMAL))
    assert config.executor == "ray"
    assert config.ray == RaySettings(address="head:6379", working_dir=(tmp_path / "bots").resolve(), num_cpus=2.0, actors=3)
    default = load_config(write(tmp_path, MINIMAL))
    assert (default.executor, default.ray) == ("local", RaySettings())  # no actors given: Ray fills the cluster
    assert (default.ray.calibrate, default.ray.time_scaling) == (False, "off")  # nothing measured unless asked
    calibrated = load_config(write(tmp_path, "ray: {calibrate: true, time_scaling: Speed}\n" + MINIMAL)).ray
    assert (calibrated.calibrate, calibrated.time_scaling) == (True, "speed")
    for off in ("", ", time_scaling: off", ", time_scaling: 'off'", ", time_scaling: false"):  # YAML's off is false
        assert load_config(write(tmp_path, f"ray: {{calibrate: true{off}}}\n" + MINIMAL)).ray.time_scaling == "off"


def test_time_scaling_without_calibration_is_one_line_from_the_command(tmp_path: Path) -> None:
    file = write(tmp_path, "executor: ray\nray: {time_scaling: speed}\n" + MINIMAL)
    assert_one_line_error(arena("run", file), "ray.time_scaling: speed scales the clock by each node's measured "
                                              "speed: add calibrate: true")


def test_the_command_line_chooses_the_executor(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "executor: ray\nray: {address: auto}\n" + MINIMAL))
    assert with_executor(config, None, None) == config
    assert with_executor(config, "local", None).executor == "local"
    moved = with_executor(replace(config, executor="local"), None, "head:6379")  # an address means Ray
    assert (moved.executor, moved.ray.address) == ("ray", "head:6379")
    with pytest.raises(ConfigError, match="--executor: unknown value 'spark'; use one of: local, ray"):
        with_executor(config, "spark", None)
    with pytest.raises(ConfigError, match="--ray-address runs on Ray: it cannot go with --executor local"):
        with_executor(config, "local", "auto")


def test_sprt_from_the_command_line() -> None:
    assert sprt_from_option("elo0=0,elo1=5") == SprtConfig(0.0, 5.0, 0.05, 0.05)
    assert sprt_from_option(" elo0=-2 , elo1=3, alpha=0.1,beta=0.2") == SprtConfig(-2, 3, 0.1, 0.2)
    for text, words in [
        ("elo0=0", "needs elo1"),
        ("elo0=5,elo1=0", "elo0 must be below elo1"),
        ("elo0=0,elo1=5,alpha=2", "alpha must be between 0 and 1"),
        ("elo0=0,elo1=x", "not a number"),
        ("elo=0,elo1=5", "bad SPRT setting"),
        ("elo0=0,elo0=1,elo1=5", "given twice"),
        ("elo0=0,elo1=5,alpha=0.6,beta=0.5", r"alpha \+ beta"),
    ]:
        with pytest.raises(ValueError, match=words):
            sprt_from_option(text)


def test_too_few_bots(tmp_path: Path) -> None:
    text = "game: oxono\ntime_control: 5+0.1\nbots:\n  - {name: a, cmd: x}\n"
    assert refusal(tmp_path, text).endswith("demo.yaml:4: bots: a tournament needs at least 2 bots, got 1")
    assert refusal(tmp_path, "game: oxono\ntime_control: 5+0.1\nbots: []\n").endswith(
        "demo.yaml:3: bots: a tournament needs at least 2 bots, got 0"
    )


def test_duplicate_bot_name(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "  - name: b\n    cmd: y\n")
    assert message.endswith("demo.yaml:8: bots[2].name: duplicate bot name 'b' (first on line 6)")


@pytest.mark.parametrize(
    ("bot", "where", "problem"),
    [
        ("name: ''", "bots[2].name", "bad bot name ''"),
        ("name: -x", "bots[2].name", "bad bot name '-x'"),
        ("name: two words", "bots[2].name", "bad bot name 'two words'"),
        ('name: "a\\n"', "bots[2].name", "bad bot name 'a\\n'"),
        ("name: " + "x" * 65, "bots[2].name", "bad bot name"),
        ("name: 12", "bots[2].name", "bad bot name 12"),
        ("cmd: ''", "bots[2].cmd", "empty command"),
        ("cmd: '   '", "bots[2].cmd", "empty command"),
        ("cmd: []", "bots[2].cmd", "empty command"),
        ("cmd: ['']", "bots[2].cmd", "empty command"),
        ("cmd: [python, 3]", "bots[2].cmd[1]", "must be a string, got integer (quote it)"),
        ("cmd: 'python \"bot.py'", "bots[2].cmd", "cannot split 'python \"bot.py': No closing quotation"),
        ("cmd: {a: b}", "bots[2].cmd", "must be a command line or a list of strings, got mapping"),
        ("options: [1, 2]", "bots[2].options", "must be a mapping"),
        ("options: {when: 2024-01-01}", "bots[2].options.when", "'2024-01-01' (date) cannot be sent"),
        ("options: {1: a}", "bots[2].options", "keys must be strings, got integer 1 (quote it)"),
        ("options: {x: .nan}", "bots[2].options.x", "'.nan' (number) cannot be sent to the bot as JSON"),
        ("options: {x: !!binary aGk=}", "bots[2].options.x", "'aGk=' (binary) cannot be sent to the bot as JSON"),
        ("options: {x: !!python/name:os.system ''}", "bots[2].options.x", "bad value"),
        ("env: [A]", "bots[2].env", "must be a mapping of variable names to strings"),
        ("env: {DEPTH: 2}", "bots[2].env.DEPTH", 'must be a string, got integer (quote it: "2")'),
        ("env: {FLAG: yes}", "bots[2].env.FLAG", 'must be a string, got boolean (quote it: "yes")'),
        ("env: {'A=B': x}", "bots[2].env", "bad variable name 'A=B'"),
        ("env: {PATHS: [a, b]}", "bots[2].env.PATHS", "must be a string, got list"),
        ("cwd: missing/dir", "bots[2].cwd", "no such directory: "),
    ],
)
def test_bad_bot_value(tmp_path: Path, bot: str, where: str, problem: str) -> None:
    entries = list({"name": "name: c", "cmd": "cmd: x", bot.split(":")[0]: bot}.values())
    text = MINIMAL + "  - " + "\n    ".join(entries) + "\n"
    line = 8 + entries.index(bot)
    message = refusal(tmp_path, text)
    assert f"demo.yaml:{line}: {where}: {problem}" in message


def test_cwd_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    message = refusal(tmp_path, MINIMAL + "    cwd: file\n")
    assert message.endswith(f"demo.yaml:8: bots[1].cwd: no such directory: {tmp_path.resolve() / 'file'}")


def test_a_bot_must_be_a_mapping(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "  - greedy\n")
    assert message.endswith("demo.yaml:8: bots[2]: a bot must be a mapping with name: and cmd:")


def test_recursive_alias_in_options(tmp_path: Path) -> None:
    message = refusal(tmp_path, MINIMAL + "    options: &o {self: *o}\n")
    assert "demo.yaml:8: bots[1].options.self: a recursive alias cannot be sent as JSON" in message


def test_unsafe_tags_are_refused_not_run(tmp_path: Path) -> None:
    message = refusal(tmp_path, "name: !!python/object/apply:os.system [echo hi]\n" + MINIMAL)
    assert "demo.yaml:1: name: " in message


def test_config_error_is_a_value_error_with_parts() -> None:
    error = ConfigError("duplicate bot name 'greedy'", file="demo.yaml", line=7, key="bots[1].name")
    assert isinstance(error, ValueError)
    assert str(error) == "demo.yaml:7: bots[1].name: duplicate bot name 'greedy'"
    assert (error.file, error.line, error.key) == ("demo.yaml", 7, "bots[1].name")
    assert str(ConfigError("no such file", file="x.yaml")) == "x.yaml: no such file"


# -- the documentation lists exactly the keys the parser knows --------------------


def documented_keys(heading: str) -> list[str]:
    """The keys in the first column of the table under ``heading`` in docs/tournaments.md."""
    doc = (ROOT / "docs" / "tournaments.md").read_text(encoding="utf-8")
    section = doc.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)


def test_documented_tournament_keys_match_the_parser() -> None:
    assert sorted(documented_keys("Tournament keys")) == sorted(TOURNAMENT_KEYS)


def test_documented_bot_keys_match_the_parser() -> None:
    assert sorted(documented_keys("Bot keys")) == sorted(BOT_KEYS)


def test_check_programs_refuses_a_missing_or_unrunnable_program(tmp_path: Path) -> None:
    from arena.run.config import check_programs

    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\n")
    text = f"""
        game: oxono
        time_control: 5+0.1
        bots:
          - {{name: a, cmd: python -m bots.random_bot}}
          - {{name: b, cmd: ./bot.sh}}
    """
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError, match=r"bots\[1\]\.cmd: bot 'b': './bot.sh' is not executable"):
        check_programs(load_config(path))
    script.chmod(0o755)
    check_programs(load_config(path))  # found and executable: accepted
    path.write_text(textwrap.dedent(text).replace("./bot.sh", "no-such-program-xyz"))
    with pytest.raises(ConfigError) as info:
        check_programs(load_config(path))
    assert str(info.value) == f"{path}: bots[1].cmd: bot 'b': no such program 'no-such-program-xyz' on the PATH"
    path.write_text(textwrap.dedent(text).replace("./bot.sh", "./missing.sh"))
    with pytest.raises(ConfigError, match=r"\./missing.sh not found in .* \(not built\?\)"):
        check_programs(load_config(path))
