# SPDX-License-Identifier: LGPL-2.1-or-later
"""Profiles through the SDK: list_profiles() and load_profile() over $XDG_CONFIG_HOME, a loaded
profile's grants honoured (control: the same profile without the grant), its [program] exec as
run()'s default command, the core's line:column for a broken profile, and the round trip of
every valid profile of tests/profiles: the core's own dump of the profile equals
load_profile(name).to_json() (Sandbox -> JSON document -> core -> dump)."""

import json
import shutil
import subprocess
from ctypes import byref, c_void_p

import pytest

from conftest import ROOT, SANDLOCK_CLI, SYSTEM_READ, unique_name
from sandlock import BranchAction, Sandbox, SandboxError, _core, _ffi, list_profiles, load_profile

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

PROFILES = ROOT / "tests" / "profiles"
VALID = sorted(p.stem for p in PROFILES.glob("*.toml"))
READ_SYSTEM = "[filesystem]\nread = [" + ", ".join(f'"{d}"' for d in SYSTEM_READ) + "]\n"


def toml_list(paths):
    return "[" + ", ".join(f'"{p}"' for p in paths) + "]"


@pytest.fixture
def xdg(tmp_path, monkeypatch):
    """The profile directory under a fresh $XDG_CONFIG_HOME."""
    config = tmp_path / "xdg"
    profiles = config / "sandlock" / "profiles"
    profiles.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return profiles


def write(directory, name, body):
    path = directory / f"{name}.toml"
    path.write_text(body)
    return path


# ---- listing and loading --------------------------------------------------------------------


def test_list_profiles_sorted(xdg):
    assert list_profiles() == []
    for name in ("zeta", "alpha", "Mid", "b-2"):
        write(xdg, name, READ_SYSTEM)
    (xdg / "notes.txt").write_text("not a profile")
    assert list_profiles() == ["Mid", "alpha", "b-2", "zeta"]


def test_list_profiles_missing_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nowhere"))
    assert list_profiles() == []


def test_loaded_profile_grants_are_honoured(xdg, secret):
    write(xdg, "reader", "[filesystem]\nread = " + toml_list(SYSTEM_READ + [secret.parent]) + "\n")
    write(xdg, "blind", READ_SYSTEM)
    sb = load_profile("reader")
    assert isinstance(sb, Sandbox)
    r = sb.run(["cat", str(secret)])
    assert (r.success, r.stdout) == (True, b"top secret\n")
    # Control: the profile without the grant.
    r = load_profile("blind").run(["cat", str(secret)])
    assert not r.success and b"Permission denied" in r.stderr


def test_profile_write_grant(xdg, box, tmp_path):
    write(xdg, "writer", READ_SYSTEM + "write = " + toml_list([box]) + "\n")
    sb = load_profile("writer")
    assert sb.run(["sh", "-c", f"echo hi > {box}/f"]).success
    assert (box / "f").read_text() == "hi\n"
    r = sb.run(["sh", "-c", f"echo hi > {tmp_path}/f"])  # control: outside the grant
    assert not r.success and not (tmp_path / "f").exists()


def test_profile_runtime_kwargs(xdg):
    write(xdg, "named", READ_SYSTEM)
    name = unique_name("from-kwarg")
    sb = load_profile("named", name=name)
    r = sb.run(["uname", "-n"])
    assert (r.success, r.stdout) == (True, f"{name}\n".encode())
    assert load_profile("named").name is None  # control: no name unless given


def test_profile_program_exec_is_the_default_command(xdg):
    write(xdg, "prog", '[program]\nexec = "/bin/sh"\nargs = ["-c", "echo from-profile $0 $1", '
          '"zero", "one"]\n\n' + READ_SYSTEM)
    sb = load_profile("prog")
    r = sb.run()
    assert (r.success, r.stdout, r.stderr) == (True, b"from-profile zero one\n", b"")
    assert sb.cmd(["echo", "given"]).run().stdout == b"given\n"
    # A command given to run() replaces the profile's.
    assert sb.run(["echo", "override"]).stdout == b"override\n"
    # Control: a profile without [program] exec has no default command.
    write(xdg, "noprog", READ_SYSTEM)
    with pytest.raises(TypeError):
        load_profile("noprog").run()


def test_profile_program_settings_apply(xdg, tmp_path):
    write(xdg, "env", f'[program]\nenv = {{ SDK_PROFILE = "yes" }}\ncwd = "{tmp_path}"\n\n'
          + READ_SYSTEM)
    r = load_profile("env").run(["sh", "-c", 'echo "$SDK_PROFILE" "$(pwd)"'])
    assert r.stdout == f"yes {tmp_path}\n".encode()


@pytest.mark.parametrize("body,where", [
    ("[limits]\ncpu =\n", ":2:6: expected a value, found end of line"),
    ("[program]\nuid = 0\n", ":2:1: uid, gid: set both or neither"),
    ("[limits]\ncpu = 150\n", ":2:7: max_cpu: 150 is out of range 1..100"),
    ("fs_readable = [\"/usr\"]\n", ":1:1: 'fs_readable' is an old flat key"),
])
def test_bad_profile_message_has_line_and_column(xdg, body, where):
    path = write(xdg, "broken", body)
    with pytest.raises(SandboxError) as e:
        load_profile("broken")
    assert where in str(e.value)
    assert str(path) in str(e.value)
    assert "broken" in list_profiles()  # listed all the same: it is a file in the directory


def test_unknown_profile(xdg):
    write(xdg, "known", READ_SYSTEM)
    with pytest.raises(SandboxError, match="sdk-unknown"):
        load_profile("sdk-unknown")
    assert isinstance(load_profile("known"), Sandbox)  # control


@pytest.mark.parametrize("name", ["../escape", "a/b", ""])
def test_bad_profile_name(xdg, name):
    with pytest.raises(SandboxError):
        load_profile(name)


# ---- round trip of tests/profiles -----------------------------------------------------------


@pytest.fixture
def copied_profiles(xdg, monkeypatch):
    """tests/profiles/*.toml in the profile directory; HOME as home.toml expects."""
    for name in VALID:
        shutil.copy(PROFILES / f"{name}.toml", xdg / f"{name}.toml")
    monkeypatch.setenv("HOME", "/home/tester")
    return xdg


def core_profile_json(name):
    """The core's own dump of profile @name (the CLI's parser, through the library)."""
    L = _ffi.lib()
    ptr = c_void_p()
    _ffi.call(L.sandlock_policy_load_profile, name.encode(), byref(ptr),
              raise_as=_core.raise_config)
    try:
        out = c_void_p()
        assert L.sandlock_policy_dump_json(ptr, byref(out)) == 0
        return json.loads(_ffi.take_string(out))
    finally:
        L.sandlock_policy_free(ptr)


def toml_of(doc):
    """The core's TOML dump of a JSON document."""
    with _core.Policy(doc) as p:
        out = c_void_p()
        assert _ffi.lib().sandlock_policy_dump_toml(p.ptr, byref(out)) == 0
        return _ffi.take_string(out)


def policy_only(doc):
    """@doc without [program] exec/args (the SDK's run()/cmd() argument, not a field), with
    the mount list sorted (fs_mount and fs_mount_ro are two mappings: their interleaving in
    one TOML list is not kept, and the virtual paths are distinct)."""
    doc = json.loads(json.dumps(doc))
    program = doc.get("program", {})
    program.pop("exec", None)
    program.pop("args", None)
    if "program" in doc and not program:
        del doc["program"]
    if "mount" in doc.get("filesystem", {}):
        doc["filesystem"]["mount"] = sorted(doc["filesystem"]["mount"])
    return doc


def test_all_test_profiles_listed(copied_profiles):
    assert list_profiles() == VALID
    assert len(VALID) >= 10


@pytest.mark.parametrize("name", VALID)
def test_profile_round_trip(copied_profiles, name):
    core = core_profile_json(name)
    # The reference is what the CLI shows for the profile.
    shown = subprocess.run([SANDLOCK_CLI, "profile", "show", name], capture_output=True,
                           text=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == toml_of(core)
    sdk = load_profile(name).to_json()
    assert policy_only(sdk) == policy_only(core)
    assert "exec" not in sdk.get("program", {})  # the command is not a policy field


def test_profile_command_arguments_kept_verbatim(xdg):
    # Arguments the core un-escapes, and a $ that belongs to the program, not to expansion.
    write(xdg, "args", '[program]\nexec = "/usr/bin/printf"\n'
          'args = ["[%s]", "tab\\there", "q\\"uote", "${HOME}", "$USER", "\\u00e9", ""]\n\n'
          + READ_SYSTEM)
    r = load_profile("args").run()
    assert r.stdout == '[tab\there][q"uote][${HOME}][$USER][\u00e9][]'.encode()


def test_profile_args_without_exec_are_dropped(copied_profiles):
    # escapes.toml has [program] args but no exec: like the CLI, no default command.
    assert "exec" not in core_profile_json("escapes").get("program", {})
    with pytest.raises(TypeError):
        load_profile("escapes").run()


def test_reference_profile_fields(copied_profiles):
    sb = load_profile("reference")
    assert sb.fs_readable == ["/usr", "/lib"]
    assert sb.fs_writable == ["/tmp"]
    assert sb.fs_mount == {"/work": "/host/sandbox/work"}
    assert sb.max_memory == "512M" and sb.max_cpu == 50
    assert sb.env == {"CC": "gcc"} and (sb.uid, sb.gid) == (0, 0)
    assert sb.extra_allow_syscalls == ["sysv_ipc"]
    chroot = load_profile("chroot")
    assert chroot.fs_mount == {"/work": "/srv/host/work", "/cache": "/srv/host/cache"}
    assert chroot.fs_mount_ro == {"/data": "/srv/host/data"}
    assert (chroot.on_exit, chroot.on_error) == (BranchAction.ABORT, BranchAction.COMMIT)


def test_home_profile_expands_home(copied_profiles):
    sb = load_profile("home")
    assert "/home/tester/.config" in sb.fs_readable
    assert sb.fs_denied == ["/home/tester/.ssh"]
    assert sb.env == {"EDITOR": "vi", "DIR": "${HOME}"}  # env is never expanded
