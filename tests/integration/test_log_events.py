# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sandlock run --log-events=FILE`: every decision of the run, allowed ones included, as one
JSON object per line in FILE, keys in the documented order (seq, syscall, category, pid, ppid,
comm always; the rest only where the event has them). One probe makes an allowed open, an
allowed connect, a denied open (three times over) and a denied connect; the file is checked
line by line against what the probe did (its pid, its parent), and stderr stays free of denial
lines unless --log-denials is given too. The control: the same probe without the flag writes no
file and prints the same results."""

import errno
import json
import os
import socket

import pytest

from conftest import PY, landlock_abi, require, run
from test_denials import BASE, PROBE, log_lines, pathlib_real

ORDER = ["seq", "syscall", "category", "pid", "ppid", "comm", "verdict", "error", "judged",
         "first", "path", "access", "host", "port", "family", "protocol", "amount", "reason",
         "hint"]
ALWAYS = ORDER[:7]

# argv: an allowed file, a denied file, an allowed port, a denied port (both on 127.0.0.1).
# Prints [ppid, read errnos, connect errnos].
MIXED = """
ok, bad, port_ok, port_bad = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
reads = []
for p in (ok, bad, bad, bad):
    try:
        with open(p) as f:
            f.read()
        reads.append(0)
    except OSError as e:
        reads.append(e.errno)
conns = []
for port in (port_ok, port_bad):
    s = socket.socket()
    s.settimeout(10)
    conns.append(s.connect_ex(("127.0.0.1", port)))
    s.close()
done([os.getppid(), reads, conns], True)
"""


@pytest.fixture
def setup(tmp_path):
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")
    ok_dir = pathlib_real(tmp_path / "ok")
    bad_dir = pathlib_real(tmp_path / "bad")
    ok, bad = os.path.join(ok_dir, "f"), os.path.join(bad_dir, "f")
    for p in (ok, bad):
        with open(p, "w") as f:
            f.write("x")
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        socks.append(s)
    port_ok, port_bad = (s.getsockname()[1] for s in socks)
    yield {"ok": ok, "ok_dir": ok_dir, "bad": bad, "bad_dir": bad_dir, "port_ok": port_ok,
           "port_bad": port_bad, "tmp": os.path.realpath(tmp_path),
           "flags": ["-r", ok_dir, "--net-allow", f"127.0.0.1:{port_ok}"],
           "args": [ok, bad, str(port_ok), str(port_bad)]}
    for s in socks:
        s.close()


def mixed(setup, *log_flags):
    r = run(*log_flags, *BASE, *setup["flags"], "--", PY, "-I", "-c", PROBE + MIXED,
            *setup["args"], timeout=60)
    out = r.stdout.decode().splitlines()
    assert r.returncode == 0 and out[0].startswith("pid "), (r.stdout, r.stderr)
    return int(out[0].split()[1]), json.loads(out[-1]), r.stderr.decode(errors="replace")


def read_events(path):
    """Every line of @path as a JSON object, checked against the documented key order."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert text.endswith("\n"), text[-200:]
    events = []
    for line in text.splitlines():
        ev = json.loads(line)
        assert isinstance(ev, dict), line
        keys = list(ev)
        assert keys[:7] == ALWAYS, line
        assert keys == [k for k in ORDER if k in ev], line  # documented order, nothing else
        assert ev["verdict"] in ("allow", "deny", "audit"), line
        assert isinstance(ev["seq"], int) and isinstance(ev["pid"], int), line
        events.append(ev)
    seqs = [ev["seq"] for ev in events]
    assert len(set(seqs)) == len(seqs), seqs
    return events


def expected_result(setup):
    # The allowed file is read; the denied one refused three times; the allowed port reached,
    # the other refused by the supervisor (a rule exists, none covers it).
    return [[0, errno.EACCES, errno.EACCES, errno.EACCES], [0, errno.ECONNREFUSED]]


def test_every_event_as_a_json_line(setup):
    log = os.path.join(setup["tmp"], "events.jsonl")
    pid, res, err = mixed(setup, f"--log-events={log}")
    ppid = res[0]
    assert res[1:] == expected_result(setup)
    assert log_lines(err) == [], err  # the JSON goes to the file only
    events = read_events(log)
    mine = [ev for ev in events if ev["pid"] == pid]
    for ev in mine:
        assert ev["ppid"] == ppid, ev
        # The name is the caller's when it called: the exec that made it python3 was made
        # under the launcher's name.
        if ev["syscall"] not in ("execve", "execveat"):
            assert ev["comm"] == "python3", ev

    # The allowed open and connect: verdict allow, the object, no reason or hint.
    opens = [ev for ev in mine if ev.get("path") == setup["ok"] and ev["verdict"] == "allow"]
    assert opens, mine
    for ev in opens:
        assert ev["category"] == "file" and ev["syscall"] in ("open", "openat", "openat2"), ev
        assert "O_RDONLY" in ev["access"].split("|"), ev
        assert not {"error", "reason", "hint"} & set(ev), ev
    conns = [ev for ev in mine if ev["syscall"] == "connect" and ev["verdict"] == "allow"]
    assert [(ev["host"], ev["port"]) for ev in conns] == [("127.0.0.1", setup["port_ok"])], conns
    ev = conns[0]
    assert (ev["category"], ev.get("family"), ev.get("protocol")) == ("network", "inet", "tcp")
    assert not {"error", "reason", "hint"} & set(ev), ev

    # The denied open: three events, the first of its object marked; the kernel's, judged.
    denied = [ev for ev in mine if ev.get("path") == setup["bad"]]
    assert len(denied) == 3, denied
    assert [ev.get("first", False) for ev in denied] == [True, False, False], denied
    bad_dir = setup["bad_dir"]
    for ev in denied:
        assert ev["verdict"] == "deny" and ev["error"] == "EACCES" and ev["judged"] is True, ev
        assert ev["category"] == "file", ev
        assert ev["reason"] == f"no read grant covers {bad_dir}", ev
        assert ev["hint"] == f"add -r {bad_dir}", ev

    # The denied connect: the supervisor's own decision (not judged).
    refused = [ev for ev in mine if ev["syscall"] == "connect" and ev["verdict"] == "deny"]
    assert len(refused) == 1, refused
    ev = refused[0]
    port = setup["port_bad"]
    assert (ev["host"], ev["port"], ev["error"]) == ("127.0.0.1", port, "ECONNREFUSED"), ev
    assert "judged" not in ev and ev.get("first") is True, ev
    assert ev["reason"] == f"no net_allow rule covers 127.0.0.1:{port}", ev
    assert ev["hint"] == f"add --net-allow 127.0.0.1:{port}", ev

    # The probe's own exec, and nothing of any other process than the sandbox's.
    execs = [ev for ev in events if ev["syscall"] in ("execve", "execveat")]
    assert any(ev.get("access") == "exec" and ev["verdict"] == "allow" and
               os.path.realpath(ev.get("path", "")) == os.path.realpath(PY) for ev in execs), execs

    # The control: the same run without the flag gives the same results and writes no file.
    os.unlink(log)
    _, res_plain, err_plain = mixed(setup)
    assert res_plain[1:] == res[1:]
    assert err_plain == "" and not os.path.exists(log)


def test_events_and_denials_together(setup):
    log = os.path.join(setup["tmp"], "events.jsonl")
    pid, res, err = mixed(setup, f"--log-events={log}", "--log-denials")
    assert res[1:] == expected_result(setup)
    bad, bad_dir, port = setup["bad"], setup["bad_dir"], setup["port_bad"]
    lines = log_lines(err)
    assert len(lines) == 2, err  # the denied open once (deduplicated), the connect
    assert lines[0].startswith(f'sandlock: denied openat("{bad}", O_RDONLY'), lines
    assert lines[0].endswith(f") by pid {pid} (python3): no read grant covers {bad_dir}; "
                             f"add -r {bad_dir}"), lines
    assert lines[1] == (f"sandlock: denied connect(127.0.0.1:{port}) by pid {pid} (python3): "
                        f"no net_allow rule covers 127.0.0.1:{port}; "
                        f"add --net-allow 127.0.0.1:{port}"), lines
    events = read_events(log)
    assert sum(ev["verdict"] == "deny" for ev in events if ev["pid"] == pid) == 4, events


def test_names_that_are_not_plain_stay_one_valid_line(tmp_path):
    # A quote, a backslash, a newline and a byte that is not UTF-8 in a denied file's name.
    d = pathlib_real(tmp_path / "odd")
    name = os.path.join(d, 'a"b\\c\nsandlock: denied x() by pid 1 (y): z').encode() + b"\xff"
    with open(name, "w") as f:
        f.write("x")
    log = os.path.join(os.path.realpath(tmp_path), "events.jsonl")
    code = "try:\n    open(sys.argv[1].encode('utf-8', 'surrogateescape'))\n" \
           "except OSError as e:\n    done(e.errno, True)\ndone(0, False)\n"
    r = run(f"--log-events={log}", "--log-denials", *BASE, "--", PY, "-I", "-c", PROBE + code,
            os.fsdecode(name), timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.decode().splitlines()[-1]) == errno.EACCES
    events = [ev for ev in read_events(log) if ev["verdict"] == "deny"]
    assert len(events) == 1, events
    assert events[0]["path"].startswith(os.path.join(d, 'a"b\\c\nsandlock: denied')), events
    assert events[0]["reason"] == f"no read grant covers {d}", events
    # On stderr: one line, the newline escaped (the name cannot forge a line of its own).
    lines = log_lines(r.stderr.decode(errors="replace"))
    assert len(lines) == 1, r.stderr
    assert '\\"b\\\\c\\nsandlock: denied x()' in lines[0], lines
