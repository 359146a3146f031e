"""e2elib.py - what the Python parts of tests/e2e/*.sh share; lib.sh puts
this directory on PYTHONPATH and exports E2E_WORK, the test's $work.

    check(cond, what)  one "ok   what" or "FAIL what" line; done() exits 1
                       when one failed, else 0
    path, text, rc, model  $work/NAME, its text, NAME.rc as an int, NAME.json
                       parsed (what lib.sh's keep NAME ... wrote)
    flat(text)         whitespace runs as one space (reviews wrap at 72)
    mbox_messages(p)   the messages of an mboxrd file, From_ line gone and
                       quoted From lines unquoted
    inbox_commit(repo, blobs, time0, append)  public-inbox v2 commits
"""
import json
import os
import re
import subprocess
import sys

work = os.environ.get("E2E_WORK", "")
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def done():
    sys.exit(1 if fails else 0)


def path(name):
    return os.path.join(work, name)


def text(name):
    with open(path(name), encoding="utf-8", errors="replace") as f:
        return f.read()


def rc(name):
    return int(text(name + ".rc"))


def model(name):
    with open(path(name + ".json")) as f:
        return json.load(f)


def flat(s):
    return " ".join((s or "").split())


def mbox_messages(mbox):
    with open(mbox, "rb") as f:
        data = f.read()
    # mboxrd: a message starts at each "From " line; one '>' comes off ^>+From
    return [re.sub(rb"(?m)^>(>*From )", rb"\1", m)
            for m in re.split(rb"(?m)^From [^\n]*\n", data)[1:]]


def inbox_commit(repo, blobs, time0, append):
    """One commit per mail on refs/heads/master, the mail as the blob `m`,
    committed at time0 + i; append: on the branch as it is, else a new one."""
    if not os.path.isdir(repo):
        subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
    stream = []
    for i, blob in enumerate(blobs):
        stream.append(b"commit refs/heads/master\n")
        stream.append(b"committer archive <a@example.org> %d +0000\n" % (time0 + i))
        stream.append(b"data 1\nm\n")
        if i == 0 and append:
            stream.append(b"from refs/heads/master^0\n")
        stream.append(b"M 100644 inline m\ndata %d\n" % len(blob) + blob + b"\n")
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=b"".join(stream), check=True)
