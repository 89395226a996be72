#!/usr/bin/env python3
"""Check that the samples of program output in docs/cli.md are what the
program prints.

Usage: check_cli_samples.py SOURCE_ROOT DVI_EXE [MARKDOWN ...]

MARKDOWN defaults to docs/cli.md (relative to SOURCE_ROOT).

Marker
------
A sample of program output is a fenced code block (``` or ~~~) whose opening
fence is on the line right after a marker line:

    <!-- output of: COMMAND[; OPTION]... -->

COMMAND is split into words as by a POSIX shell (quotes, no expansion; it is
not run by a shell) and must start with the word dvi, which is replaced by
DVI_EXE. It runs with SOURCE_ROOT as the working directory, no input
(stdin is /dev/null), LC_ALL=C, and a time limit of 300 s. OPTIONs are:

  exit N        the expected exit status (default 0)
  stdout        the block is what the program prints on stdout, and nothing
                may be printed on stderr
  stderr        the block is what the program prints on stderr, and nothing
                may be printed on stdout
                (with neither: stdout and stderr go to one pipe, as with 2>&1,
                and the block is what comes out of it)
  wall-clock column: NAME
                the column headed NAME holds wall-clock times (see below)
  round-off     numbers below 1e-14 in magnitude are round-off (see below)

Samples that are not program output (e.g. a progress line as it appears on
a terminal) simply have no marker and are not checked.

Comparison and normalisation
----------------------------
The block and the program's output are compared line by line, after these
normalisations, applied to both in the same way and only these:

  - trailing white space of every line, and empty lines at the end, are
    dropped (editors strip trailing blanks; the program pads table columns);
  - with "wall-clock column: NAME": the header line is the first line in
    which NAME appears as a word delimited by white space; in the lines after
    it, a number followed by " ms" or " s" that ends exactly where NAME ends
    in the header (the table's columns are right-aligned) is replaced by
    "<wall-clock>" followed by its unit, and the blanks before it by one
    blank. Nothing else in those lines is touched, so the unit, the other
    columns and the rows themselves must still match;
  - with "round-off": a white-space-delimited number written in the C "%e"
    style (e.g. 7.562e-17, 0.000e+00) whose magnitude is below 1e-14 is
    replaced by "<round-off>". Such values are at the level of
    double-precision round-off for the data of order 1 of the samples (a
    residual of an exact solve, or a difference to a reference), and their
    digits may differ between builds (compiler flags, BLAS kernels). A
    number of 1e-14 or more must match as printed.

The check fails when a marker is malformed or not followed by a fenced
block, a command cannot be run, the exit status differs, the stream that
should be silent is not, or the normalised texts differ (shown as a diff).
It also fails when there is no marker at all, so that it cannot pass by
checking nothing.

Exit status: 0 all samples match (one line per sample is printed), 1 a
sample does not, 2 bad usage.
"""

import difflib
import os
import re
import shlex
import subprocess
import sys

MARKER_RE = re.compile(r'^\s*<!--\s*output of:\s*(.*?)\s*-->\s*$')
FENCE_RE = re.compile(r'^[ \t]*(`{3,}|~{3,})(.*)$')
ROUND_OFF_RE = re.compile(r'(?<!\S)[-+]?\d\.\d+e[-+]\d+(?!\S)')
TIMEOUT = 300


class SampleError(Exception):
    pass


def parse_marker(text):
    """Returns (argv, options) of a marker's text."""
    parts = [p.strip() for p in text.split(';')]
    command = parts[0]
    opts = {'exit': 0, 'stream': None, 'wall_columns': [], 'round_off': False}
    for p in parts[1:]:
        m = re.fullmatch(r'exit\s+(\d+)', p)
        if m:
            opts['exit'] = int(m.group(1))
            continue
        if p in ('stdout', 'stderr'):
            if opts['stream'] is not None:
                raise SampleError('marker names both stdout and stderr')
            opts['stream'] = p
            continue
        m = re.fullmatch(r'wall-clock column:\s*(\S+)', p)
        if m:
            opts['wall_columns'].append(m.group(1))
            continue
        if p == 'round-off':
            opts['round_off'] = True
            continue
        raise SampleError('unknown marker option %r' % p)
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise SampleError('cannot split the command: %s' % e)
    if not argv or argv[0] != 'dvi':
        raise SampleError('the command must start with "dvi" (got %r)' % command)
    return argv, opts


def read_samples(path):
    """Yields (marker_line, marker_text, block_lines) for every marker; a
    marker not followed by a fenced block gives block_lines None."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    i = 0
    fence = None
    while i < len(lines):
        line = lines[i]
        fm = FENCE_RE.match(line)
        if fence is not None:  # inside a block that is not a sample
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence) \
                    and fm.group(2).strip() == '':
                fence = None
            i += 1
            continue
        if fm:
            fence = fm.group(1)
            i += 1
            continue
        m = MARKER_RE.match(line)
        if not m:
            i += 1
            continue
        marker_line = i + 1
        nxt = FENCE_RE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not nxt:
            yield marker_line, m.group(1), None
            i += 1
            continue
        open_fence = nxt.group(1)
        block = []
        j = i + 2
        closed = False
        while j < len(lines):
            cm = FENCE_RE.match(lines[j])
            if cm and cm.group(1)[0] == open_fence[0] and len(cm.group(1)) >= len(open_fence) \
                    and cm.group(2).strip() == '':
                closed = True
                break
            block.append(lines[j])
            j += 1
        if not closed:
            yield marker_line, m.group(1), None
            return
        yield marker_line, m.group(1), block
        i = j + 1


def normalise(text, opts):
    lines = [l.rstrip() for l in text.split('\n')]
    while lines and lines[-1] == '':
        lines.pop()
    for name in opts['wall_columns']:
        header = None
        for k, l in enumerate(lines):
            m = re.search(r'(?<!\S)' + re.escape(name) + r'(?!\S)', l)
            if m:
                header = (k, m.end())
                break
        if header is None:
            raise SampleError('wall-clock column %r: no header line names it' % name)
        k0, end = header
        value_re = re.compile(r'\s+[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)? (ms|s)(?!\S)')
        for k in range(k0 + 1, len(lines)):
            l = lines[k]
            for m in value_re.finditer(l):
                if m.end() == end:
                    lines[k] = l[:m.start()] + ' <wall-clock> ' + m.group(1) + l[m.end():]
                    break
    if opts['round_off']:
        def tiny(m):
            return '<round-off>' if abs(float(m.group(0))) < 1e-14 else m.group(0)
        lines = [ROUND_OFF_RE.sub(tiny, l) for l in lines]
    return lines


def check_sample(root, exe, argv, opts, block):
    """Returns a list of problems (empty: the sample matches)."""
    env = dict(os.environ)
    env['LC_ALL'] = 'C'
    cmd = [exe] + argv[1:]
    try:
        r = subprocess.run(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT if opts['stream'] is None else subprocess.PIPE,
                           timeout=TIMEOUT)
    except (OSError, subprocess.SubprocessError) as e:
        return ['cannot run %s: %s' % (' '.join(cmd), e)]
    out = r.stdout.decode('utf-8', errors='replace')
    err = r.stderr.decode('utf-8', errors='replace') if r.stderr is not None else ''
    problems = []
    if r.returncode != opts['exit']:
        problems.append('exit status %d, the sample says %d' % (r.returncode, opts['exit']))
    if opts['stream'] == 'stdout':
        shown, silent, silent_name = out, err, 'stderr'
    elif opts['stream'] == 'stderr':
        shown, silent, silent_name = err, out, 'stdout'
    else:
        shown, silent, silent_name = out, '', None
    if silent.strip():
        problems.append('the program also printed on %s:\n%s' % (silent_name, silent.rstrip()))
    try:
        got = normalise(shown, opts)
        want = normalise('\n'.join(block), opts)
    except SampleError as e:
        return problems + [str(e)]
    if got != want:
        diff = difflib.unified_diff(want, got, 'sample (normalised)', 'program output (normalised)',
                                    lineterm='')
        problems.append('the output differs from the sample:\n' + '\n'.join(diff))
    return problems


def main(argv):
    if len(argv) < 3 or argv[1] in ('-h', '--help'):
        sys.stderr.write('usage: check_cli_samples.py SOURCE_ROOT DVI_EXE [MARKDOWN ...]\n')
        return 2
    root = os.path.abspath(argv[1])
    exe = os.path.abspath(argv[2])
    if not os.path.isdir(root):
        sys.stderr.write('check_cli_samples.py: %s: not a directory\n' % argv[1])
        return 2
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        sys.stderr.write('check_cli_samples.py: %s: not an executable file\n' % argv[2])
        return 2
    docs = argv[3:] or [os.path.join(root, 'docs', 'cli.md')]
    failed = 0
    checked = 0
    for doc in docs:
        doc = os.path.abspath(doc)
        rel = os.path.relpath(doc, root)
        if rel.startswith(os.pardir):
            rel = doc
        for line, marker, block in read_samples(doc):
            checked += 1
            try:
                cmd, opts = parse_marker(marker)
            except SampleError as e:
                failed += 1
                print('%s:%d: %s: bad marker: %s' % (rel, line, marker, e))
                continue
            if block is None:
                failed += 1
                print('%s:%d: %s: the marker is not followed by a fenced code block' % (rel, line, marker))
                continue
            problems = check_sample(root, exe, cmd, opts, block)
            if problems:
                failed += 1
                for p in problems:
                    print('%s:%d: %s: %s' % (rel, line, ' '.join(cmd), p))
            else:
                print('%s:%d: ok: %s' % (rel, line, ' '.join(cmd)))
    if checked == 0:
        print('no sample marked "<!-- output of: ... -->" in %s' % ', '.join(docs))
        return 1
    if failed:
        print('%d of %d samples do not match the program' % (failed, checked))
        return 1
    print('%d samples match the program' % checked)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
