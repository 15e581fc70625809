# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sandlock run --log-denials`: one line on stderr per denial, naming the call, its object, the
process that made it, the rule or missing grant and the hint that lifts it:

  sandlock: denied SYSCALL(OBJECT) by pid PID (COMM): REASON[; HINT]

Every kind of denial is made by a probe that prints its pid first and then what the call
returned (an errno, or success). Each case checks, in one go: the line is exactly the one the
denial should produce (the pid is the probe's); the probe's own result is the same with and
without --log-denials (logging changes nothing the sandbox answers); and the hint, applied, is
the negative control: the same run with the flag the hint names succeeds, exits 0 and logs
nothing. Then: repeats of one denial give one line, a burst of distinct ones is rate-limited
and counted at the end, --log-denials=FILE writes there instead, and a run without denials
prints nothing more than without the flag."""

import errno
import json
import os
import re
import socket
import time

import pytest

from conftest import NR, PRELUDE, PY, SYSTEM_READ, X86_64, landlock_abi, require, run

# What every dynamically linked probe opens outside the system directories at start-up (the
# loader's cache, the time zone Python's start-up reads, and the locale aliases, which
# /usr/share/locale/locale.alias links to): granted, so that the only denial of a run is the
# probe's own.
START = [a for p in ("/etc/ld.so.cache", "/etc/localtime", "/etc/locale.alias")
         if os.path.exists(p) for a in ("-r", p)]
BASE = [*SYSTEM_READ, *START]

raw_syscalls = pytest.mark.skipif(not X86_64, reason="syscall numbers are x86_64's")

# The probe's prelude: its pid on the first line (before anything can kill it), then
# done(result, ok) prints the result as JSON and exits 0 when ok, 1 otherwise.
PROBE = PRELUDE + """\
print("pid", os.getpid(), flush=True)
def done(result, ok):
    out(result)
    sys.exit(0 if ok else 1)
def cstr(s):
    b = ctypes.create_string_buffer(s.encode())
    cstr.keep.append(b)
    return ctypes.addressof(b)
cstr.keep = []
"""


def denial_lines(text):
    return [line for line in text.splitlines() if line.startswith("sandlock: denied ")]


def log_lines(text):
    """The lines of the denial log: each denial and the closing counts."""
    return [line for line in text.splitlines()
            if line.startswith("sandlock: denied ") or
            re.fullmatch(r"sandlock: [0-9]+ (more denials not shown|events dropped)", line)]


def probe(flags, code, *args, log=True, timeout=60):
    """Run @code (after PROBE) under BASE + @flags, with --log-denials when @log. Returns
    (returncode, pid, result lines, stderr text)."""
    pre = ["--log-denials"] if log else []
    r = run(*pre, *BASE, *flags, "--", PY, "-I", "-c", PROBE + code, *args, timeout=timeout)
    out = r.stdout.decode().splitlines()
    assert out and out[0].startswith("pid "), (r.returncode, r.stdout, r.stderr)
    return r.returncode, int(out[0].split()[1]), out[1:], r.stderr.decode(errors="replace")


def matches(line, want):
    """@want: the exact line, a compiled pattern matched in full, or a predicate."""
    if isinstance(want, re.Pattern):
        return want.fullmatch(line) is not None
    if callable(want):
        return want(line)
    return line == want


def check_denial(flags, code, *args, want, fixed, rc=1):
    """The denied run logs exactly one line matching want(pid) (see matches()), exits @rc, and prints what the same run prints without --log-denials;
    the run with @fixed instead of @flags (the hint applied) exits 0 and logs nothing.
    Returns (the denied run's result lines, the fixed run's)."""
    code_l, pid, res_l, err_l = probe(flags, code, *args)
    code_p, _, res_p, err_p = probe(flags, code, *args, log=False)
    assert (code_l, res_l) == (code_p, res_p), (err_l, err_p)
    assert code_l == rc, err_l
    assert denial_lines(err_p) == [], err_p
    lines = log_lines(err_l)
    expected = want(pid)
    assert len(lines) == 1 and matches(lines[0], expected), (lines, expected, err_l)
    code_f, _, res_f, err_f = probe(fixed, code, *args)
    assert code_f == 0, (res_f, err_f)
    assert log_lines(err_f) == [], err_f
    return res_l, res_f


def result(lines):
    return json.loads(lines[-1])


@pytest.fixture
def tree(tmp_path):
    """A real (symlink-free) directory D with D/f ("data"), D/secret ("secret"), and D/bin/true
    (a copy of /bin/true)."""
    d = pathlib_real(tmp_path / "d")
    os.makedirs(os.path.join(d, "bin"))
    for name, content in (("f", "data"), ("secret", "secret")):
        with open(os.path.join(d, name), "w") as f:
            f.write(content)
    true = os.path.realpath("/bin/true")
    with open(true, "rb") as src, open(os.path.join(d, "bin", "true"), "wb") as dst:
        dst.write(src.read())
    os.chmod(os.path.join(d, "bin", "true"), 0o755)
    return d


def pathlib_real(p):
    os.makedirs(p, exist_ok=True)
    return os.path.realpath(p)


# ---- files ----------------------------------------------------------------------------------

# openat(AT_FDCWD, argv[1], argv[2] (flags, decimal), 0644) made raw, so that the flags are
# exactly these (Python's open() adds O_CLOEXEC).
OPENAT = f"""
fd, err = sc({NR.get('openat', 257)}, -100, cstr(sys.argv[1]), int(sys.argv[2]), 0o644)
if fd >= 0:
    os.close(fd)
done(err, err == 0)
"""

O_DIRECTORY = os.O_DIRECTORY


def access_set(text):
    return set(text.split("|"))


def open_line(path, access, reason, hint):
    """want(pid) for a denied openat of @path whose access shows the flags @access (a set: the
    order of the flags is not the point)."""
    def want(pid):
        pattern = re.compile(r'sandlock: denied openat\("' + re.escape(path) +
                             r'", ([A-Z_|]+)\) by pid ' + str(pid) + r" \(python3\): " +
                             re.escape(reason) + "; " + re.escape(hint))

        def match(line):
            m = pattern.fullmatch(line)
            return m is not None and access_set(m.group(1)) == access
        return match
    return want


def check_open(flags, path, oflags, access, reason, hint, fixed):
    res_l, res_f = check_denial(flags, OPENAT, path, str(oflags),
                                want=open_line(path, access, reason, hint), fixed=fixed)
    assert result(res_l) == errno.EACCES
    assert result(res_f) == 0


@raw_syscalls
def test_file_read(tree):
    f = os.path.join(tree, "f")
    check_open([], f, os.O_RDONLY, {"O_RDONLY"}, f"no read grant covers {tree}", f"add -r {tree}",
               fixed=["-r", tree])
    _, pid, _, err = probe([], OPENAT, f, str(os.O_RDONLY))
    (line,) = log_lines(err)
    assert line == (f'sandlock: denied openat("{f}", O_RDONLY) by pid {pid} (python3): '
                    f"no read grant covers {tree}; add -r {tree}")


@raw_syscalls
def test_directory_listing_grants_the_directory_itself(tree):
    sub = os.path.join(tree, "bin")
    oflags = os.O_RDONLY | O_DIRECTORY
    check_open([], sub, oflags, {"O_RDONLY", "O_DIRECTORY"}, f"no read grant covers {sub}",
               f"add -r {sub}", fixed=["-r", sub])


@raw_syscalls
def test_file_write_existing(tree):
    f = os.path.join(tree, "f")
    check_open(["-r", tree], f, os.O_WRONLY, {"O_WRONLY"}, f"no write grant covers {tree}",
               f"add -w {tree}", fixed=["-w", tree])


@raw_syscalls
def test_file_create_names_the_nearest_existing_parent(tree):
    new = os.path.join(tree, "new.txt")
    oflags = os.O_WRONLY | os.O_CREAT
    check_open(["-r", tree], new, oflags, {"O_WRONLY", "O_CREAT"},
               f"no write grant covers {tree}", f"add -w {tree}", fixed=["-w", tree])
    assert os.path.exists(new)  # created by the fixed run


MKDIR = f"""
r, err = sc({NR.get('mkdir', 83)}, cstr(sys.argv[1]), 0o755)
done(err, err == 0)
"""


@raw_syscalls
def test_mkdir(tree):
    sub = os.path.join(tree, "sub")

    def want(pid):
        return (f'sandlock: denied mkdir("{sub}", mkdir) by pid {pid} (python3): '
                f"no write grant covers {tree}; add -w {tree}")

    res_l, res_f = check_denial(["-r", tree], MKDIR, sub, want=want, fixed=["-w", tree])
    assert result(res_l) == errno.EACCES and result(res_f) == 0
    assert os.path.isdir(sub)


@raw_syscalls
def test_proc_self_is_the_callers():
    # /proc/self, resolved for the log, is the calling process's directory: never the pid of
    # another process (the supervisor's own, where it resolved the name).
    def want(pid):
        return re.compile(r'sandlock: denied openat\("/proc/(self|' + str(pid) + r')/status", '
                          r"O_RDONLY\) by pid " + str(pid) + r" \(python3\): no read grant "
                          r"covers /proc; add -r /proc")

    res_l, res_f = check_denial([], OPENAT, "/proc/self/status", str(os.O_RDONLY), want=want,
                                fixed=["-r", "/proc"])
    assert result(res_l) == errno.EACCES
    assert result(res_f) == 0


@raw_syscalls
@pytest.mark.parametrize("path,reason", [
    ("/proc/1/status", "/proc/1 is not a process of the sandbox"),
    ("/proc/kallsyms", "/proc/kallsyms is never served in a sandbox"),
])
def test_proc_refused_by_the_supervisor(path, reason):
    # With /proc granted the supervisor serves it and refuses these opens itself (EACCES);
    # no flag lets them through, so the line has no hint and there is no fixed run.
    flags = ["-r", "/proc"]
    argv = [path, str(os.O_RDONLY)]
    code_l, pid, res_l, err_l = probe(flags, OPENAT, *argv)
    code_p, _, res_p, _ = probe(flags, OPENAT, *argv, log=False)
    assert (code_l, res_l) == (code_p, res_p) == (1, [str(errno.EACCES)]), err_l
    assert log_lines(err_l) == [f'sandlock: denied openat("{path}", O_RDONLY) by pid {pid} '
                                f"(python3): {reason}"], err_l


@raw_syscalls
def test_proc_write_needs_a_write_grant():
    # Served by the supervisor, a write to the caller's own /proc file needs a write grant.
    def want(pid):
        return re.compile(r'sandlock: denied openat\("/proc/' + str(pid) + r'/comm", O_WRONLY\) '
                          f"by pid {pid} " + r"\(python3\): no write grant covers /proc; "
                          r"add -w /proc")

    res_l, res_f = check_denial(["-r", "/proc"], OPENAT, "/proc/self/comm", str(os.O_WRONLY),
                                want=want, fixed=["-r", "/proc", "-w", "/proc"])
    assert result(res_l) == errno.EACCES
    assert result(res_f) == 0


# The probe execs argv[1] itself (the line's pid is its own); a copy of /bin/true exits 0.
EXEC = """
try:
    os.execv(sys.argv[1], [sys.argv[1]])
except OSError as e:
    done(e.errno, False)
"""


def test_exec(tree):
    prog = os.path.join(tree, "bin", "true")
    bindir = os.path.join(tree, "bin")

    def want(pid):
        return (f'sandlock: denied execve("{prog}", exec) by pid {pid} (python3): '
                f"no read grant covers {bindir}; add -r {bindir}")

    res_l, res_f = check_denial([], EXEC, prog, want=want, fixed=["-r", bindir])
    assert result(res_l) == errno.EACCES
    assert res_f == []  # the program ran (true prints nothing)


@raw_syscalls
def test_fs_deny(tree):
    secret = os.path.join(tree, "secret")
    deny = ["-r", tree, "--fs-deny", secret]
    check_open(deny, secret, os.O_RDONLY, {"O_RDONLY"}, f"fs_denied covers {secret}",
               f"remove --fs-deny {secret}", fixed=["-r", tree])


def test_a_child_process_is_named(tree):
    # The denial of a process the command started: its own pid and name, not the command's.
    # cat's own message goes elsewhere: it shares stderr with the log, and a log line may land
    # inside it.
    f = os.path.join(tree, "f")
    script = 'cat "$1" >/dev/null 2>&1 & echo "pid $!"; wait $!; r=$?; echo "$r"; exit "$r"'

    def sh(flags, log=True):
        pre = ["--log-denials"] if log else []
        r = run(*pre, *BASE, *flags, "--", "/bin/sh", "-c", script, "sh", f,
                timeout=60)
        out = r.stdout.decode().split()
        return r.returncode, int(out[1]), out[2:], r.stderr.decode(errors="replace")

    code, pid, res, err = sh([])
    code_p, _, res_p, err_p = sh([], log=False)
    assert (code, res) == (code_p, res_p) == (1, ["1"]), (err, err_p)
    lines = log_lines(err)
    assert len(lines) == 1, err
    assert re.fullmatch(r'sandlock: denied openat\("' + re.escape(f) + r'", O_RDONLY[A-Z_|]*\) '
                        f"by pid {pid} " + r"\(cat\): " +
                        re.escape(f"no read grant covers {tree}; add -r {tree}"), lines[0]), lines
    code, _, res, err = sh(["-r", tree])
    assert (code, res) == (0, ["0"]) and log_lines(err) == [], err


# ---- network --------------------------------------------------------------------------------

CONNECT = """
s = socket.socket()
s.settimeout(10)
e = s.connect_ex(("127.0.0.1", int(sys.argv[1])))
done(e, e == 0)
"""


@pytest.fixture
def tcp_port():
    """A live TCP listener on 127.0.0.1 (its port), accepting what reaches it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield s.getsockname()[1]
    s.close()


def connect_line(port):
    return lambda pid: (f"sandlock: denied connect(127.0.0.1:{port}) by pid {pid} (python3): "
                        f"no net_allow rule covers 127.0.0.1:{port}; "
                        f"add --net-allow 127.0.0.1:{port}")


@pytest.mark.parametrize("rules", [[], ["--net-allow", "tcp://127.0.0.1:1"]],
                         ids=["no-rules-kernel", "other-rule-supervisor"])
def test_connect(tcp_port, rules):
    # Without any rule Landlock refuses (EACCES); with a rule for another port the supervisor
    # decides on the child's behalf (ECONNREFUSED): both are logged.
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")
    res_l, res_f = check_denial(rules, CONNECT, str(tcp_port), want=connect_line(tcp_port),
                                fixed=[*rules, "--net-allow", f"127.0.0.1:{tcp_port}"])
    assert result(res_l) == (errno.ECONNREFUSED if rules else errno.EACCES)
    assert result(res_f) == 0


def test_net_deny(tcp_port):
    # The hint names the rule in its canonical form (a single address without its /32).
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")
    allow = ["--net-allow", f"tcp://*:{tcp_port}"]

    def want(pid):
        return (f"sandlock: denied connect(127.0.0.1:{tcp_port}) by pid {pid} (python3): "
                "net_deny covers 127.0.0.1; remove --net-deny 127.0.0.1")

    res_l, res_f = check_denial([*allow, "--net-deny", "127.0.0.1/32"], CONNECT,
                                str(tcp_port), want=want, fixed=allow)
    assert result(res_l) == errno.ECONNREFUSED
    assert result(res_f) == 0


SENDTO = """
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"probe", ("127.0.0.1", int(sys.argv[1])))
    done(0, True)
except OSError as e:
    done(e.errno, False)
"""


def test_udp_send_without_a_rule():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")
    srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    srv.bind(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    # A UDP rule for another port: UDP sockets may be made, this destination is not covered.
    other = ["--net-allow", "udp://127.0.0.1:1"]

    def want(pid):
        return (f"sandlock: denied sendto(127.0.0.1:{port}/udp) by pid {pid} (python3): "
                f"no net_allow rule covers udp 127.0.0.1:{port}; "
                f"add --net-allow udp://127.0.0.1:{port}")

    try:
        res_l, res_f = check_denial(other, SENDTO, str(port), want=want,
                                    fixed=[*other, "--net-allow", f"udp://127.0.0.1:{port}"])
        assert result(res_l) == errno.ECONNREFUSED
        assert result(res_f) == 0
        srv.settimeout(5)
        assert srv.recv(64) == b"probe"  # the fixed run's datagram, the only one that left
        srv.setblocking(False)
        with pytest.raises(BlockingIOError):
            srv.recv(64)
    finally:
        srv.close()


UDP_SOCKET = """
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    done(0, True)
except OSError as e:
    done(e.errno, False)
"""


def test_udp_socket_without_a_rule():
    # The seccomp filter's socket rules refuse it (EPERM) before any address is known: in
    # logging mode the supervisor answers it for them, and says which rule is missing.
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")

    def want(pid):
        return (f"sandlock: denied socket() by pid {pid} (python3): no UDP rule; "
                "add --net-allow udp://HOST:PORT")

    res_l, res_f = check_denial([], UDP_SOCKET, want=want,
                                fixed=["--net-allow", "udp://127.0.0.1:9"])
    assert result(res_l) == errno.EPERM
    assert result(res_f) == 0


BIND = """
b = socket.socket()
try:
    b.bind(("127.0.0.1", int(sys.argv[1])))
    done(0, True)
except OSError as e:
    done(e.errno, False)
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_bind():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")
    port = free_port()

    def want(pid):
        return (f"sandlock: denied bind(127.0.0.1:{port}) by pid {pid} (python3): "
                f"no bind grant covers port {port}; add --net-allow-bind {port}")

    res_l, res_f = check_denial([], BIND, str(port), want=want,
                                fixed=["--net-allow-bind", str(port)])
    assert result(res_l) == errno.EACCES
    assert result(res_f) == 0


UNIX_CONNECT = """
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    done(0, True)
except OSError as e:
    done(e.errno, False)
"""


def test_unix_socket_needs_a_write_grant(tmp_path):
    d = pathlib_real(tmp_path / "srv")
    path = os.path.join(d, "sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(8)

    def want(pid):
        return re.compile(r'sandlock: denied connect\("' + re.escape(path) + r'"(, [a-z_]+)?\) '
                          f"by pid {pid} " + r"\(python3\): " +
                          re.escape(f"no write grant covers {d}; add -w {d}"))

    try:
        res_l, res_f = check_denial(["-r", d], UNIX_CONNECT, path, want=want, fixed=["-w", d])
        assert result(res_l) == errno.EACCES
        assert result(res_f) == 0
    finally:
        srv.close()


UNIX_BIND = """
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.bind(sys.argv[1])
    done(0, True)
except OSError as e:
    done(e.errno, False)
"""


def test_unix_socket_bind_needs_a_write_grant(tmp_path):
    # Landlock refuses the name (MAKE_SOCK) in the kernel; the log judges the bind the
    # supervisor left to it.
    d = pathlib_real(tmp_path / "srv")
    path = os.path.join(d, "sock")

    def want(pid):
        return (f'sandlock: denied bind("{path}", make_sock) by pid {pid} (python3): '
                f"no write grant covers {d}; add -w {d}")

    res_l, res_f = check_denial(["-r", d], UNIX_BIND, path, want=want, fixed=["-w", d])
    assert result(res_l) == errno.EACCES
    assert result(res_f) == 0
    assert os.path.exists(path)  # the fixed run's socket, the only one made


# ---- limits ---------------------------------------------------------------------------------

HOG = """
b = bytearray(int(sys.argv[1]) << 20)
done(len(b) >> 20, True)
"""


def test_memory_limit():
    def want(pid):
        return re.compile(r"sandlock: denied ([a-z_0-9]+)\(([0-9]+ bytes)?\) by pid " +
                          str(pid) + r" \(python3\): memory limit 50M reached; "
                          r"raise --max-memory")

    res_l, res_f = check_denial(["-m", "50M"], HOG, "120", want=want, fixed=["-m", "400M"],
                                rc=137)
    assert res_l == []  # killed before it could print
    assert result(res_f) == 120


# Forks children that wait on a pipe until the parent is done forking (at most 5); prints
# [children made, the errno of the refused fork or 0].
FORKS = """
rd, wr = os.pipe()
kids, err = [], 0
for i in range(5):
    try:
        p = os.fork()
    except OSError as e:
        err = e.errno
        break
    if p == 0:
        os.close(wr)
        os.read(rd, 1)
        os._exit(0)
    kids.append(p)
os.close(wr)
for p in kids:
    os.waitpid(p, 0)
done([len(kids), err], err == 0)
"""


def test_process_limit():
    def want(pid):
        return re.compile(r"sandlock: denied (fork|vfork|clone|clone3)\(\) by pid " + str(pid) +
                          r" \(python3\): process limit 2 reached; raise --max-processes")

    res_l, res_f = check_denial(["--max-processes", "2"], FORKS, want=want,
                                fixed=["--max-processes", "10"])
    assert result(res_l) == [1, errno.EAGAIN]
    assert result(res_f) == [5, 0]


# ---- syscalls -------------------------------------------------------------------------------

SYSCALL = """
args = [int(a, 0) for a in sys.argv[1:]]
r, err = sc(*args)
done(err, err == 0)
"""


@raw_syscalls
@pytest.mark.parametrize("name,args", [
    ("mount", [NR["mount"], 0, 0, 0, 0, 0]),
    ("keyctl", [NR["keyctl"], 0xffff, 0, 0, 0, 0]),
])
def test_blocked_syscall_without_a_hint(name, args):
    # No flag re-allows these: the line has no hint, and there is no fixed run to make.
    argv = [str(a) for a in args]
    code_l, pid, res_l, err_l = probe([], SYSCALL, *argv)
    code_p, _, res_p, _ = probe([], SYSCALL, *argv, log=False)
    assert (code_l, res_l) == (code_p, res_p) == (1, [str(errno.EPERM)])
    assert log_lines(err_l) == [f"sandlock: denied {name}() by pid {pid} (python3): "
                                "blocked syscall"], err_l


@raw_syscalls
@pytest.mark.parametrize("name,args,what", [
    ("ioctl", [NR["ioctl"], 0, 0x5412, 0], "TIOCSTI"),  # TIOCSTI on stdin, no byte to push
    ("clone", [NR["clone"], 0x10000000 | 17, 0, 0, 0, 0], "CLONE_NEWUSER"),  # | SIGCHLD
    ("prctl", [NR["prctl"], 0x59616d61, 0, 0, 0, 0], "PR_SET_PTRACER"),
])
def test_argument_filtered_syscall(name, args, what):
    # The filter refuses these calls by their arguments alone; no flag allows them.
    argv = [str(a) for a in args]
    code_l, pid, res_l, err_l = probe([], SYSCALL, *argv)
    code_p, _, res_p, err_p = probe([], SYSCALL, *argv, log=False)
    assert (code_l, res_l) == (code_p, res_p) == (1, [str(errno.EPERM)]), (err_l, err_p)
    assert log_lines(err_l) == [f"sandlock: denied {name}() by pid {pid} (python3): "
                                f"{what} is refused in every sandbox"], err_l


# shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600), then IPC_RMID when it was made.
SHM = f"""
r, err = sc({NR['shmget']}, 0, 4096, 0o1000 | 0o600)
if r >= 0:
    sc({NR['shmctl']}, r, 0, 0)
done(err, err == 0)
"""


@raw_syscalls
def test_blocked_syscall_whose_group_may_be_reallowed():
    def want(pid):
        return (f"sandlock: denied shmget() by pid {pid} (python3): blocked syscall; "
                "add --extra-allow-syscall sysv_ipc")

    res_l, res_f = check_denial([], SHM, want=want, fixed=["--extra-allow-syscall", "sysv_ipc"])
    assert result(res_l) == errno.EPERM
    assert result(res_f) == 0


GETCWD = f"""
buf = ctypes.create_string_buffer(4096)
r, err = sc({NR['getcwd']}, ctypes.addressof(buf), 4096)
done(err, err == 0)
"""


@raw_syscalls
def test_extra_deny_syscall(tmp_path):
    cwd = ["--cwd", os.path.realpath(tmp_path)]

    def want(pid):
        return (f"sandlock: denied getcwd() by pid {pid} (python3): extra_deny_syscalls blocks "
                "getcwd; remove --extra-deny-syscall getcwd")

    res_l, res_f = check_denial([*cwd, "--extra-deny-syscall", "getcwd"], GETCWD, want=want,
                                fixed=cwd)
    assert result(res_l) == errno.EPERM
    assert result(res_f) == 0


# ---- the log itself ---------------------------------------------------------------------------

# Opens each path of argv[2:], argv[1] times over; prints how many failed with EACCES and the
# seconds the loop took.
OPENS = """
t0 = time.monotonic()
denied = 0
for _ in range(int(sys.argv[1])):
    for p in sys.argv[2:]:
        try:
            os.close(os.open(p, os.O_RDONLY))
        except PermissionError:
            denied += 1
done([denied, time.monotonic() - t0], True)
"""


def test_repeats_of_one_denial_give_one_line(tree):
    f = os.path.join(tree, "f")
    code, pid, res, err = probe([], "import time\n" + OPENS, "100", f)
    assert code == 0 and result(res)[0] == 100, err
    lines = log_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f'sandlock: denied openat("{f}", O_RDONLY'), lines
    assert lines[0].endswith(f"by pid {pid} (python3): no read grant covers {tree}; "
                             f"add -r {tree}"), lines


def test_a_burst_is_rate_limited_and_counted(tmp_path):
    d = pathlib_real(tmp_path / "many")
    paths = [os.path.join(d, f"f{i:03}") for i in range(200)]
    for p in paths:
        with open(p, "w") as f:
            f.write("x")
    t0 = time.monotonic()
    code, _, res, err = probe([], "import time\n" + OPENS, "1", *paths)
    wall = time.monotonic() - t0
    denied, secs = result(res)
    assert code == 0 and denied == 200, err
    lines = log_lines(err)
    shown = [line for line in lines if line.startswith("sandlock: denied ")]
    assert lines[-1].endswith(" more denials not shown"), lines[-3:]
    held = int(lines[-1].split()[1])
    assert len(shown) + held == 200, (len(shown), held)
    # At most 20 a second: the burst lasts under the run's wall time.
    assert 1 <= len(shown) <= 20 * (int(wall) + 1), (len(shown), wall, secs)
    assert set(lines[:-1]) == set(shown)  # the count comes last
    for line in shown:
        assert re.fullmatch(r'sandlock: denied openat\("' + re.escape(d) + r'/f[0-9]{3}", '
                            r"O_RDONLY[A-Z_|]*\) by pid [0-9]+ \(python3\): no read grant "
                            r"covers " + re.escape(d) + "; add -r " + re.escape(d), line), line


def test_log_to_a_file(tree, tmp_path):
    f = os.path.join(tree, "f")
    log = os.path.join(os.path.realpath(tmp_path), "denials.log")
    r = run(f"--log-denials={log}", *BASE, "--", PY, "-I", "-c", PROBE + OPENAT, f,
            str(os.O_RDONLY), timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    pid = int(r.stdout.decode().split()[1])
    assert log_lines(err) == [], err
    with open(log) as fh:
        got = fh.read().splitlines()
    line = (f'denied openat("{f}", O_RDONLY) by pid {pid} (python3): no read grant covers '
            f"{tree}; add -r {tree}")
    # The file holds the same lines as stderr would.
    assert got == ["sandlock: " + line], got


def test_no_denials_prints_nothing_more(tree):
    f = os.path.join(tree, "f")
    code, _, res, err = probe(["-r", tree], OPENAT, f, str(os.O_RDONLY))
    code_p, _, res_p, err_p = probe(["-r", tree], OPENAT, f, str(os.O_RDONLY), log=False)
    assert (code, res) == (code_p, res_p) == (0, ["0"])
    assert err == err_p == "", err
