"""No channel between two sandboxed bots: the review's attack (issue 40) and
its cousins, each run as the review ran it: two bots at once, one holding a
kernel object per bit of its ``env`` secret, the other probing each bit.
The same probe first reads the secret between two plain processes, so a
sandboxed run that reads nothing means a closed channel, not a broken probe.
Also: the seccomp filter's program for every ABI it knows, what programs
that lock files see under it, and the warning where it cannot load."""

from __future__ import annotations

import errno
import json
import os
import platform
import select
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import arena.bot.sandbox as sandbox
import arena.bot.seccomp as seccomp
import needs
from arena.bot import protocol
from arena.bot.process import BotProcess
from arena.bot.sandbox import Confinement, check_sandbox, unclosed_channel

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process confinement"),
]

PROBE = Path(__file__).resolve().parent / "bots" / "covert_channel.py"
SECRET = "1011001110001101"
DEADLINE_S = 30.0
#: Closed by the seccomp filter; the others by bubblewrap's namespaces and private mounts.
FILTERED = ("flock", "posix", "ofd", "lease", "inotify")
NAMESPACED = ("abstract", "sysv", "mqueue", "shm", "keyring")


def shared_files(tmp_path: Path, count: int) -> list[str]:
    """Files both bots see read-only: their shared working directory, as two
    bots of one tournament file run from one checkout."""
    folder = tmp_path / "shared"
    folder.mkdir()
    for index in range(count):
        (folder / f"bit{index}").write_text("x")
    return [str(folder / f"bit{index}") for index in range(count)]


class Plain:
    """A probe run as a plain process, with nothing between the two."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env}, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read_line(self, deadline: float) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, "the probe said nothing in time"
        return self.proc.stdout.readline()

    def send_line(self, data: bytes, deadline: float) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.decode())
        self.proc.stdin.flush()

    def __enter__(self) -> Plain:
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the sender then removes what would outlive it
        try:
            self.proc.wait(timeout=DEADLINE_S)
        finally:
            self.proc.kill()


def bot(argv: list[str], cwd: Path, env: dict[str, str], sandboxed: bool) -> BotProcess | Plain:
    """Entered, it runs: as a sandboxed bot (a fresh sandbox each), or plain."""
    if not sandboxed:
        return Plain(argv, cwd, env)
    return BotProcess(argv, cwd=cwd, env=env, confinement=Confinement(sandbox="bwrap"))


def carried(mechanism: str, files: list[str], sandboxed: bool, sender: list[str] | None = None) -> tuple[str, dict]:
    """The bits the receiver read while the sender signalled ``SECRET``
    (``sender``: another program than the probe's), and what the receiver said."""
    cwd = Path(files[0]).parent
    tag = {"CHANNEL_TAG": str(os.getpid() * 2 + sandboxed)}
    secret = SECRET[:len(files)]
    deadline = time.monotonic() + DEADLINE_S
    with bot([sys.executable, str(PROBE), mechanism, "receive", *files], cwd, tag, sandboxed) as receiver:
        assert "armed" in json.loads(receiver.read_line(deadline))  # inotify watches before the sender opens
        argv = sender or [sys.executable, str(PROBE), mechanism, "send", *files]
        with bot(argv, cwd, {**tag, "SECRET": secret}, sandboxed) as sending:
            sending.read_line(deadline)
            receiver.send_line(b"probe\n", deadline)
            said = json.loads(receiver.read_line(deadline))
    return said["bits"], said


def filter_loads() -> None:
    needs.bwrap()
    check_sandbox("bwrap")
    why = unclosed_channel()
    if why is not None:
        pytest.skip(f"{why} (docs/security.md, 'What is shared between sandboxes')")


@pytest.mark.parametrize("mechanism", FILTERED + NAMESPACED)
def test_two_sandboxed_bots_carry_no_bit_of_a_secret(mechanism, tmp_path):
    needs.bwrap()
    if mechanism in FILTERED:
        filter_loads()
    files = shared_files(tmp_path, len(SECRET))
    plain_bits, _ = carried(mechanism, files, sandboxed=False)
    assert plain_bits == SECRET  # the probe works: between plain processes the secret goes through
    sandboxed_bits, said = carried(mechanism, files, sandboxed=True)
    assert sandboxed_bits == "0" * len(SECRET), said


def test_with_the_filter_turned_off_the_review_s_attack_reads_the_secret(tmp_path, monkeypatch):
    """``TOTEM_ARENA_SECCOMP=off``: the sandboxes of before the filter, and the warning says so."""
    filter_loads()
    monkeypatch.setenv("TOTEM_ARENA_SECCOMP", "off")
    assert unclosed_channel() == ("file locks and file watches reach from one sandboxed bot to another: "
                                  "the arena's seccomp filter is turned off (TOTEM_ARENA_SECCOMP=off)")
    assert carried("flock", shared_files(tmp_path, len(SECRET)), sandboxed=True)[0] == SECRET


def test_the_32_bit_system_calls_are_filtered_too(tmp_path):
    """A 64-bit process may make i386 system calls (``int $0x80``), whose
    numbers differ: the filter checks them as well."""
    if platform.machine() != "x86_64":
        pytest.skip("the i386 ABI is x86_64's")
    filter_loads()
    gcc = needs.program("gcc", "apt-get install gcc (sh scripts/install-test-deps.sh)")
    source = tmp_path / "flock32.c"
    source.write_text(FLOCK_I386)
    subprocess.run([gcc, "-O0", "-o", str(tmp_path / "flock32"), str(source)], check=True)
    files = shared_files(tmp_path, 1)
    sender = [str(tmp_path / "flock32"), files[0]]
    assert carried("flock", files, sandboxed=False, sender=sender)[0] == "1"
    assert carried("flock", files, sandboxed=True, sender=sender)[0] == "0"


#: Takes an exclusive flock on argv[1] through the i386 ABI and holds it until stdin closes.
FLOCK_I386 = r"""
#include <fcntl.h>
#include <stdio.h>
int main(int argc, char **argv) {
    long fd = open(argv[1], O_RDONLY), result;
    __asm__ volatile ("int $0x80" : "=a"(result) : "a"(143L), "b"(fd), "c"(2L) : "memory");  /* flock(fd, LOCK_EX) */
    printf("{\"flock\": %ld}\n", result);
    fflush(stdout);
    while (getchar() != EOF) {}
    return 0;
}
"""


# -- what programs see under the filter -----------------------------------------------

#: Locks its own files as SQLite and the JVM do, and tries what the filter refuses.
UNDER_THE_FILTER = """
import ctypes, errno, fcntl, json, os, sqlite3, sys
libc = ctypes.CDLL(None, use_errno=True)
def outcome(call):
    try:
        call()
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
def raw(result):
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
fd = os.open(sys.argv[1], os.O_RDONLY)
book = sqlite3.connect("file:" + sys.argv[2] + "?mode=ro", uri=True)
own = sqlite3.connect(os.path.join(os.environ["TMPDIR"], "own.db"))
own.execute("create table t (x)")
own.execute("insert into t values (2)")
own.commit()
print(json.dumps({
    "flock": outcome(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
    "lockf": outcome(lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
    "lease": outcome(lambda: fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)),
    "dnotify": outcome(lambda: fcntl.fcntl(os.open(os.path.dirname(sys.argv[1]), os.O_RDONLY), fcntl.F_NOTIFY, 1)),
    "inotify": raw(libc.inotify_init1(0)),
    "fanotify": raw(libc.fanotify_init(0x200, 0)),  # FAN_REPORT_FID: what an unprivileged process may ask
    "dup": outcome(lambda: fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0)),
    "sqlite": [book.execute("select x from t").fetchall(), own.execute("select x from t").fetchall()],
}), flush=True)
"""


def test_locking_programs_run_and_watches_are_refused_under_the_filter(tmp_path):
    filter_loads()
    import sqlite3

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "file").write_text("x")
    book = sqlite3.connect(shared / "book.db")
    book.execute("create table t (x)")
    book.execute("insert into t values (1)")
    book.commit()
    book.close()
    process = BotProcess([sys.executable, "-c", UNDER_THE_FILTER, str(shared / "file"), str(shared / "book.db")],
                         cwd=shared, confinement=Confinement(sandbox="bwrap"))
    with process:
        seen = json.loads(process.read_line(time.monotonic() + DEADLINE_S))
    assert seen == {
        "flock": "ok", "lockf": "ok",  # granted, holding nothing
        "lease": "ENOLCK", "dnotify": "ENOSYS", "inotify": "ENOSYS", "fanotify": "ENOSYS",
        "dup": "ok",  # fcntl's other commands are untouched
        "sqlite": [[[1]], [[2]]],  # reads a book beside it, writes its own database in its scratch directory
    }


def test_the_java_bot_starts_quietly_under_the_filter(tmp_path):
    """The JVM locks its performance-data file at start: granted, it says nothing."""
    filter_loads()
    javac = needs.program("javac", "apt-get install default-jdk-headless (scripts/install-test-deps.sh)")
    shutil.copy(Path(__file__).resolve().parents[1] / "bots" / "java" / "RandomBot.java", tmp_path)
    subprocess.run([javac, "RandomBot.java"], cwd=tmp_path, check=True)
    process = BotProcess(["java", "RandomBot"], cwd=tmp_path, confinement=Confinement(sandbox="bwrap"))
    with process:
        process.send_line(protocol.encode(protocol.hello("oxono", "java", {})), time.monotonic() + DEADLINE_S)
        assert json.loads(process.read_line(time.monotonic() + DEADLINE_S))["type"] == "ready"
        process.settle_stderr()
        assert process.stderr_tail == ""


# -- the program itself, for every ABI -------------------------------------------------

ALLOW, KILL, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000


def run_filter(program: bytes, arch: int, nr: int, arg1: int = 0) -> int:
    """What the kernel would do with a call: classic BPF, interpreted."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, 0, arg1, 0, 0, 0, 0)
    code = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:
            accumulator = struct.unpack_from("=I", data, k)[0]
        elif op == 0x06:
            return k
        elif op in (0x15, 0x35):
            taken = accumulator == k if op == 0x15 else accumulator >= k
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected instruction {op:#x}")
        pc += 1


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_grants_locks_refuses_watches_and_leases_and_allows_the_rest(machine):
    program = seccomp.channel_filter(machine)
    assert program is not None
    for abi in seccomp.ABIS[machine]:
        assert run_filter(program, abi.arch, abi.flock) == ERRNO | 0  # granted, doing nothing
        for fcntl_nr in abi.fcntl:
            for command in seccomp.LOCK_COMMANDS:
                assert run_filter(program, abi.arch, fcntl_nr, command) == ERRNO | 0
            assert run_filter(program, abi.arch, fcntl_nr, seccomp.F_SETLEASE) == ERRNO | errno.ENOLCK
            assert run_filter(program, abi.arch, fcntl_nr, seccomp.F_NOTIFY) == ERRNO | errno.ENOSYS
            for other in (0, 1, 2, 3, 4, 5, 36, 1025, 1030):  # F_DUPFD ... F_GETLK, F_OFD_GETLK, F_GETLEASE, F_DUPFD_CLOEXEC
                assert run_filter(program, abi.arch, fcntl_nr, other) == ALLOW
        for watch in abi.watch:
            assert run_filter(program, abi.arch, watch) == ERRNO | errno.ENOSYS
        assert run_filter(program, abi.arch, 0) == ALLOW
    assert run_filter(program, 0xC00000F3, 32) == KILL  # riscv64: its numbers are not checked


def test_x32_calls_are_not_implemented_and_other_machines_have_no_filter():
    program = seccomp.channel_filter("x86_64")
    assert program is not None
    x86_64 = seccomp.ABIS["x86_64"][0].arch
    assert run_filter(program, x86_64, 0x40000000 | 73) == ERRNO | errno.ENOSYS  # x32's flock
    assert seccomp.channel_filter("riscv64") is None


# -- where the filter cannot load -------------------------------------------------------


#: What ``arena check`` says where the filter cannot load (docs/security.md quotes it).
NO_FILTER_WARNING = ("warn the sandbox keeps bots from signalling to each other: file locks and file watches reach from "
                     "one sandboxed bot to another on this machine: the arena has no seccomp filter for its architecture "
                     "(riscv64); see docs/security.md")


def test_without_a_filter_sandboxes_still_run_and_arena_check_warns(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from arena.cli import app

    needs.bwrap()
    monkeypatch.setattr(sandbox, "channel_filter", lambda: None)
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")
    monkeypatch.chdir(tmp_path)
    sandbox._filter_problem.cache_clear()
    check_sandbox.cache_clear()
    try:
        result = CliRunner().invoke(app, ["check", f"{sys.executable} -m bots.random_bot", "--sandbox", "bwrap", "-n", "1"])
    finally:
        sandbox._filter_problem.cache_clear()
        check_sandbox.cache_clear()
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and lines[-1] == "all checks passed", result.stdout
    assert [line for line in lines if line.startswith("warn")] == [NO_FILTER_WARNING]


def test_a_tournament_file_s_sandboxed_bots_carry_the_warning_and_plain_ones_do_not(monkeypatch):
    from arena.check import _machine_warnings

    monkeypatch.setenv("TOTEM_ARENA_SECCOMP", "off")
    assert _machine_warnings("bwrap") == [("the sandbox keeps bots from signalling to each other",
                                           f"{unclosed_channel()}; see docs/security.md")]
    assert _machine_warnings("none") == []  # no sandbox: nothing of this kind is closed, as docs/security.md says
