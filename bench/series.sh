#!/usr/bin/env bash
# How many real logging-churn series of a mailing list the bot answers
# completely (doc/daemon.md, doc/bases.md, doc/testing.md).
# Needs `printkbot setup` and `printkbot setup --source debian:6.1` (the
# 2023 series go on 6.1), and ../shared/corpus: the linux-serial archives
# of 2023-Q1 (linux-serial-2023q1.mbox.xz) and of 2025-11..2026-03
# (linux-serial-1500.mbox.xz), read in place, never copied.
#
# Per corpus:
# 1. Series, as the bot groups them: the mails are fed in Date order, one
#    at a time, to `printkbot daemon --queue-only --once` (its own store,
#    an mbox source, no reply), so the daemon's intake groups them by
#    thread and [PATCH vN n/m], holds an incomplete series, and queues a
#    complete one at once; a last pass with series_wait = 0 queues what
#    stayed incomplete (patches 1..n that arrived).  One mail at a time,
#    so a v1 is queued before its v2 arrives, as on the list: each version
#    is its own series (the v2 cancels the v1's job; both are counted).
#    The intake skips series without churn, without their patch 1, or
#    superseded while both waited; those are counted by its log.
# 2. Churn series: a queued series in which `printkbot scan --json` finds
#    logging churn in at least one patch (verdict not no-churn).
# 3. Placement: `printkbot test --which-base` on every churn series (one
#    mbox each: cover letter, then patches 1..n): the base it goes on
#    (3-way noted), or that no base takes it.
# 4. Unless PLACE_ONLY=1: `printkbot test --json` of each placed series
#    (LIMIT=N: the first N), under a per-series timeout (TIMEOUT, default
#    1800 s), on a store of the run's own (--db in the run dir): per
#    patch its verdict, the wall time, and whether the answer is
#    complete: exit status 0 or 1 (not 2, the bot failed; not the
#    timeout), every patch answered, none `refused`, every churn patch
#    `no-visible-change`, `console-changed` or `not-built` with its
#    reason, and every no-churn patch applied (`no-churn`).  build-failed,
#    boot-failed and does-not-apply are answers, but not complete ones;
#    except a build-failed patch whose kernel did not link for an option
#    it does not select, when the test again with that option on (its
#    `relinked` verdict) is one of the above.
# 5. Per corpus: series, churn series, placed by base, complete answers,
#    verdicts, the architectures the built patches ran on (arch.h; those
#    another architecture answered, review's arch_why, apart), refused
#    (and for the build system), seconds per series
#    (median, p90, max); and $OUT/series.tsv, a row per series (corpus,
#    subject, patches, base, verdicts, seconds; the intake's skipped
#    series too, with why).
#
# Run: bash bench/series.sh                       (both corpora, full: builds kernels for hours)
#      PLACE_ONLY=1 bash bench/series.sh          (no kernel built: the feed takes 2-3 min a corpus,
#                                                  --which-base ~1 min, plus its waits for the lab's lock)
#      CORPUS=2023q1|2025|both  LIMIT=N  TIMEOUT=SECONDS  KEEP=DIR (keep the run dir)  OUT=DIR
#      SUMMARY_ONLY=1 KEEP=DIR bash bench/series.sh  (the figures again from an earlier
#                                                  run kept in DIR, stopped or not: a series
#                                                  not tested counts as placed, untested)
#      RESUME=1 KEEP=DIR bash bench/series.sh     (go on with a stopped run: steps 1-3 are
#                                                  kept, only series without a result are
#                                                  tested; delete a series' .rc to test it again)
# The placed series are tested grouped by base, in corpus order within a
# base (each kernel series has a tree of its own now, so a switch costs
# little; the grouping keeps runs comparable with earlier ones).
# `test` reads $PRINTKBOT_CONFIG (else /etc/printkbot.conf) as usual: its
# [test] bases and [policy] apply; the lab is the usual one
# ($PRINTKBOT_CACHE), taken under its lock (a running test holds it up).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${CORPUS_DIR:-../shared/corpus}
bot=$PWD/printkbot
[ -x "$bot" ] || make -s printkbot printkbot-core
declare -A mbox=([2023q1]=linux-serial-2023q1.mbox.xz [2025]=linux-serial-1500.mbox.xz)
case ${CORPUS:-both} in
2023q1 | 2025) corpora=("$CORPUS") ;;
both) corpora=(2023q1 2025) ;;
*) echo "CORPUS is 2023q1, 2025 or both" >&2; exit 2 ;;
esac
if [ -n "${KEEP:-}" ]; then
	work=$(mkdir -p "$KEEP" && cd "$KEEP" && pwd)
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/printkbot-series.XXXXXX")}
mkdir -p "$out"
printf 'corpus\tsubject\tpatches\tbase\tverdicts\tseconds\tscan\tcomplete\tnote\n' >"$out/series.tsv"
now() { date +%s.%N; }
# the kernel series of the lab's base, to name it (build/<config>-<series>, lab.h);
# awk reads to the end: git show would die of SIGPIPE under pipefail
base_series=$(git -C "${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}/linux" show printkbot-base:Makefile 2>/dev/null |
	awk '$1 == "VERSION" {v = $3} $1 == "PATCHLEVEL" && !s {s = v "." $3} END {print s}') || base_series=

# --- 5. the figures of corpus $2 from its run dir $1 (steps 1-4 left them there) ---
figures() {
	python3 - "$1" "$2" "$out/series.tsv" "${PLACE_ONLY:-0}" "$base_series" <<'PY'
import collections, json, os, re, sqlite3, statistics, sys
run, corpus, tsv, place_only = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
lab_base = "printkbot-base (%s)" % sys.argv[5] if sys.argv[5] else "printkbot-base"
db = sqlite3.connect(run + "/intake.db")
series = [json.loads(l) for l in open(run + "/series.jsonl")]
churn = set(open(run + "/churn.list").read().split())
which = {}
for line in open(run + "/which.txt"):
    path, _, rest = line.rstrip("\n").partition(": ")
    if rest.startswith("no base takes it"):
        which[path] = None
    else:
        name = rest.split()[0]
        which[path] = (lab_base if name == "printkbot-base" else name) + (" (3-way)" if " (3-way)" in rest.split(";")[0] else "")
# the series the intake skipped, each named by its first mail in the log
skipped = []
for line in open(run + "/intake.log", errors="replace"):
    m = re.match(r"printkbot daemon: <(.*)>: series v\d+ skipped: (.*)$", line)
    if m:
        row = db.execute("select subject, total from mails where message_id = ?", (m.group(1),)).fetchone()
        skipped.append((row[0] if row else m.group(1), row[1] if row else 0, m.group(2)))
lost_churn = db.execute("select count(*) from mails where state = 'skipped' and churn > 0").fetchone()[0]

ok_churn = {"no-visible-change", "console-changed", "not-built"}
rows, times, verdicts = [], [], collections.Counter()
# the architecture each built patch's kernels ran on, and how many went to
# another than the lab's own because it could not build their files (arch_why)
arches, elsewhere = collections.Counter(), 0
complete = relinked = refused = refused_bs = timeouts = failed = unapplied_bs = bs_churn = bs_quiet = 0
placed = collections.Counter()
for s in series:
    if s["mbox"] not in churn:
        continue
    # scan's verdict of each patch, by Message-ID (a cover letter with a diff is no patch of it)
    by_id = {}
    for l in open(s["mbox"][:-5] + ".scan"):
        if l.startswith("{"):
            o = json.loads(l)
            by_id[(o["message_id"] or "").strip("<>")] = o["verdict"]
    scan = [by_id.get(m, "unread") for m in s["message_ids"]]
    base = which.get(s["mbox"], "unanswered")
    placed[base or "none"] += 1
    if base and base != "unanswered":
        churn_bs = any(b and c != "no-churn" for b, c in zip(s["build_system"], scan))
        bs_churn += churn_bs
        bs_quiet += not churn_bs and any(s["build_system"])
    n = len(s["message_ids"])
    row = [corpus, s["subject"], str(n), base or "none", "-", "-", ",".join(scan), "-",
           "; ".join(x for x in ("superseded later by a newer version" if s["state"] == "cancelled" else "",
                                 "a build-system patch in it" if any(s["build_system"]) else "") if x)]
    rcfile = s["mbox"][:-5] + ".rc"
    if base and base != "unanswered" and not place_only and os.path.exists(rcfile):
        rc, secs = open(rcfile).read().split()
        rc, secs = int(rc), float(secs)
        times.append(secs)
        got = {}
        for l in open(s["mbox"][:-5] + ".json", errors="replace"):
            if l.startswith("{"):
                o = json.loads(l)
                got[o["message_id"].strip("<>") if o.get("message_id") else len(got)] = o
        answers = []
        for i, mid in enumerate(s["message_ids"]):
            o = got.get(mid)
            answers.append((o["verdict"], o) if o else ("timeout" if rc == 124 else "no-answer", None))
        for v, o in answers:
            verdicts[v] += 1
            if o and v not in ("no-churn", "does-not-apply", "refused"):
                arches[o.get("arch") or "x86_64"] += 1
                elsewhere += bool(o.get("arch_why"))
            if v == "refused":
                refused += 1
                refused_bs += "build system" in (o.get("reason") or "")
        # a no-churn patch the policy would not build is left unapplied, its
        # verdict still no-churn: counted apart (bot/pipeline/test.c apply_only)
        unapplied_bs += sum(1 for (v, _), c, b in zip(answers, scan, s["build_system"]) if v == "no-churn" and b)
        # a patch whose kernel did not link (build-failed, the patch's own
        # fault), tested again with the options that build what it lacked
        # (bot/pipeline/test.c test_relinked()): answered when that test is
        def answered(v, o):
            if v == "build-failed" and o and o.get("relinked"):
                v = o["relinked"]["verdict"]
            return v in ok_churn and (v != "not-built" or any(
                x.get("state") == "not-built" and x.get("reason") for x in (o.get("coverage") or [])))
        whole = rc in (0, 1) and all(answered(v, o) if c != "no-churn" else v == "no-churn"
                                     for (v, o), c in zip(answers, scan))
        complete += whole
        relinked += whole and any(v == "build-failed" for v, _ in answers)
        answers = [(v + "(relinked: %s)" % o["relinked"]["verdict"] if o and o.get("relinked") else v, o)
                   for v, o in answers]
        timeouts += rc == 124
        failed += rc == 2
        row[4], row[5], row[7] = ",".join(v for v, _ in answers), "%.0f" % secs, "yes" if whole else "no"
    rows.append(row)
for subj, total, why in skipped:
    rows.append([corpus, subj, "?/%d" % total, "-", "-", "-", "-", "-", "skipped by the intake: " + why])
with open(tsv, "a") as f:
    for r in rows:
        f.write("\t".join(x.replace("\t", " ") for x in r) + "\n")

reasons = collections.Counter(why for _, _, why in skipped)
name = {"2023q1": "linux-serial 2023-Q1", "2025": "linux-serial 2025-11..2026-03"}[corpus]
print("%s:" % name)
print("  series: %d (%d queued by the intake, %d of them superseded later by a newer version; %d skipped: %s)"
      % (len(series) + len(skipped), len(series), sum(s["state"] == "cancelled" for s in series), len(skipped),
         ", ".join("%s %d" % (k, v) for k, v in reasons.most_common())))
print("  churn series: %d (churn patches in series the intake skipped: %d)" % (len(churn), lost_churn))
print("  placed: %d (%s); no base: %d%s" % (sum(v for k, v in placed.items() if k not in ("none", "unanswered")),
      ", ".join("%s %d" % kv for kv in sorted(placed.items()) if kv[0] not in ("none", "unanswered")) or "-",
      placed["none"], "; --which-base gave no answer: %d" % placed["unanswered"] if placed["unanswered"] else ""))
print("  of the placed, with a churn patch that touches the build system (built in a layer; refused without one): %d;"
      " with only no-churn ones (left unapplied): %d" % (bs_churn, bs_quiet))
if not place_only:
    tested = len(times)
    print("  tested: %d; complete answers: %d (%d of them with a patch whose kernel did not link as posted,"
          " answered from kernels with what it lacked on); exit 2 (the bot failed): %d; timed out: %d"
          % (tested, complete, relinked, failed, timeouts))
    print("  verdicts: %s" % (", ".join("%s %d" % kv for kv in sorted(verdicts.items())) or "-"))
    print("  built and booted on: %s (%d on another architecture than the lab's, which could not build"
          " their files)" % (", ".join("%s %d" % kv for kv in sorted(arches.items())) or "-", elsewhere))
    print("  refused: %d (%d for the build system); no-churn patches left unapplied by the policy: %d"
          % (refused, refused_bs, unapplied_bs))
    if times:
        # p90 as the nearest rank: with few series it is one of them, not an interpolation
        p90 = sorted(times)[max(0, -(-len(times) * 9 // 10) - 1)]
        print("  seconds a series: median %.0f, p90 %.0f, max %.0f, total %.0f"
              % (statistics.median(times), p90, max(times), sum(times)))
PY
}

# --- 1-3. the series of corpus $c in run dir $run, their churn and their base ---
place_series() {
	rm -rf "$run" && mkdir -p "$run/series"
	xz -dc "$corpus/${mbox[$c]}" >"$run/corpus.mbox"

	# --- 1. series, as the daemon's intake groups them ---
	for w in 2592000 0; do
		cat >"$run/intake-$w.conf" <<EOC
[daemon]
reply_on = never
series_wait = $w
outbox = $run/outbox
[source corpus]
type = mbox
path = $run/feed.mbox
start = all
EOC
	done
	s=$(now)
	python3 - "$run" "$bot" <<'PY'
# Split the mbox where the bot splits one (a line starting "From "; in
# mboxrd a body's are quoted), order the mails by Date (the 2025 archive
# is mostly newest first), and append them one at a time to the source,
# one daemon pass each.  Only Date is read here: the bot parses the rest.
import email.utils, os, re, subprocess, sys
run, bot = sys.argv[1:3]
buf = open(run + "/corpus.mbox", "rb").read()
starts = [0] + [m.start() + 1 for m in re.finditer(rb"\nFrom ", buf)]
mails = [buf[a:b] for a, b in zip(starts, starts[1:] + [len(buf)]) if b > a]
def date(raw):
    m = re.search(rb"^Date:[ \t]*(.*(?:\n[ \t].*)*)", raw.split(b"\n\n", 1)[0], re.M | re.I)
    try:
        return email.utils.parsedate_to_datetime(m.group(1).decode("latin-1").replace("\n", " ")).timestamp()
    except Exception:
        return None
keyed, last = [], 0.0
for i, raw in enumerate(mails):
    d = date(raw)
    last = d if d is not None else last   # no Date: where it stands in the file
    keyed.append((last, i, raw))
keyed.sort()
feed = run + "/feed.mbox"
open(feed, "wb").close()
log = open(run + "/intake.log", "ab")
def daemon(wait):
    subprocess.run([bot, "daemon", "--config", "%s/intake-%d.conf" % (run, wait), "--db", run + "/intake.db",
                    "--queue-only", "--once"], stdout=log, stderr=log, check=True)
for _, _, raw in keyed:
    with open(feed, "ab") as f:
        f.write(raw if raw.endswith(b"\n") else raw + b"\n")
    # the source reads a file's last mail once nothing wrote it for a second
    old = os.stat(feed).st_mtime - 60
    os.utime(feed, (old, old))
    daemon(2592000)
daemon(0)   # what stayed incomplete: patches 1..n that arrived
PY
	printf '%s: %d mails fed to the intake in %.0f s\n' "$c" "$(grep -c '^From ' "$run/corpus.mbox")" \
		"$(echo "$(now) - $s" | bc)" >&2

	# every series job (queued, or cancelled by its next version) as an mbox:
	# the cover letter, then patches 1..n, the mails as the store keeps them
	python3 - "$run" <<'PY'
import gzip, json, re, sqlite3, sys
run = sys.argv[1]
db = sqlite3.connect(run + "/intake.db")
def raw(i):
    r = db.execute("select raw from mails where id = ?", (i,)).fetchone()[0]
    if not r:   # the store drops a skipped mail's bytes; a job's are kept
        sys.exit("mail %d of a series job has no stored bytes" % i)
    return gzip.decompress(r)
# the build system, as the policy names it (lab/policy.c): built in a
# throwaway layer when the bot runs as root with the sandbox on, else
# refused when it has churn and left unapplied when it has none
bs = re.compile(r"(^|/)(Makefile|Makefile\..*|Kbuild|Kconfig[^/]*)$|^(scripts|tools)/")
with open(run + "/series.jsonl", "w") as idx:
    for n, (job, state, payload) in enumerate(db.execute(
            "select id, state, payload from jobs where kind = 'series' order by id"), 1):
        p = json.loads(payload)
        path = "%s/series/%03d.mbox" % (run, n)
        msgids, build = [], []
        with open(path, "wb") as f:
            if p.get("cover"):
                f.write(raw(p["cover"]))
            for i in p["mails"]:
                r = raw(i)
                f.write(r)
                msgids.append(db.execute("select message_id from mails where id = ?", (i,)).fetchone()[0])
                files = re.findall(rb"^diff --git a/(\S+) b/(\S+)", r, re.M)
                build.append(any(bs.search(x.decode("utf-8", "replace")) for pair in files for x in pair))
        idx.write(json.dumps({"n": n, "job": job, "state": state, "subject": p["subject"],
                              "version": p["version"], "total": p["total"], "cover": bool(p.get("cover")),
                              "mbox": path, "message_ids": msgids, "build_system": build}) + "\n")
PY

	# --- 2. churn: scan's verdict per patch ---
	for m in "$run"/series/*.mbox; do
		rc=0; "$bot" scan --json "$m" >"${m%.mbox}.scan" 2>"${m%.mbox}.scan.err" || rc=$?
		[ "$rc" -le 1 ] || echo "scan failed on $m: $(cat "${m%.mbox}.scan.err")" >&2
	done
	python3 - "$run" >"$run/churn.list" <<'PY'
import json, sys
run = sys.argv[1]
for s in map(json.loads, open(run + "/series.jsonl")):
    v = {(o["message_id"] or "").strip("<>"): o["verdict"]
         for o in (json.loads(l) for l in open(s["mbox"][:-5] + ".scan") if l.startswith("{"))}
    if any(v.get(m, "no-churn") != "no-churn" for m in s["message_ids"]):
        print(s["mbox"])
PY

	# --- 3. placement: --which-base ten series at a time: the lab is shared,
	# and its lock is held a few seconds a batch, not one wait per series ---
	: >"$run/which.txt"
	mapfile -t list <"$run/churn.list"
	for ((i = 0; i < ${#list[@]}; i += 10)); do
		rc=0
		"$bot" test --which-base --no-store "${list[@]:i:10}" >>"$run/which.txt" 2>>"$run/which.err" || rc=$?
		# 1: some series has no base; 2: the bot could not read one (no line: "unanswered")
		[ "$rc" -le 1 ] || echo "test --which-base: exit $rc (see $run/which.err)" >&2
	done
}

for c in "${corpora[@]}"; do
	run=$work/$c
	if [ "${SUMMARY_ONLY:-0}" = 1 ]; then
		[ -f "$run/which.txt" ] || { echo "SUMMARY_ONLY=1: no earlier run of $c in $work (KEEP=DIR)" >&2; exit 2; }
		figures "$run" "$c"
		continue
	fi
	if [ "${RESUME:-0}" = 1 ]; then
		[ -f "$run/which.txt" ] || { echo "RESUME=1: no earlier run of $c in $work (KEEP=DIR)" >&2; exit 2; }
	else
		place_series
	fi

	# --- 4. the tests, grouped by base (sort -s: corpus order within one) ---
	if [ "${PLACE_ONLY:-0}" != 1 ]; then
		mapfile -t placed < <(grep -v ': no base takes it' "$run/which.txt" |
			sed 's/^\([^:]*\): \([^ ;]*\).*/\2 \1/' | sort -s -k1,1 | cut -d' ' -f2)
		[ -z "${LIMIT:-}" ] || placed=("${placed[@]:0:$LIMIT}")
		i=0
		for m in "${placed[@]}"; do
			i=$((i + 1))
			if [ "${RESUME:-0}" = 1 ] && [ -f "${m%.mbox}.rc" ]; then
				continue
			fi
			s=$(now); rc=0
			timeout -k 60 "${TIMEOUT:-1800}" "$bot" test --json --db "$run/store.db" "$m" \
				>"${m%.mbox}.json" 2>"${m%.mbox}.err" || rc=$?
			t=$(echo "$(now) - $s" | bc)
			echo "$rc $t" >"${m%.mbox}.rc"
			printf '%s [%d/%d] %s: exit %d, %.0f s\n' "$c" "$i" "${#placed[@]}" "$(basename "$m")" "$rc" "$t" >&2
		done
	fi

	# --- 5. the figures ---
	figures "$run" "$c"
done
echo "series table: $out/series.tsv"
