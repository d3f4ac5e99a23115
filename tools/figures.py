#!/usr/bin/env python3
"""figures.py: the figures the docs quote, regenerated from the commands
that print them, and checked against them (make figures, make
figures-check; test/tools/test_figures.sh).

    tools/figures.py (--update | --check) [--bin DIR] [--fast] FILE...

A Markdown file marks what it quotes with HTML comments, which a reader
of the rendered page never sees:

  <!-- source NAME: COMMAND -->
  <!-- source NAME slow: COMMAND -->
      COMMAND (a shell command line, run from the repository's root with
      --bin first on PATH) prints what the figures below quote; NAME is
      how they name it.  Each source runs once per invocation, whatever
      the number of figures that quote it; "slow" ones are skipped with
      --fast (the sanitizer build's test runs them at full size once, in
      the plain build).  A source is visible to the file that defines it
      and to the files after it on the command line.

  <!-- figure NAME [prompt] [lines SPEC] -->
  ```
  ...
  ```
  <!-- /figure -->
      a fenced block that holds NAME's output: all of it, or the lines
      of SPEC ("1-4,...,9-10": ranges from 1, "..." a line "  ..."),
      after "$ COMMAND" when "prompt" is given.

  <!-- v NAME PATH FORMAT -->TEXT<!-- /v -->
      TEXT is one value of NAME's output read as JSON: PATH is keys
      separated by dots, where an array is entered by the first element
      that has every KEY=VALUE of [KEY=VALUE] ("transports[name=srd]",
      "cells[transport=tcp][point_idx=1].figures.jain.mean"; [KEY~TEXT]
      is an element whose KEY holds TEXT: "[point~ranks=64]"; a number
      N is an array's element N from 0: "path_share.0"), or two
      such paths "A/B" for a ratio (SRD's throughput over TCP's), and
      FORMAT is a Python format ("{:.2f}", "{:.1%}", "{:,}") or us3 (a
      time in microseconds to three digits in us, ms or s: "5.81 ms").

--update rewrites the files with what the commands print now; --check
changes nothing and exits 1 when a file says something else (each
difference named with its file, line, figure and both values), 2 for a
bad marker or a source that failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCE = re.compile(r"<!-- source ([A-Za-z0-9_.-]+)( slow)?: (.*?) -->")
FIGURE = re.compile(r"<!-- figure ([A-Za-z0-9_.-]+)((?: [^ >]+)*) -->")
FIGURE_END = "<!-- /figure -->"
VALUE = re.compile(r"<!-- v ([A-Za-z0-9_.-]+) (\S+) (\S+) -->(.*?)<!-- /v -->")
STEP = re.compile(r"(?:^|\.)([^.\[\]]+)((?:\[[^\]]*\])*)")
FILTER = re.compile(r"\[([^\]=~]+)([=~])([^\]]*)\]")


class Bad(Exception):
    """A marker, source or path that cannot be used: exit 2."""


class Sources:
    """The commands, each run at most once."""

    def __init__(self, bindir, fast):
        self.bindir = bindir
        self.fast = fast
        self.cmd = {}
        self.slow = set()
        self.out = {}
        self.data = {}

    def define(self, name, slow, cmd, where):
        if name in self.cmd and self.cmd[name] != cmd:
            raise Bad(f"{where}: source {name} defined twice, differently")
        self.cmd[name] = cmd
        if slow:
            self.slow.add(name)

    def skipped(self, name):
        return self.fast and name in self.slow

    def text(self, name, where):
        if name not in self.cmd:
            raise Bad(f"{where}: no source named {name} (define it first)")
        if name not in self.out:
            env = dict(os.environ)
            env["PATH"] = self.bindir + os.pathsep + env.get("PATH", "")
            t0 = time.time()
            p = subprocess.run(self.cmd[name], shell=True, cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
            if p.returncode != 0:
                raise Bad(f"{where}: source {name}: `{self.cmd[name]}` exited "
                          f"{p.returncode}: {p.stderr.strip()[-500:]}")
            print(f"  ran {name} ({time.time() - t0:.1f} s): {self.cmd[name]}",
                  file=sys.stderr)
            self.out[name] = p.stdout
        return self.out[name]

    def json(self, name, where):
        if name not in self.data:
            try:
                self.data[name] = json.loads(self.text(name, where))
            except ValueError as e:
                raise Bad(f"{where}: source {name} is not JSON: {e}")
        return self.data[name]


def walk(data, path, where):
    """The value at |path| in |data| (see the module's doc)."""
    cur = data
    at = 0
    for m in STEP.finditer(path):
        if m.start() != at:
            break
        at = m.end()
        key, filters = m.group(1), FILTER.findall(m.group(2))
        if len("".join(f"[{k}{op}{v}]" for k, op, v in filters)) != \
                len(m.group(2)):
            raise Bad(f"{where}: {path}: bad filter {m.group(2)}")
        if isinstance(cur, list) and key.isdigit():
            if int(key) >= len(cur):
                raise Bad(f"{where}: {path}: no element {key} (the array "
                          f"has {len(cur)})")
            cur = cur[int(key)]
        elif not isinstance(cur, dict) or key not in cur:
            raise Bad(f"{where}: {path}: no key '{key}'")
        else:
            cur = cur[key]
        if filters:
            if not isinstance(cur, list):
                raise Bad(f"{where}: {path}: '{key}' is not an array")
            hit = [e for e in cur if isinstance(e, dict) and
                   all(str(e.get(k)) == v if op == "=" else v in str(e.get(k))
                       for k, op, v in filters)]
            if not hit:
                raise Bad(f"{where}: {path}: no element of '{key}' has "
                          + ", ".join(f"{k}{op}{v}" for k, op, v in filters))
            cur = hit[0]
    if at != len(path) or at == 0:
        raise Bad(f"{where}: bad path {path}")
    return cur


def fmt_value(fmt, v):
    """|v| in |fmt|: a Python format, or "us3", a time in microseconds
    with three significant digits in us, ms or s ("290 us", "5.81 ms")."""
    if fmt == "us3":
        for unit, div in (("s", 1e6), ("ms", 1e3), ("us", 1)):
            if abs(v) >= div or unit == "us":
                x = v / div
                digits = 3 - len(str(int(abs(x)))) if abs(x) >= 1 else 2
                return f"{x:.{max(digits, 0)}f} {unit}"
    return fmt.format(v)


def pick_lines(text, spec, where):
    """The lines of |text| that |spec| names ("1-4,...,9")."""
    lines = text.rstrip("\n").split("\n")
    out = []
    for part in spec.split(","):
        if part == "...":
            out.append("  ...")
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if m is None:
            raise Bad(f"{where}: bad lines '{spec}'")
        a = int(m.group(1))
        b = int(m.group(2) or a)
        if a < 1 or b < a or b > len(lines):
            raise Bad(f"{where}: lines {part}: the output has {len(lines)}")
        out.extend(lines[a - 1:b])
    return "\n".join(out) + "\n"


def process(path, src, update):
    """Checks (or rewrites) one file; returns its differences."""
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    diffs = []
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{rel}:{i + 1}"
        for m in SOURCE.finditer(line):
            src.define(m.group(1), m.group(2), m.group(3), where)
        fm = FIGURE.search(line)
        if fm:
            name, opts = fm.group(1), fm.group(2).split()
            # The block: the fence after the marker, up to the end marker.
            j = i + 1
            if j >= len(lines) or not lines[j].startswith("```"):
                raise Bad(f"{where}: figure {name}: a ``` fence must follow")
            k = j + 1
            while k < len(lines) and lines[k] != "```":
                k += 1
            if k + 1 >= len(lines) or lines[k + 1] != FIGURE_END:
                raise Bad(f"{where}: figure {name}: expected ``` and then "
                          f"{FIGURE_END}")
            old = "\n".join(lines[j + 1:k]) + "\n" if k > j + 1 else ""
            new = old
            if not src.skipped(name):
                new = src.text(name, where)
                it = iter(opts)
                prompt = False
                for o in it:
                    if o == "prompt":
                        prompt = True
                    elif o == "lines":
                        new = pick_lines(new, next(it, ""), where)
                    else:
                        raise Bad(f"{where}: figure {name}: unknown option {o}")
                if prompt:
                    new = f"$ {src.cmd[name]}\n" + new
            if new != old:
                diffs.append(f"{where}: figure {name}: the block differs from "
                             f"what `{src.cmd[name]}` prints")
            out.append(line)
            out.append(lines[j])
            out.extend(new.rstrip("\n").split("\n") if new else [])
            out.append("```")
            out.append(FIGURE_END)
            i = k + 2
            continue

        def value(m):
            name, vpath, fmt, text = m.groups()
            if src.skipped(name):
                return m.group(0)
            data = src.json(name, where)
            parts = vpath.split("/")
            if len(parts) > 2:
                raise Bad(f"{where}: {vpath}: at most one '/'")
            v = walk(data, parts[0], where)
            if len(parts) == 2:
                d = walk(data, parts[1], where)
                if not isinstance(v, (int, float)) or not d:
                    raise Bad(f"{where}: {vpath}: not a ratio of numbers")
                v = v / d
            try:
                now = fmt_value(fmt, v)
            except (ValueError, TypeError) as e:
                raise Bad(f"{where}: {name} {vpath}: format {fmt}: {e}")
            if now != text:
                diffs.append(f"{where}: {name} {vpath}: the doc says {text}, "
                             f"`{src.cmd[name]}` prints {now}")
            return f"<!-- v {name} {vpath} {fmt} -->{now}<!-- /v -->"

        if line.count("<!-- v ") != len(VALUE.findall(line)):
            raise Bad(f"{where}: a value marker that does not read as "
                      f"<!-- v NAME PATH FORMAT -->TEXT<!-- /v --> (no blank "
                      f"inside PATH or FORMAT)")
        out.append(VALUE.sub(value, line))
        i += 1
    if update:
        text = "\n".join(out)
        with open(path, encoding="utf-8") as f:
            same = f.read() == text
        if not same:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
    return diffs


def main():
    ap = argparse.ArgumentParser(
        description="Regenerate (--update) or check (--check) the figures "
        "the docs quote from the commands that print them.")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--update", action="store_true",
                      help="rewrite the files with what the commands print")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when a file says something else")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="the built tools, first on PATH [build/bin]")
    ap.add_argument("--fast", action="store_true",
                    help="skip the sources marked slow")
    ap.add_argument("files", nargs="+", metavar="FILE")
    a = ap.parse_args()
    src = Sources(os.path.abspath(a.bin), a.fast)
    diffs = []
    try:
        for f in a.files:
            diffs += process(os.path.abspath(f), src, a.update)
    except Bad as e:
        print(f"figures: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"figures: {e}", file=sys.stderr)
        return 2
    n = len(src.out)
    if a.update:
        print(f"figures: {len(diffs)} figure(s) updated from {n} command(s)",
              file=sys.stderr)
        return 0
    for d in diffs:
        print(f"figures: {d}", file=sys.stderr)
    if diffs:
        print(f"figures: {len(diffs)} figure(s) differ from what the code "
              f"prints: run `make figures` (and read the diff)",
              file=sys.stderr)
        return 1
    print(f"figures: every figure matches ({n} command(s) run"
          f"{', slow ones skipped' if a.fast else ''})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
