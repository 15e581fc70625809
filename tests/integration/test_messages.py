# SPDX-License-Identifier: LGPL-2.1-or-later
"""What `sandlock run` tells the user, word for word: errors name the flag that was typed, an
unknown flag gets the closest one, a number that does not fit says the maximum, every refused
flag is named at once, --allow-degraded all names each missing protection on one warning line,
and --dry-run's change list stays out of the command's stdout."""

import os
import pathlib
import re

import pytest

from conftest import SYSTEM_READ, landlock_abi, require, run, sandlock

HINT = "Try 'sandlock run --help'."


def err(r):
    return r.stderr.decode().splitlines()


# ---- errors name the flag ---------------------------------------------------------------------


def test_missing_read_grant_names_the_flag(tmp_path):
    missing = tmp_path / "nonexist"
    r = run("-r", str(missing), *SYSTEM_READ, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (1, [f"sandlock: --fs-read: {missing}: No such file or "
                                          "directory"])
    r = run("--fs-write", str(missing), *SYSTEM_READ, "--", "true", timeout=30)
    assert err(r) == [f"sandlock: --fs-write: {missing}: No such file or directory"]
    # Control: the directory made, the same command runs.
    missing.mkdir()
    assert run("-r", str(missing), *SYSTEM_READ, "--", "true", timeout=30).returncode == 0


@pytest.mark.parametrize("args,message", [
    (["--fs-storage", "/tmp"],
     "--fs-storage: needs --workdir (it is where the workdir's branch lives)"),
    (["--max-disk", "1G"], "--max-disk: needs --workdir (it is the quota of the workdir's branch)"),
    (["--on-exit", "keep"], "--on-exit: needs --workdir (it acts on its branch)"),
    (["--http-inject-ca", "/tmp/x.pem"],
     "--http-inject-ca: needs at least one --http-allow or --http-deny rule"),
    (["--http-allow", "GET localhost/*", "--http-ca-out", "/tmp/x.pem"],
     "--http-ca-out: no CA is active: set --http-ca and --http-key, or --http-inject-ca"),
])
def test_spawn_errors_name_the_flags(args, message):
    r = run(*args, *SYSTEM_READ, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (1, [f"sandlock: {message}"])


def test_profile_field_named_by_its_flag(tmp_path):
    # A field set by a profile is named by the flag that sets it too.
    path = tmp_path / "p.toml"
    path.write_text('[filesystem]\nread = ["/usr"]\n[config]\nfs_storage = "/tmp"\n')
    r = run("--profile-file", str(path), "--", "true", timeout=30)
    assert err(r) == ["sandlock: --fs-storage: needs --workdir (it is where the workdir's "
                      "branch lives)"]


# ---- did you mean -----------------------------------------------------------------------------


@pytest.mark.parametrize("typed,meant", [
    ("--fs-rad", "fs-read"), ("--fs_read", "fs-read"), ("--timout=3", "timeout"),
    ("--max-memroy", "max-memory"), ("--hlep", "help"), ("--net-alow", "net-allow"),
])
def test_unknown_flag_suggests_the_closest(typed, meant):
    r = run(typed, "/x", "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (2, [f"sandlock: unknown flag: {typed} (did you mean "
                                          f"--{meant}?)", HINT])


@pytest.mark.parametrize("typed", ["--xyz", "--fs", "--completely-different"])
def test_unknown_flag_without_a_close_one(typed):
    # Nothing close (or two equally close: --fs starts five flags): no guess.
    r = run(typed, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (2, [f"sandlock: unknown flag: {typed}", HINT])


# ---- numbers that do not fit ------------------------------------------------------------------


@pytest.mark.parametrize("flag,value,why", [
    ("-t", "99999999999", "too large (max 1000000000 seconds)"),
    ("--status-fd", "99999999999", "too large (max 2147483647)"),
    ("--max-processes", "99999999999999999999999", "too large (max 4294967295)"),
    ("--random-seed", "99999999999999999999", "too large (max 9223372036854775807)"),
    ("--max-memory", "20000000000G", "too large (max 18446744073709551615 bytes)"),
    # Not numbers: said so.
    ("-t", "abc", "expected a positive number of seconds"),
    ("--status-fd", "x", "expected a file descriptor number"),
    ("--max-processes", "abc", "expected a non-negative integer"),
])
def test_number_too_large_or_not_a_number(flag, value, why):
    long = {"-t": "--timeout"}.get(flag, flag)
    r = run(flag, value, *SYSTEM_READ, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (2, [f"sandlock: {long}: invalid value '{value}': {why}",
                                          HINT])


def test_largest_timeout_runs():
    assert run("-t", "1000000000", *SYSTEM_READ, "--", "true", timeout=30).returncode == 0


# ---- every refused flag at once ---------------------------------------------------------------


def test_unsupported_flags_named_together():
    r = run("--image", "x", "--fs-mount", "/w:/tmp", *SYSTEM_READ, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (1, ["sandlock: not supported yet: --fs-mount, --image"])
    r = run("--image", "x", "--chroot", "/tmp", "--fs-mount", "/w:/tmp", *SYSTEM_READ, "--",
            "true", timeout=30)
    assert err(r) == ["sandlock: not supported yet: --chroot, --fs-mount, --image"]


# ---- --allow-degraded all ---------------------------------------------------------------------

# sandlock's test hook: it believes the kernel has this Landlock ABI (it can only lower it).
OLD_KERNEL = dict(os.environ, SANDLOCK_TEST_LANDLOCK_ABI="4")
WARNING = ("sandlock: warning: running without fs-ioctl-dev (ABI 5), signal-scope (ABI 6), "
           "abstract-unix-socket-scope (ABI 6): this kernel has Landlock ABI 4 "
           "(SANDLOCK_TEST_LANDLOCK_ABI)")


def test_allow_degraded_all_names_every_missing_protection_once():
    require(landlock_abi() >= 6, "Landlock ABI 6")
    r = run("--allow-degraded", "all", *SYSTEM_READ, "--", "echo", "ran", env=OLD_KERNEL,
            timeout=30)
    assert (r.returncode, r.stdout, err(r)) == (0, b"ran\n", [WARNING])
    # A comma list, over two flags, says the same.
    r = run("--allow-degraded", "fs-ioctl-dev,signal-scope", "--allow-degraded",
            "abstract-unix-socket-scope", *SYSTEM_READ, "--", "true", env=OLD_KERNEL,
            timeout=30)
    assert (r.returncode, err(r)) == (0, [WARNING])
    # Control: on the real kernel nothing is missing, and nothing is said.
    r = run("--allow-degraded", "all", *SYSTEM_READ, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (0, [])


def test_strict_protections_missing_are_named_together():
    require(landlock_abi() >= 6, "Landlock ABI 6")
    r = run(*SYSTEM_READ, "--", "true", env=OLD_KERNEL, timeout=30)
    assert (r.returncode, err(r)) == (1, [
        "sandlock: protections FsIoctlDev, SignalScope, AbstractUnixSocketScope need Landlock "
        "ABI 5, 6, 6, this kernel has 4 (SANDLOCK_TEST_LANDLOCK_ABI) (allow them to degrade with --allow-degraded "
        "fs-ioctl-dev,signal-scope,abstract-unix-socket-scope, or all)"])


def test_abi_hook_cannot_raise_the_abi():
    real = landlock_abi()
    out = sandlock("check", env=dict(os.environ, SANDLOCK_TEST_LANDLOCK_ABI=str(real + 5)),
                   timeout=30).stdout.decode()
    assert f"Landlock ABI: {real}\n" in out
    out = sandlock("check", env=dict(os.environ, SANDLOCK_TEST_LANDLOCK_ABI="0"),
                   timeout=30).stdout.decode()
    assert f"Landlock ABI: {real}\n" in out


def test_allow_degraded_all_in_a_profile_round_trips(tmp_path):
    # The dump names each protection, and loads back to the same policy.
    profiles = tmp_path / "sandlock" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "old.toml").write_text('[protections]\nallow_degraded = ["all"]\n')
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    r = sandlock("profile", "show", "old", env=env, timeout=30)
    dumped = ('[protections]\nallow_degraded = ["fs-refer", "fs-truncate", "net-tcp", '
              '"fs-ioctl-dev", "signal-scope", "abstract-unix-socket-scope"]\n')
    assert (r.returncode, r.stdout.decode()) == (0, dumped), r.stderr
    (profiles / "again.toml").write_text(dumped)
    assert sandlock("profile", "show", "again", env=env, timeout=30).stdout.decode() == dumped


@pytest.mark.parametrize("value,message", [
    ("fs-refer,nope", "--allow-degraded: invalid value 'fs-refer,nope': expected all, fs-refer, "
     "fs-truncate, net-tcp, fs-ioctl-dev, signal-scope or abstract-unix-socket-scope"),
])
def test_allow_degraded_bad_list(value, message):
    r = run("--allow-degraded", value, "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (2, [f"sandlock: {message}", HINT])


def test_disable_all_is_refused():
    r = run("--disable", "all", "--", "true", timeout=30)
    assert (r.returncode, err(r)) == (2, [
        "sandlock: --disable: invalid value 'all': expected fs-refer, fs-truncate, net-tcp, "
        "fs-ioctl-dev, signal-scope or abstract-unix-socket-scope", HINT])


# ---- --dry-run --------------------------------------------------------------------------------


def test_dry_run_lists_changes_on_stderr_or_a_file(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    script = f"echo out; echo x > {wd}/new"
    r = run(*SYSTEM_READ, "--workdir", str(wd), "--dry-run", "--", "/bin/sh", "-c", script,
            timeout=30)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"out\n", b"A new\n")
    listing = tmp_path / "changes"
    r = run(*SYSTEM_READ, "--workdir", str(wd), f"--dry-run={listing}", "--", "/bin/sh", "-c",
            script, timeout=30)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"out\n", b"")
    assert listing.read_text() == "A new\n"
    assert not (wd / "new").exists()  # aborted
    # A file that cannot be written costs no run.
    r = run(*SYSTEM_READ, "--workdir", str(wd), f"--dry-run={tmp_path}/no/such", "--",
            "/bin/sh", "-c", script, timeout=30)
    assert (r.returncode, r.stdout, err(r)) == (
        2, b"", [f"sandlock: --dry-run={tmp_path}/no/such: No such file or directory"])
    r = run("--dry-run=", "--", "true", timeout=30)
    assert err(r) == ["sandlock: --dry-run=: expected a file name after '='", HINT]


# ---- help ---------------------------------------------------------------------------------------


def test_help_lists_every_flag():
    # Every entry of the option table, once.
    table = (pathlib.Path(__file__).resolve().parents[2] / "cli" / "options.c").read_text()
    names = re.findall(r'^\t\{ "([a-z0-9-]+)", ', table, re.M)
    out = sandlock("run", "--help", timeout=30).stdout.decode()
    flags = re.findall(r"^\s+(?:-\w,)?\s*--([a-z0-9-]+)", out, re.M)
    assert flags == names + ["help"]
    assert "  --dry-run[=FILE]  " in out
