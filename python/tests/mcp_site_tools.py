# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tools for test_mcp_worker.py: what a tool reaches of the interpreter's installation."""

import sys


def installed_package():
    """Import an installed package (not the standard library) when called."""
    import pytest

    return pytest.__file__


def site_module_loaded():
    return str("site" in sys.modules)


def give_up(code: int):
    exit(code)


def give_up_quietly():
    quit()
