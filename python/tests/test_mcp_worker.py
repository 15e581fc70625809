# SPDX-License-Identifier: LGPL-2.1-or-later
"""The tool-call worker starts without the site module's work and does it on the first import
that needs it: a tool that uses only the standard library never pays for it, and one that
imports an installed package finds it."""

import asyncio
import os

import pytest

import mcp_site_tools
import pytest as _pytest_module
from sandlock.mcp import McpSandbox, ToolError


@pytest.fixture
def mcp(tmp_path):
    m = McpSandbox(workspace=str(tmp_path))
    for name in ("installed_package", "site_module_loaded", "give_up", "give_up_quietly"):
        m.add_tool(name, getattr(mcp_site_tools, name))
    yield m
    m.close()


def call(m, name, args=None):
    return asyncio.run(m.call_tool(name, args))


def test_a_tool_that_needs_only_its_module_does_not_load_site(mcp):
    assert call(mcp, "site_module_loaded") == "False"


def test_an_installed_package_is_found_on_first_use(mcp):
    # pytest lives in the interpreter's site directories, which -S leaves off sys.path: the
    # worker adds them on the first import the standard paths cannot satisfy.
    where = call(mcp, "installed_package")
    assert os.path.realpath(where) == os.path.realpath(_pytest_module.__file__)


def test_exit_and_quit_end_the_tool_with_its_code(mcp):
    with pytest.raises(ToolError, match=r"^SystemExit: 3$"):
        call(mcp, "give_up", {"code": 3})
    with pytest.raises(ToolError, match=r"^SystemExit: None$"):
        call(mcp, "give_up_quietly")
