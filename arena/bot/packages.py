"""The Python packages a bot imports beyond the standard library: a list of
requirements (the organiser's ``python_packages``, a team's
``requirements.txt``) installed with pip into an environment of its own.

An environment is a folder of the arena's cache (``packages/<key>``, beside
the digests of :mod:`arena.bot.digest_cache`): outside every submission
and results directory, so that ``arena check`` writes nothing where the
results go and two tournament files of a course (its grading and its
championship) share one install.  Its key is a digest of the requirements
and of the interpreter it is built for (its wheels fit no other), so an
environment is installed once and reused while the list is the same.  pip
installs into a temporary folder beside it (``--target``: never into the
arena's own site-packages), which is renamed into place once pip succeeded;
a folder left by an interrupted install is never used, and is removed by
the next install of its key.

A team's requirements are someone else's input, and pip runs as the
arena's user, outside any sandbox: so each of its lines must be a package
by name and version (no option, no URL, no path) and only wheels are taken
(``--only-binary :all:``), which run no code when installed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.bot.digest_cache import cache_directory
from arena.base.text import safe

__all__ = ["PackageList", "PackagesProblem", "Environment", "INSTALL_TIMEOUT_S", "build_environment", "built_environment",
           "environment_key", "list_problem", "requirement_problem", "requirements_of"]

#: The longest an install may take (a large list from the network).
INSTALL_TIMEOUT_S = 1800
#: A requirements file read at the most (a list of packages, not a payload).
MAX_REQUIREMENTS_BYTES = 64 * 1024
#: A package by name, its extras, its versions and its markers: what a team's line may be.
_REQUIREMENT = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"  # name
    r"\s*(?:\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?"  # [extras]
    r"\s*(?:(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"  # versions
    r"(?:\s*,\s*(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?"
    r"\s*(?:;[A-Za-z0-9_\s.'\"<>=!~(),*+-]*)?"  # ; markers (PEP 508's characters: no ${...} for pip to expand)
)
#: What pip says of a package it could not install, and the package it names.
_PIP_ERROR = re.compile(r"^ERROR: (.*)$", re.M)
_NAMED = re.compile(r"(?:found for|the requirement|Invalid requirement:?) '?([^\s'(]+)")
#: A failed build's summary (``× python setup.py egg_info did not run successfully.``), the
#: output it quotes, and the requirement (or file) pip was working on.
_PIP_SUMMARY = re.compile(r"^× (.*)$", re.M)
_PIP_NESTED = re.compile(r"\[\d+ lines? of output\]\n(.*?)\[end of output\]", re.S)
_COLLECTING = re.compile(r"^(?:Collecting|Processing) (\S+)", re.M)
#: The folder of an environment that is on the bot's ``sys.path``, and pip's output beside it.
SITE = "site"
INSTALL_LOG = "install.log"


class PackagesProblem(Exception):
    """Packages that cannot be installed or read, in one line naming the
    package and the cause; ``output`` what pip printed, if it ran."""

    def __init__(self, problem: str, output: str = "") -> None:
        super().__init__(problem)
        self.output = output


@dataclass(frozen=True)
class PackageList:
    """Requirements to install together: ``requirements`` one per item (a
    requirements file's lines, comments and blank lines left out);
    ``wheels`` the folder of wheels to install from, offline (None: the
    package index); ``strict`` for a team's list (see the module);
    ``source`` what the list is called in messages (``python_packages``,
    ``team-ann/requirements.txt``)."""

    requirements: tuple[str, ...]
    source: str
    wheels: Path | None = None
    strict: bool = False


@dataclass(frozen=True)
class Environment:
    """An installed environment: ``site`` is the folder to put on a bot's
    ``sys.path``; ``installed`` its distributions (``name version``);
    ``reused`` when an earlier install was taken as it was; ``seconds`` what
    the install took (0 when reused); ``output`` what pip printed."""

    site: Path
    installed: tuple[str, ...]
    reused: bool
    seconds: float
    output: str

    def summary(self) -> str:
        """One line: what it holds, and whether it was installed now."""
        what = ", ".join(self.installed) or "nothing"
        return f"reused {what}" if self.reused else f"installed {what} in {self.seconds:.1f} s"


def requirement_problem(line: str) -> str | None:
    """Why ``line`` is not a package by name and version (a team's line must be one), or None."""
    if _REQUIREMENT.fullmatch(line.strip()):
        return None
    return (f"'{safe(line, limit=120)}' is not a package by name and version (write e.g. numpy==2.1.*; "
            "options, URLs and paths are not taken)")


def list_problem(text: str) -> tuple[int, str] | None:
    """The first line of a requirements file's ``text`` that is not a
    package by name and version, and why (see :func:`requirement_problem`); None when every one is."""
    for number, line in enumerate(text.splitlines(), start=1):
        for requirement in requirements_of(line):
            problem = requirement_problem(requirement)
            if problem is not None:
                return number, problem
    return None


def requirements_of(text: str) -> tuple[str, ...]:
    """The requirements of a requirements file's ``text``: its lines
    without comments, blank lines and continuations."""
    joined = re.sub(r"\\\n", " ", text)
    lines = (re.sub(r"(^|\s)#.*", "", line).strip() for line in joined.splitlines())
    return tuple(line for line in lines if line)


def environment_key(packages: PackageList) -> str:
    """The digest an environment of ``packages`` is kept under: its
    requirements, whether it takes wheels only, and the interpreter and
    platform its wheels are built for."""
    interpreter = f"{sys.implementation.cache_tag} {sysconfig.get_platform()}"
    text = "\n".join([interpreter, f"strict={packages.strict}", *packages.requirements])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _home() -> Path:
    directory = cache_directory()
    if directory is None:
        raise PackagesProblem("python packages are installed in the arena's cache directory, which "
                              "TOTEM_ARENA_CACHE=off turns off: set TOTEM_ARENA_CACHE to a directory")
    return directory / "packages"


def built_environment(packages: PackageList) -> Environment | None:
    """The environment of ``packages`` when it is installed, else None."""
    folder = _home() / environment_key(packages)
    if not (folder / SITE).is_dir():
        return None
    return Environment(folder / SITE, _installed(folder / SITE), True, 0.0, _read_log(folder / INSTALL_LOG))


def build_environment(packages: PackageList) -> Environment:
    """The environment of ``packages``, installed now unless it already is.
    Raises :class:`PackagesProblem` when pip fails (naming the package and
    the cause) or the cache cannot be written."""
    found = built_environment(packages)
    if found is not None:
        return found
    home = _home()
    key = environment_key(packages)
    try:
        home.mkdir(parents=True, exist_ok=True)
        for stale in home.glob(f".{key}-*"):  # an interrupted install's (not one still running)
            try:
                if time.time() - stale.stat().st_mtime > INSTALL_TIMEOUT_S:
                    shutil.rmtree(stale, ignore_errors=True)
            except FileNotFoundError:  # (another arena cleared it meanwhile)
                continue
        work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=home))
    except OSError as exc:
        raise PackagesProblem(f"{packages.source}: cannot write the cache {str(home)!r}: {exc.strerror or exc}") from None
    try:
        started = time.monotonic()
        output = _pip(packages, work)
        seconds = time.monotonic() - started
        (work / INSTALL_LOG).write_text(output)
        work.chmod(0o755)  # made private by mkdtemp; readable by whoever reads the cache, as the rest of it
        try:
            os.rename(work, home / key)
        except OSError:
            if not (home / key / SITE).is_dir():  # else another arena installed the same list meanwhile
                raise
    except OSError as exc:
        raise PackagesProblem(f"{packages.source}: cannot write the cache {str(home)!r}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    site = home / key / SITE
    return Environment(site, _installed(site), False, seconds, output)


def _pip(packages: PackageList, work: Path) -> str:
    """Run pip into ``work``; its output.  Raises :class:`PackagesProblem` when it fails."""
    listed = work / "requirements.txt"
    listed.write_text("".join(f"{line}\n" for line in packages.requirements))
    argv = [sys.executable, "-m", "pip", "install", "--target", str(work / SITE), "--no-input",
            "--disable-pip-version-check", "--no-warn-script-location", "-r", str(listed)]
    if packages.wheels is not None:
        argv += ["--no-index", "--find-links", str(packages.wheels)]
    if packages.strict:
        argv += ["--only-binary", ":all:"]
    # --target never mixes with a user install; the user's site is not the environment's.
    env = {**os.environ, "PIP_USER": "0", "PYTHONNOUSERSITE": "1"}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=env,
                              timeout=INSTALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise PackagesProblem(f"{packages.source}: pip did not finish within {INSTALL_TIMEOUT_S} s") from None
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise PackagesProblem(f"{packages.source}: {_pip_failure(output, packages.wheels)}", output)
    return output


def _pip_failure(output: str, wheels: Path | None) -> str:
    """pip's failure in one line: the package it names (else the last it
    was collecting) and the cause: its last error, or the summary of a
    failed build (``× ...``) with the last line the build wrote."""
    errors = _PIP_ERROR.findall(output)
    summary = _PIP_SUMMARY.search(output)
    if errors:
        cause = errors[-1].strip()
        if cause.startswith("No matching distribution found"):
            where = f"among the wheels in {wheels}" if wheels is not None else "on the package index (offline? give python_wheels: DIR)"
            cause = f"no matching version {where}"
    elif summary is not None:
        nested = _PIP_NESTED.search(output)
        lines = [line.strip() for line in nested[1].splitlines() if line.strip()] if nested else []
        cause = summary[1].strip().rstrip(".") + (f" ({lines[-1]})" if lines else "")
    else:
        last = [line for line in output.splitlines() if line.strip()][-1:] or ["no output"]
        cause = f"pip failed: {last[0].strip()}"
    named = next((m[1] for error in reversed(errors) if (m := _NAMED.search(error))), None)
    collecting = _COLLECTING.findall(output)
    package = named or (os.path.basename(collecting[-1]) if collecting else None)
    return safe(f"pip could not install{f' {package}' if package else ''}: {cause}", limit=400)


def _installed(site: Path) -> tuple[str, ...]:
    """The distributions in ``site``, as ``name version``."""
    found = []
    for info in sorted(site.glob("*.dist-info")):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        found.append(f"{name} {version}".strip())
    return tuple(found)


def _read_log(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
