# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small mutation fuzzer for the Python parsers, on the standard library only.

Each harness (tests/fuzz/py/fuzz_*.py) defines fuzz(data: bytes), which raises when the parser
under test breaks its contract and may return an outcome (any hashable value naming what the
parser did). The driver mutates the entries of tests/fuzz/corpus/<name>/ (bit flips,
interesting bytes, token insertions, deletions, duplications, splices), keeps a mutant whose
outcome it has not seen yet as a new parent (a cheap stand-in for coverage feedback), and
writes each failing or hanging input to the crash directory with its traceback.

    /usr/bin/python3 tests/fuzz/py/fuzz_mcp_message.py --runs 100000 --seed 1
    /usr/bin/python3 tests/fuzz/py/fuzz_mcp_message.py build/fuzz-crashes/mcp_message/crash-*
"""

from __future__ import annotations

import argparse
import hashlib
import pathlib
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

Harness = Callable[[bytes], Any]

_INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b"\r", b"\n", b"\r\n", b" ",
                b"\t", b"%", b"&", b"=", b"?", b"#", b"/", b"0", b"-1", b"1e400", b"NaN",
                b"-Infinity", b"null", b"true", b"false", b"[]", b"{}", b'""', b"\\u0000",
                b"\\ud800", b"99999999999999999999", b"0.5", b"1" * 5000,
                b"1" + b"0" * 400]


class Hang(BaseException):
    """An input ran past its time bound (a BaseException so a harness cannot swallow it)."""


def load_corpus(name: str) -> list[tuple[str, bytes]]:
    """The corpus entries of @name, sorted by file name."""
    d = CORPUS / name
    return [(p.name, p.read_bytes()) for p in sorted(d.iterdir()) if p.is_file()]


class Mutator:
    """Random edits of byte strings; @tokens are the target's own words (keys, methods)."""

    def __init__(self, rng: random.Random, tokens: Sequence[bytes], max_len: int) -> None:
        self.rng = rng
        self.tokens = list(tokens) + _INTERESTING
        self.max_len = max_len

    def mutate(self, data: bytes, pool: Sequence[bytes]) -> bytes:
        out = bytearray(data)
        for _ in range(self.rng.choice((1, 1, 2, 3, 4, 8))):
            op = self.rng.choice((self._flip, self._byte, self._insert, self._insert,
                                  self._delete, self._duplicate, self._splice, self._repeat,
                                  self._replace_token))
            out = op(out, pool)
        return bytes(out[: self.max_len])

    def _pos(self, out: bytearray) -> int:
        return self.rng.randrange(len(out) + 1)

    def _flip(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        if out:
            i = self.rng.randrange(len(out))
            out[i] ^= 1 << self.rng.randrange(8)
        return out

    def _byte(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        if out:
            out[self.rng.randrange(len(out))] = self.rng.randrange(256)
        return out

    def _insert(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        i = self._pos(out)
        out[i:i] = self.rng.choice(self.tokens)
        return out

    def _delete(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        if out:
            i = self.rng.randrange(len(out))
            del out[i: i + self.rng.randint(1, 16)]
        return out

    def _duplicate(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        if out:
            i = self.rng.randrange(len(out))
            chunk = out[i: i + self.rng.randint(1, 64)]
            j = self._pos(out)
            out[j:j] = chunk
        return out

    def _splice(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        other = self.rng.choice(pool) if pool else b""
        if not other:
            return out
        a = self.rng.randrange(len(other))
        b = self.rng.randint(a, len(other))
        i = self._pos(out)
        j = self.rng.randint(i, len(out))
        out[i:j] = other[a:b]
        return out

    def _repeat(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        """A token many times over: deep nesting, long lines, many headers."""
        tok = self.rng.choice(self.tokens[:16] + [b"[", b"{\"a\":", b"(", b"a"])
        i = self._pos(out)
        out[i:i] = tok * self.rng.choice((2, 16, 100, 1000, 5000))
        return out

    def _replace_token(self, out: bytearray, pool: Sequence[bytes]) -> bytearray:
        old = self.rng.choice(self.tokens)
        i = out.find(old)
        if i >= 0:
            out[i: i + len(old)] = self.rng.choice(self.tokens)
        return out


def mutants(corpus: Iterable[bytes], runs: int, seed: int, tokens: Sequence[bytes],
            max_len: int = 1 << 17) -> Iterable[bytes]:
    """@runs mutants of @corpus, the same ones for the same @seed (no outcome feedback)."""
    pool = [c for c in corpus] or [b""]
    m = Mutator(random.Random(seed), tokens, max_len)
    for _ in range(runs):
        yield m.mutate(m.rng.choice(pool), pool)


def _alarm(signum: int, frame: Any) -> None:
    raise Hang("the input ran past its time bound")


def run_one(fuzz: Harness, data: bytes, timeout: float) -> tuple[Any, str | None]:
    """(outcome, None), or (None, the traceback) when @data breaks the contract or hangs."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return fuzz(data), None
    except (Exception, Hang):
        return None, traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _bound(args: argparse.Namespace, data: bytes) -> float:
    """The time an input may take: a fixed part plus a part per KiB, so that a parser whose
    work grows faster than its input shows up as a hang on large inputs."""
    return args.timeout + args.per_kib * len(data) / 1024


def _save(crash_dir: pathlib.Path, data: bytes, tb: str) -> pathlib.Path:
    crash_dir.mkdir(parents=True, exist_ok=True)
    path = crash_dir / f"crash-{hashlib.sha256(data).hexdigest()[:16]}"
    path.write_bytes(data)
    path.with_suffix(".txt").write_text(tb)
    return path


def _replay(fuzz: Harness, args: argparse.Namespace) -> int:
    failed = 0
    for f in args.inputs:
        data = pathlib.Path(f).read_bytes()
        _, tb = run_one(fuzz, data, _bound(args, data))
        print(f"{'FAIL' if tb else 'ok  '} {f}")
        if tb:
            print(tb, end="")
            failed += 1
    return 1 if failed else 0


def _fuzz(name: str, fuzz: Harness, tokens: Sequence[bytes], args: argparse.Namespace) -> int:
    crash_dir = pathlib.Path(args.crash_dir or ROOT / "build" / "fuzz-crashes" / name)
    rng = random.Random(args.seed)
    m = Mutator(rng, tokens, args.max_len)
    pool = [data for _, data in load_corpus(name)] or [b""]
    seen: set[Any] = set()
    for data in pool:
        outcome, _ = run_one(fuzz, data, _bound(args, data))
        seen.add(outcome)
    crashes: set[str] = set()
    start = time.monotonic()
    done = 0
    for done in range(1, args.runs + 1):
        data = m.mutate(rng.choice(pool), pool)
        outcome, tb = run_one(fuzz, data, _bound(args, data))
        if tb is not None:
            # One file per distinct failure (its last traceback line), not per input.
            key = tb.strip().splitlines()[-1][:200]
            if key not in crashes:
                crashes.add(key)
                print(f"{name}: failure {key}\n  input: {_save(crash_dir, data, tb)}",
                      file=sys.stderr, flush=True)
        elif outcome not in seen and len(pool) < 4096:
            seen.add(outcome)
            pool.append(data)
        if args.max_time and time.monotonic() - start > args.max_time:
            break
    print(f"{name}: {done} runs in {time.monotonic() - start:.1f} s, {len(pool)} parents, "
          f"{len(seen)} outcomes, {len(crashes)} distinct failures", file=sys.stderr)
    return 1 if crashes else 0


def main(name: str, fuzz: Harness, tokens: Sequence[bytes] = ()) -> int:
    p = argparse.ArgumentParser(description=f"Mutation fuzzer for the {name} parser: with "
                                "INPUT files, replay them instead.")
    p.add_argument("inputs", nargs="*", metavar="INPUT")
    p.add_argument("--runs", type=int, default=10000, help="mutants to try (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="the random seed (default 0)")
    p.add_argument("--max-time", type=float, default=0, help="stop after this many seconds")
    p.add_argument("--max-len", type=int, default=1 << 17, help="largest mutant in bytes")
    p.add_argument("--timeout", type=float, default=5.0,
                   help="seconds an input may take, plus --per-kib for each KiB of it")
    p.add_argument("--per-kib", type=float, default=0.05)
    p.add_argument("--crash-dir", help=f"where failing inputs go (build/fuzz-crashes/{name})")
    args = p.parse_args()
    if args.inputs:
        return _replay(fuzz, args)
    return _fuzz(name, fuzz, tokens, args)
