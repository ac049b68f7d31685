#!/usr/bin/env python3
"""The Markdown docs (ROOT/README.md, ROOT/docs/*.md) are references:
- every relative link resolves: the file exists and, with a #fragment, the
  target has a heading of that anchor (GitHub's slugs: lower case,
  punctuation but '-' and '_' dropped, spaces to '-', repeats numbered);
  links inside code are not links;
- no line tells the history of the work ("run 12", "this session"): a
  figure names its device, commit and date instead (docs/benchmarks.md).
usage: doc_check.py ROOT"""
import os
import re
import sys

LINK = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)')
DIARY = re.compile(r'\brun [0-9]|this session', re.IGNORECASE)


def strip_code(text):
    """The text without fenced blocks and inline code spans."""
    out, fenced = [], False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            out.append('')
            continue
        out.append('' if fenced else re.sub(r'`[^`]*`', '', line))
    return '\n'.join(out)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def anchors(path):
    seen, result = {}, set()
    fenced = False
    for line in open(path, encoding='utf-8'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else '%s-%d' % (base, n))
    return result


def main():
    root = sys.argv[1]
    docs = [os.path.join(root, 'README.md')]
    docdir = os.path.join(root, 'docs')
    docs += sorted(os.path.join(docdir, f) for f in os.listdir(docdir) if f.endswith('.md'))
    bad = 0
    for doc in docs:
        raw = open(doc, encoding='utf-8').read()
        for lineno, line in enumerate(raw.split('\n'), 1):
            m = DIARY.search(line)
            if m:
                print('%s:%d: "%s": say the device, commit and date instead'
                      % (os.path.relpath(doc, root), lineno, m.group(0)))
                bad += 1
        text = strip_code(raw)
        for lineno, line in enumerate(text.split('\n'), 1):
            for target in LINK.findall(line):
                if re.match(r'[a-z][a-z0-9+.-]*:', target):
                    continue  # http:, mailto: ...
                path, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                where = '%s:%d: %s' % (os.path.relpath(doc, root), lineno, target)
                if not os.path.exists(dest):
                    print('%s: no such file' % where)
                    bad += 1
                elif frag and dest.endswith('.md') and frag not in anchors(dest):
                    print('%s: no heading with this anchor in %s' % (where, os.path.relpath(dest, root)))
                    bad += 1
    print('%d docs checked, %d problems' % (len(docs), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
