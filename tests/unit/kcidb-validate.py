#!/usr/bin/env python3
"""kcidb-validate.py SCHEMA DOC... - validate KCIDB documents.

Each DOC (a file, "-" for standard input) is read as strict UTF-8 JSON
and validated against SCHEMA (KCIDB's I/O schema, ../shared/kcidb/) as
JSON Schema Draft-07 with format checks, as kcidb-io validates
submissions: Debian's python3-jsonschema checks "email" and, with
python3-rfc3987, "uri"; "date-time" needs a package Debian 12 lacks, so
RFC 3339 is checked here.  Then what the schema cannot say: ids are
unique per list, and every build's checkout and every test's build is in
the document.  Prints each problem with its place; exit status 0 when
every document is valid, 1 otherwise, 2 on bad usage.
"""
import datetime
import json
import re
import sys

import jsonschema

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def format_checker():
    checker = jsonschema.FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def date_time(value):
        if not isinstance(value, str):
            return True
        if not RFC3339.match(value):
            return False
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        return True

    missing = [f for f in ("email", "uri", "date-time") if f not in checker.checkers]
    if missing:
        sys.exit("kcidb-validate: no format check for %s (python3-rfc3987 installed?)" % ", ".join(missing))
    return checker


def problems(schema, doc):
    out = []
    validator = jsonschema.Draft7Validator(schema, format_checker=format_checker())
    for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        out.append("/%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message))
    if out:
        return out
    ids = {}
    for kind in ("checkouts", "builds", "tests"):
        seen = set()
        for i, o in enumerate(doc.get(kind, [])):
            if o["id"] in seen:
                out.append("/%s/%d: id %s twice" % (kind, i, o["id"]))
            seen.add(o["id"])
        ids[kind] = seen
    for i, b in enumerate(doc.get("builds", [])):
        if b["checkout_id"] not in ids["checkouts"]:
            out.append("/builds/%d: checkout %s is not in the document" % (i, b["checkout_id"]))
    for i, t in enumerate(doc.get("tests", [])):
        if t["build_id"] not in ids["builds"]:
            out.append("/tests/%d: build %s is not in the document" % (i, t["build_id"]))
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    bad = 0
    for name in argv[2:]:
        try:
            with (open(0, encoding="utf-8", closefd=False) if name == "-" else open(name, encoding="utf-8")) as f:
                doc = json.load(f)
        except (UnicodeDecodeError, ValueError) as e:
            print("%s: not UTF-8 JSON: %s" % (name, e))
            bad = 1
            continue
        for p in problems(schema, doc):
            print("%s: %s" % (name, p))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
