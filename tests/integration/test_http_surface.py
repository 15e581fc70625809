# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the HTTP fields show the sandbox and the user, apart from the proxy itself: the trust
bundles of http_inject_ca (the host's bytes and the active CA's certificate, the host file never
changed), http_ca_out, the env: credential stripped from the command's environment, inspect
(credentials by name only), and the profile keys."""

import hashlib
import json
import os
import pathlib
import signal
import subprocess
import time
import uuid

import pytest

from conftest import PY, SANDLOCK, SYSTEM_READ, require, result_json, run, sandlock

RULE = ["--http-allow", "GET 127.0.0.1/*"]
SYSTEM_BUNDLE = pathlib.Path("/etc/ssl/certs/ca-certificates.crt")

# Every way of opening the bundle the test names, as (key, bytes read or errno).
READS = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
d = sys.argv[1]
bundle = os.path.join(d, "bundle.crt")
def read(opener):
    try:
        fd = opener()
    except OSError as e:
        return e.errno
    with os.fdopen(fd, "rb") as f:
        data = f.read()
        return [data.decode("latin-1"), os.fstat(f.fileno()).st_size]
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]
def openat2(path):
    how = How(os.O_RDONLY | os.O_CLOEXEC, 0, 0)
    fd = libc.syscall(437, -100, path.encode(), ctypes.byref(how), ctypes.sizeof(how))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "openat2")
    return fd
opath = os.open(bundle, os.O_PATH)
dirfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
res = {
    "plain": read(lambda: os.open(bundle, os.O_RDONLY)),
    "dirfd": read(lambda: os.open("bundle.crt", os.O_RDONLY, dir_fd=dirfd)),
    "openat2": read(lambda: openat2(bundle)),
    "reopen": read(lambda: os.open(f"/proc/self/fd/{opath}", os.O_RDONLY)),
    "symlink_pem": read(lambda: os.open(os.path.join(d, "cert.pem"), os.O_RDONLY)),
    "symlink_other": read(lambda: os.open(os.path.join(d, "other"), os.O_RDONLY)),
    "write": read(lambda: os.open(bundle, os.O_WRONLY)),
    "stat_size": os.stat(bundle).st_size,
}
print(json.dumps(res))
"""

HOST = b"# the host's bundle\nno newline at its end"


def make_bundle(tmp_path):
    d = tmp_path / "certs"
    d.mkdir()
    (d / "bundle.crt").write_bytes(HOST)
    (d / "cert.pem").symlink_to("bundle.crt")
    (d / "other").symlink_to("bundle.crt")
    for p in (tmp_path, d):
        os.chmod(p, 0o755)
    os.chmod(d / "bundle.crt", 0o644)
    return d


def test_bundle_served_with_the_ca_appended(tmp_path):
    d = make_bundle(tmp_path)
    out = tmp_path / "ca.pem"
    before = (d / "bundle.crt").read_bytes()
    got = result_json(run(*SYSTEM_READ, "-r", "/proc", "-r", str(d), *RULE, "--http-inject-ca",
                          str(d / "bundle.crt"), "--http-ca-out", str(out), "--", PY, "-c",
                          READS, str(d)))
    ca = out.read_bytes()
    assert ca.startswith(b"-----BEGIN CERTIFICATE-----\n") and ca.endswith(
        b"-----END CERTIFICATE-----\n"), ca
    served = (HOST + b"\n" + ca).decode("latin-1")
    for key in ("plain", "dirfd", "openat2", "reopen", "symlink_pem"):
        # fstat of the memfd: the size a reader of st_size bytes needs.
        assert got[key] == [served, len(served)], key
    # Not looked at: a symlink of another name reads the host's file (docs); a write is the
    # kernel's, which Landlock refuses under a read grant; stat by name is the host file's.
    assert got["symlink_other"] == [HOST.decode(), len(HOST)]
    assert got["write"] == 13  # EACCES
    assert got["stat_size"] == len(HOST)
    assert (d / "bundle.crt").read_bytes() == before


def test_bundle_control_without_injection(tmp_path):
    d = make_bundle(tmp_path)
    got = result_json(run(*SYSTEM_READ, "-r", "/proc", "-r", str(d), *RULE, "--", PY, "-c",
                          READS, str(d)))
    host = [HOST.decode(), len(HOST)]
    for key in ("plain", "dirfd", "openat2", "reopen", "symlink_pem", "symlink_other"):
        assert got[key] == host, key


def test_bundle_outside_the_grants_is_not_served(tmp_path):
    d = make_bundle(tmp_path)
    code = "import os, sys\ntry:\n    open(sys.argv[1], 'rb')\nexcept OSError as e:\n" \
           "    print(e.errno)\n"
    r = run(*SYSTEM_READ, *RULE, "--http-inject-ca", str(d / "bundle.crt"), "--", PY, "-c",
            code, str(d / "bundle.crt"))
    assert (r.returncode, r.stdout) == (0, b"13\n"), r.stderr


def test_bundle_ending_with_a_newline_gets_none_added(tmp_path):
    d = tmp_path / "b"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(d, 0o755)
    (d / "ca.crt").write_bytes(b"host\n")
    out = tmp_path / "ca.pem"
    r = run(*SYSTEM_READ, "-r", str(d), *RULE, "--http-inject-ca", str(d / "ca.crt"),
            "--http-ca-out", str(out), "--", "cat", str(d / "ca.crt"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"host\n" + out.read_bytes()


def test_system_bundle_trusted_by_openssl(tmp_path):
    """Python's ssl (OpenSSL) loads its default file, /usr/lib/ssl/cert.pem, a link to the
    system bundle: it trusts one CA more, and the host's bundle is byte-identical after."""
    require(SYSTEM_BUNDLE.exists(), "the system trust bundle /etc/ssl/certs/ca-certificates.crt")
    digest = hashlib.sha256(SYSTEM_BUNDLE.read_bytes()).hexdigest()
    code = "import ssl\nprint(ssl.create_default_context().cert_store_stats()['x509_ca'])\n"
    flags = [*SYSTEM_READ, "-r", "/etc"]
    control = run(*flags, *RULE, "--", PY, "-c", code)
    assert control.returncode == 0, control.stderr
    r = run(*flags, *RULE, "--http-inject-ca", str(SYSTEM_BUNDLE), "--", PY, "-c", code)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == int(control.stdout) + 1
    assert hashlib.sha256(SYSTEM_BUNDLE.read_bytes()).hexdigest() == digest


# ---- http_ca_out ------------------------------------------------------------------------------

def test_http_ca_out_written_before_the_command(tmp_path):
    d = make_bundle(tmp_path)
    outdir = tmp_path / "out"
    outdir.mkdir()
    os.chmod(outdir, 0o755)
    out = outdir / "ca.pem"
    r = run(*SYSTEM_READ, "-r", str(outdir), *RULE, "--http-inject-ca", str(d / "bundle.crt"),
            "--http-ca-out", str(out), "--", "cat", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == out.read_bytes()  # the command read it whole
    assert b"PRIVATE KEY" not in r.stdout
    assert out.stat().st_mode & 0o777 == 0o644 & ~current_umask()
    x = subprocess.run(["openssl", "x509", "-noout", "-ext", "basicConstraints"],
                       input=r.stdout, capture_output=True)
    assert x.returncode == 0, x.stderr
    assert b"CA:TRUE" in x.stdout


def test_http_ca_out_unwritable_fails_the_run(tmp_path):
    d = make_bundle(tmp_path)
    marker = tmp_path / "ran"
    out = tmp_path / "missing" / "ca.pem"
    r = run(*SYSTEM_READ, "-w", str(tmp_path), *RULE, "--http-inject-ca", str(d / "bundle.crt"),
            "--http-ca-out", str(out), "--", "touch", str(marker))
    assert (r.returncode, r.stderr.decode()) == (
        1, f"sandlock: --http-ca-out: {out}: No such file or directory\n")
    assert not marker.exists()


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---- env: credentials -------------------------------------------------------------------------

ENVIRON = r"""
import json, os
raw = open("/proc/self/environ", "rb").read()
print(json.dumps({"environ": os.environ.get("SANDLOCK_TEST_TOKEN"),
                  "proc": b"SANDLOCK_TEST_TOKEN" in raw, "value": b"s3cr3t-v4lue" in raw}))
"""


def token_env():
    return dict(os.environ, SANDLOCK_TEST_TOKEN="s3cr3t-v4lue")


def test_env_credential_stripped_from_the_child():
    r = run(*SYSTEM_READ, "-r", "/proc", *RULE, "--credential", "tok=env:SANDLOCK_TEST_TOKEN",
            "--env", "SANDLOCK_TEST_TOKEN=s3cr3t-v4lue", "--", PY, "-c", ENVIRON,
            env=token_env())
    assert result_json(r) == {"environ": None, "proc": False, "value": False}


def test_env_credential_control_the_variable_reaches_the_child():
    r = run(*SYSTEM_READ, "-r", "/proc", *RULE, "--", PY, "-c", ENVIRON, env=token_env())
    assert result_json(r) == {"environ": "s3cr3t-v4lue", "proc": True, "value": True}


def test_file_credential_strips_nothing(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("other\n")
    r = run(*SYSTEM_READ, "-r", "/proc", *RULE, "--credential", f"tok=file:{secret}", "--", PY,
            "-c", ENVIRON, env=token_env())
    assert result_json(r) == {"environ": "s3cr3t-v4lue", "proc": True, "value": True}


# ---- inspect ----------------------------------------------------------------------------------

def started(name, *flags, env=None):
    p = subprocess.Popen([SANDLOCK, "run", "--name", name, *SYSTEM_READ, *flags, "--", "sleep",
                          "60"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if sandlock("inspect", name).returncode == 0:
            return p
        if p.poll() is not None:
            pytest.fail(p.stderr.read().decode())
        time.sleep(0.05)
    p.kill()
    pytest.fail("the sandbox did not start")


@pytest.fixture
def inspected(tmp_path):
    name = f"http-{uuid.uuid4().hex[:8]}"
    secret = tmp_path / "secret-file"
    secret.write_text("f1le-s3cret\n")
    p = started(name, "--http-allow", "GET 127.0.0.1/v1/*", "--http-deny", "* 127.0.0.1/admin/*",
                "--http-port", "8080", "--credential", "tok=env:SANDLOCK_TEST_TOKEN",
                "--credential", f"f=file:{secret}",
                "--http-auth", "GET 127.0.0.1/v1/* bearer tok",
                "--http-auth", "GET 127.0.0.1/v1/x header:x-key f add-only", env=token_env())
    try:
        yield name, str(secret)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)


def test_inspect_shows_rules_and_credential_names(inspected):
    name, secret = inspected
    r = sandlock("inspect", name)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["http"] == {"ports": [8080], "allow": ["GET 127.0.0.1/v1/*"],
                           "deny": ["* 127.0.0.1/admin/*"]}
    assert doc["runtime"]["credentials"] == ["tok", "f"]
    assert doc["runtime"]["http_auth"] == ["GET 127.0.0.1/v1/* bearer tok",
                                           "GET 127.0.0.1/v1/x header:x-key f add-only"]
    for never in (b"s3cr3t-v4lue", b"f1le-s3cret", b"SANDLOCK_TEST_TOKEN", secret.encode(),
                  b"env:", b"file:"):
        assert never not in r.stdout, never
    assert "network" not in doc  # the rules' reachability is not net_allow


def test_inspect_toml_notes_what_a_profile_cannot_hold(inspected):
    name, secret = inspected
    r = sandlock("inspect", name, "--toml")
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode()
    assert '[http]\nports = [8080]\nallow = ["GET 127.0.0.1/v1/*"]\n' \
           'deny = ["* 127.0.0.1/admin/*"]\n' in text
    assert text.endswith("\n# credentials (held by the supervisor, by name): tok, f\n"
                         "# http_auth: GET 127.0.0.1/v1/* bearer tok\n"
                         "# http_auth: GET 127.0.0.1/v1/x header:x-key f add-only\n"), text
    assert secret not in text and "s3cr3t" not in text


def test_inspect_control_without_credentials():
    name = f"http-{uuid.uuid4().hex[:8]}"
    p = started(name, *RULE)
    try:
        r = sandlock("inspect", name)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["http"] == {"ports": [80], "allow": ["GET 127.0.0.1/*"]}
        assert "credentials" not in doc["runtime"]
        r = sandlock("inspect", name, "--toml")
        assert "# credentials" not in r.stdout.decode()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)


# ---- profiles ---------------------------------------------------------------------------------

def test_profile_http_keys_load(tmp_path):
    d = make_bundle(tmp_path)
    out = tmp_path / "ca.pem"
    prof = tmp_path / "p.toml"
    prof.write_text(f'[config]\nhttp_inject_ca = ["{d}/bundle.crt"]\nhttp_ca_out = "{out}"\n\n'
                    '[http]\nports = [8080]\nallow = ["GET 127.0.0.1/*"]\n'
                    'deny = ["* 127.0.0.1/admin/*"]\n')
    r = run("--profile-file", str(prof), *SYSTEM_READ, "-r", str(d), "--", "cat",
            str(d / "bundle.crt"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == HOST + b"\n" + out.read_bytes()


@pytest.mark.parametrize("text, where, msg", [
    ('[config]\ncredentials = ["a=env:X"]\n', "2:1",
     "unknown key 'credentials' in [config]; allowed: http_ca, http_key, http_inject_ca, "
     "http_ca_out, fs_storage, workdir"),
    ('http_auth = ["GET a.com/* bearer a"]\n', "1:1",
     "'http_auth' is not a profile key: the sandbox name and the runtime settings are given "
     "when it is created"),
])
def test_profile_refuses_credentials_and_http_auth(tmp_path, text, where, msg):
    prof = tmp_path / "p.toml"
    prof.write_text(text)
    r = run("--profile-file", str(prof), "--", "true")
    assert (r.returncode, r.stderr.decode()) == (1, f"sandlock: {prof}:{where}: {msg}\n")
