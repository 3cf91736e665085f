#!/usr/bin/env python3
"""A man page from a command's --help text, so that the two cannot differ:

    man-from-help.py --name memtrace-report --version 0.1.0 --output OUT \\
        -- COMMAND [ARGS...]

runs COMMAND (which prints the help on stdout and exits 0) and writes a
roff page, section 1. The help is read as memtrace's help texts are
written: the usage lines first, then paragraphs separated by blank lines.
A paragraph of two-space-indented lines is a list: an entry starts with
its term ("  -o, --output FILE  what it does"), more-indented lines go on
with the text; other indented paragraphs are kept as they are (.nf). A
line of its own ending in ':' heads a subsection."""
import argparse
import re
import subprocess
import sys

SUMMARY = {
    "memtrace": "record where CUDA memory goes, and report on it",
    "memtrace-run": "run a program with memtrace recording its CUDA allocations",
    "memtrace-report": "report on memtrace traces: out of memory, peak, leaks, graphs",
}
SEE_ALSO = ["memtrace", "memtrace-run", "memtrace-report"]


def roff(text):
    """Escapes a line of plain text for roff."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


LIST_LINE = re.compile(r"^( +)(\S(?:.*?\S)?)(?:( {2,})(\S.*))?$")


def render_list(block, out):
    """An indented list: entries ("  TERM  text"), and lines indented to
    the text's column or more that go on with the entry's text (deeper
    ones on lines of their own). False when the block is not a list."""
    parsed = [LIST_LINE.match(line) for line in block]
    if not all(parsed):
        return False
    cols = [len(m.group(1)) + len(m.group(2)) + len(m.group(3)) for m in parsed if m.group(4)]
    if not cols:
        return False
    col = min(cols)
    items = []
    for line, m in zip(block, parsed):
        indent = len(m.group(1))
        if indent < col:
            items.append((m.group(2), [(False, m.group(4))] if m.group(4) else []))
        elif items:
            items[-1][1].append((indent > col, line.strip()))
        else:
            return False
    for term, text in items:
        out.append(".TP")
        out.append("\\fB" + roff(term) + "\\fR")
        for deeper, t in text:
            if deeper:
                out.append(".br")
            out.append(roff(t))
    return True


def paragraphs(lines):
    """Blocks between blank lines, each split where its indentation starts
    or stops (a list followed by a note)."""
    block = []
    for line in lines + [""]:
        line = line.rstrip()
        if block and line and line.startswith(" ") != block[-1].startswith(" ") and \
                not (not block[-1].startswith(" ") and block[-1].endswith(":")) and \
                not re.match(r"^[Uu]sage:", block[0]):
            yield block
            block = []
        if line:
            block.append(line)
        elif block:
            yield block
            block = []


def render(name, version, help_text):
    lines = help_text.splitlines()
    blocks = list(paragraphs(lines))
    if not blocks or not re.match(r"^[Uu]sage:", blocks[0][0]):
        raise SystemExit("man-from-help: the help of %s does not start with 'usage:'" % name)
    out = ['.TH "%s" 1 "" "memtrace %s" "User Commands"' % (name.upper(), version),
           ".SH NAME", roff(name) + " \\- " + roff(SUMMARY.get(name, name)),
           ".SH SYNOPSIS", ".nf"]
    usage = blocks[0]
    prefix = len(re.match(r"^[Uu]sage: *", usage[0]).group(0))
    out.extend(roff(line[prefix:] if i == 0 else line[prefix:] if line[:prefix].isspace()
                    else line.strip()) for i, line in enumerate(usage))
    out += [".fi", ".SH DESCRIPTION"]
    for block in blocks[1:]:
        head = None
        if not block[0].startswith(" ") and block[0].endswith(":") and len(block) > 1:
            head, block = block[0][:-1], block[1:]
        if head:
            out.append('.SS "%s"' % roff(head).replace('"', "'"))
        if block[0].startswith("  "):
            if not render_list(block, out):
                out.append(".PP")
                out.append(".nf")
                out.extend(roff(line) for line in block)
                out.append(".fi")
            continue
        out.append(".PP")
        out.extend(roff(line.strip()) for line in block)
    out.append(".SH SEE ALSO")
    others = [p for p in SEE_ALSO if p != name]
    out.append(", ".join("\\fB%s\\fR(1)" % roff(p) for p in others))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("command", nargs="+")
    args = ap.parse_args()
    proc = subprocess.run(args.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.stderr.write("man-from-help: %s exited with %d and printed no help:\n%s"
                         % (" ".join(args.command), proc.returncode, proc.stderr))
        return 1
    page = render(args.name, args.version, proc.stdout)
    with open(args.output, "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
