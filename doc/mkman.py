#!/usr/bin/env python3
"""mkman.py - the scdoc sources of printkbot's two man pages.

  mkman.py 1 PRINTKBOT-CORE < printkbot.1.scd.in  > printkbot.1.scd
  mkman.py 5 CONFIG.EXAMPLE < printkbot.conf.5.scd.in > printkbot.conf.5.scd

printkbot(1): each "@HELP cmd@" line becomes the command's own --help
(run from the binary), verbatim, so that the page and --help cannot
part.  printkbot.conf(5): "@CONFIG@" becomes config.example, group by
group, its comments as text and each "#key = default" line as a key
item, so that the page and the example file cannot part either.
scdoc makes the roff (the Makefile); this only assembles its input.
"""
import re
import subprocess
import sys


def literal(lines):
    return ["```"] + [l.rstrip() for l in lines] + ["```"]


def command_help(binary, name):
    out = subprocess.run([binary, name, "--help"], check=True, capture_output=True, text=True)
    return literal(out.stdout.rstrip("\n").split("\n"))


def escape(text):
    # scdoc's markup is * and _ (and \ itself); config.example means them literally
    text = re.sub(r"([\\*_])", r"\\\1", text)
    # a line that starts with [ is a table to scdoc, - or . a list, ` a literal block
    return "\\" + text if text[:1] in "[-.`" and text else text


KEY = re.compile(r"^#?([a-z_]+) = ?(.*)$")
GROUP = re.compile(r"^#?\[([a-z-]+)(?: ([^\]]+))?\]$")


def config_sections(example):
    """config.example as scdoc: a ## heading per group, text, key items."""
    out, para, table = [], [], []
    seen_prefix = set()

    def flush():
        if table:
            out.extend(literal(table) + [""])
            table.clear()
        if para:
            out.extend(para + [""])
            para.clear()

    lines = open(example).read().split("\n")
    # A commented-out example group ("#[tree net]") comes after the text
    # that explains it, from the last empty line on: its heading goes first.
    for i, l in enumerate(list(lines)):
        g = GROUP.match(l)
        if l.startswith("#[") and g and g.group(2) and g.group(1) not in seen_prefix:
            seen_prefix.add(g.group(1))
            j = max(n for n in range(i) if lines[n] == "")
            lines.insert(j + 1, lines.pop(i))
    seen_prefix.clear()
    # the file's own preamble (up to the first group) is said by the page's DESCRIPTION
    first = next(i for i, l in enumerate(lines) if GROUP.match(l.strip()))
    for raw in lines[first:]:
        line = raw.rstrip()
        g = GROUP.match(line)
        k = KEY.match(line)
        if g:
            flush()
            group, name = g.groups()
            if name is None:
                out += ["## [%s]" % group, ""]
            elif group not in seen_prefix:
                seen_prefix.add(group)
                out += ["## [%s NAME]" % group, "",
                        "Any number of these; the example below is *[%s %s]*." % (group, escape(name)), ""]
            else:
                out += ["Another example: *[%s %s]*." % (group, escape(name)), ""]
        elif k and not line.startswith("# "):
            flush()
            key, value = k.groups()
            shown = escape(value) if value else "(empty: unset)"
            out += ["*%s* = %s" % (key, shown), ""]
        elif line in ("#", ""):
            flush()
        elif line.startswith("#   ") or line.startswith("#\t"):
            if para:
                flush()
            table.append(line[1:])
        elif line.startswith("# "):
            if table:
                flush()
            para.append(escape(line[2:]))
        else:
            sys.exit("mkman.py: %s: a line neither comment, group nor key: %r" % (example, line))
    flush()
    return out


def main():
    kind, source = sys.argv[1], sys.argv[2]
    out = []
    for line in sys.stdin.read().rstrip("\n").split("\n"):
        m = re.fullmatch(r"@HELP ([a-z-]+)@", line)
        if kind == "1" and m:
            out += command_help(source, m.group(1))
        elif kind == "5" and line == "@CONFIG@":
            out += config_sections(source)
        else:
            out.append(line)
    sys.stdout.write("\n".join(out).rstrip("\n") + "\n")


main()
