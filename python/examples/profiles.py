#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Profiles: TOML files in ~/.config/sandlock/profiles (or $XDG_CONFIG_HOME/sandlock/profiles),
parsed by the same core parser as the CLI's -p. This example writes one into a temporary
XDG_CONFIG_HOME, lists the profiles, and runs the profile's default command."""

import os
import tempfile

with tempfile.TemporaryDirectory() as config:
    os.environ["XDG_CONFIG_HOME"] = config
    os.makedirs(os.path.join(config, "sandlock", "profiles"))
    with open(os.path.join(config, "sandlock", "profiles", "echo.toml"), "w") as f:
        f.write(
            "[filesystem]\n"
            'read = ["/usr", "/lib", "/lib64", "/bin"]\n'
            "\n"
            "[program]\n"
            'exec = "echo"\n'
            'args = ["from", "a", "profile"]\n'
        )

    from sandlock import SandboxError, list_profiles, load_profile

    print("profiles:", list_profiles())
    assert list_profiles() == ["echo"]

    sandbox = load_profile("echo", name="profile-demo")
    result = sandbox.run()  # the profile's [program] command
    print("default command:", result.stdout.decode().strip())
    assert result.stdout == b"from a profile\n"
    print("explicit command:", sandbox.run(["uname", "-n"]).stdout.decode().strip())

    with open(os.path.join(config, "sandlock", "profiles", "bad.toml"), "w") as f:
        f.write("[filesystem]\nreed = []\n")
    try:
        load_profile("bad")
    except SandboxError as e:
        print("bad profile:", e)
