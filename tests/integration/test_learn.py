# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sandlock learn`: the profile learned from one run of a script that reads a file, writes one in
a directory, connects to a local TCP server and binds a port runs that script under `sandlock run
--profile-file` with nothing more, and fails without any one of the learned entries; the learn
run leaves the disk untouched; a reader of ~/.ssh gets a warning and no grant; --merge keeps an
existing profile's entries and its ${HOME} text; --timeout ends the run and still writes the
profile; usage errors."""

import json
import os
import re
import socket
import threading
import tomllib

import pytest

from conftest import PY, run, sandlock

JOB = """\
import socket, sys
data = open(sys.argv[1]).read()
with open(sys.argv[2], "w") as f:
    f.write(data.upper())
c = socket.create_connection(("127.0.0.1", int(sys.argv[3])))
c.sendall(b"ping")
c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[4])))
s.listen()
s.close()
print("job done")
"""


class Server:
    """A TCP server on 127.0.0.1 that records what each connection sent."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.got = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.got.append(conn.recv(64))

    def close(self):
        self.sock.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def world(tmp_path):
    """A HOME, a working directory with the job, its input and its output directory, a server."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "out").mkdir()
    (work / "data" / "input.txt").write_text("hello\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "job.py").write_text(JOB)
    server = Server()
    w = {
        "home": home,
        "work": work,
        "result": work / "out" / "result.txt",
        "server": server,
        "bind": free_port(),
        "env": dict(os.environ, HOME=str(home)),
    }
    w["cmd"] = [PY, str(tmp_path / "bin" / "job.py"), str(work / "data" / "input.txt"),
                str(w["result"]), str(server.port), str(w["bind"])]
    yield w
    server.close()


def learn(w, *args, cmd=None, timeout=120):
    return sandlock("learn", *args, "--", *(cmd or w["cmd"]), cwd=w["work"], env=w["env"],
                    timeout=timeout)


def expanded(home, entries):
    return [e.replace("${HOME}", str(home)) for e in entries]


def without(text, key, value):
    """The profile @text with @value taken out of the list @key (in its section)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(rf"{key} = (\[.*\])$", line)
        if m:
            items = tomllib.loads(f"v = {m.group(1)}")["v"]
            if value in items:
                items.remove(value)
                lines[i] = f"{key} = {json.dumps(items)}"
                return "\n".join(lines) + "\n"
    raise AssertionError(f"{value!r} is not in {key}: {text}")


@pytest.fixture
def learned(world, tmp_path):
    """The job's profile, learned once: (world, profile path, its text, learn's stderr)."""
    prof = tmp_path / "job.toml"
    p = learn(world, "-o", str(prof))
    assert p.returncode == 0, p.stderr.decode()
    return world, prof, prof.read_text(), p


def test_learn_leaves_the_disk_untouched(learned):
    w, prof, text, p = learned
    assert b"job done" in p.stdout  # the job ran to its end
    assert w["server"].got == [b"ping"]  # its connection went through
    assert not w["result"].exists()  # its write was staged and thrown away
    assert sorted(os.listdir(w["work"] / "out")) == []


def test_learned_profile_holds_what_the_job_used(learned):
    w, prof, text, p = learned
    doc = tomllib.loads(text)
    fs, net = doc["filesystem"], doc["network"]
    assert str(w["work"] / "data") in fs["read"]
    assert str(w["work"].parent / "bin") in fs["read"]
    assert fs["write"] == [str(w["work"] / "out")]
    assert f"tcp://127.0.0.1:{w['server'].port}" in net["allow"]
    assert net["allow_bind"] == [str(w["bind"])]
    assert doc["program"]["exec"] == PY and doc["program"]["args"] == w["cmd"][1:]
    assert doc["limits"]["processes"] >= 2 and doc["limits"]["open_files"] >= 256


def test_learned_profile_runs_the_job(learned):
    w, prof, text, p = learned
    r = run("--profile-file", str(prof), cwd=w["work"], env=w["env"], timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert b"job done" in r.stdout
    assert w["result"].read_text() == "HELLO\n"  # the write landed this time
    assert w["server"].got == [b"ping", b"ping"]


def test_learned_profile_runs_as_a_named_profile(learned, tmp_path):
    w, prof, text, p = learned
    profiles = tmp_path / "xdg" / "sandlock" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "job.toml").write_text(text)
    env = dict(w["env"], XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    r = run("-p", "job", cwd=w["work"], env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert w["result"].read_text() == "HELLO\n"


@pytest.mark.parametrize("entry", ["read", "write", "connect", "bind"])
def test_learned_profile_without_an_entry_fails(learned, tmp_path, entry):
    w, prof, text, p = learned
    # Each entry taken out: that step of the job fails with EACCES, the steps before it pass.
    key, value, line = {
        "read": ("read", str(w["work"] / "data"), b"data = open(sys.argv[1]).read()"),
        "write": ("write", str(w["work"] / "out"), b'with open(sys.argv[2], "w") as f:'),
        "connect": ("allow", f"tcp://127.0.0.1:{w['server'].port}", b"sock.connect(sa)"),
        "bind": ("allow_bind", str(w["bind"]), b"s.bind((\"127.0.0.1\""),
    }[entry]
    cut = tmp_path / "cut.toml"
    cut.write_text(without(text, key, value))
    r = run("--profile-file", str(cut), cwd=w["work"], env=w["env"], timeout=120)
    assert r.returncode == 1, r.stderr.decode()
    assert line in r.stderr and b"PermissionError: [Errno 13] Permission denied" in r.stderr
    assert b"job done" not in r.stdout


READ_SECRET = "import sys; print(open(sys.argv[1]).read().strip())"


def test_a_reader_of_ssh_gets_no_grant(world, tmp_path):
    key = world["home"] / ".ssh" / "id_test"
    key.parent.mkdir()
    key.write_text("secret-key\n")
    prof = tmp_path / "ssh.toml"
    p = learn(world, "-o", str(prof), cmd=[PY, "-c", READ_SECRET, str(key)])
    assert p.returncode == 0, p.stderr.decode()
    assert b"secret-key" in p.stdout  # the learn run could read it
    assert f"warning: not granted: {key}".encode() in p.stderr
    doc = tomllib.loads(prof.read_text())
    grants = expanded(world["home"], doc["filesystem"].get("read", []) +
                      doc["filesystem"].get("write", []))
    assert not [g for g in grants if str(key) == g or str(key).startswith(g + "/")]
    r = run("--profile-file", str(prof), cwd=world["work"], env=world["env"], timeout=120)
    assert r.returncode == 1 and b"PermissionError" in r.stderr
    assert b"secret-key" not in r.stdout


def test_home_listed_is_granted_whole_with_its_keys_denied(world, tmp_path):
    key = world["home"] / ".ssh" / "id_test"
    key.parent.mkdir()
    key.write_text("secret-key\n")
    (world["home"] / "notes.txt").write_text("n\n")
    prof = tmp_path / "ls.toml"
    listing = [PY, "-c", "import os, sys; print(sorted(os.listdir(sys.argv[1])))",
               str(world["home"])]
    p = learn(world, "-o", str(prof), cmd=listing)
    assert p.returncode == 0, p.stderr.decode()
    assert f"warning: granted whole: {world['home']} (read)".encode() in p.stderr
    fs = tomllib.loads(prof.read_text())["filesystem"]
    assert "${HOME}" in fs["read"] and fs["deny"] == ["${HOME}/.ssh"]
    r = run("--profile-file", str(prof), cwd=world["work"], env=world["env"], timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert b"'.ssh', 'notes.txt'" in r.stdout  # the listing the command needed
    r = run("--profile-file", str(prof), "--", PY, "-c", READ_SECRET, str(key),
            cwd=world["work"], env=world["env"], timeout=120)
    assert r.returncode == 1 and b"PermissionError" in r.stderr  # the keys are denied
    # Control: the notes beside them read under the same profile.
    r = run("--profile-file", str(prof), "--", PY, "-c", READ_SECRET,
            str(world["home"] / "notes.txt"), cwd=world["work"], env=world["env"], timeout=120)
    assert r.returncode == 0 and r.stdout == b"n\n", r.stderr.decode()


def test_home_paths_are_written_as_home(world, tmp_path):
    cfg = world["home"] / "cfg" / "settings"
    cfg.parent.mkdir()
    cfg.write_text("x\n")
    prof = tmp_path / "home.toml"
    p = learn(world, "-o", str(prof), cmd=[PY, "-c", READ_SECRET, str(cfg)])
    assert p.returncode == 0, p.stderr.decode()
    text = prof.read_text()
    assert '"${HOME}/cfg"' in text
    read = tomllib.loads(text)["filesystem"]["read"]
    assert "${HOME}/cfg" in read and not [g for g in read if g.startswith(str(world["home"]))]
    r = run("--profile-file", str(prof), cwd=world["work"], env=world["env"], timeout=120)
    assert r.returncode == 0, r.stderr.decode()


def test_merge_keeps_entries_and_their_home_text(world, tmp_path):
    (world["home"] / "notes").mkdir()
    old = tmp_path / "old.toml"
    old.write_text('# mine\n[filesystem]\nread = ["${HOME}/notes", \'/usr/share\']\n\n'
                   '[limits]\nprocesses = 50\n')
    p = learn(world, "--merge", str(old), "-o", str(old))
    assert p.returncode == 0, p.stderr.decode()
    text = old.read_text()
    assert '"${HOME}/notes"' in text and "'/usr/share'" in text  # as written
    doc = tomllib.loads(text)
    assert str(world["work"] / "data") in doc["filesystem"]["read"]  # the new ones added
    assert doc["limits"]["processes"] == 50  # the file's limit kept
    assert doc["network"]["allow_bind"] == [str(world["bind"])]
    r = run("--profile-file", str(old), cwd=world["work"], env=world["env"], timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert world["result"].read_text() == "HELLO\n"


def test_merge_of_a_broken_profile_is_refused(world, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[filesystem]\nread = 5\n")
    p = learn(world, "--merge", str(bad), "-o", str(tmp_path / "new.toml"))
    assert p.returncode == 1
    assert p.stderr.decode().startswith(f"sandlock: --merge {bad}:")
    assert not (tmp_path / "new.toml").exists()
    assert world["server"].got == []  # refused before the command ran


def test_an_output_that_cannot_be_written_is_refused_before_the_run(world, tmp_path):
    p = learn(world, "-o", str(tmp_path / "no" / "such" / "job.toml"))
    assert p.returncode == 2
    out = tmp_path / "no" / "such" / "job.toml"
    assert p.stderr.decode() == f"sandlock: -o {out}: No such file or directory\n"
    assert world["server"].got == []


def test_timeout_still_writes_the_profile(world, tmp_path):
    prof = tmp_path / "slow.toml"
    code = "import sys, time; open(sys.argv[1]).read(); print('read', flush=True); time.sleep(60)"
    p = learn(world, "--timeout", "3", "-o", str(prof),
              cmd=[PY, "-c", code, str(world["work"] / "data" / "input.txt")])
    assert p.returncode == 124, p.stderr.decode()
    assert b"warning: timeout after 3s" in p.stderr
    assert str(world["work"] / "data") in tomllib.loads(prof.read_text())["filesystem"]["read"]


def test_profile_to_stdout_and_the_commands_output_to_stderr(world):
    p = learn(world, cmd=[PY, "-c", "print('from the command')"])
    assert p.returncode == 0, p.stderr.decode()
    assert p.stderr == b"from the command\n"
    assert "from the command" not in p.stdout.decode().splitlines()
    assert tomllib.loads(p.stdout.decode())["program"]["exec"] == PY


@pytest.mark.parametrize("args,message", [
    ([], "sandlock: no command given"),
    (["--timeout", "soon", "--", "true"], "sandlock: --timeout: invalid value 'soon'"),
    (["--bogus", "--", "true"], "sandlock: unknown flag: --bogus"),
])
def test_usage_errors(args, message):
    p = sandlock("learn", *args)
    assert p.returncode == 2
    assert p.stderr.decode().startswith(message)
