# SPDX-License-Identifier: LGPL-2.1-or-later
"""The trivial tool bench/mcp calls (a top-level function of an importable module)."""


def echo(text: str) -> str:
    return text
