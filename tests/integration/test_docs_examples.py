# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every example of the documentation runs as written: the fenced sh, console, python and toml
blocks of README.md, docs/*.md and python/README.md, in order, in a fresh directory with a home
of its own, `sandlock` on PATH pointing at the build under test and the Python package
importable.

- sh: run with /bin/sh -e; it must exit 0.
- console: each `$ ` line runs in one /bin/sh (so a `&` job lives on to the next line); what the
  block shows under a command is compared with what it printed (stdout and stderr together),
  exactly, or, under `<!-- example: output varies (why) -->`, with numbers and runs of blanks
  taken as equal.
- python: run with this interpreter; it must exit 0.
- toml: written to the path its first line names (`# ~/.config/...`), for the blocks after it.

A block that cannot run in a test is marked by `<!-- example: skip (why) -->` on the line before
it (the reader does not see it). Blocks of other languages, and unlabelled ones (diagrams), are
not examples. The examples of one file share their directory, as a reader following the file
would."""

import os
import pathlib
import re
import signal
import subprocess
import sys
import uuid

import pytest

from conftest import BUILD, ROOT, SANITIZED, landlock_abi, require

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "python" / "README.md"]
LANGS = {"sh", "console", "python", "toml"}
MARK = re.compile(r"<!--\s*example:\s*(skip|output varies)\s*\((.+)\)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")


class Block:
    def __init__(self, path, line, lang, text, mark):
        self.path, self.line, self.lang, self.text, self.mark = path, line, lang, text, mark

    def where(self):
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path):
    """The fenced blocks of @path with their language and the marker on the line before."""
    lines = path.read_text().splitlines()
    found, i, prev = [], 0, ""
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                prev = lines[i]
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{path}:{start}: unterminated code block"
        mark = MARK.search(prev)
        found.append(Block(path, start, m.group(1), "\n".join(body) + "\n",
                           mark.group(1) if mark else None))
        prev, i = "", i + 1
    return found


def environment(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "sandlock").symlink_to(BUILD / "sandlock")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), PATH=f"{bindir}:/usr/bin:/bin", LANG="C.UTF-8",
               SANDLOCK_LIB=os.environ.get("SANDLOCK_LIB", str(BUILD / "libsandlock.so")),
               PYTHONPATH=str(ROOT / "python"))
    return env


# Runs the example as __main__, after taking LD_PRELOAD out of the environment the commands it
# starts inherit (see python_env).
PY_RUN = ("import os, runpy, sys; os.environ.pop('LD_PRELOAD', None); sys.argv = sys.argv[1:]; "
          "runpy.run_path(sys.argv[0], run_name='__main__')")


def python_env(env):
    """An ASan build's library needs the sanitizer runtimes loaded first in the interpreter (as
    tests/run does); a confined command that inherited them would exit 1 at its end, so PY_RUN
    unsets LD_PRELOAD once the interpreter has them."""
    if not SANITIZED:
        return env
    gcc = lambda lib: subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True,
                                     text=True).stdout.strip()
    return dict(env, LD_PRELOAD=f"{gcc('libasan.so')} {gcc('libubsan.so')}",
                ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def run_sh(block, cwd, env):
    r = subprocess.run(["/bin/sh", "-e", "-c", block.text], cwd=cwd, env=env, timeout=120,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert r.returncode == 0, f"{block.where()}: exit {r.returncode}\n{r.stdout}{r.stderr}"


def run_python(block, cwd, env):
    script = cwd / f".example-{block.line}.py"
    script.write_text(block.text)
    try:
        r = subprocess.run([sys.executable, "-c", PY_RUN, str(script)], cwd=cwd,
                           env=python_env(env), timeout=120, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
    finally:
        script.unlink()
    assert r.returncode == 0, f"{block.where()}: exit {r.returncode}\n{r.stdout}{r.stderr}"


def write_toml(block, cwd, env):
    first = block.text.splitlines()[0]
    assert first.startswith("# "), f"{block.where()}: a toml example names its file first"
    dest = pathlib.Path(first[2:].strip().replace("~", env["HOME"], 1))
    dest = dest if dest.is_absolute() else cwd / dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(block.text)


def console_steps(block):
    """[(command, [expected output lines])] of a console block."""
    steps = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"{block.where()}: output before the first `$ ` line"
            steps[-1][1].append(line)
    return steps


def normalize(lines):
    return [re.sub(r"\s+", " ", re.sub(r"\d+", "N", ln)).strip() for ln in lines]


def run_console(block, cwd, env):
    steps = console_steps(block)
    sep = f"@@example-{uuid.uuid4().hex}@@"
    script = "".join(f"printf '%s\\n' '{sep}'\n{{\n{cmd}\n}} 2>&1\n" for cmd, _ in steps)
    proc = subprocess.Popen(["/bin/sh", "-c", script], cwd=cwd, env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        try:  # a `&` job the block left running
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    got = out.split(sep + "\n")[1:]
    assert len(got) == len(steps), f"{block.where()}: the block stopped early:\n{out}"
    for (cmd, want), printed in zip(steps, got):
        have = printed.rstrip("\n").split("\n") if printed.strip("\n") else []
        if block.mark == "output varies":
            have, want = normalize(have), normalize(want)
        assert have == want, f"{block.where()}: `{cmd}` printed:\n" + "\n".join(have)


RUNNERS = {"sh": run_sh, "console": run_console, "python": run_python, "toml": write_toml}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_examples_run_as_written(doc, tmp_path):
    require(landlock_abi() >= 6, "Landlock ABI 6 (the examples use a strict sandbox)")
    env = environment(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    for block in blocks(doc):
        if block.lang not in LANGS or block.mark == "skip":
            continue
        RUNNERS[block.lang](block, work, env)


def test_every_skip_says_why():
    for doc in DOCS:
        for m in re.finditer(r"<!--\s*example:(.*?)-->", doc.read_text()):
            assert MARK.fullmatch(m.group(0)), f"{doc}: bad marker {m.group(0)}"


def test_the_readme_has_examples_of_each_kind():
    langs = {b.lang for b in blocks(ROOT / "README.md") if b.mark != "skip"}
    assert {"sh", "console", "python", "toml"} <= langs


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_links_resolve():
    for doc in DOCS:
        text = doc.read_text()
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", prose, re.M)}
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            if path:
                assert (doc.parent / path).exists(), f"{doc}: link to missing {path}"
            elif anchor:
                assert anchor in anchors, f"{doc}: no heading for #{anchor}"
