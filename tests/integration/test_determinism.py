# SPDX-License-Identifier: LGPL-2.1-or-later
"""The [determinism] section: deterministic_dirs (listings sorted by name by the supervisor) and
random_seed (getrandom and the random devices from the seed's ChaCha20 streams), and the
identity knobs uid and gid (--user, a user namespace). Each behaviour against its control: the
same run without the field."""

import json
import os
import shutil
import subprocess
import time

from conftest import PY, SANDLOCK, SYSTEM_READ, nested_env, require, run

# Created in this order: a directory lists them in an order of its own (tmpfs: newest first,
# ext4: by hash), not sorted.
NAMES = ["m", "b", "y", "Alpha", "a.b", "10", "9", "_x", "q"]

LISTINGS = r"""
import ctypes, glob, json, os, struct, sys
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def raw(nr):  # every name getdents64 (217) or the legacy getdents (78) gives, in order
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    buf, names = ctypes.create_string_buffer(512), []
    while True:
        n = libc.syscall(nr, fd, buf, 512)
        if n <= 0:
            break
        off = 0
        while off < n:
            reclen = struct.unpack_from("H", buf.raw, off + 16)[0]
            start = off + (19 if nr == 217 else 18)
            names.append(buf.raw[start:buf.raw.index(b"\0", start)].decode())
            off += reclen
    os.close(fd)
    return names
print(json.dumps({"listdir": os.listdir(d), "scandir": [e.name for e in os.scandir(d)],
                  "glob": [os.path.basename(p) for p in glob.glob(d + "/*")],
                  "getdents64": raw(217), "getdents": raw(78)}))
"""


def listings(tmp_path, flags):
    r = run(*SYSTEM_READ, "-r", str(tmp_path), *flags, "--", PY, "-c", LISTINGS,
            str(tmp_path / "d"), timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_listings_are_sorted(tmp_path):
    (tmp_path / "d").mkdir()
    for n in NAMES:
        (tmp_path / "d" / n).write_text("")
    control = listings(tmp_path, [])
    assert sorted(control["listdir"]) == sorted(NAMES)
    assert control["listdir"] != sorted(NAMES)  # the kernel's own order
    got = listings(tmp_path, ["--deterministic-dirs"])
    want = sorted(NAMES)  # bytewise: "10" < "9" < "Alpha" < "_x" < "a.b" < "b"
    assert got == {"listdir": want, "scandir": want, "glob": [n for n in want if n[0] != "."],
                   "getdents64": [".", ".."] + want, "getdents": [".", ".."] + want}


def test_scandir_of_etc_is_sorted():
    code = "import os, json; print(json.dumps([e.name for e in os.scandir('/etc')]))"
    got = run(*SYSTEM_READ, "-r", "/etc", "--deterministic-dirs", "--", PY, "-c", code,
              timeout=30)
    names = json.loads(got.stdout)
    assert names == sorted(names) and sorted(names) == sorted(os.listdir("/etc"))
    control = json.loads(run(*SYSTEM_READ, "-r", "/etc", "--", PY, "-c", code,
                             timeout=30).stdout)
    assert sorted(control) == sorted(names) and control != names  # the kernel's own order


def test_a_directory_listable_but_not_searchable(tmp_path):
    # Mode 0444: the child may list it (read), not enter it (search). The sorted listing is
    # made through the child's own open directory, with its rights.
    d = tmp_path / "d"
    d.mkdir()
    for n in NAMES:
        (d / n).write_text("")
    d.chmod(0o444)
    try:
        control = listings(tmp_path, [])
        got = listings(tmp_path, ["--deterministic-dirs"])
    finally:
        d.chmod(0o755)
    assert sorted(control["listdir"]) == sorted(NAMES)
    assert got["listdir"] == sorted(NAMES)


SEEK = r"""
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.opendir.restype = ctypes.c_void_p
libc.readdir.restype = ctypes.c_void_p
libc.readdir.argtypes = libc.telldir.argtypes = libc.rewinddir.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
def name(ent):  # struct dirent: d_ino, d_off, d_reclen, d_type, d_name
    return ctypes.string_at(ent + 19).decode()
d = libc.opendir(sys.argv[1].encode())
every = []
while True:
    ent = libc.readdir(d)
    if not ent:
        break
    every.append(name(ent))
libc.rewinddir(d)
for _ in range(1000):
    libc.readdir(d)
pos = libc.telldir(d)
first = [name(libc.readdir(d)) for _ in range(5)]
libc.seekdir(d, pos)
again = [name(libc.readdir(d)) for _ in range(5)]
libc.rewinddir(d)
print(json.dumps({"every": every, "first": first, "again": again,
                  "rewound": name(libc.readdir(d))}))
"""


def test_a_large_directory_with_telldir_and_seekdir(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    names = [f"f{(i * 7919) % 3001:05d}" for i in range(3001)]  # many buffers' worth
    for n in names:
        (d / n).write_text("")
    for flags, ordered in (([], False), (["--deterministic-dirs"], True)):
        r = run(*SYSTEM_READ, "-r", str(tmp_path), *flags, "--", PY, "-c", SEEK, str(d),
                timeout=60)
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert sorted(got["every"]) == sorted([".", ".."] + names)  # each once
        assert (got["every"] == sorted(got["every"])) == ordered
        assert got["first"] == got["again"]  # seekdir back to telldir's position
        assert got["rewound"] == got["every"][0]
        if ordered:
            assert got["first"] == sorted(names)[998:1003]


# random_seed ------------------------------------------------------------------------------

RANDOM = ["-r", "/dev/urandom", "-r", "/dev/random"]
DRAW = r"""
import os, sys
with open("/dev/urandom", "rb") as f:
    a = f.read(32)
with open("/dev/random", "rb") as f:
    b = f.read(32)
print(a.hex(), b.hex(), os.urandom(64).hex())
"""


def draw(flags):
    r = run(*SYSTEM_READ, *RANDOM, *flags, "--", PY, "-c", DRAW, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().split()


def keystream(seed, stream, n):
    """ChaCha20 (RFC 8439) under the documented key and nonce, by openssl (not sandlock)."""
    key = seed.to_bytes(8, "little") + bytes(24)
    iv = bytes(4) + stream.to_bytes(4, "little") + b"sandlock"  # counter 0, then the nonce
    out = subprocess.run(["openssl", "enc", "-chacha20", "-K", key.hex(), "-iv", iv.hex()],
                         input=bytes(n), capture_output=True, check=True).stdout
    return out.hex()


def test_a_seed_gives_the_same_bytes_every_run():
    one, again, other = draw(["--random-seed", "1"]), draw(["--random-seed", "1"]), \
        draw(["--random-seed", "999"])
    assert one == again
    assert all(x != y for x, y in zip(one, other))  # another seed, other bytes
    # Control: without a seed two runs differ.
    assert all(x != y for x, y in zip(draw([]), draw([])))
    od = ["--", "od", "-An", "-tx1", "-N", "64", "/dev/urandom"]
    runs = [run(*SYSTEM_READ, *RANDOM, "--random-seed", "1", *od, timeout=30).stdout
            for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0].split()) == 64
    assert run(*SYSTEM_READ, *RANDOM, *od, timeout=30).stdout != \
        run(*SYSTEM_READ, *RANDOM, *od, timeout=30).stdout


def test_the_streams_are_the_documented_chacha20():
    require(shutil.which("openssl"), "openssl (the independent ChaCha20)")
    urandom, random_, getrandom = draw(["--random-seed", "7"])
    # The first and second opens of the random devices are streams 1 and 2; getrandom is
    # stream 0, of which Python's start takes some bytes before os.urandom's.
    assert urandom == keystream(7, 1, 32)
    assert random_ == keystream(7, 2, 32)
    assert getrandom in keystream(7, 0, 4096)
    assert getrandom not in keystream(8, 0, 4096)  # control: another seed's stream


def test_reads_of_the_random_device_are_whole():
    # A read of up to 64 KiB gets it all, O_NONBLOCK or not, the same bytes in every run.
    code = ("import os\nfd = os.open('/dev/urandom', os.O_RDONLY | os.O_NONBLOCK)\n"
            "a = os.read(fd, 65536)\nb = os.read(fd, 16)\nprint(len(a), len(b), (a + b).hex())")
    runs = [run(*SYSTEM_READ, *RANDOM, "--random-seed", "4", "--", PY, "-c", code,
                timeout=30).stdout.split() for _ in range(3)]
    assert runs[0][:2] == [b"65536", b"16"] and runs[0] == runs[1] == runs[2]
    # Control: without a seed, the same reads give other bytes each run.
    control = [run(*SYSTEM_READ, *RANDOM, "--", PY, "-c", code, timeout=30).stdout.split()
               for _ in range(2)]
    assert control[0][2] != control[1][2]


def test_getrandom_flags_as_the_kernel_checks_them():
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "buf = ctypes.create_string_buffer(8)\nfor flags in (0, 1, 2, 4, 6, 8):\n"
            "    n = libc.getrandom(buf, 8, flags)\n"
            "    print(n if n >= 0 else -ctypes.get_errno())\n")
    for flags in ([], ["--random-seed", "3"]):
        r = run(*SYSTEM_READ, *flags, "--", PY, "-c", code, timeout=60)
        # GRND_INSECURE|GRND_RANDOM (6) and an unknown flag (8): EINVAL, as the kernel says.
        assert r.stdout.decode().split() == ["8", "8", "8", "8", "-22", "-22"], r.stderr


REPLAY = r"""
import os, random, sys, time
print(int(time.time()))
print(random.random(), os.urandom(8).hex(), sorted(os.listdir(sys.argv[1])) == os.listdir(sys.argv[1]))
print(os.listdir(sys.argv[1]))
with open("/dev/urandom", "rb") as f:
    print(f.read(16).hex())
pid = os.fork()  # a descendant draws from the same streams, after its parent
if pid == 0:
    print(os.urandom(8).hex(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print(os.urandom(8).hex())
"""


def test_a_replay_is_byte_identical(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for n in NAMES:
        (d / n).write_text("")
    flags = [*SYSTEM_READ, *RANDOM, "-r", str(tmp_path), "--random-seed", "42",
             "--deterministic-dirs", "--time-start", "2000-06-15T00:00:00Z", "--", PY, "-c",
             REPLAY, str(d)]
    first, second = run(*flags, timeout=60), run(*flags, timeout=60)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert first.stdout.split(b"\n")[0] == b"961027200"  # the start, to the second
    assert first.stdout.split(b"\n")[1].endswith(b"True")
    control = [run(*SYSTEM_READ, *RANDOM, "-r", str(tmp_path), "--", PY, "-c", REPLAY, str(d),
                   timeout=60).stdout for _ in range(2)]
    assert control[0] != control[1]


def test_no_randomize_memory_repeats_the_addresses():
    # The child's own map (stack, heap, libraries, vdso): the same in two runs with the knob.
    maps = ["-r", "/proc", "--", "cat", "/proc/self/maps"]
    runs = [run(*SYSTEM_READ, "--no-randomize-memory", *maps, timeout=30) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert b"[stack]" in runs[0].stdout and runs[0].stdout == runs[1].stdout
    control = [run(*SYSTEM_READ, *maps, timeout=30).stdout for _ in range(2)]
    assert control[0] != control[1]  # randomized without it


# uid, gid (--user) --------------------------------------------------------------------------

def ids(flags):
    r = run(*SYSTEM_READ, *flags, "--", "sh", "-c", "id -u; id -g", timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().split()


def test_user_maps_the_ids():
    assert ids(["--user", "0:0"]) == ["0", "0"]
    assert ids(["--user", "1000:100"]) == ["1000", "100"]
    assert ids(["--no-supervisor", "--user", "7:8"]) == ["7", "8"]
    # Control: without it, the caller's own.
    assert ids([]) == [str(os.geteuid()), str(os.getegid())]


def test_user_keeps_no_host_privilege(tmp_path):
    # Inside, uid 0; outside, the caller's own ids, the one mapping the namespace has.
    r = run(*SYSTEM_READ, "-r", "/proc", "--user", "0:0", "--", "cat", "/proc/self/uid_map",
            "/proc/self/gid_map", timeout=30)
    assert r.stdout.decode().split() == ["0", str(os.geteuid()), "1",
                                         "0", str(os.getegid()), "1"], r.stderr
    if os.geteuid() == 0:
        return  # root outside stays root on the host's files (docs/decisions.md)
    # A root-owned host file, writable by the policy: refused by its owner's permissions.
    target = "/etc/hostname"
    assert os.stat(target).st_uid == 0 and not os.access(target, os.W_OK)
    code = f"open({target!r}, 'a')"
    for flags in (["--user", "0:0"], []):  # control: the same refusal without the namespace
        r = run(*SYSTEM_READ, "-w", target, *flags, "--", PY, "-c", code, timeout=30)
        assert r.returncode == 1 and b"PermissionError" in r.stderr, r.stderr


def test_user_namespaces_unavailable():
    # Nested in a sandbox, whose filter refuses unshare: a clear error, nothing run.
    inner = [SANDLOCK, "run", *SYSTEM_READ, "--no-supervisor", "--user", "0:0", "--", "true"]
    # The outer sandbox grants /proc for a sanitized build's runtime (test_nesting.py).
    outer = [*SYSTEM_READ, "-r", "/proc", "-r", os.path.dirname(SANDLOCK), "--no-supervisor",
             "--"]
    r = run(*outer, *inner, timeout=30, env=nested_env())
    assert r.returncode == 127  # could not be started
    assert r.stderr.decode().splitlines() == [
        "sandlock: --user: user namespaces are not available here "
        "(unshare(CLONE_NEWUSER): Operation not permitted)"]
    inner.remove("--user")
    inner.remove("0:0")
    assert run(*outer, *inner, timeout=30, env=nested_env()).returncode == 0  # control


# time_start --------------------------------------------------------------------------------

CLOCKS = r"""
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec m;
	clock_gettime(CLOCK_MONOTONIC, &m);
	return m.tv_sec + m.tv_nsec / 1e9;
}

int main(void)
{
	struct timespec ts, until;
	struct timeval tv;
	time_t t = time(NULL);
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gettimeofday(&tv, NULL);
	gmtime_r(&t, &tm);
	printf("%d %d %d\n", tm.tm_year + 1900, ts.tv_sec - t <= 1, tv.tv_sec - t <= 1);
	/* An absolute sleep to one second from now on the wall clock. */
	double m0 = mono();
	until = ts;
	until.tv_sec += 1;
	clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, NULL);
	printf("%.1f\n", mono() - m0);
	/* A wall-clock timerfd set to one second from now, absolute. */
	int fd = timerfd_create(CLOCK_REALTIME, 0);
	struct itimerspec its = { 0 };
	clock_gettime(CLOCK_REALTIME, &its.it_value);
	its.it_value.tv_sec += 1;
	m0 = mono();
	uint64_t n;
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 || read(fd, &n, 8) != 8)
		return 2;
	printf("%.1f\n", mono() - m0);
	/* A wall-clock POSIX timer, absolute, waited for with sigwait. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* Made before two monotonic timers (their ids are listed first), and set twice with the
	 * same struct, as a program that retries does. */
	timer_t timer, other[2];
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	if (timer_create(CLOCK_REALTIME, NULL, &timer) < 0 ||
	    timer_create(CLOCK_MONOTONIC, &none, &other[0]) < 0 ||
	    timer_create(CLOCK_MONOTONIC, &none, &other[1]) < 0)
		return 3;
	clock_gettime(CLOCK_REALTIME, &its.it_value);
	its.it_value.tv_sec += 1;
	m0 = mono();
	int sig;
	if (timer_settime(timer, TIMER_ABSTIME, &its, NULL) < 0 ||
	    timer_settime(timer, TIMER_ABSTIME, &its, NULL) < 0 || sigwait(&set, &sig))
		return 4;
	printf("%.1f\n", mono() - m0);
	/* A condition variable's timed wait (its clock the wall clock: futex with
	 * FUTEX_CLOCK_REALTIME), twice with the same deadline, as a wait retried in a loop. */
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	m0 = mono();
	pthread_mutex_lock(&mu);
	int w1 = pthread_cond_timedwait(&cv, &mu, &deadline);
	int w2 = pthread_cond_timedwait(&cv, &mu, &deadline);
	pthread_mutex_unlock(&mu);
	printf("%.1f %d %d\n", mono() - m0, w1 == ETIMEDOUT, w2 == ETIMEDOUT);
	return 0;
}
"""


def build_clocks(tmp_path):
    require(shutil.which("gcc"), "gcc (builds the clock probe)")
    src = tmp_path / "clocks.c"
    src.write_text(CLOCKS)
    for kind, extra in (("static", ["-static"]), ("dynamic", [])):
        subprocess.run(["gcc", "-O2", *extra, "-o", str(tmp_path / kind), str(src), "-pthread"],
                       check=True, capture_output=True)
    return tmp_path


START = ["--time-start", "2000-06-15T00:00:00Z"]


def test_time_start_for_static_and_dynamic_programs(tmp_path):
    d = build_clocks(tmp_path)
    for kind in ("static", "dynamic"):
        for cmd in ([str(d / kind)], ["sh", "-c", f"exec {d / kind}"]):  # also after exec
            r = run(*SYSTEM_READ, "-r", str(d), *START, "--", *cmd, timeout=60)
            assert r.returncode == 0, (kind, r.returncode, r.stderr)
            year, sleep, tfd, timer, cond = r.stdout.decode().splitlines()
            assert year == "2000 1 1", kind  # time, clock_gettime, gettimeofday agree
            # Each absolute deadline one second ahead on the sandbox's clock fires after
            # about a second (a deadline left on the host's clock would have fired at once).
            for waited in (sleep, tfd, timer, cond.split()[0]):
                assert 0.9 <= float(waited) <= 3.0, (kind, r.stdout)
            assert cond.split()[1:] == ["1", "1"]  # both waits timed out
    # Control: without time_start, this year.
    r = run(*SYSTEM_READ, "-r", str(d), "--", str(d / "static"), timeout=60)
    assert r.stdout.decode().split()[0] == str(time.gmtime().tm_year)


def test_time_start_in_python_and_date():
    code = ("import datetime, time\nt0, m0 = time.time(), time.monotonic()\ntime.sleep(1)\n"
            "print(datetime.datetime.utcfromtimestamp(t0).year, round(time.time() - t0),"
            " round(time.monotonic() - m0))")
    r = run(*SYSTEM_READ, *START, "--", PY, "-c", code, timeout=60)
    assert r.stdout.decode().split() == ["2000", "1", "1"], r.stderr
    r = run(*SYSTEM_READ, *START, "--", "date", "-u", "+%Y-%m-%d", timeout=30)
    assert r.stdout == b"2000-06-15\n"
    r = run(*SYSTEM_READ, "--time-start", "2030-01-01T12:00:00+02:00", "--", "date", "-u",
            "+%Y-%m-%dT%H", timeout=30)
    assert r.stdout == b"2030-01-01T10\n"
    # Unix seconds, on the command line and as a TOML integer in a profile.
    r = run(*SYSTEM_READ, "--time-start", "961027200.5", "--", "date", "-u", "+%F %T", timeout=30)
    assert r.stdout == b"2000-06-15 00:00:00\n", r.stderr
    r = run(*SYSTEM_READ, "--time-start", "1e9", "--", "true", timeout=30)
    assert r.returncode == 2 and b"is not an RFC 3339 date-time" in r.stderr
    r = run(*SYSTEM_READ, "--", "date", "+%Y", timeout=30)  # control
    assert r.stdout.decode().strip() == str(time.localtime().tm_year)


def test_time_start_as_a_toml_integer(tmp_path):
    profile = tmp_path / "p.toml"
    read = ", ".join(f'"{d}"' for d in SYSTEM_READ[1::2])
    profile.write_text(f"[determinism]\ntime_start = 961027200\n[filesystem]\nread = [{read}]\n")
    r = run("--profile-file", str(profile), "--", "date", "-u", "+%F", timeout=30)
    assert r.stdout == b"2000-06-15\n", r.stderr
    profile.write_text(f"[filesystem]\nread = [{read}]\n")  # control: today
    r = run("--profile-file", str(profile), "--", "date", "-u", "+%Y", timeout=30)
    assert r.stdout.decode().strip() == str(time.gmtime().tm_year)


FOREVER = r"""
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
class TS(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
def forever():  # an absolute sleep to the end of time_t: never returns
    libc.clock_nanosleep(0, 1, ctypes.byref(TS(2**63 - 1, 0)), None)
    print("woke", flush=True)
threading.Thread(target=forever, daemon=True).start()
time.sleep(1)
print("exiting", flush=True)
os._exit(0)
"""


def test_a_sleep_to_the_end_of_time_ends_with_the_sandbox():
    # The deadline does not overflow into the past (it does not return), and the supervisor's
    # wait for it ends when the sandbox does (sandlock exits).
    for flags in ([], START, ["--time-start", "9999-12-31T23:59:59Z"]):
        r = run(*SYSTEM_READ, *flags, "--", PY, "-c", FOREVER, timeout=30)
        assert (r.returncode, r.stdout) == (0, b"exiting\n"), (flags, r.stderr)


def test_far_start_times():
    for start, year in (("2300-01-01T00:00:00Z", "2300"), ("9999-12-31T00:00:00Z", "9999"),
                        ("0001-01-01T00:00:00Z", "1"), ("1600-01-01T00:00:00Z", "1600")):
        r = run(*SYSTEM_READ, "--time-start", start, "--", "date", "-u", "+%-Y", timeout=30)
        assert r.stdout.decode().strip() == year, (start, r.stderr)
    r = run(*SYSTEM_READ, "--", "date", "-u", "+%-Y", timeout=30)  # control: this year
    assert r.stdout.decode().strip() == str(time.gmtime().tm_year)


def test_monotonic_clocks_stay_real():
    # The monotonic clock reads the host's; the wall clock, in the same run, does not (the
    # contrast shows time_start was in force).
    code = "import time; print(time.monotonic(), time.time())"
    before, wall_before = time.monotonic(), time.time()
    r = run(*SYSTEM_READ, *START, "--", PY, "-c", code, timeout=30)
    after, wall_after = time.monotonic(), time.time()
    mono, wall = map(float, r.stdout.split())
    assert before <= mono <= after
    assert not wall_before <= wall <= wall_after and wall < 961027300
