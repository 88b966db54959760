"""Looking up a bot's command before it runs, with a hint for the usual slips:
a script in the current directory named without ``./``, or shell syntax in a
command that no shell will read."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["command_problem"]

#: Words a shell would act on; without a shell they reach the bot as arguments.
_SHELL_WORDS = {"|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>>", "&>", "2>&1", "|&"}
_SHELL_PREFIXES = (">", "<", "2>", "&>", "|", "$(", "`")


def _shell_syntax(argv: Sequence[str]) -> str | None:
    for word in argv[1:]:
        if word in _SHELL_WORDS or word.startswith(_SHELL_PREFIXES) or word.endswith((";", "|")):
            return word
    return None


def command_problem(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> str | None:
    """What stops ``argv`` from starting in ``cwd``, in one line with the fix,
    or None.  A program with a slash is looked up relative to ``cwd``, any
    other on the ``PATH`` (``env``'s own, if it sets one)."""
    program = argv[0]
    word = _shell_syntax(argv)
    if word is not None:
        line = " ".join(argv)
        return (
            f"the command holds shell syntax ({word!r}), but bot commands are not run by a shell, so it would "
            f"reach the bot as an argument; to use a shell, write the command as: sh -c {shlex.quote(line)}"
        )
    if "/" in program:
        path = cwd / program
        if not path.is_file():
            return f"no such program {program!r} (looked in {cwd})"
        if not os.access(path, os.X_OK):
            return f"{program!r} is not executable (chmod +x it, or run it through its interpreter)"
        return None
    search = (env or {}).get("PATH", os.environ.get("PATH"))
    if shutil.which(program, path=search) is not None:
        return None
    problem = f"no such program {program!r} on the PATH"
    if (cwd / program).is_file():
        executable = "" if os.access(cwd / program, os.X_OK) else " after chmod +x, or through its interpreter"
        problem += f"; to run the file {program!r} in {cwd}, write './{program}'{executable}"
    return problem
