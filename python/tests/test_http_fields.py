# SPDX-License-Identifier: LGPL-2.1-or-later
"""The HTTP fields of the SDK: http_allow, http_deny, http_ports, http_ca, http_key,
http_inject_ca, http_ca_out, and the runtime credentials and http_auth. They land in the policy
document, a bad value raises with the core's one-line message, an env: credential's variable is
stripped from the command's environment, and `sandlock inspect` shows the rules and the
credentials by name only."""

import json
import os
import subprocess
import time

import pytest
from sandlock import PolicyError, Sandbox
from sandlock._core import Policy

from conftest import PY, SANDLOCK_CLI, SYSTEM_READ, unique_name

ALL = dict(http_allow=["get API.example.com/v1/*"], http_deny=["* */admin/*"],
           http_ports=[8080], http_ca="/etc/sandlock/ca.pem", http_key="/etc/sandlock/ca.key",
           http_inject_ca=["/etc/ssl/certs/ca-certificates.crt"], http_ca_out="/tmp/ca-out.pem",
           credentials=["tok=env:API_TOKEN", "f=file:/run/secret"],
           http_auth=["POST api.example.com/v1/* bearer tok",
                      "* api.example.com/* apikey:X-Key f add-only"])


def test_fields_land_in_the_document():
    assert Sandbox(**ALL).to_json() == {
        "config": {"http_ca": "/etc/sandlock/ca.pem", "http_key": "/etc/sandlock/ca.key",
                   "http_inject_ca": ["/etc/ssl/certs/ca-certificates.crt"],
                   "http_ca_out": "/tmp/ca-out.pem"},
        "http": {"ports": [8080], "allow": ["GET api.example.com/v1/*"],
                 "deny": ["* */admin/*"]},
        "runtime": {"credentials": ["tok=env:API_TOKEN", "f=file:/run/secret"],
                    "http_auth": ["POST api.example.com/v1/* bearer tok",
                                  "* api.example.com/* header:X-Key f add-only"]},
    }


def test_the_document_round_trips():
    doc = Sandbox(**ALL).to_json()
    with Policy(doc) as p:
        assert p.dump_json() == doc


def test_control_unset_fields_are_left_out():
    assert Sandbox().to_json() == {}


@pytest.mark.parametrize("kw, msg", [
    (dict(http_allow=["GET"]),
     'http_allow: HTTP rule "GET" is not "METHOD host/path" (e.g. "GET example.com/*")'),
    (dict(http_ports=[0]), "http_ports: 0 is out of range 1..65535"),
    (dict(credentials=["k=env:1X"]),
     'credentials: invalid variable name "1X" in credential "k=env:1X" '
     "([A-Za-z_][A-Za-z0-9_]*)"),
    (dict(http_allow=["GET a.com/*"], http_auth=["GET a.com/* basic:a:b k"]),
     'http_auth: invalid basic user-id "a:b" (RFC 7617: a \':\' in the user-id would move the '
     'user:password boundary and leak part of the secret) in "GET a.com/* basic:a:b k"'),
    (dict(http_inject_ca=["/x.pem"]),
     "http_inject_ca: needs at least one http_allow or http_deny rule"),
    (dict(http_auth=["GET a.com/* bearer k"]),
     "http_auth: needs at least one http_allow or http_deny rule"),
    (dict(http_ca="/ca.pem", http_allow=["GET a.com/*"]), "http_ca, http_key: set both or neither"),
])
def test_bad_values_raise_one_line(kw, msg):
    with pytest.raises(PolicyError) as e:
        Sandbox(**kw)
    assert str(e.value) == msg


ENVIRON = r"""
import json, os
raw = open("/proc/self/environ", "rb").read()
print(json.dumps({"environ": os.environ.get("SANDLOCK_TEST_TOKEN"),
                  "proc": b"s3cr3t-v4lue" in raw}))
"""
RULE = dict(http_allow=["GET 127.0.0.1/*"])


def environ_seen(sandboxes, **kw):
    r = sandboxes(fs_readable=["/proc"], **RULE, **kw).run([PY, "-c", ENVIRON])
    assert r.success, r.stderr
    return json.loads(r.stdout)


def test_env_credential_stripped(sandboxes, monkeypatch):
    monkeypatch.setenv("SANDLOCK_TEST_TOKEN", "s3cr3t-v4lue")
    got = environ_seen(sandboxes, credentials=["tok=env:SANDLOCK_TEST_TOKEN"],
                       env={"SANDLOCK_TEST_TOKEN": "s3cr3t-v4lue"})
    assert got == {"environ": None, "proc": False}


def test_env_credential_control(sandboxes, monkeypatch):
    monkeypatch.setenv("SANDLOCK_TEST_TOKEN", "s3cr3t-v4lue")
    assert environ_seen(sandboxes) == {"environ": "s3cr3t-v4lue", "proc": True}


def inspect(name, *flags):
    deadline = time.monotonic() + 20
    while True:
        r = subprocess.run([SANDLOCK_CLI, "inspect", name, *flags], capture_output=True)
        if r.returncode == 0 or time.monotonic() > deadline:
            return r
        time.sleep(0.05)


def test_inspect_shows_rules_and_credential_names(sandboxes, monkeypatch, tmp_path,
                                                   unique_sleep):
    monkeypatch.setenv("SANDLOCK_TEST_TOKEN", "s3cr3t-v4lue")
    secret = tmp_path / "secret"
    secret.write_text("f1le-s3cret\n")
    name = unique_name("sdk-http")
    sb = sandboxes(name=name, http_allow=["GET 127.0.0.1/v1/*"], http_deny=["* */admin/*"],
                   credentials=["tok=env:SANDLOCK_TEST_TOKEN", f"f=file:{secret}"],
                   http_auth=["GET 127.0.0.1/v1/* bearer tok"])
    sb.spawn(unique_sleep())
    try:
        r = inspect(name)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["http"] == {"ports": [80], "allow": ["GET 127.0.0.1/v1/*"],
                               "deny": ["* */admin/*"]}
        assert doc["runtime"]["credentials"] == ["tok", "f"]
        assert doc["runtime"]["http_auth"] == ["GET 127.0.0.1/v1/* bearer tok"]
        for never in (b"s3cr3t", b"SANDLOCK_TEST_TOKEN", str(secret).encode(), b"env:"):
            assert never not in r.stdout, never
    finally:
        sb.kill()
        sb.wait()
