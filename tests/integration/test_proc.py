# SPDX-License-Identifier: LGPL-2.1-or-later
"""/proc behind the supervisor: with a grant covering /proc, Landlock leaves /proc out and the
supervisor serves each open that reaches it, decided on the file reached: another process's
/proc/<pid> and the denied files (kallsyms, keys, ...) are refused under every spelling, the
sandbox's own processes are served. /sys/firmware, /sys/kernel/security and /sys/class/net are
carved out of every grant. Controls: the same opens outside the sandbox succeed."""

import errno
import json
import os
import subprocess

import pytest

from conftest import PY, RACE, SYSTEM_READ, run

PROBE = r"""
import json, os, sys
out = {}
for name in sys.argv[1:]:
    try:
        if name.startswith("at:"):  # relative to a descriptor of /proc
            d = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
            fd = os.open(name[3:], os.O_RDONLY, dir_fd=d)
        else:
            fd = os.open(name, os.O_RDONLY)
        os.read(fd, 16)
        out[name] = "ok"
    except OSError as e:
        out[name] = e.errno
print(json.dumps(out))
"""


def probe(flags, names, **kw):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", PROBE, *names, timeout=60, **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def outside(names):
    r = subprocess.run([PY, "-c", PROBE, *names], capture_output=True, timeout=60)
    return json.loads(r.stdout)


def test_denied_files_under_every_spelling(tmp_path):
    link = tmp_path / "link"
    link.symlink_to("/proc/kallsyms")
    names = ["/proc/kallsyms", "/proc/./kallsyms", "//proc/kallsyms", "/proc/../proc/kallsyms",
             "at:kallsyms", str(link), "/proc/keys", "/proc/key-users"]
    assert set(outside(names).values()) == {"ok"}  # control
    got = probe(["-r", "/proc", "-r", str(tmp_path)], names)
    assert got == {n: 13 for n in names}


def test_other_processes_are_refused_own_served():
    host = os.getpid()
    names = [f"/proc/{host}/status", f"/proc/{host}/environ", "/proc/1/status",
             "/proc/self/status", "/proc/thread-self/status", "/proc/self/maps",
             "at:self/stat", "/proc/cpuinfo", "/etc/mtab"]
    assert set(outside(names).values()) == {"ok"}
    got = probe(["-r", "/proc", "-r", "/etc"], names)
    assert got == {f"/proc/{host}/status": 13, f"/proc/{host}/environ": 13,
                   "/proc/1/status": 13, "/proc/self/status": "ok",
                   "/proc/thread-self/status": "ok", "/proc/self/maps": "ok",
                   "at:self/stat": "ok", "/proc/cpuinfo": "ok", "/etc/mtab": "ok"}


def test_ps_shows_only_the_sandbox():
    r = run(*SYSTEM_READ, "-r", "/proc", "--", "ps", "-e", "-o", "comm=", timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["ps"]
    control = subprocess.run(["ps", "-e", "-o", "comm="], capture_output=True, text=True)
    assert len(control.stdout.split()) > 1


def test_a_child_of_the_sandbox_is_served():
    code = ("import os, time\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    time.sleep(1); os._exit(0)\n"
            "print(open(f'/proc/{pid}/status').readline().split()[0])\n"
            "os.kill(pid, 9)\n")
    r = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c", code, timeout=60)
    assert r.stdout == b"Name:\n", r.stderr


def test_a_racing_thread_never_reaches_a_denied_file():
    # Control: outside, the same loop reads kallsyms many times.
    # kallsyms lines: "ffffffff81000000 T _text"; /proc/self/stat starts with the pid.
    race = [PY, "-c", RACE, "/proc/self/stat", "/proc//kallsyms", "[0-9a-f]{16} "]
    r = subprocess.run(race, capture_output=True, timeout=120)
    assert int(r.stdout.split()[1]) > 0
    r = run(*SYSTEM_READ, "-r", "/proc", "--", *race, timeout=300)
    opened, leaked = map(int, r.stdout.split())
    assert opened > 0 and leaked == 0


def test_sys_denials():
    names = [n for n in ("/sys/class/net/lo/mtu", "/sys/kernel/security/lsm") if
             os.path.exists(n)]
    assert names  # this machine has them
    assert set(outside(names).values()) == {"ok"}
    assert probe(["-r", "/sys"], names) == {n: 13 for n in names}
    # Without a supervisor too: Landlock alone.
    assert probe(["-r", "/sys", "--no-supervisor"], names) == {n: 13 for n in names}


VIEWS = r"""
import json, os, time
time.sleep(0.5)
load = open("/proc/loadavg").read().split()
mounts = [l.split()[1] for l in open("/proc/mounts")]
info = [l.split()[4] for l in open("/proc/self/mountinfo")]
print(json.dumps({"uptime": float(open("/proc/uptime").read().split()[0]),
                  "procs": load[3].split("/")[1], "mounts": sorted(mounts),
                  "info": sorted(info), "hostname": open("/etc/hostname").read()}))
"""


def test_synthesized_views():
    r = run(*SYSTEM_READ, "-r", "/proc", "-r", "/etc", "--name", "viewbox", "--", PY, "-c",
            VIEWS, timeout=60)
    got = json.loads(r.stdout)
    with open("/proc/uptime") as f:
        host_up = float(f.read().split()[0])
    assert 0.5 <= got["uptime"] < min(30, host_up)  # since the sandbox started
    assert got["procs"] == "1"  # the sandbox's own processes
    with open("/proc/mounts") as f:
        host_mounts = [l.split()[1] for l in f]
    assert set(got["mounts"]) < set(host_mounts)  # only the mounts it reaches
    assert "/proc" in got["mounts"] and "/" in got["mounts"] and got["info"] == got["mounts"]
    assert got["hostname"] == "viewbox\n"
    # Control: without a grant covering /proc, the host's (here: no /proc at all).
    r = run(*SYSTEM_READ, "-r", "/etc", "--", PY, "-c", "print(open('/etc/hostname').read())",
            timeout=60)
    with open("/etc/hostname") as f:
        assert r.stdout.decode().strip() == f.read().strip()


def test_grant_spellings_all_served(tmp_path):
    # However the grant names /proc, it is served: no spelling leaves it to Landlock whole.
    for grant in ("/proc/", "//proc", "/usr/../proc"):
        assert probe(["-r", grant], ["/proc/kallsyms", "/proc/self/status"]) == {
            "/proc/kallsyms": 13, "/proc/self/status": "ok"}, grant


def test_per_thread_fd_and_net_files():
    code = (PROBE.replace("print(json.dumps(out))", "") +
            "import threading\n"
            "tid = threading.get_native_id()\n"
            "for name in [f'/proc/self/task/{tid}/status', '/proc/self/fdinfo/0']:\n"
            "    out[name.replace(str(tid), 'TID')] = 'ok' if os.path.exists(name) and "
            "os.open(name, os.O_RDONLY) >= 0 else 'no'\n"
            "fd = os.open('/proc/1/environ', os.O_PATH)\n"
            "out['opath'] = 'ok' if fd >= 0 else 'no'\n"
            "print(json.dumps(out))\n")
    r = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c", code, "/proc/net/tcp", "/proc/net/dev",
            "/proc/self/net/if_inet6", timeout=60)
    got = json.loads(r.stdout)
    # The socket tables are served, the interfaces' files are not (the route socket shows
    # only lo); an O_PATH open grants nothing and is the kernel's.
    assert got == {"/proc/net/tcp": "ok", "/proc/net/dev": 13, "/proc/self/net/if_inet6": 13,
                   "/proc/self/task/TID/status": "ok", "/proc/self/fdinfo/0": "ok",
                   "opath": "ok"}
    assert set(outside(["/proc/net/dev", "/proc/self/net/if_inet6"]).values()) == {"ok"}


def test_not_served_to_a_process_confined_further():
    from conftest import BUILD
    floor = str(BUILD / "bench" / "seccomp-floor")  # stacks a seccomp filter, then execs
    flags = [*SYSTEM_READ, "-r", "/proc", "-r", str(BUILD / "bench")]
    r = run(*flags, "--", floor, "head", "-c", "5", "/proc/self/status", timeout=60)
    assert r.returncode == 1 and b"Permission denied" in r.stderr
    r = run(*flags, "--", "head", "-c", "5", "/proc/self/status", timeout=60)  # control
    assert r.stdout == b"Name:"


RESTRICT = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def can():
    try:
        os.close(os.open("/proc/self/status", os.O_RDONLY)); return "ok"
    except OSError as e:
        return e.errno
before = can()
attr = (ctypes.c_uint64 * 3)(1 << 2, 0, 0)  # handled: READ_FILE only
fd = libc.syscall(444, attr, 8, 0)          # landlock_create_ruleset
libc.prctl(38, 1, 0, 0, 0)                  # PR_SET_NO_NEW_PRIVS
libc.syscall(446, fd, 0)                    # landlock_restrict_self
print(before, can())
"""


def test_a_nested_landlock_domain_stops_the_serving():
    r = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c", RESTRICT, timeout=60)
    assert r.stdout.split() == [b"ok", b"13"], r.stderr


def test_the_proc_listing_shows_the_sandbox_only():
    code = ("import json, os\n"
            "print(json.dumps(sorted(int(e) for e in os.listdir('/proc') if e.isdigit())))\n")
    r = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c", code, timeout=60)
    pids = json.loads(r.stdout)
    assert len(pids) == 1 and os.getpid() not in pids  # the python itself
    # Other entries are all there, and a directory elsewhere lists as it is.
    r = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c",
            "import os; e = os.listdir('/proc'); print('self' in e, 'cpuinfo' in e, "
            "sorted(os.listdir('/usr')) == sorted(os.listdir('/usr')))", timeout=60)
    assert r.stdout == b"True True True\n"
    assert os.getpid() in [int(e) for e in os.listdir("/proc") if e.isdigit()]  # control


LEGACY = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
buf = ctypes.create_string_buffer(1 << 16)
pids = []
while True:
    n = libc.syscall(78, fd, buf, len(buf))  # the legacy getdents
    if n <= 0:
        break
    off = 0
    while off < n:
        reclen = int.from_bytes(buf.raw[off + 16:off + 18], "little")
        name = buf.raw[off + 18:off + reclen].split(b"\0")[0]
        if name.isdigit():
            pids.append(int(name))
        off += reclen
print(len(pids), os.getpid() in pids)
"""


def test_the_legacy_getdents_is_filtered_too():
    r = subprocess.run([PY, "-c", LEGACY], capture_output=True, timeout=60)
    assert int(r.stdout.split()[0]) > 1  # control: every process
    r = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c", LEGACY, timeout=60)
    assert r.stdout == b"1 True\n", r.stderr


def test_host_names_and_mounts_do_not_show():
    code = ("import os\n"
            "os.chdir('/etc')\n"
            "print(open('/etc//hostname').read().strip(), open('hostname').read().strip(),"
            " open('/proc/sys/kernel/hostname').read().strip())\n"
            "try:\n"
            "    open('/proc/self/mountstats')\n"
            "except OSError as e:\n"
            "    print(e.errno)\n")
    r = run(*SYSTEM_READ, "-r", "/proc", "-r", "/etc", "--name", "quiet", "--", PY, "-c", code,
            timeout=60)
    assert r.stdout == b"quiet quiet quiet\n13\n", r.stderr


MOUNT_READS = """
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
req = ctypes.create_string_buffer(struct.pack("IIQQQ", 32, 0, 0xffffffffffffffff, 0, 0))
out = (ctypes.c_uint64 * 64)()
ctypes.set_errno(0)
listed = libc.syscall(458, req, out, 64, 0)  # listmount(LSMT_ROOT)
print(listed if listed >= 0 else -ctypes.get_errno())
"""


def test_the_host_mount_table_cannot_be_listed():
    # Control: on the host, listmount lists the mounts (6.8+; ENOSYS on an older kernel).
    r = subprocess.run([PY, "-c", MOUNT_READS], capture_output=True, timeout=60)
    host = int(r.stdout)
    if host == -errno.ENOSYS:
        pytest.skip("listmount (Linux 6.8) not on this kernel")
    assert host > 1, r.stderr
    # In the sandbox: ENOSYS, as on a kernel without it (programs fall back to /proc).
    for extra in ([], ["-r", "/proc"]):
        r = run(*SYSTEM_READ, *extra, "--", PY, "-c", MOUNT_READS, timeout=60)
        assert r.stdout == b"%d\n" % -errno.ENOSYS, (extra, r.stdout, r.stderr)
