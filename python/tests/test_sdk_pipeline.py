# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pipelines and gathers: stages under their own policies joined by pipes. Only the stage whose
sandbox grants a file can read it, the next one transforms what it is handed; the Result is the
last stage's; a timeout kills every stage; the gather's consumer reads each producer's output
by name through sandlock.inputs and nothing else of theirs. Each behaviour has its control."""

import os
import signal
import threading
import time

import pytest

from conftest import PKG_PARENT, PY, pids_with_argv, process_alive, read_pids, wait_until
from sandlock import Gather, GatherPipeline, NamedStage, Pipeline, SandboxError, Stage

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


def test_two_stages(sandboxes):
    a, b = sandboxes(), sandboxes()
    p = a.cmd(["echo", "hello"]) | b.cmd(["tr", "a-z", "A-Z"])
    assert isinstance(p, Pipeline) and isinstance(a.cmd(["true"]), Stage)
    r = p.run()
    assert (r.success, r.exit_code, r.stdout, r.stderr) == (True, 0, b"HELLO\n", b"")


def test_only_the_first_stage_reads_the_secret(sandboxes, secret):
    reader = sandboxes(fs_readable=[str(secret.parent)])
    upper = sandboxes()
    r = (reader.cmd(["cat", str(secret)]) | upper.cmd(["tr", "a-z", "A-Z"])).run()
    assert (r.success, r.stdout, r.stderr) == (True, b"TOP SECRET\n", b"")
    # Control: the transforming stage alone cannot read it.
    r = upper.run(["cat", str(secret)])
    assert not r.success and r.stdout == b""
    assert b"Permission denied" in r.stderr
    # ... nor can it as the first stage of the same pipeline.
    r = (upper.cmd(["cat", str(secret)]) | reader.cmd(["tr", "a-z", "A-Z"])).run()
    assert r.stdout == b""


def test_three_stages(sandboxes, secret):
    reader = sandboxes(fs_readable=[str(secret.parent)])
    other = sandboxes()
    r = (reader.cmd(["cat", str(secret)]) | other.cmd(["tr", "a-z", "A-Z"])
         | other.cmd(["rev"])).run()
    assert (r.success, r.stdout) == (True, b"TERCES POT\n")


def test_result_is_the_last_stage(sandboxes):
    a = sandboxes()
    r = (a.cmd(["sh", "-c", "echo x; echo first-err >&2; exit 3"])
         | a.cmd(["sh", "-c", "cat; echo last-err >&2; exit 4"])).run()
    assert (r.success, r.exit_code, r.stdout, r.stderr) == (False, 4, b"x\n", b"last-err\n")


def test_stdout_to_a_file(sandboxes, tmp_path):
    a = sandboxes()
    out = tmp_path / "out"
    with open(out, "wb") as f:
        r = (a.cmd(["echo", "hello"]) | a.cmd(["tr", "a-z", "A-Z"])).run(stdout=f)
    assert (r.success, r.stdout) == (True, b"")
    assert out.read_bytes() == b"HELLO\n"
    # Control: the same pipeline without stdout= captures it.
    assert (a.cmd(["echo", "hello"]) | a.cmd(["tr", "a-z", "A-Z"])).run().stdout == b"HELLO\n"


def test_stdout_to_a_descriptor(sandboxes, tmp_path):
    a = sandboxes()
    out = tmp_path / "out"
    with open(out, "wb") as f:
        r = a.cmd(["echo", "one"]).run(stdout=f.fileno())
    assert (r.success, r.stdout) == (True, b"")
    assert out.read_bytes() == b"one\n"


def stage_command(pidfile, sleep):
    return ["sh", "-c", f"echo $$ >> {pidfile}; exec {' '.join(sleep)}"]


def test_pipeline_timeout_kills_every_stage(sandboxes, box, unique_sleep):
    a = sandboxes(fs_writable=[str(box)])
    s1, s2 = unique_sleep(), unique_sleep()
    t0 = time.monotonic()
    r = (a.cmd(stage_command(box / "pids", s1)) | a.cmd(stage_command(box / "pids", s2))).run(
        timeout=0.5)
    assert time.monotonic() - t0 < 10
    assert (r.success, r.exit_code) == (False, 124)
    assert "timed out" in r.error
    read_pids(box / "pids", 2, timeout=0)  # both stages had started
    assert pids_with_argv(s1) == [] and pids_with_argv(s2) == []


def test_pipeline_control_stages_run_on_without_timeout(sandboxes, box, unique_sleep):
    a = sandboxes(fs_writable=[str(box)])
    s1, s2 = unique_sleep(), unique_sleep()
    p = a.cmd(stage_command(box / "pids", s1)) | a.cmd(stage_command(box / "pids", s2))
    out = []
    t = threading.Thread(target=lambda: out.append(p.run()))
    t.start()
    try:
        pids = read_pids(box / "pids", 2)
        assert wait_until(lambda: len(pids_with_argv(s1)) == 1 and len(pids_with_argv(s2)) == 1)
        time.sleep(0.6)
        assert all(process_alive(pid) for pid in pids)
        assert t.is_alive()
    finally:
        for pid in pids_with_argv(s1) + pids_with_argv(s2):
            os.kill(pid, signal.SIGKILL)
        t.join(10)
    assert not t.is_alive()
    assert (out[0].exit_code, out[0].signal) == (137, 9)


def test_pipeline_with_an_unsupported_stage_starts_nothing(sandboxes, unique_sleep):
    first = unique_sleep()
    p = sandboxes().cmd(first) | sandboxes(fs_mount={"/w": "/tmp"}).cmd(["true"])
    with pytest.raises(SandboxError, match="not supported yet: fs_mount"):
        p.run()
    assert pids_with_argv(first) == []  # the stage already started was killed


def test_pipeline_stage_not_found(sandboxes, unique_sleep, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # searchable: ENOENT, not EACCES
    first = unique_sleep()
    r = (sandboxes().cmd(first) | sandboxes().cmd(["sdk-no-such-command"])).run()
    assert (r.success, r.exit_code) == (False, 127)
    assert "No such file or directory" in r.error
    assert pids_with_argv(first) == []


# ---- gather ---------------------------------------------------------------------------------

CONSUMER = """from sandlock import inputs
print(list(inputs.keys()), len(inputs), "data" in inputs, "nope" in inputs)
print(repr(inputs["code"]))
print(repr(inputs["data"]))
print(sorted(inputs.keys()))
print(inputs["data"] is inputs["data"])
try:
    inputs["nope"]
except KeyError:
    print("KeyError")
"""

SNOOP = """import sys
try:
    print(open(sys.argv[1]).read())
except OSError as e:
    print(type(e).__name__, e.errno)
"""


@pytest.fixture
def consumer(sandboxes):
    """A sandbox that can run `from sandlock import inputs` and nothing more."""
    return sandboxes(fs_readable=[PKG_PARENT], env={"PYTHONPATH": PKG_PARENT})


def test_gather_xoa(sandboxes, secret, consumer):
    searcher = sandboxes(fs_readable=[str(secret.parent)])  # produces data
    planner = sandboxes()  # writes code
    g = searcher.cmd(["cat", str(secret)]).as_("data") + planner.cmd(
        ["echo", "print(data.upper())"]).as_("code")
    gp = g | consumer.cmd([PY, "-c", CONSUMER])
    assert isinstance(g, Gather) and isinstance(gp, GatherPipeline)
    r = gp.run()
    assert r.stderr == b"" and r.success
    assert r.stdout.decode().splitlines() == [
        "['data', 'code'] 2 True False",
        "'print(data.upper())\\n'",
        "'top secret\\n'",
        "['code', 'data']",
        "True",
        "KeyError",
    ]


def test_gather_exec_as_in_the_reference(sandboxes, secret, consumer):
    searcher = sandboxes(fs_readable=[str(secret.parent)])
    planner = sandboxes()
    consume = ('from sandlock import inputs\n'
               'code = inputs["code"]\ndata = inputs["data"]\n'
               'exec(compile(code, "<planner>", "exec"), {"data": data})\n')
    r = (searcher.cmd(["cat", str(secret)]).as_("data")
         + planner.cmd(["echo", "print(data.strip().upper())"]).as_("code")
         | consumer.cmd([PY, "-c", consume])).run()
    assert (r.success, r.stdout, r.stderr) == (True, b"TOP SECRET\n", b"")


def test_gather_consumer_cannot_read_the_producers_files(sandboxes, secret, consumer):
    searcher = sandboxes(fs_readable=[str(secret.parent)])
    r = (searcher.cmd(["cat", str(secret)]).as_("data") + sandboxes().cmd(["true"]).as_("code")
         | consumer.cmd([PY, "-c", SNOOP, str(secret)])).run()
    assert (r.success, r.stdout) == (True, b"PermissionError 13\n")
    # Control: the producer's own sandbox reads it with the same snippet.
    r = searcher.run([PY, "-c", SNOOP, str(secret)])
    assert r.stdout == b"top secret\n\n"


def test_gather_three_producers_in_order(sandboxes, consumer):
    s = sandboxes()
    r = (s.cmd(["echo", "1"]).as_("x") + s.cmd(["echo", "2"]).as_("a")
         + (s.cmd(["echo", "3"]).as_("m.v-2") + s.cmd(["printf", ""]).as_("_e"))
         | consumer.cmd([PY, "-c", "from sandlock import inputs\n"
                         "print([(k, inputs[k]) for k in inputs])"])).run()
    assert r.stdout == b"[('x', '1\\n'), ('a', '2\\n'), ('m.v-2', '3\\n'), ('_e', '')]\n"


def test_gather_of_one_producer(sandboxes, consumer):
    # A lone NamedStage piped to a consumer is a gather of one.
    s = sandboxes()
    gp = s.cmd(["echo", "solo"]).as_("only") | consumer.cmd(
        [PY, "-c", "from sandlock import inputs\nprint(dict(inputs))"])
    assert isinstance(gp, GatherPipeline)
    assert gp.run().stdout == b"{'only': 'solo\\n'}\n"


def test_gather_consumer_inherits_only_its_inputs(sandboxes):
    # The last producer on stdin, the others at 3, 4, ... as $_SANDLOCK_GATHER names them; no
    # other pipe end.
    s = sandboxes()
    code = ("import os\n"
            "def is_open(fd):\n"
            "    try:\n        os.fstat(fd)\n        return True\n"
            "    except OSError:\n        return False\n"
            "print([fd for fd in range(3, 1024) if is_open(fd)])\n"
            "print(os.environ['_SANDLOCK_GATHER'])\n")
    r = (s.cmd(["echo", "a"]).as_("x") + s.cmd(["echo", "b"]).as_("y")
         + s.cmd(["echo", "c"]).as_("z") | s.cmd([PY, "-c", code])).run()
    assert r.success, r.stderr
    assert r.stdout == b"[3, 4]\nx:3,y:4,z:0\n"


def test_gather_wiring_as_a_shell_reads_it(sandboxes, consumer):
    # Code written for this wiring reads the last producer on stdin and the first at 3.
    s = sandboxes()
    r = (s.cmd(["echo", "one"]).as_("first") + s.cmd(["echo", "two"]).as_("second")
         | s.cmd(["sh", "-c", 'read a; b=$(cat <&3); echo "$a/$b"'])).run()
    assert (r.success, r.stdout, r.stderr) == (True, b"two/one\n", b"")
    # ... and inputs[name] reads the same pipes by name.
    r = (s.cmd(["echo", "one"]).as_("first") + s.cmd(["echo", "two"]).as_("second")
         | consumer.cmd([PY, "-c", "from sandlock import inputs\n"
                         "print(inputs['second'].strip() + '/' + inputs['first'].strip())"])
         ).run()
    assert (r.success, r.stdout) == (True, b"two/one\n"), r.stderr
    # Control: with three, 3 and 4 are the first two, stdin the third.
    r = (s.cmd(["echo", "1"]).as_("a") + s.cmd(["echo", "2"]).as_("b")
         + s.cmd(["echo", "3"]).as_("c")
         | s.cmd(["sh", "-c", 'x=$(cat <&3); y=$(cat <&4); z=$(cat); echo "$x$y$z"'])).run()
    assert (r.success, r.stdout) == (True, b"123\n")


def test_gather_sources(sandboxes):
    s = sandboxes()
    a, b, c = s.cmd(["true"]), s.cmd(["false"]), s.cmd(["echo"])
    g = a.as_("x") + b.as_("y") + c.as_("z")
    assert isinstance(g, Gather)
    assert [(n, st.args) for n, st in g.sources] == [("x", ["true"]), ("y", ["false"]),
                                                     ("z", ["echo"])]
    assert g.sources[0][1] is a


def test_pipeline_needs_two_stages(sandboxes):
    s = sandboxes()
    for stages in ([], [s.cmd(["true"])]):
        with pytest.raises(ValueError, match="at least two stages"):
            Pipeline(stages)
    # Control: two make one, and a stage alone still runs.
    assert Pipeline([s.cmd(["true"]), s.cmd(["true"])]).run().success
    assert s.cmd(["echo", "x"]).run().stdout == b"x\n"


def test_gather_without_a_gather_inputs_is_empty(sandboxes, consumer):
    # Control for the environment variable: a plain run has no inputs.
    r = consumer.run([PY, "-c", "from sandlock import inputs\nprint(len(inputs), list(inputs))"])
    assert (r.success, r.stdout) == (True, b"0 []\n")


def test_gather_timeout(sandboxes, consumer, unique_sleep):
    s = sandboxes()
    producer, last = unique_sleep(), unique_sleep()
    r = (s.cmd(producer).as_("slow") + s.cmd(["true"]).as_("quick")
         | consumer.cmd(last)).run(timeout=0.5)
    assert (r.success, r.exit_code) == (False, 124) and "timed out" in r.error
    assert pids_with_argv(producer) == [] and pids_with_argv(last) == []


@pytest.mark.parametrize("label", ["1a", "a b", "", "a/b", "a:b", "a,b", None, 5])
def test_gather_bad_label(sandboxes, label):
    with pytest.raises(ValueError):
        sandboxes().cmd(["true"]).as_(label)


@pytest.mark.parametrize("label", ["a", "A_1", "_x", "x.y-z"])
def test_gather_good_label(sandboxes, label):
    named = sandboxes().cmd(["true"]).as_(label)
    assert isinstance(named, NamedStage) and named.name == label


def test_gather_duplicate_label(sandboxes):
    s = sandboxes()
    with pytest.raises(ValueError, match="x"):
        s.cmd(["true"]).as_("x") + s.cmd(["true"]).as_("x")
    g = s.cmd(["true"]).as_("x") + s.cmd(["true"]).as_("y")
    with pytest.raises(ValueError):
        g + s.cmd(["true"]).as_("y")
    # Control: distinct labels make a gather of three.
    assert len((g + s.cmd(["true"]).as_("z")).producers) == 3


def test_interrupted_pipeline_kills_every_stage(sandboxes, unique_sleep):
    import _thread

    s = sandboxes()
    a, b = unique_sleep(), unique_sleep()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        (s.cmd(a) | s.cmd(b)).run()
    timer.join()
    assert wait_until(lambda: not pids_with_argv(a) and not pids_with_argv(b), 3)
    # Control: with a timeout instead, the same pipeline is running at 0.5 s.
    r = {}
    t = threading.Thread(target=lambda: r.setdefault("r", (s.cmd(a) | s.cmd(b)).run(timeout=1.5)))
    t.start()
    time.sleep(0.5)
    assert len(pids_with_argv(a)) == 1 and len(pids_with_argv(b)) == 1
    t.join()
    assert r["r"].exit_code == 124
