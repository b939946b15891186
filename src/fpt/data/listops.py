"""ListOps data: Long Range Arena's generator, its TSV files, an evaluator and a strict reader.

An expression is a tree: ``[MAX 4 3 [MIN 2 3 ] 1 0 ]``. LRA prints it binarised, each pair
in round parentheses: ``( ( ( [MIN 8 ) 2 ) ] )`` is ``[MIN 8 2 ]``. The reader turns a
Source into symbol codes (``SYMBOLS`` order, parentheses dropped); tokenisation is the
task's business (``fpt.tasks.listops``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from fpt.errors import ConfigError, DataError

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
END = "]"
SYMBOLS = (*OPERATORS, END, *map(str, range(10)))  # code = index; digits are codes 5..14
DIGITS = SYMBOLS[len(OPERATORS) + 1:]
SPLITS = ("train", "val", "test")
HEADER = "Source\tTarget"
VALUE_P = 0.75  # a node below the maximum depth is a bare value with this probability


def file_name(split: str) -> str:
    return f"basic_{split}.tsv"


# --- semantics -------------------------------------------------------------------------

def apply(op: str, args: list[int]) -> int:
    if op == "[MIN":
        return min(args)
    if op == "[MAX":
        return max(args)
    if op == "[MED":
        s, n = sorted(args), len(args)
        # int(numpy.median(args)): the mean of the two middle values, truncated (all >= 0).
        return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) // 2
    if op == "[SM":
        return sum(args) % 10
    raise ValueError(f"unknown operator {op!r}")


def evaluate_source(source: str) -> int:
    """The value of an expression, in LRA's parenthesised form or plain (``[SM 3 9 ]``)."""
    stack: list[tuple[str, list[int]]] = []
    result: int | None = None
    for tok in source.split():
        if tok in ("(", ")"):  # redundant: the brackets alone fix the tree
            continue
        if result is not None:
            raise DataError(f"{tok!r} after the end of the expression")
        if tok in OPERATORS:
            stack.append((tok, []))
            continue
        if tok == END:
            if not stack or not stack[-1][1]:
                raise DataError("']' without an open operator" if not stack else "an operator with no arguments")
            value = apply(*stack.pop())
        elif tok in DIGITS:
            value = int(tok)
        else:
            raise DataError(f"unknown symbol {tok!r}; expected one of {' '.join(SYMBOLS)} ( )")
        if stack:
            stack[-1][1].append(value)
        else:
            result = value
    if stack:
        raise DataError("incomplete expression: an operator is not closed by ']'")
    if result is None:
        raise DataError("empty expression")
    return result


# --- generation ------------------------------------------------------------------------

class _TooLong(Exception):
    pass


def _uniforms(rng: np.random.Generator, block: int = 1 << 16) -> Callable[[], float]:
    """A function returning the next uniform number; drawn in blocks (one call each is slow)."""
    return itertools.chain.from_iterable(iter(lambda: rng.random(block).tolist(), None)).__next__


def _emit(draw: Callable[[], float], depth: int, max_depth: int, max_args: int, out: list[str],
          budget: list[int]) -> int:
    """Append a random tree to ``out`` in LRA's printed form; return its value.

    ``budget[0]`` counts down the symbols still allowed: a tree that would exceed it is
    abandoned early (it would be rejected anyway), which keeps generation fast."""
    if depth >= max_depth or draw() < VALUE_P:
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooLong
        value = int(draw() * 10)
        out.append(DIGITS[value])
        return value
    budget[0] -= 2  # the operator and its ']'
    if budget[0] < 0:
        raise _TooLong
    op = OPERATORS[int(draw() * len(OPERATORS))]
    n_args = 2 + int(draw() * (max_args - 1))  # 2..max_args
    # Binarised: ((op a) b) ... ]) opens one parenthesis per argument plus one for ']'.
    out.append("( " * (n_args + 1) + op)
    values = []
    for _ in range(n_args):
        values.append(_emit(draw, depth + 1, max_depth, max_args, out, budget))
        out.append(")")
    out.append(END + " )")
    return apply(op, values)


def to_source(expression: str, parens: bool = True) -> str:
    """A plain expression (``[MIN 8 2 ]``) in LRA's printed form (``( ( ( [MIN 8 ) 2 ) ] )``)."""
    if not parens:
        return " ".join(t for t in expression.split() if t not in ("(", ")"))
    stack: list[list[str]] = [[]]
    for tok in expression.split():
        if tok in ("(", ")"):
            continue
        if tok in OPERATORS:
            stack.append([tok])
        elif tok == END:
            op, *args = stack.pop()
            stack[-1].append("( " * (len(args) + 1) + op + "".join(f" {a} )" for a in args) + f" {END} )")
        else:
            stack[-1].append(tok)
    return " ".join(stack[0])


def generate(counts: dict[str, int], seed: int = 0, min_len: int = 500, max_len: int = 2000,
             max_depth: int = 10, max_args: int = 10, patience: int = 1_000_000) -> dict[str, list[tuple[str, int]]]:
    """Distinct examples with ``min_len < length < max_len``, split in ``counts`` order.

    The root is at depth 1 as in LRA, so a tree has at most ``max_depth`` levels. Raises
    ValueError after ``patience`` trees in a row brought nothing new (a window too narrow
    to hold that many distinct expressions).
    """
    if not (0 <= min_len and min_len + 1 < max_len and max_depth >= 1 and max_args >= 2):
        raise ConfigError(f"listops generator: need 0 <= min_len < max_len - 1, max_depth >= 1, max_args >= 2; "
                          f"got min_len={min_len}, max_len={max_len}, max_depth={max_depth}, max_args={max_args}")
    draw = _uniforms(np.random.default_rng(seed))
    total = sum(counts.values())
    seen: dict[str, int] = {}  # insertion-ordered, so the split a source lands in is deterministic
    stale = 0
    while len(seen) < total:
        budget, out = [max_len - 1], []
        try:
            value = _emit(draw, 1, max_depth, max_args, out, budget)
        except _TooLong:
            out = []
        before = len(seen)
        if out and max_len - 1 - budget[0] > min_len:
            seen.setdefault(" ".join(out), value)
        stale = 0 if len(seen) > before else stale + 1
        if stale >= patience:
            raise ConfigError(f"listops generator: {patience} trees in a row brought no new example after "
                              f"{len(seen)} of {total}; widen min_len/max_len or ask for fewer")
    rows, start, out = list(seen.items()), 0, {}
    for split, n in counts.items():
        out[split], start = rows[start:start + n], start + n
    return out


def write_tsv(path: Path, rows: list[tuple[str, int]]) -> None:
    """Header then ``Source<TAB>Target`` lines ending in CRLF (csv.writer's default, as LRA wrote)."""
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="ascii", newline="") as f:
        f.write(HEADER + "\r\n")
        f.writelines(f"{source}\t{target}\r\n" for source, target in rows)
    os.replace(tmp, path)  # so a file that exists is complete


def generate_files(out: Path, counts: dict[str, int], seed: int = 0, **kw: int) -> list[Path]:
    """Generate and write ``basic_{split}.tsv`` for each split in ``counts``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    splits = generate(counts, seed, **kw)
    # The train file last: its presence is what readers take to mean the set is complete.
    for split in sorted(splits, key=lambda s: s == "train"):
        write_tsv(out / file_name(split), splits[split])
    return [out / file_name(split) for split in splits]


# --- reading ---------------------------------------------------------------------------

# Operators become one byte each, so a Source (~3,000 characters) is encoded by C-level
# bytes and numpy operations instead of a Python loop over its symbols.
_PLACEHOLDERS = b"\x01\x02\x03\x04"
_PAREN, _BAD = 254, 255
_LUT = np.full(256, _BAD, dtype=np.uint8)
for _code, _byte in enumerate(_PLACEHOLDERS + (END + "".join(DIGITS)).encode()):
    _LUT[_byte] = _code
_LUT[list(b"()")] = _PAREN


def _codes(source: str) -> np.ndarray | None:
    """Codes of every token (parentheses as _PAREN), or None if a token is not a symbol."""
    if any(chr(p) in source for p in _PLACEHOLDERS):
        return None
    b = source.encode("utf-8")
    for op, p in zip(OPERATORS, _PLACEHOLDERS, strict=True):
        b = b.replace(op.encode(), bytes([p]))
    arr = np.frombuffer(b, dtype=np.uint8)
    if len(arr) % 2 == 1 and not (arr[1::2] != ord(" ")).any():
        chars = arr[::2]  # LRA's layout: one-byte tokens between single spaces
    else:
        tokens = b.split()  # any other spacing: slower, same result
        if any(len(t) != 1 for t in tokens):
            return None
        chars = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    codes = _LUT[chars]
    return None if (codes == _BAD).any() else codes


def encode_source(source: str, where: str = "Source") -> np.ndarray:
    """Symbol codes (uint8, index into ``SYMBOLS``) of a Source, parentheses dropped.

    Raises DataError, prefixed by ``where``, for an unknown symbol, an empty Source,
    operators and ']' that do not pair up (a cut-off line) or that do not make one tree
    (``] 4 3 [MAX``, ``[SM 1 ] 2``, ``[MAX ]``)."""
    codes = _codes(source)
    if codes is None:
        bad = next((t for t in source.split() if t not in SYMBOLS and t not in ("(", ")")), source)
        raise DataError(f"{where}: unknown symbol {bad!r}; expected space-separated symbols from "
                        f"{' '.join(SYMBOLS)} ( )")
    codes = codes[codes != _PAREN]
    if codes.size == 0:
        raise DataError(f"{where}: empty Source; expected an expression such as [MAX 4 3 [MIN 2 3 ] 1 0 ]")
    is_op, is_end = codes < len(OPERATORS), codes == len(OPERATORS)
    n_ops, n_ends = int(is_op.sum()), int(is_end.sum())
    if n_ops != n_ends:
        raise DataError(f"{where}: {n_ops} operators but {n_ends} closing ']'; expected one ']' per operator "
                        "(a cut-off or corrupted line?)")
    _check_tree(codes, is_op, is_end, where)
    return codes


def _near(codes: np.ndarray, i: int) -> str:
    """The symbols around position ``i`` (parentheses left out), for an error message."""
    lo, hi = max(0, i - 3), min(len(codes), i + 4)
    return ("... " if lo else "") + " ".join(SYMBOLS[c] for c in codes[lo:hi]) + (" ..." if hi < len(codes) else "")


def _check_tree(codes: np.ndarray, is_op: np.ndarray, is_end: np.ndarray, where: str) -> None:
    """DataError unless ``codes`` is one expression: a digit, or an operator, its arguments and its ']'."""
    fix = "fix the line or generate the file again (fpt listops-generate)"
    if len(codes) == 1:
        if not 5 <= codes[0]:
            raise DataError(f"{where}: the Source is the lone symbol {SYMBOLS[codes[0]]!r}; expected an expression "
                            f"such as [MAX 4 3 [MIN 2 3 ] 1 0 ]: {fix}")
        return
    if not is_op[0]:
        raise DataError(f"{where}: the Source starts with {SYMBOLS[codes[0]]!r} (near {_near(codes, 0)!r}); an "
                        f"expression of several symbols starts with an operator ({' '.join(OPERATORS)}): {fix}")
    depth = np.cumsum(is_op.astype(np.int64) - is_end.astype(np.int64))
    closed = np.flatnonzero(depth[:-1] <= 0)
    if closed.size:
        i = int(closed[0])
        what = (f"']' closes no open operator (near {_near(codes, i)!r})" if depth[i] < 0 else
                f"the expression is complete after symbol {i + 1} but more follows (near {_near(codes, i + 1)!r})")
        raise DataError(f"{where}: misplaced brackets: {what}: {fix}")
    empty = np.flatnonzero(is_op[:-1] & is_end[1:])
    if empty.size:
        i = int(empty[0])
        raise DataError(f"{where}: operator {SYMBOLS[codes[i]]!r} has no arguments (near {_near(codes, i)!r}): {fix}")


def _median(args: list[int]) -> int:
    s, n = sorted(args), len(args)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) // 2


_APPLY = (min, max, _median, lambda args: sum(args) % 10)  # OPERATORS order


def evaluate_codes(codes: np.ndarray) -> int:
    """The value of an expression given as symbol codes that passed ``encode_source``'s checks."""
    ops: list[int] = []
    saved: list[list[int]] = []
    args: list[int] = []
    first_digit = len(OPERATORS) + 1
    for c in codes.tolist():
        if c >= first_digit:
            args.append(c - first_digit)
        elif c < len(OPERATORS):
            ops.append(c)
            saved.append(args)
            args = []
        else:
            value = _APPLY[ops.pop()](args)
            args = saved.pop()
            args.append(value)
    return args[0]


def read_rows(path: Path, limit: int | None = None) -> Iterator[tuple[str, str, int]]:
    """``(where, Source, Target)`` per example of a ListOps TSV, ``where`` being
    ``"FILE: line N"``. Lines may end in CRLF or LF; anything else malformed is a DataError."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    with open(path, "rb") as f:  # binary: only \n ends a line, and decoding errors get a line number
        for number, raw in enumerate(f, start=1):
            where = f"{path}: line {number}"
            try:
                line = raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"{where}: not UTF-8 text ({exc.reason})") from exc
            if number == 1:
                if line != HEADER:
                    raise DataError(f"{where}: header is {line!r}; expected 'Source<TAB>Target'")
                continue
            if limit is not None and number - 1 > limit:
                return
            fields = line.split("\t")
            if len(fields) != 2:
                raise DataError(f"{where}: {len(fields)} tab-separated field(s); expected 2 (Source, Target)")
            source, target = fields
            if target not in DIGITS:
                what = "outside 0-9" if target.lstrip("-").isdigit() else "not a digit"
                raise DataError(f"{where}: Target {target!r} is {what}; expected one digit 0-9")
            yield where, source, int(target)
    if path.stat().st_size == 0:
        raise DataError(f"{path}: empty file; expected the header 'Source<TAB>Target'")


def read_split(path: Path, limit: int | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Symbol codes per example and the targets (int64) of a ListOps TSV (its first ``limit`` examples)."""
    codes, targets = [], []
    for where, source, target in read_rows(path, limit):
        symbols = encode_source(source, where)
        value = evaluate_codes(symbols)
        if value != target:
            raise DataError(f"{where}: Target is {target} but the Source evaluates to {value}; the line is corrupted "
                            "(or was made with other operator rules): fix the Target or generate the file again "
                            "(fpt listops-generate)")
        codes.append(symbols)
        targets.append(target)
    if not codes:
        raise DataError(f"{path}: no examples after the header")
    return codes, np.asarray(targets, dtype=np.int64)
