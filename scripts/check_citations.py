#!/usr/bin/env python3
"""check_citations.py ROOT: the repository explains itself.

Fails when a tracked source, script or document cites a rule book outside the
repository (a spec file name, a "spec/" path, an issue number, a seed document)
or cites a section of docs/NAME.md that the page does not have. Test data
(tests/cli/*/in, expected) is not read; paths to the optional shared real-data
folder are data locations, not citations, and are allowed.
"""
import os, re, subprocess, sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
OUTSIDE = ['grid', 'update-and-report', 'ingest', 'ingest-more', 'analysis', 'comm',
           'aie-trace', 'replay', 'consumer', 'query']
BAD = [
    (re.compile(r'(?<![\w/.-])(' + '|'.join(map(re.escape, OUTSIDE)) + r')\.md\b'), 'a rule book outside the repository'),
    (re.compile(r'shared/spec|(?<!git-lfs.github.com/)\bspec/'), 'a path outside the repository'),
    (re.compile(r'\b[Ss]pec(?:\'s)? §'), 'a spec section (name the docs/ page)'),
    (re.compile(r'\b[Ii]ssues? #?[0-9]+'), 'an issue number (say the rule instead)'),
    (re.compile(r'\bseed [0-9]{3}\b'), 'a seed document (name the reference tool)'),
]
SECTION = re.compile(r'(?:docs/)?\b([A-Za-z-]+\.md)((?: ?(?:§ ?[0-9]+(?:\.[0-9]+)*(?:-[0-9.]+)?)(?:,| and|/)?)+)')
SUFFIXES = ('.c', '.h', '.cu', '.py', '.sh', '.md', '.txt', '.cmake', '.awk', '.yaml', '.in')

def tracked():
    out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], capture_output=True, text=True).stdout
    for f in out.split('\0'):
        if not f or not f.endswith(SUFFIXES): continue
        if f.startswith('tests/cli/') and f != 'tests/cli/README.md': continue
        yield f

def headings(doc, cache={}):
    if doc not in cache:
        path = os.path.join(root, 'docs', doc)
        nums = set()
        if os.path.exists(path):
            for line in open(path, encoding='utf-8'):
                m = re.match(r'#+ +§?([0-9]+(?:\.[0-9]+)*)\.? ', line)
                if m: nums.add(m.group(1))
        cache[doc] = nums if os.path.exists(path) else None
    return cache[doc]

problems = 0
for f in tracked():
    if f == 'scripts/check_citations.py': continue
    try: lines = open(os.path.join(root, f), encoding='utf-8').read().split('\n')
    except (UnicodeDecodeError, FileNotFoundError): continue
    for no, line in enumerate(lines, 1):
        for rx, why in BAD:
            if rx.search(line):
                print(f'{f}:{no}: cites {why}: {line.strip()[:100]}'); problems += 1
        for m in SECTION.finditer(line):
            doc = m.group(1)
            nums = headings(doc)
            if nums is None: continue
            for n in re.findall(r'§ ?([0-9]+(?:\.[0-9]+)*)', m.group(2)):
                if n not in nums:
                    print(f'{f}:{no}: docs/{doc} has no section §{n}'); problems += 1
if problems:
    print(f'{problems} citation problem(s)', file=sys.stderr); sys.exit(1)
