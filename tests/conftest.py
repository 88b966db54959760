"""Shared fixtures, and the rule that CI runs every test.

``no_leaked_processes`` checks that a test leaves no process of its own behind;
``running_with`` finds processes by a marker in their command line,
``group_members`` by their process group;
``in_repo_root`` runs a test from the repository, as an organiser runs bots
from a checkout.  In CI (``CI=true``) a test that skips fails instead: CI
installs everything the tests need (the README's test command), so a skip
there hides a broken install.  Outside CI a skip says what to install (see ``needs.py``).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import needs
from arena.base.processes import descendants, proc_stat
from builders import ROOT

# pytester: test_ci_skips.py runs pytest sessions of its own in this process.
pytest_plugins = ["pytester"]


def in_ci() -> bool:
    """CI sets CI=true; "", "0", "false" and "no" mean a person's machine.
    Read at each report, so that test_ci_skips.py's sessions run in this
    process (pytester) can each set it."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

_PR_SET_CHILD_SUBREAPER = 36
#: How long a test's processes get to die after it ends (SIGKILL is not instant).
LEAK_GRACE = 5.0
#: Deadline for things that should happen at once; generous for a busy machine.
SOON = 10.0


def _become_subreaper() -> None:
    # Orphans (a bot's child after the bot died) are re-parented to the nearest
    # subreaper instead of init, so they stay visible as our descendants.
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_become_subreaper()


def _hear_ctrl_c() -> None:
    # A suite started in the background of a shell (`pytest &`) inherits SIGINT ignored, and so does every
    # arena process it starts, which rightly leaves an ignored SIGINT alone: the tests that send one would
    # wait on a process that never hears it.  The tests' processes hear Ctrl-C as from a terminal.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_hear_ctrl_c()


def _keep_bytecode() -> None:
    # Under PYTHONDONTWRITEBYTECODE (some sandboxes and CI images set it) every
    # arena process a test starts compiles the arena's modules again: 0.4 s
    # each, hundreds of times.  Compiled once into a cache outside the checkout instead.
    # This process too (``-n 0`` imports the arena here), for what it imports from now on.
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / f"totem-arena-pycache-{os.getuid()}"))
        sys.dont_write_bytecode = False
        sys.pycache_prefix = sys.pycache_prefix or os.environ["PYTHONPYCACHEPREFIX"]


_keep_bytecode()


def _fail_skip_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    _fail_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    # A whole module skipped at import (pytest.importorskip) is a collect report.
    outcome = yield
    _fail_skip_in_ci(outcome.get_result())


# --- Tiers and xdist groups -------------------------------------------------
# ``pytest -m "not slow"`` is the fast tier (some 1,400 tests, a tenth of the
# suite's time); plain ``pytest`` (CI) runs every test.  Kinds are given here, by
# module, rather than in each file, so that one place says what each tier
# holds; ``slow`` is a test of about 1 s or more in ``pytest --durations``.
# A name here that no longer exists fails collection, so the lists cannot rot.

#: Modules of one kind throughout: every test in them takes these markers.
MODULE_MARKS: dict[str, tuple[str, ...]] = {
    "test_league_model": ("slow", "soak"),
    "test_ray_executor": ("slow", "ray"),
    "test_ray_cluster": ("slow", "ray"),
    "test_ray_head": ("slow", "ray"),
    "test_ray_conditions": ("slow", "ray"),
    "test_ray_connect": ("slow", "ray"),
    "test_live_browser": ("slow", "browser"),
    "test_live_broadcast": ("slow", "browser"),
    "test_report_browser": ("slow", "browser"),
    **{module: ("slow",) for module in (
        "test_benchmarks", "test_doc_outputs", "test_hostile_bots", "test_large_fields",
        "test_league", "test_league_disruptions", "test_play", "test_preflight", "test_remote", "test_terminal_escapes")},
}

#: Tests that need Ray outside the Ray modules (by name, with or without parameters).
RAY_TESTS: dict[str, set[str]] = {
    "test_benchmarks": {"test_a_benchmark_runs_at_its_quick_size[ray_vs_local]",
                        "test_a_benchmark_runs_at_its_quick_size[calibration]"},
}

#: The slow tests of the other modules: a function's name marks all its
#: parameters; a name with parameters marks that one case.
SLOW_TESTS: dict[str, set[str]] = {
    "test_adaptive": {
        "test_a_clearly_separated_field_stops_early_every_pair_separated",
    },
    "test_bots": {
        "test_bot_plays_two_games_and_quits[-m bots.greedy-yoxii]",
    },
    "test_check": {
        "test_a_bot_that_stops_or_kills_its_checker_is_a_row_not_a_hang[STOP]",
        "test_a_check_of_a_few_games_misses_the_flaky_bot",
        "test_a_tournament_file_checks_every_bot_as_it_runs",
        "test_check_warns_of_a_chatty_bot_and_one_writing_into_its_folder_in_every_format",
        "test_the_course_file_passes",
    },
    "test_cli": {
        "test_a_match_rerun_as_another_test_is_refused_and_new_starts_it_beside",
        "test_a_worker_killed_from_outside_ends_the_run_with_one_line",
        "test_check_names_the_problem[no_hello-starts and answers 'hello' with 'ready'-needles1]",
        "test_ctrl_c_stops_a_match",
        "test_ctrl_c_stops_cleanly_and_the_same_command_resumes",
        "test_match_under_sprt_stops_once_decided",
        "test_run_under_sprt_shows_the_test_and_standings_keep_it",
        "test_run_with_a_bot_that_cannot_start_forfeits_its_games_when_the_file_says_so",
        "test_run_without_a_terminal_reports_progress_as_lines",
        "test_show_steps_with_enter_on_a_terminal",
        "test_standings_every_format[plain-directory]",
    },
    "test_compact_turns": {
        "test_forfeits_are_the_same_with_compact_turns[slow]",
    },
    "test_competition_model": {
        "test_a_forged_tournament_json_is_one_warning_for_the_readers_and_one_line_for_a_run",
        "test_arena_run_replays_a_disputed_game_and_archives_the_old_record",
        "test_arena_run_withdraws_a_team_whose_results_stand",
    },
    "test_disk": {
        "test_a_bot_over_its_quota_between_games_forfeits_the_next_one",
        "test_a_bot_that_fills_the_disk_stops_the_run_in_one_line_naming_it_and_the_next_run_plays_on",
        "test_a_scratch_of_folders_nested_past_any_path_is_measured_emptied_and_removed",
        "test_a_worker_or_the_pre_flight_that_cannot_write_a_log_stops_the_run_in_one_line",
    },
    "test_docs": {
        "test_a_yaml_example_loads_and_whole_ones_run_beside_the_demos[docs/league.md:course]",
        "test_a_yaml_example_loads_and_whole_ones_run_beside_the_demos[docs/tournaments.md:small-cup]",
        "test_a_yaml_example_loads_and_whole_ones_run_beside_the_demos[docs/tournaments.md:adaptive-demo]",
    },
    "test_executor": {
        "test_a_killed_worker_stops_the_run_instead_of_hanging",
    },
    "test_first_contact": {
        "test_a_bot_that_never_answers_hello_stops_the_run_once_with_the_flush_hint",
        "test_a_full_disk_during_a_run_keeps_every_game_written",
        "test_ctrl_c_during_start_up_is_the_same_one_line[0.05]",
        "test_match_draws_a_seed_when_none_is_given",
        "test_match_output_is_resumable_and_read_by_standings",
        "test_match_takes_a_startup_timeout_and_stops_on_a_bot_that_cannot_start",
        "test_replay_forfeits_chooses_the_reasons",
        "test_sighup_stops_a_run_like_sigterm",
        "test_standings_accepts_the_games_file_and_says_what_it_looked_for",
        "test_startup_failure_forfeits_are_played_again_once_the_bot_is_fixed",
    },
    "test_forged_records": {
        "test_a_forged_line_is_skipped_with_a_warning_naming_it[round-standings]",
        "test_a_forged_meta_of_3000_bots_is_read_in_the_memory_its_size_says",
        "test_a_forged_pairing_is_refused_in_one_line_by_every_command[swiss-itself]",
        "test_a_forged_pairing_is_refused_in_one_line_by_every_command[stages-itself]",
        "test_a_head_to_head_table_of_thousands_of_bots_is_refused_in_one_line",
        "test_from_json_raises_only_value_error",
        "test_the_protocol_reader_raises_only_protocol_error",
        "test_the_store_reads_any_file_with_a_warning_per_bad_line",
    },
    "test_formats_benchmark": {
        "test_real_games_of_graded_bots",
        "test_the_verdicts_are_calibrated_on_a_small_simulated_field",
    },
    "test_game_index": {
        "test_kill_9_while_the_index_is_built_loses_nothing",
    },
    "test_game_log": {
        "test_lines_and_offsets_are_found_whatever_the_chunks",
        "test_standings_run_under_a_768_mib_address_space",
    },
    "test_layers": {
        "test_imports_run_one_way",
    },
    "test_live_sharing": {
        "test_ctrl_c_while_the_server_prints_its_addresses_stops_it_every_time",
    },
    "test_live": {
        "test_a_client_that_stops_reading_is_let_go_after_the_write_timeout",
        "test_a_new_client_takes_the_place_of_the_oldest_event_stream",
        "test_a_run_goes_on_when_its_server_cannot_listen",
        "test_another_user_on_this_machine_needs_the_token_on_loopback",
        "test_connections_are_capped_in_all_and_per_address",
        "test_fifty_event_streams_are_served_while_a_tournament_runs",
        "test_half_sent_requests_are_closed_by_the_header_timeout",
        "test_malformed_requests_print_no_traceback_and_an_unparseable_host_is_a_400",
        "test_only_the_logs_folder_is_served_and_no_link_out_of_it",
        "test_two_hundred_slow_readers_of_a_big_log_hold_little_of_the_servers_memory",
    },
    "test_match": {
        "test_a_short_match_alternates_colours_and_start_positions",
    },
    "test_oxono": {
        "test_random_games_follow_the_reference_rules",
    },
    "test_pool": {
        "test_a_pool_keeps_at_most_its_bound_stopping_the_least_recently_used",
        "test_short_of_memory_a_pool_keeps_only_the_bots_of_the_game",
    },
    "test_process": {
        "test_fork_child_exit_is_noticed_before_the_deadline_and_kill_ends_the_child",
        "test_slow_and_half_time_bots_take_their_time",
        "test_spinning_for_an_answer_reads_the_same_lines_and_keeps_the_deadline[0.1]",
    },
    "test_protocol": {
        "test_info_taken_without_being_written_out_is_what_the_exact_measure_keeps",
    },
    "test_ranking": {
        "test_a_bot_that_keeps_crashing_is_withdrawn",
        "test_arena_standings_shows_the_rule_and_shared_ranks",
    },
    "test_record_decoding": {
        "test_from_bytes_reads_every_line_as_from_json_does",
        "test_from_bytes_reads_any_line_as_from_json_does",
        "test_the_plain_check_passes_no_record_every_check_refuses",
    },
    "test_referee": {
        "test_a_timed_out_bot_is_replaced_so_its_late_answer_is_not_misread",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[0-hang.py-args1-timeout-ms margin)]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[0-slow.py-args2-timeout-no move after]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[0-no_read.py-args8-startup_failure-hello]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[0-no_hello.py-args10-startup_failure-no answer to 'hello']",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[0-fork_child.py-args15-crash-]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[1-hang.py-args1-timeout-ms margin)]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[1-slow.py-args2-timeout-no move after]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[1-no_read.py-args8-startup_failure-hello]",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[1-no_hello.py-args10-startup_failure-no answer to 'hello']",
        "test_misbehaving_bot_forfeits_and_opponent_keeps_its_process[1-fork_child.py-args15-crash-]",
        "test_no_false_time_losses_for_a_bot_using_half_its_time",
    },
    "test_results_dir_links": {
        "test_arena_run_with_links_at_the_workers_logs_stops_in_one_line",
    },
    "test_rounds_fold": {
        "test_the_rounds_folded_game_by_game_are_those_read_from_every_record[adaptive]",
    },
    "test_sandbox": {
        "test_cpu_limit_kills_a_spinning_bot_and_says_so",
        "test_sandboxed_and_plain_bots_play_the_same_moves",
    },
    "test_sandbox_channels": {
        "test_the_java_bot_starts_quietly_under_the_filter",
    },
    "test_python_packages": {
        "test_a_python_bot_imports_the_packages_the_tournament_lists",
        "test_a_team_imports_its_own_requirements_when_the_organiser_allows_them",
        "test_an_install_is_reused_and_pip_is_not_run_again",
        "test_an_interrupted_install_is_never_used",
        "test_the_install_never_writes_into_the_arenas_site_packages",
        "test_a_package_pip_cannot_install_is_one_line_naming_it",
        "test_a_package_that_fails_to_build_is_one_line_naming_it",
        "test_a_team_pip_cannot_serve_does_not_start_and_says_why",
        "test_arena_run_installs_them_first",
        "test_a_second_look_installs_nothing_and_adds_no_environment_twice",
        "test_a_bot_importing_a_package_not_provided_is_named_as_the_bots_page_says",
        "test_a_pages_example_installs_offline_and_its_bot_imports_every_package",
    },
    "test_sandbox_installs": {
        "test_a_sandboxed_python_bot_imports_the_engine_from_outside_the_clone",
    },
    "test_search_bots": {
        "test_both_bots_play_legally_with_both_colours[yoxii]",
    },
    "test_sprt": {
        "test_the_expected_length_matches_a_simulated_test",
    },
    "test_statistics": {
        "test_sprt_bounds_beyond_what_the_test_can_compute_are_refused_and_the_rest_always_compute",
    },
    "test_submissions": {
        "test_a_hostile_folder_is_a_bot_that_cannot_start_saying_why_in_one_line[deep-manifest]",
    },
    "test_supervised": {
        "test_a_child_silent_past_its_deadline_is_killed_with_every_bot_it_started",
    },
    "test_time_odds": {
        "test_a_slow_bot_given_odds_keeps_its_time_and_each_bot_hears_its_own_clock",
    },
    "test_tournament": {
        "test_a_swiss_run_reads_its_rounds_once_a_round_not_after_each_game",
        "test_an_undecided_sprt_resumes_and_a_decided_one_does_not",
        "test_interrupted_run_keeps_finished_games_kills_bots_and_resumes",
        "test_kill_9_keeps_every_game_the_run_reported[30]",
        "test_rerun_resumes_without_replaying",
        "test_resume_after_partial_results_and_a_torn_line",
        "test_same_seed_gives_the_same_standings_at_any_concurrency",
        "test_sprt_stops_early_when_greedy_is_clearly_stronger_and_a_rerun_plays_nothing",
        "test_the_rounds_a_run_reports_hold_every_game_recorded_so_far",
    },
    "test_yoxii": {
        "test_random_games_follow_the_rules",
    },
}

#: xdist groups, honoured by ``pytest --dist loadgroup`` (not the default:
#: see pyproject.toml): a group's tests run one after another on one worker.  Ray: one runtime at a time (two would fight for the two
#: cores and the memory), started once per module.  Browser: one Chromium per
#: module, not one per worker.  Hostile bots and full disks: fork bombs, memory
#: and disk quotas measured under deadlines, not beside each other.
GROUPS: dict[str, str] = {
    "ray": "ray", "browser": "browser",
    "test_hostile_bots": "fork-and-disk", "test_disk": "fork-and-disk",
}


def _listed(item: pytest.Item, names: set[str]) -> bool:
    return item.name in names or getattr(item, "originalname", item.name) in names


def _uses_a_fixture_of_its_module(item: pytest.Item) -> bool:
    """Whether ``item`` uses a module-scoped fixture written in its own module."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        definition.scope == "module" and getattr(definition, "baseid", "").endswith(item.path.name)
        for definitions in info.name2fixturedefs.values() for definition in definitions
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen: dict[str, set[str]] = {}
    for item in items:
        module = item.path.stem
        seen.setdefault(module, set()).update({item.name, getattr(item, "originalname", item.name)})
        marks = set(MODULE_MARKS.get(module, ()))
        if _listed(item, SLOW_TESTS.get(module, set())):
            marks.add("slow")
        if _listed(item, RAY_TESTS.get(module, set())):
            marks |= {"slow", "ray"}
        if "browser" in getattr(item, "fixturenames", ()):
            marks |= {"slow", "browser"}
        for mark in sorted(marks):
            item.add_marker(mark)
        group = next((GROUPS[kind] for kind in ("ray", "browser") if kind in marks), GROUPS.get(module))
        if group is None and _uses_a_fixture_of_its_module(item):
            group = module  # a module's fixture (a played tournament, a compiled bot) made once, not once a worker
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    if config.option.keyword or config.option.markexpr or config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return  # only a whole collection can tell that a listed name is gone
    stale = [f"{module}::{name}" for table in (SLOW_TESTS, RAY_TESTS) for module, names in table.items()
             for name in names if name not in seen.get(module, set())]
    stale += [module for module in [*MODULE_MARKS, *GROUPS] if module.startswith("test_") and module not in seen]
    if stale:
        raise pytest.UsageError("tests/conftest.py names tests that no longer exist: " + ", ".join(stale))


@pytest.fixture(autouse=True, scope="session")
def _digest_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fingerprints' digests are cached for this session only, never in the
    user's cache (see arena/bot/digest_cache.py); workers inherit it."""
    before = os.environ.get("TOTEM_ARENA_CACHE")
    os.environ["TOTEM_ARENA_CACHE"] = str(tmp_path_factory.mktemp("digest-cache"))
    yield
    if before is None:
        os.environ.pop("TOTEM_ARENA_CACHE", None)
    else:
        os.environ["TOTEM_ARENA_CACHE"] = before


def _descendants() -> dict[int, str]:
    """pid -> state of every descendant of this test process (the arena's
    own walk of the tree).  Processes of other users of the machine are not
    descendants and are never counted."""
    found: dict[int, str] = {}
    for pid in descendants([os.getpid()])[1:]:
        if (stat := proc_stat(pid)) is not None:  # (gone meanwhile otherwise)
            found[pid] = stat[0]
    return found


def _reap(pids: dict[int, str]) -> None:
    """Reap the zombies among ``pids`` that are our own children."""
    for pid, state in pids.items():
        if state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours to reap, or reaped already
                pass


def soon() -> float:
    """The deadline :data:`SOON` from now."""
    return time.monotonic() + SOON


def group_members(pgid: int) -> set[int]:
    """Running processes of a process group."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = proc_stat(int(entry.name))
            if stat is not None and stat[0] != "Z" and int(stat[2]) == pgid:
                members.add(int(entry.name))
    return members


def running_with(marker: str) -> list[int]:
    """Pids of every process whose command line holds ``marker`` (a test's
    own tmp path), wherever it went in the process tree."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def _describe(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        cmdline = "?"
    return f"{pid} ({cmdline.strip()})"


def left_behind(before: set[int], grace: float) -> list[int]:
    """The descendants not in ``before`` still alive after up to ``grace``
    seconds; zombies among them are reaped (a dead process is not a leak)."""
    end = time.monotonic() + grace
    while True:
        new = {pid: state for pid, state in _descendants().items() if pid not in before}
        _reap(new)
        leaked = [pid for pid, state in new.items() if state != "Z"]
        if not leaked or time.monotonic() > end:
            return leaked
        time.sleep(0.05)


@pytest.fixture
def no_leaked_processes() -> Iterator[None]:
    """Fails the test if a process it started (or one of theirs) is still
    there ``LEAK_GRACE`` seconds after it ended.  Zombies are reaped first:
    a dead process is not a leak."""
    if not sys.platform.startswith("linux"):
        yield
        return
    before = set(_descendants())
    yield
    leaked = left_behind(before, LEAK_GRACE)
    assert not leaked, "processes left behind: " + ", ".join(_describe(pid) for pid in leaked)


@pytest.fixture
def in_repo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs the test from the repository, where bot commands such as
    ``python -m bots.greedy`` and ``python tests/bots/x.py`` are found."""
    monkeypatch.chdir(ROOT)
    return ROOT


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium, driven by selenium: one per test module (the report's and the live view's)."""
    needs.module("selenium", "pip install -e '.[test]'")
    driver_path = needs.program("chromedriver", "apt-get install chromium chromium-driver")
    chromium = needs.program("chromium", "apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="report-browser-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", f"--user-data-dir={profile}", "--window-size=1200,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The system's chromedriver, given by path: selenium-manager never downloads one.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(120)  # generous: the machine may be busy; correctness is what is checked
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
