# SPDX-License-Identifier: LGPL-2.1-or-later
"""`make install` into a DESTDIR: the library both ways (a program built with pkg-config links
libsandlock.so, or libsandlock.a statically with `pkg-config --static`, and runs a sandbox),
the man page sandlock(1) (it renders and names every flag of `run --help`), and the bash
completion (commands, flags, profile and sandbox names)."""

import os
import pathlib
import re
import subprocess
import time
import uuid

import pytest

from conftest import (BUILD, ROOT, SANDLOCK, SANITIZED, SYSTEM_READ, landlock_abi, require,
                      sandlock)

PREFIX = "/usr/local"
SANFLAGS = ["-fsanitize=address,undefined"] if SANITIZED else []


@pytest.fixture(scope="module")
def destdir(tmp_path_factory):
    """The tree `make install DESTDIR=... PREFIX=/usr/local` writes, for this build."""
    root = tmp_path_factory.mktemp("install") / "root"
    args = ["make", "-s", "install", f"DESTDIR={root}", f"PREFIX={PREFIX}", f"BUILDDIR={BUILD}"]
    if SANITIZED:
        args.append("SANITIZE=1")
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return root


def pkg_config(root, *args):
    # The installed sandlock.pc, its paths seen under DESTDIR (the sysroot).
    env = dict(os.environ, PKG_CONFIG_PATH=str(root / PREFIX[1:] / "lib" / "pkgconfig"),
               PKG_CONFIG_SYSROOT_DIR=str(root))
    r = subprocess.run(["pkg-config", *args, "sandlock"], capture_output=True, text=True,
                       env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def needed(binary):
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", out)


def test_install_paths(destdir):
    files = sorted(str(p.relative_to(destdir)) for p in destdir.rglob("*") if not p.is_dir())
    assert files == [
        "usr/local/bin/sandlock",
        "usr/local/include/sandlock.h",
        "usr/local/lib/libsandlock.a",
        "usr/local/lib/libsandlock.so",
        "usr/local/lib/libsandlock.so.0",
        "usr/local/lib/libsandlock.so.0.1.0",
        "usr/local/lib/pkgconfig/sandlock.pc",
        "usr/local/share/bash-completion/completions/sandlock",
        "usr/local/share/man/man1/sandlock.1",
    ]


def test_installed_archive_exports_the_api_only(destdir):
    # A static link must not clash with the program's own names: every global symbol the
    # archive defines is the API, exactly what the shared library exports.
    lib = destdir / "usr/local/lib"
    defined = set()
    for line in subprocess.run(["nm", str(lib / "libsandlock.a")], capture_output=True,
                               text=True, timeout=30, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRB":
            defined.add(parts[2])
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(lib / "libsandlock.so.0.1.0")],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    exported = {line.split()[2].split("@")[0] for line in dyn.splitlines()
                if line.split()[1] == "T"}
    assert "sandlock_spawn" in defined
    assert defined == exported


def test_pkg_config_static_names_the_dependencies(destdir):
    shared = pkg_config(destdir, "--libs")
    static = pkg_config(destdir, "--static", "--libs")
    assert "-lsandlock" in shared and "-ljansson" not in shared
    assert "-lseccomp" in static and "-ljansson" in static


def spawn_checks(binary):
    """The linked example runs a confined command: `echo` works, an ungranted file is denied."""
    require(landlock_abi() >= 6, "Landlock ABI 6")
    r = subprocess.run([str(binary), "echo", "hi"], capture_output=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, b"stdout: 3 bytes: hi\nstderr: 0 bytes: \n"
                                            b"exit: code 0\n"), r.stderr
    secret = pathlib.Path(str(binary) + ".secret")
    secret.write_text("x\n")
    r = subprocess.run([str(binary), "cat", str(secret)], capture_output=True, timeout=60)
    assert r.returncode == 1
    assert f"cat: {secret}: Permission denied".encode() in r.stdout


def test_link_shared_with_pkg_config(destdir, tmp_path):
    out = tmp_path / "spawn"
    lib = destdir / "usr/local/lib"
    cc = ["cc", *SANFLAGS, "-o", str(out), str(ROOT / "examples/spawn.c"),
          *pkg_config(destdir, "--cflags", "--libs"), f"-Wl,-rpath,{lib}"]
    r = subprocess.run(cc, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "libsandlock.so.0" in needed(out)
    spawn_checks(out)


def test_link_static_with_pkg_config(destdir, tmp_path):
    # libsandlock.a and its dependencies static, libc dynamic (a fully -static glibc program
    # cannot use getaddrinfo or getpwuid_r).
    out = tmp_path / "spawn-static"
    cc = ["cc", *SANFLAGS, "-o", str(out), str(ROOT / "examples/spawn.c"),
          *pkg_config(destdir, "--cflags"), "-Wl,-Bstatic",
          *pkg_config(destdir, "--static", "--libs"), "-Wl,-Bdynamic"]
    r = subprocess.run(cc, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    libs = needed(out)
    assert not [n for n in libs if re.match(r"lib(sandlock|seccomp|jansson)\.", n)], libs
    spawn_checks(out)


# ---- sandlock(1) ---------------------------------------------------------------------------


def run_help_flags():
    """Every flag spelling `sandlock run --help` lists: ["-r", "--fs-read", ...]."""
    out = sandlock("run", "--help").stdout.decode()
    flags = []
    for line in out.splitlines():
        m = re.match(r"^ +((?:-\w, ?)?--[a-z0-9-]+)", line)
        if m:
            flags += re.split(r", ?", m.group(1))
    return flags


def render(page):
    # Plain text, one long line per paragraph and no hyphenation, so that no flag is split.
    r = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", "-rLL=400n", "-rHY=0", "-ww",
                        str(page)], capture_output=True, timeout=60,
                       env=dict(os.environ, GROFF_NO_SGR="1"))
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"", r.stderr  # no roff warnings
    return r.stdout.decode().replace("\u2010", "-").replace("\u2212", "-")


def test_man_page_renders_every_flag_and_command(destdir):
    text = render(destdir / "usr/local/share/man/man1/sandlock.1")
    lines = [line.strip() for line in text.splitlines()]
    assert lines[0].startswith("SANDLOCK(1)")
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "RUN FLAGS", "EXIT STATUS",
                    "FILES", "SEE ALSO"):
        assert section in lines, section
    flags = run_help_flags()
    assert "--fs-read" in flags and "-r" in flags and "--status-fd" in flags
    words = set(re.findall(r"(?<![\w-])-[-\w]+", text))
    assert [f for f in flags if f not in words] == []
    # Each command's synopsis, as its --help says it.
    for verb in ("run", "check", "profile", "ps", "inspect", "kill", "learn"):
        usage = sandlock(verb, "--help").stdout.decode().splitlines()[0]
        assert usage.startswith("Usage: sandlock ")
        assert usage[len("Usage: "):] in lines, verb
    # Control: a flag that does not exist is not found by the same search.
    assert "--no-such-flag" not in words


# ---- bash completion -----------------------------------------------------------------------


def complete(script, *words, env=None):
    """COMPREPLY of the completion function for the command line @words (the last one is the
    word being completed), with the built sandlock as the command."""
    prog = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
            'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; '
            'complete -p sandlock >/dev/null || exit 9; '
            '_sandlock; printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog, "bash", str(script),
                        SANDLOCK, *words], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    return [w for w in r.stdout.splitlines() if w]


@pytest.fixture(scope="module")
def completion(destdir):
    return destdir / "usr/local/share/bash-completion/completions/sandlock"


def test_completion_commands_and_flags(completion):
    assert complete(completion, "ru") == ["run"]
    assert complete(completion, "run", "--fs-r") == ["--fs-read"]
    assert sorted(complete(completion, "")) == sorted(
        ["run", "check", "ps", "inspect", "kill", "profile", "learn", "--help", "--version"])
    # Every flag of run --help, and only those.
    assert sorted(complete(completion, "run", "-")) == sorted(run_help_flags())
    # After a flag's value, flags again; a flag without a value takes none.
    assert complete(completion, "run", "-r", "/usr", "--fs-w") == ["--fs-write"]
    assert complete(completion, "run", "--clean-env", "--fs-w") == ["--fs-write"]
    assert complete(completion, "inspect", "--t") == ["--toml"]
    assert complete(completion, "learn", "--m") == ["--merge"]  # a flag with a value
    assert complete(completion, "profile", "") == ["list", "show", "delete", "--help"]
    # Control: the command's own arguments are not sandlock's flags.
    assert complete(completion, "run", "-r", "/usr", "--", "ls", "--fs-r") == []
    assert complete(completion, "run", "-r", "/usr", "ls", "--fs-r") == []
    assert "true" in complete(completion, "run", "-r", "/usr", "--", "tru")
    # A protection value: the names sandlock check lists, and all for --allow-degraded only.
    assert complete(completion, "run", "--allow-degraded", "al") == ["all"]
    assert complete(completion, "run", "--disable", "al") == []
    assert complete(completion, "run", "--disable", "fs-r") == ["fs-refer"]
    assert "abstract-unix-socket-scope" in complete(completion, "run", "--disable", "")


def test_completion_profile_names(completion, tmp_path):
    profiles = tmp_path / "sandlock" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "py-dev.toml").write_text('[filesystem]\nread = ["/usr"]\n')
    (profiles / "web.toml").write_text('[filesystem]\nread = ["/usr"]\n')
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    assert complete(completion, "run", "-p", "py", env=env) == ["py-dev"]
    assert complete(completion, "run", "--profile", "w", env=env) == ["web"]
    assert sorted(complete(completion, "profile", "show", "", env=env)) == ["py-dev", "web"]
    # Control: --name takes a new name, not a profile's.
    assert complete(completion, "run", "--name", "py", env=env) == []


def test_completion_running_names(completion):
    require(landlock_abi() >= 6, "Landlock ABI 6")
    name = "cmp-" + uuid.uuid4().hex[:8]
    assert name not in complete(completion, "kill", "cmp-")
    proc = subprocess.Popen([SANDLOCK, "run", "--name", name, *SYSTEM_READ, "--", "sleep",
                             "60"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while name not in sandlock("ps").stdout.decode().split():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert name in complete(completion, "kill", "cmp-")
        assert name in complete(completion, "inspect", "--toml", name[:6])
    finally:
        sandlock("kill", name)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def test_installed_files_hold_no_test_hook(destdir):
    # The test hooks (SANDLOCK_TEST_COMMIT_CRASH) are compiled into the build the tests run,
    # never into what is installed.
    hook = b"SANDLOCK_TEST_COMMIT_CRASH"
    for name in ("bin/sandlock", "lib/libsandlock.so.0.1.0", "lib/libsandlock.a"):
        assert hook not in (destdir / PREFIX[1:] / name).read_bytes(), name
    # Control: the tests' sandlock has it.
    assert hook in pathlib.Path(SANDLOCK).read_bytes()
