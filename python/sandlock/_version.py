# SPDX-License-Identifier: LGPL-2.1-or-later
"""The package's version: the one place it is written (pyproject.toml reads it from here)."""

__version__ = "0.1.0"
