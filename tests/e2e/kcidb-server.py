#!/usr/bin/env python3
"""kcidb-server.py PORT TOKEN OUTDIR SCHEMA - a KCIDB submission endpoint
of the tests' own, on 127.0.0.1:PORT, that checks what it is sent.

Each POST to /submit is answered 401 without "Authorization: Bearer
TOKEN", 415 unless its Content-Type is application/json, 400 when the
body is not UTF-8 JSON or does not validate against SCHEMA (KCIDB's I/O
schema, with tests/unit/kcidb-validate.py's checks: Draft-07, format
checks, ids and references), 200 otherwise.  Every request is kept in
OUTDIR as N.json (the body) and N.txt (the status and what was wrong).
Runs until killed.  Debian's python3-jsonschema (make deps).
"""
import http.server
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit"))
import importlib.util

spec = importlib.util.spec_from_file_location(
    "kcidb_validate", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "kcidb-validate.py"))
kcidb_validate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kcidb_validate)

port, token, outdir, schema_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, text):
        global count
        count += 1
        with open(os.path.join(outdir, "%d.txt" % count), "w", encoding="utf-8") as f:
            f.write("%d %s\n" % (status, text))
        with open(os.path.join(outdir, "%d.json" % count), "wb") as f:
            f.write(self.body)
        data = json.dumps({"status": status, "detail": text}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.body = self.rfile.read(length)
        if self.path != "/submit":
            return self.answer(404, "no such endpoint %s" % self.path)
        if self.headers.get("Authorization") != "Bearer " + token:
            return self.answer(401, "wrong or missing token")
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            return self.answer(415, "Content-Type %s" % self.headers.get("Content-Type"))
        try:
            doc = json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            return self.answer(400, "not UTF-8 JSON: %s" % e)
        bad = kcidb_validate.problems(schema, doc)
        if bad:
            return self.answer(400, "; ".join(bad))
        self.answer(200, "valid: %d checkouts, %d builds, %d tests" % (
            len(doc.get("checkouts", [])), len(doc.get("builds", [])), len(doc.get("tests", []))))

    def log_message(self, fmt, *args):
        sys.stderr.write("kcidb-server: " + fmt % args + "\n")


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
