"""e2elib.py - what the Python parts of tests/e2e/*.sh share; lib.sh puts
this directory on PYTHONPATH and exports E2E_WORK, the test's $work.

    check(cond, what)  one "ok   what" or "FAIL what" line; done() exits 1
                       when one failed (first printing digest(): what every
                       review the test kept says, and the end of its stderr),
                       else 0
    path, text, rc, model  $work/NAME, its text, NAME.rc as an int, NAME.json
                       parsed (what lib.sh's keep NAME ... wrote)
    flat(text)         whitespace runs as one space (reviews wrap at 72)
    corpus_pick(corpus, name, out, want)  the mails of ../shared/corpus's
                       NAME.mbox.xz whose Message-ID want() takes, into $work/OUT
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


def models_in(name):
    """Every JSON object of $work/NAME (test --json prints one per patch)."""
    dec, s, out, i = json.JSONDecoder(), text(name), [], 0
    while i < len(s):
        if s[i].isspace():
            i += 1
            continue
        try:
            m, i = dec.raw_decode(s, i)
        except ValueError:
            break
        out.append(m)
    return out


def _side(m, name):
    s = m.get(name) or {}
    return "%s %s: build %s s, boot %s s (%s)" % (name, (s.get("short") or "?"), s.get("build_seconds"),
                                                  s.get("boot_seconds"), s.get("boot_status"))


def digest():
    """What a person needs to see why a check failed: each kept review's
    verdict, reason, changed records, unstable records, confirmation
    rounds and each side's times; and the last lines of each NAME.err."""
    if not work or not os.path.isdir(work):
        return
    for name in sorted(os.listdir(work)):
        if name.endswith(".json"):
            for m in models_in(name):
                if not isinstance(m, dict) or "verdict" not in m:
                    continue
                print("--- %s: %s: %s%s" % (name, m.get("subject"), m.get("verdict"),
                                           " (%s)" % flat(m.get("reason")) if m.get("reason") else ""))
                print("    " + _side(m, "before") + "; " + _side(m, "after"))
                print("    confirmation rounds %s, noise boots %s, %s records masked" % (
                    m.get("recheck_rounds"), m.get("noise_boots"), m.get("noise_dropped")))
                for c in m.get("console", []) or []:
                    print("    changed %s at %s: %r -> %r" % (c.get("kind"), c.get("where"), c.get("old_text"),
                                                           c.get("new_text")))
                for u in m.get("unstable", []) or []:
                    print("    unstable, not counted: %r" % (u,))
        elif name.endswith(".err"):
            lines = text(name).splitlines()
            if lines:
                print("--- %s (last %d lines)" % (name, min(len(lines), 15)))
                for line in lines[-15:]:
                    print("    " + line)


def done():
    if fails:
        digest()
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


def corpus_pick(corpus, name, out, want):
    import lzma
    import mailbox
    src = os.path.join(corpus, name + ".mbox.xz")
    whole = path(name + ".mbox")
    with lzma.open(src) as f, open(whole, "wb") as dst:
        dst.write(f.read())
    box = mailbox.mbox(path(out))
    for m in mailbox.mbox(whole):
        if want(str(m.get("Message-ID", ""))):
            box.add(m)
    box.flush()
    os.unlink(whole)
    return box


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
