#!/usr/bin/env python3
"""Check the relative links and anchors of the Markdown documentation.

Usage: check_links.py SOURCE_ROOT

Checked files: README.md, docs/*.md, and every *.md under data/, studies/
and tests/data/ (recursively), relative to SOURCE_ROOT.

Checked links:
  - inline links and images, [text](target), [text](target "title"),
    [text](<target>), ![alt](target);
  - reference definitions, [label]: target;
  - href="..." and src="..." of HTML tags written in the Markdown.
Skipped: links inside fenced code blocks (``` or ~~~, at any indentation),
inline code spans and HTML comments, and absolute URLs (any scheme such as
http:, https:, mailto:).

A target TARGET#ANCHOR is resolved relative to the directory of the linking
file (a target starting with / relative to SOURCE_ROOT, as on GitHub); it is
percent-decoded. The file or directory must exist inside SOURCE_ROOT. An
anchor (also #ANCHOR alone, meaning the linking file itself) must name a
heading of the target Markdown file, or of README.md for a directory, by
GitHub's slug rules:
  - the heading's text as rendered (inline code keeps its content; emphasis
    markers, link URLs and HTML tags are dropped; backslash escapes and
    entities are decoded),
  - lower-cased,
  - every character that is not a Unicode letter, mark, number, connector
    punctuation (e.g. _), space or hyphen removed,
  - each space replaced by a hyphen,
  - the second heading with the same slug gets -1, the third -2, and so on;
or an explicit anchor <a name="..."> or id="..." of an HTML tag in that file.
Anchors into files that are not Markdown (e.g. source.c#L10) are not checked.
An empty anchor (#) means the top of the page and is accepted.

Output: every broken link as FILE:LINE: target: reason, and exit status 1;
otherwise one line with the counts, and exit status 0. Exit status 2 for bad
usage.
"""

import html
import os
import re
import sys
import unicodedata
import urllib.parse

FENCE_RE = re.compile(r'^[ \t]*(`{3,}|~{3,})(.*)$')  # any indent: fences in list items
ATX_RE = re.compile(r'^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$')
ATX_CLOSE_RE = re.compile(r'(?:^|[ \t]+)#+[ \t]*$')
SETEXT_RE = re.compile(r'^ {0,3}(=+|-+)[ \t]*$')
SCHEME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
# link text: brackets may nest one level ([a [b] c](target))
INLINE_LINK_RE = re.compile(r'(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(')
REF_DEF_RE = re.compile(r'^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:[ \t]*(<[^>\n]*>|\S+)', re.M)
HTML_ATTR_RE = re.compile(r'<[A-Za-z][^<>]*?\b(href|src)\s*=\s*("([^"]*)"|\'([^\']*)\')', re.S)
HTML_ANCHOR_RE = re.compile(r'<[A-Za-z][^<>]*?\b(name|id)\s*=\s*("([^"]*)"|\'([^\']*)\'|([^\s"\'>]+))', re.S)
HTML_TAG_RE = re.compile(r'</?[A-Za-z][^<>]*>|<!--.*?-->', re.S)
ESCAPE_RE = re.compile(r'\\([!-/:-@\[-`{-~])')


def split_fences(lines):
    """Yield (line_index, text, in_fence) for every line. Fence lines and the
    lines between them count as in_fence."""
    fence = None  # (char, length) of the open fence
    out = []
    for i, line in enumerate(lines):
        m = FENCE_RE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == '`' and '`' in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)))
                out.append((i, line, True))
                continue
            out.append((i, line, False))
        else:
            out.append((i, line, True))
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] \
                    and m.group(2).strip() == '':
                fence = None
    return out


def blank_code_spans(text):
    """Replace inline code spans (backticks included) with spaces, keeping
    newlines and every other character's offset. Returns the new text and the
    list of (start, end, content) of the spans."""
    chars = list(text)
    spans = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] == '\\' and i + 1 < n:
            i += 2
            continue
        if text[i] != '`':
            i += 1
            continue
        j = i
        while j < n and text[j] == '`':
            j += 1
        run = j - i
        # find a closing run of exactly the same length
        k = j
        close = -1
        while k < n:
            if text[k] == '`':
                m = k
                while m < n and text[m] == '`':
                    m += 1
                if m - k == run:
                    close = k
                    break
                k = m
            else:
                k += 1
        if close < 0:
            i = j  # a literal run of backticks
            continue
        end = close + run
        spans.append((i, end, text[j:close]))
        for p in range(i, end):
            if chars[p] != '\n':
                chars[p] = ' '
        i = end
    return ''.join(chars), spans


def blank_comments(text, in_comment):
    """Replace HTML comments <!-- ... --> (not rendered, so their links are
    not links) with spaces, keeping newlines. in_comment: whether the text
    starts inside a comment left open by the previous block. Returns the new
    text and whether a comment is still open at its end."""
    out = []
    pos = 0
    n = len(text)
    while pos < n:
        if in_comment:
            end = text.find('-->', pos)
            stop = n if end < 0 else end + 3
            out.append(re.sub(r'[^\n]', ' ', text[pos:stop]))
            pos = stop
            in_comment = end < 0
        else:
            start = text.find('<!--', pos)
            if start < 0:
                out.append(text[pos:])
                break
            out.append(text[pos:start])
            pos = start
            in_comment = True
    return ''.join(out), in_comment


def blocks_outside_fences(lines):
    """Group the lines outside fenced code into blocks separated by blank
    lines (a code span never crosses a blank line). Yields (first_line_index,
    text)."""
    block = []
    start = None
    for i, line, in_fence in split_fences(lines):
        if in_fence or line.strip() == '':
            if block:
                yield start, '\n'.join(block)
            block = []
            start = None
            continue
        if start is None:
            start = i
        block.append(line)
    if block:
        yield start, '\n'.join(block)


def heading_text(raw):
    """The text GitHub renders for a heading's Markdown source."""
    # code spans keep their content literally; protect it with placeholders
    _, spans = blank_code_spans(raw)
    pieces = []
    last = 0
    codes = []
    for s, e, content in spans:
        pieces.append(raw[last:s])
        pieces.append('\x00%d\x00' % len(codes))
        c = content
        if len(c) >= 2 and c[0] == ' ' and c[-1] == ' ' and c.strip(' '):
            c = c[1:-1]
        codes.append(c)
        last = e
    pieces.append(raw[last:])
    text = ''.join(pieces)
    # images and links: keep the text only
    text = re.sub(r'!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)', r'\1', text)
    text = re.sub(r'!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[[^\]]*\]', r'\1', text)
    text = HTML_TAG_RE.sub('', text)
    # emphasis: * runs anywhere; _ runs only at word edges (not intraword)
    text = text.replace('*', '')
    text = re.sub(r'(?<![^\W_])_+(?=\S)|(?<=\S)_+(?![^\W_])', '', text)
    text = ESCAPE_RE.sub(r'\1', text)
    text = html.unescape(text)
    text = re.sub('\x00(\\d+)\x00', lambda m: codes[int(m.group(1))], text)
    return text.strip()


def slug_base(text):
    """GitHub's slug of one heading text (before de-duplication)."""
    out = []
    for ch in text.lower():
        if ch == ' ' or ch == '-':
            out.append('-' if ch == ' ' else ch)
            continue
        cat = unicodedata.category(ch)
        if cat[0] in 'LMN' or cat == 'Pc':
            out.append(ch)
    return ''.join(out)


def anchors_of(path, cache={}):
    """The set of anchors of a Markdown file (heading slugs and explicit
    name=/id= anchors)."""
    if path in cache:
        return cache[path]
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    occurrences = {}
    anchors = set()

    def add_heading(raw):
        base = slug_base(heading_text(raw))
        result = base
        while result in occurrences:
            occurrences[base] += 1
            result = '%s-%d' % (base, occurrences[base])
        occurrences[result] = 0
        anchors.add(result)

    marked = split_fences(lines)
    for idx, (i, line, in_fence) in enumerate(marked):
        if in_fence:
            continue
        m = ATX_RE.match(line)
        if m:
            content = m.group(2) or ''
            content = ATX_CLOSE_RE.sub('', content) if content.strip('#').strip() else ''
            add_heading(content)
            continue
        # setext: a paragraph line followed by === or ---
        if idx + 1 < len(marked):
            _, nxt, nxt_fence = marked[idx + 1]
            if not nxt_fence and line.strip() and SETEXT_RE.match(nxt) \
                    and not line.startswith('    ') \
                    and not re.match(r'^ {0,3}([-*_])( *\1){2,} *$', line) \
                    and not re.match(r'^ {0,3}([-+*]|\d+[.)])\s', line) \
                    and not re.match(r'^ {0,3}(>|\|)', line) \
                    and (idx == 0 or marked[idx - 1][1].strip() == ''
                         or marked[idx - 1][2]):
                add_heading(line.strip())
    in_comment = False
    for _, text in blocks_outside_fences(lines):
        blanked, _ = blank_code_spans(text)
        blanked, in_comment = blank_comments(blanked, in_comment)
        for m in HTML_ANCHOR_RE.finditer(blanked):
            value = m.group(3) if m.group(3) is not None else \
                m.group(4) if m.group(4) is not None else m.group(5)
            anchors.add(html.unescape(value))
    cache[path] = anchors
    return anchors


def parse_destination(text, pos):
    """Parse a link destination starting at text[pos] (just after '(').
    Returns the destination string, or None if there is none."""
    n = len(text)
    while pos < n and text[pos] in ' \t\n':
        pos += 1
    if pos < n and text[pos] == '<':
        end = text.find('>', pos + 1)
        if end < 0 or '\n' in text[pos:end]:
            return None
        return text[pos + 1:end]
    depth = 0
    start = pos
    while pos < n:
        ch = text[pos]
        if ch == '\\' and pos + 1 < n:
            pos += 2
            continue
        if ch in ' \t\n':
            break
        if ch == '(':
            depth += 1
        elif ch == ')':
            if depth == 0:
                break
            depth -= 1
        pos += 1
    return text[start:pos]


def links_of(path):
    """Yield (line_number, target) for every link of a Markdown file."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    in_comment = False
    for first, text in blocks_outside_fences(lines):
        blanked, _ = blank_code_spans(text)
        blanked, in_comment = blank_comments(blanked, in_comment)
        # escaped brackets and parentheses are literal characters
        blanked = re.sub(r'\\[\[\]()]', '  ', blanked)
        found = []
        # search from every '[' so that an image inside a link's text
        # ([![alt](image)](target)) is found as well as the link
        pos = 0
        seen = set()
        while True:
            m = INLINE_LINK_RE.search(blanked, pos)
            if m is None:
                break
            pos = m.start() + 1
            if m.end() in seen:  # ![alt](x) is also found as [alt](x)
                continue
            seen.add(m.end())
            dest = parse_destination(blanked, m.end())
            if dest is not None:
                found.append((m.end(), dest))
        for m in REF_DEF_RE.finditer(blanked):
            dest = m.group(2)
            if dest.startswith('<'):
                dest = dest[1:-1]
            found.append((m.start(2), dest))
        for m in HTML_ATTR_RE.finditer(blanked):
            value = m.group(3) if m.group(3) is not None else m.group(4)
            found.append((m.start(2), html.unescape(value)))
        for offset, dest in found:
            dest = ESCAPE_RE.sub(r'\1', dest.strip())
            yield first + 1 + blanked.count('\n', 0, offset), dest


def check_target(root, src, target):
    """None if the link is good, else the reason it is broken."""
    if target == '':
        return 'empty link target'
    if SCHEME_RE.match(target):
        return None  # absolute URL: not checked
    path, _, anchor = target.partition('#')
    has_anchor = '#' in target
    path = path.split('?', 1)[0]
    path = urllib.parse.unquote(path)
    anchor = urllib.parse.unquote(anchor)
    if path == '':
        dest = src
    elif path.startswith('/'):
        dest = os.path.normpath(os.path.join(root, path.lstrip('/')))
    else:
        dest = os.path.normpath(os.path.join(os.path.dirname(src), path))
    rel = os.path.relpath(dest, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return 'points outside the source tree'
    if not os.path.exists(dest):
        return 'no such file or directory (%s)' % rel
    if not has_anchor or anchor == '':
        return None
    if os.path.isdir(dest):
        readme = os.path.join(dest, 'README.md')
        if not os.path.isfile(readme):
            return 'anchor #%s into a directory without README.md' % anchor
        dest = readme
    if not dest.lower().endswith(('.md', '.markdown')):
        return None  # e.g. file.c#L10: not checked
    anchors = anchors_of(dest)
    if anchor in anchors:
        return None
    where = os.path.relpath(dest, root)
    lower = [a for a in anchors if a == anchor.lower()]
    if lower:
        return 'no anchor #%s in %s (anchors are lower case: #%s)' % (anchor, where, lower[0])
    return 'no anchor #%s in %s' % (anchor, where)


def files_to_check(root):
    files = []
    if os.path.isfile(os.path.join(root, 'README.md')):
        files.append(os.path.join(root, 'README.md'))
    docs = os.path.join(root, 'docs')
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, f) for f in os.listdir(docs)
                        if f.endswith('.md') and os.path.isfile(os.path.join(docs, f)))
    for sub in ('data', 'studies', os.path.join('tests', 'data')):
        top = os.path.join(root, sub)
        found = []
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            found += [os.path.join(dirpath, f) for f in filenames if f.endswith('.md')]
        files += sorted(found)
    return files


def main(argv):
    if len(argv) != 2 or argv[1] in ('-h', '--help'):
        sys.stderr.write('usage: check_links.py SOURCE_ROOT\n')
        return 2
    root = os.path.abspath(argv[1])
    if not os.path.isdir(root):
        sys.stderr.write('check_links.py: %s: not a directory\n' % argv[1])
        return 2
    files = files_to_check(root)
    if not files:
        sys.stderr.write('check_links.py: no Markdown files under %s\n' % root)
        return 2
    broken = 0
    checked = 0
    for src in files:
        rel = os.path.relpath(src, root)
        for line, target in links_of(src):
            if SCHEME_RE.match(target):
                continue
            checked += 1
            reason = check_target(root, src, target)
            if reason is not None:
                broken += 1
                print('%s:%d: %s: %s' % (rel, line, target, reason))
    if broken:
        print('%d broken link(s) of %d relative links in %d files' % (broken, checked, len(files)))
        return 1
    print('%d relative links in %d Markdown files: all resolve' % (checked, len(files)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
