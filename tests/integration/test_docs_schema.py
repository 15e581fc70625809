# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/profile-schema.md is what `make docs` writes from the schema table (src/policy/schema.c),
the CLI's flag table and tools/schema-doc-fields.h: a field added, renamed or changed without
regenerating it fails here, and so does a documented example that no longer loads."""

import re
import subprocess

from conftest import BUILD, ROOT

DOC = ROOT / "docs" / "profile-schema.md"
TOOL = BUILD / "tools" / "schema-doc"


def generate():
    return subprocess.run([str(TOOL)], capture_output=True, text=True, timeout=30)


def test_profile_schema_doc_is_generated():
    r = generate()
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert DOC.read_text() == r.stdout, "docs/profile-schema.md is stale: run `make docs`"


def test_profile_schema_doc_is_deterministic():
    assert generate().stdout == generate().stdout


def test_profile_schema_doc_names_every_section():
    text = DOC.read_text()
    sections = re.findall(r"^## `\[(\w+)\]`$", text, re.M)
    assert sections == ["config", "determinism", "program", "filesystem", "network", "http",
                        "syscalls", "limits", "protections"]
    # Each key's heading is followed by its Python name, flag, type, default, example and
    # whether it is supported.
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        labels = re.findall(r"^- (\w+(?: \(JSON\))?):", block, re.M)
        example = "Example (JSON)" if block.startswith("`runtime.") else "Example"
        assert labels == ["Python", "Flag", "Type", "Default", example, "Supported"], block
