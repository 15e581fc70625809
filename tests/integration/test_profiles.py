# SPDX-License-Identifier: LGPL-2.1-or-later
"""Profiles through the CLI: `sandlock run -p NAME` ($XDG_CONFIG_HOME/sandlock/profiles, else
~/.config/sandlock/profiles), `--profile-file PATH`, flags on top of a profile (lists append,
scalars override, a command overrides [program]), the exit codes and messages of a missing
command and of a broken profile, and `sandlock profile list | show | delete`. Each behaviour
has its control."""

import os
import pathlib

import pytest

from conftest import ROOT, SANITIZED, SYSTEM_DIRS, run, sandlock

HOSTNAME = pathlib.Path("/etc/hostname")
READ_SYSTEM = "[filesystem]\nread = [" + ", ".join(f'"{d}"' for d in SYSTEM_DIRS) + "]\n"
CAT_HOSTNAME = '[program]\nexec = "/bin/cat"\nargs = ["/etc/hostname"]\n\n' + READ_SYSTEM


def text(b):
    return b.decode(errors="replace")


def err_lines(proc):
    return text(proc.stderr).splitlines()


@pytest.fixture
def xdg(tmp_path):
    """(environment, profile directory) with XDG_CONFIG_HOME in a fresh temporary directory."""
    config = tmp_path / "xdg"
    profiles = config / "sandlock" / "profiles"
    profiles.mkdir(parents=True)
    env = dict(os.environ, XDG_CONFIG_HOME=str(config))
    return env, profiles


def write(directory, name, body):
    path = directory / f"{name}.toml"
    path.write_text(body)
    return path


def need_hostname():
    if not HOSTNAME.is_file() or not HOSTNAME.read_text():
        pytest.skip("/etc/hostname is missing or empty here")


# ---- finding the profile ----------------------------------------------------------------------


def test_run_p_name_from_xdg_config_home(xdg):
    need_hostname()
    env, profiles = xdg
    write(profiles, "base", CAT_HOSTNAME)
    r = run("-p", "base", "-r", "/etc", env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout) == HOSTNAME.read_text()
    assert r.stderr == b""


def test_run_p_name_falls_back_to_home_config(tmp_path):
    need_hostname()
    home = tmp_path / "home"
    profiles = home / ".config" / "sandlock" / "profiles"
    profiles.mkdir(parents=True)
    write(profiles, "base", CAT_HOSTNAME)
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    env["HOME"] = str(home)
    r = run("-p", "base", "-r", "/etc", env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout) == HOSTNAME.read_text()
    # A relative XDG_CONFIG_HOME is ignored (XDG base directory rule): still ~/.config.
    r = run("-p", "base", "-r", "/etc", env=dict(env, XDG_CONFIG_HOME="rel/config"), timeout=60)
    assert r.returncode == 0, r.stderr
    # Control: an absolute XDG_CONFIG_HOME wins, and the profile is not there.
    other = tmp_path / "other"
    r = run("-p", "base", env=dict(env, XDG_CONFIG_HOME=str(other)), timeout=60)
    assert r.returncode == 1
    missing = other / "sandlock" / "profiles" / "base.toml"
    assert err_lines(r) == [f"sandlock: {missing}: No such file or directory"]


def test_run_profile_file(tmp_path):
    need_hostname()
    path = write(tmp_path, "anywhere", CAT_HOSTNAME)
    r = run("--profile-file", str(path), "-r", "/etc", timeout=60)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout) == HOSTNAME.read_text()


def test_missing_profile_is_exit_1(xdg):
    env, profiles = xdg
    r = run("-p", "nothere", "--", "true", env=env, timeout=60)
    assert r.returncode == 1
    assert err_lines(r) == [f"sandlock: {profiles / 'nothere.toml'}: No such file or directory"]


def test_one_profile_only(tmp_path):
    path = write(tmp_path, "p", READ_SYSTEM)
    r = run("--profile-file", str(path), "--profile-file", str(path), "--", "true", timeout=60)
    assert r.returncode == 2
    assert "sandlock: give one profile (-p or --profile-file)" in err_lines(r)
    # Control: one of them runs.
    assert run("--profile-file", str(path), "--", "true", timeout=60).returncode == 0


# ---- flags on top of a profile ----------------------------------------------------------------


def test_flags_append_to_profile_lists(xdg):
    need_hostname()
    env, profiles = xdg
    write(profiles, "base", CAT_HOSTNAME)
    # The control: the profile alone does not grant /etc, so cat fails.
    r = run("-p", "base", env=env, timeout=60)
    assert r.returncode == 1
    assert "Permission denied" in text(r.stderr)
    assert r.stdout == b""
    # -r /etc is added to the profile's read list (the profile's /usr etc. stay: cat starts).
    r = run("-p", "base", "-r", "/etc", env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    # Flags before -p are applied after the profile just the same.
    r = run("-r", "/etc", "-p", "base", env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout) == HOSTNAME.read_text()


def test_flags_override_profile_scalars(tmp_path):
    path = write(tmp_path, "cwd", '[program]\nexec = "/bin/pwd"\ncwd = "/usr"\n\n' + READ_SYSTEM)
    r = run("--profile-file", str(path), timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "/usr\n"), r.stderr  # the control
    r = run("--profile-file", str(path), "--cwd", "/tmp", timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "/tmp\n"), r.stderr
    r = run("--cwd", "/tmp", "--profile-file", str(path), timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "/tmp\n"), r.stderr


def test_command_overrides_profile_program(xdg):
    env, profiles = xdg
    write(profiles, "base", '[program]\nexec = "/bin/echo"\nargs = ["from", "profile"]\n\n'
          + READ_SYSTEM)
    r = run("-p", "base", env=env, timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "from profile\n"), r.stderr  # the control
    r = run("-p", "base", "--", "echo", "from", "cli", env=env, timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "from cli\n"), r.stderr
    r = run("-p", "base", "-e", "echo from shell", env=env, timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "from shell\n"), r.stderr


def test_no_command_is_exit_2(xdg):
    env, profiles = xdg
    write(profiles, "noexec", READ_SYSTEM)
    r = run("-p", "noexec", env=env, timeout=60)
    assert r.returncode == 2
    assert err_lines(r) == [
        "sandlock: no command given (and the profile has no [program] exec)",
        "Try 'sandlock run --help'.",
    ]
    r = run(env=env, timeout=60)
    assert r.returncode == 2
    assert err_lines(r)[0] == "sandlock: no command given"
    # Control: the same profile with a command runs.
    assert run("-p", "noexec", "--", "true", env=env, timeout=60).returncode == 0


def test_home_in_a_profile(tmp_path, xdg):
    env, profiles = xdg
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data" / "f").write_text("secret-ish\n")
    write(profiles, "home", READ_SYSTEM + 'write = ["${HOME}/data"]\n')
    env = dict(env, HOME=str(home))
    r = run("-p", "home", "--", "cat", str(home / "data" / "f"), env=env, timeout=60)
    assert (r.returncode, text(r.stdout)) == (0, "secret-ish\n"), r.stderr
    # Control: another HOME, another grant: the file is out of reach.
    (tmp_path / "elsewhere" / "data").mkdir(parents=True)
    r = run("-p", "home", "--", "cat", str(home / "data" / "f"),
            env=dict(env, HOME=str(tmp_path / "elsewhere")), timeout=60)
    assert r.returncode == 1
    assert "Permission denied" in text(r.stderr)


def test_unsupported_field_in_a_profile(tmp_path):
    path = write(tmp_path, "mount", READ_SYSTEM + 'mount = ["/work:/tmp"]\n')
    r = run("--profile-file", str(path), "--", "true", timeout=60)
    assert r.returncode == 1
    # The CLI names a field by its flag, wherever it was set.
    assert err_lines(r) == ["sandlock: not supported yet: --fs-mount"]
    # Control: without it, the profile runs.
    path = write(tmp_path, "nomem", READ_SYSTEM)
    assert run("--profile-file", str(path), "--", "true", timeout=60).returncode == 0


# ---- errors in a profile ----------------------------------------------------------------------


@pytest.mark.parametrize("body,where", [
    ("[limits]\ncpu = 150\n", "2:7: max_cpu: 150 is out of range 1..100"),
    ("[limits]\ncpu = \n", "2:7: expected a value, found end of line"),
    ("# old style\nfs_readable = [\"/usr\"]\n",
     "2:1: 'fs_readable' is an old flat key; profiles use sections: write it as [filesystem] read"),
    ("[filesystem]\nread = [\"${HOME\"]\n", "2:9: [filesystem] read: unterminated '${'"),
    # A whole-policy check: the position of the field it blames.
    ("[program]\nuid = 0\n", "2:1: uid, gid: set both or neither"),
    ("[program]\nclean_env = true\ngid = 0\n", "3:1: uid, gid: set both or neither"),
])
def test_profile_error_is_exit_1_with_position(tmp_path, body, where):
    path = write(tmp_path, "bad", body)
    r = run("--profile-file", str(path), "--", "true", timeout=60)
    assert r.returncode == 1
    assert err_lines(r) == [f"sandlock: {path}:{where}"]


def test_profile_error_through_p_names_the_file(xdg):
    env, profiles = xdg
    path = write(profiles, "bad", "[network]\nallow_bind = [\"*\", 80]\n")
    r = run("-p", "bad", "--", "true", env=env, timeout=60)
    assert r.returncode == 1
    assert err_lines(r) == [
        f"sandlock: {path}:2:20: net_allow_bind: \"*\" cannot be mixed with ports"]


# ---- sandlock profile list | show | delete ----------------------------------------------------


def test_profile_list_empty(xdg):
    env, _ = xdg
    r = sandlock("profile", "list", env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_profile_list_sorted(xdg):
    env, profiles = xdg
    for name in ("zeta", "alpha", "Mixed", "m2", "m10"):
        write(profiles, name, READ_SYSTEM)
    (profiles / ".hidden.toml").write_text(READ_SYSTEM)
    (profiles / "notes.txt").write_text("x")
    (profiles / "backup.toml.bak").write_text("x")
    (profiles / ".toml").write_text("x")
    r = sandlock("profile", "list", env=env)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout).splitlines() == ["Mixed", "alpha", "m10", "m2", "zeta"]


def test_profile_list_without_directory(tmp_path):
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "none"))
    r = sandlock("profile", "list", env=env)
    assert (r.returncode, r.stdout) == (0, b"")


def test_profile_show_is_the_canonical_dump(xdg):
    env, profiles = xdg
    write(profiles, "messy", """
# comments and spelling go away; values come back canonical
[limits]
cpu_cores = ["0-2"]
memory = 1073741824
[http]
allow = ["get Example.COM/x"]
[filesystem]
on_exit = "commit"
read = ["/usr", "/usr"]
[determinism]
time_start = 2026-01-01T02:00:00+02:00
""")
    r = sandlock("profile", "show", "messy", env=env)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout) == (
        '[determinism]\ntime_start = "2026-01-01T00:00:00Z"\n\n'
        '[filesystem]\nread = ["/usr"]\n\n'
        '[http]\nallow = ["GET example.com/x"]\n\n'
        '[limits]\nmemory = "1G"\ncpu_cores = [0, 1, 2]\n')
    # The dump is a profile that shows the same.
    write(profiles, "again", text(r.stdout))
    again = sandlock("profile", "show", "again", env=env)
    assert again.stdout == r.stdout


def test_profile_show_of_corpus_round_trips(xdg):
    env, profiles = xdg
    env = dict(env, HOME="/home/tester")
    corpus = sorted((ROOT / "tests" / "profiles").glob("*.toml"))
    assert len(corpus) >= 8
    for path in corpus:
        write(profiles, path.stem, path.read_text())
        first = sandlock("profile", "show", path.stem, env=env)
        assert first.returncode == 0, (path, first.stderr)
        write(profiles, "x-" + path.stem, text(first.stdout))
        second = sandlock("profile", "show", "x-" + path.stem, env=env)
        assert second.stdout == first.stdout, path


def test_profile_show_errors(xdg):
    env, profiles = xdg
    path = write(profiles, "bad", "[limits]\nbogus = 1\n")
    r = sandlock("profile", "show", "bad", env=env)
    assert r.returncode == 1
    assert err_lines(r) == [
        f"sandlock: {path}:2:1: unknown key 'bogus' in [limits]; allowed: memory, processes, "
        "open_files, cpu, disk, gpu_devices, cpu_cores, num_cpus"]
    assert r.stdout == b""
    r = sandlock("profile", "show", "absent", env=env)
    assert r.returncode == 1
    assert err_lines(r) == [f"sandlock: {profiles / 'absent.toml'}: No such file or directory"]


def test_profile_delete(xdg):
    env, profiles = xdg
    doomed = write(profiles, "doomed", READ_SYSTEM)
    kept = write(profiles, "kept", READ_SYSTEM)
    r = sandlock("profile", "delete", "doomed", env=env)
    assert r.returncode == 0, r.stderr
    assert text(r.stdout) == f"deleted {doomed}\n"
    assert not doomed.exists()
    assert kept.exists()  # the control
    assert text(sandlock("profile", "list", env=env).stdout) == "kept\n"
    r = sandlock("profile", "delete", "doomed", env=env)
    assert r.returncode == 1
    assert err_lines(r) == [f"sandlock: {doomed}: No such file or directory"]


@pytest.mark.parametrize("name", ["../x", ".hidden", "a/b", "", "..", "/etc/passwd", "x" * 201])
def test_bad_profile_names_refused(xdg, name):
    env, profiles = xdg
    # Files a path traversal would reach: they must survive and never be read.
    outside = write(profiles.parent, "x", READ_SYSTEM)
    hidden = write(profiles, ".hidden", READ_SYSTEM)
    r = run("-p", name, "--", "true", env=env, timeout=60)
    assert r.returncode == 2
    assert err_lines(r)[0] == f"sandlock: -p {name}: not a profile name"
    for verb in ("show", "delete"):
        r = sandlock("profile", verb, name, env=env)
        assert r.returncode == 2
        assert err_lines(r) == [f"sandlock: profile {verb} {name}: not a profile name"]
        assert r.stdout == b""
    assert outside.exists() and hidden.exists()


def test_good_profile_name_control(xdg):
    # The control for the refusals: an ordinary name with dots and dashes inside works.
    env, profiles = xdg
    write(profiles, "my-tool.v2", READ_SYSTEM)
    r = run("-p", "my-tool.v2", "--", "true", env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    r = sandlock("profile", "show", "my-tool.v2", env=env)
    assert (r.returncode, text(r.stdout)) == (0, READ_SYSTEM)


def test_profile_usage():
    r = sandlock("profile")
    assert r.returncode == 2
    assert err_lines(r) == ["sandlock: usage: sandlock profile list | show NAME | delete NAME"]
    r = sandlock("profile", "show")
    assert r.returncode == 2
    r = sandlock("profile", "--help")
    assert r.returncode == 0
    assert text(r.stdout).startswith("Usage: sandlock profile list | show NAME | delete NAME\n\n")


# ---- regressions: bugs found by these tests, fixed ---------------------------------------------


def test_nul_in_a_profile_path_is_refused(tmp_path):
    # "/\u0000/usr/share/empty" was cut down to "/", a grant on everything.
    need_hostname()
    path = tmp_path / "nul.toml"
    path.write_text('[filesystem]\nread = ["/\\u0000/usr/share/empty"]\n')
    r = run("--profile-file", str(path), "--", "/bin/cat", "/etc/hostname", timeout=60)
    assert (r.returncode, r.stdout) == (1, b"")
    assert err_lines(r) == [f"sandlock: {path}:2:9: [filesystem] read: a string with a NUL "
                            "character"]


def test_nul_control_without_the_nul(tmp_path):
    # The control: the path as written, without the NUL, grants nothing of /etc, so cat
    # cannot even start.
    path = tmp_path / "plain.toml"
    path.write_text('[filesystem]\nread = ["/usr/share/empty"]\n')
    r = run("--profile-file", str(path), "--", "/bin/cat", "/etc/hostname", timeout=60)
    assert r.returncode != 0 and r.stdout == b""


def test_empty_argument_in_profile_args(tmp_path):
    path = write(tmp_path, "empty-arg", '[program]\nexec = "/bin/sh"\nargs = ["-c", ""]\n\n'
                 + READ_SYSTEM)
    r = run("--profile-file", str(path), timeout=60)
    assert (r.returncode, r.stderr) == (0, b"")


@pytest.mark.parametrize("home", ["//", "/.", "/tmp/..", "/./"])
def test_home_naming_the_root_grants_nothing(tmp_path, home):
    # Only the exact string "/" used to count as the root: HOME=// made read = ["${HOME}"] a
    # grant on everything. Now it falls back to the passwd home, which holds no /bin/cat.
    need_hostname()
    path = tmp_path / "home.toml"
    path.write_text('[filesystem]\nread = ["${HOME}"]\n')
    r = run("--profile-file", str(path), "--", "/bin/cat", "/etc/hostname",
            env=dict(os.environ, HOME=home), timeout=60)
    assert r.returncode != 0 and r.stdout == b"", "the sandbox read /etc/hostname via ${HOME}"


def test_home_naming_a_directory_control(tmp_path):
    # The control for the test above: an ordinary HOME grants that directory only.
    path = tmp_path / "home.toml"
    path.write_text('[filesystem]\nread = ["${HOME}"]\n')
    r = run("--profile-file", str(path), "--", "/bin/cat", "/etc/hostname",
            env=dict(os.environ, HOME=str(tmp_path)), timeout=60)
    assert r.returncode != 0 and r.stdout == b""
