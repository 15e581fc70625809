# SPDX-License-Identifier: LGPL-2.1-or-later
"""Under a rule naming a host the sandbox reads a synthetic /etc/hosts (the names resolved at
start): served for the file, whatever name reaches it, as the /proc views are."""

import os

from conftest import PY, SYSTEM_READ, require, result_json, run

SPELLINGS = """
import json, os, sys
d = os.open("/etc", os.O_RDONLY | os.O_DIRECTORY)
def read(fn):
    try:
        with fn() as f:
            return f.read()
    except OSError as e:
        return e.errno
tmp = sys.argv[1]
res = {
    "plain": read(lambda: open("/etc/hosts")),
    "dot": read(lambda: open("/etc/./hosts")),
    "slashes": read(lambda: open("//etc//hosts")),
    "dotdot": read(lambda: open("/usr/../etc/hosts")),
    "dirfd": read(lambda: os.fdopen(os.open("hosts", os.O_RDONLY, dir_fd=d))),
    "symlink": read(lambda: open(os.path.join(tmp, "hosts"))),
    "symlinked_dir": read(lambda: open(os.path.join(tmp, "etc", "hosts"))),
}
fd = os.open("/etc/hosts", os.O_PATH)
res["reopen"] = read(lambda: open(f"/proc/self/fd/{fd}"))
print(json.dumps(res))
"""


def test_synthetic_hosts_for_every_name(tmp_path):
    real = open("/etc/hosts").read()
    (tmp_path / "hosts").symlink_to("/etc/hosts")
    (tmp_path / "etc").symlink_to("/etc")
    os.chmod(tmp_path, 0o755)
    grants = [*SYSTEM_READ, "-r", "/etc", "-r", str(tmp_path)]
    got = result_json(run(*grants, "--net-allow", "tcp://localhost:80", "--", PY, "-c",
                          SPELLINGS, str(tmp_path), timeout=60))
    synthetic = got["plain"]
    require(isinstance(synthetic, str) and synthetic != real,
            "a host /etc/hosts that differs from the synthetic one")
    assert "127.0.0.1\tlocalhost\n" in synthetic
    for name, text in got.items():
        assert text == synthetic, name
    # Control: without a host rule every name reads the host's file.
    got = result_json(run(*grants, "--net-allow", "tcp://127.0.0.1:80", "--", PY, "-c",
                          SPELLINGS, str(tmp_path), timeout=60))
    for name, text in got.items():
        assert text == real, name
