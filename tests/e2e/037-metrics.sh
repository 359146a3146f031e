#!/usr/bin/env bash
# End to end: the figures for monitoring as an operator's Prometheus sees
# them (doc/monitoring.md).  A Maildir source with three patch mails of
# tests/data (two change logging calls, one a comment), named with a
# quote, and `printkbot daemon --once --queue-only` with [daemon]
# metrics_dir: the file it writes passes `promtool check metrics`;
# Debian's node exporter serves it (its textfile collector, on a loopback
# port) and a Prometheus with a data dir of its own scrapes it every
# second.  The answers of Prometheus' HTTP API equal what the store says:
# the queued series (`printkbot queue --json`), the source's last read
# (`queue --sources --json`), the mails it handed over; the file parsed
# (node_textfile_scrape_error 0).  A second run after one more mail:
# Prometheus has the new figures.  Installs prometheus and
# prometheus-node-exporter when missing.  No kernel is built.
source "$(dirname "$0")/lib.sh"

missing=
for p in prometheus prometheus-node-exporter; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		$missing; } >"$work/apt.log" 2>&1 ||
		skip "cannot install$missing (apt-get failed: $(tail -1 "$work/apt.log"))"
fi

mkdir -p "$work/maildir/new" "$work/maildir/cur" "$work/maildir/tmp" "$work/metrics"
for p in text-change level-change comment-only; do
	cp "tests/data/test/$p.patch" "$work/maildir/new/$p"
done
cat >"$work/printkbot.conf" <<EOF
[daemon]
from = printkbot <bot@example.org>
series_wait = 0
outbox = $work/outbox
metrics_dir = metrics

[source linux "serial"]
type = maildir
start = all
path = $work/maildir
EOF
conf=$work/printkbot.conf
prom_file=$work/metrics/printkbot-daemon.prom

$bot daemon --config "$conf" --once --queue-only 2>"$work/run1.log" || fail "daemon run 1" "$work/run1.log"
[ -f "$prom_file" ] || fail "no $prom_file after the run" "$work/run1.log"
ok "daemon --once --queue-only wrote metrics/printkbot-daemon.prom (beside the config)"
promtool check metrics <"$prom_file" >"$work/promtool.log" 2>&1 || fail "promtool check metrics" "$work/promtool.log" "$prom_file"
ok "promtool check metrics: the file is clean"

# The node exporter serves the dir, with no other collector; Prometheus scrapes it every second.
ne_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$work/metrics" >"$work/node-exporter.log" 2>&1 &
wait_port "$ne_port"
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: printkbot
    static_configs:
      - targets: ['127.0.0.1:$ne_port']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus" \
	--web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
wait_port "$prom_port"
echo "node exporter :$ne_port, prometheus :$prom_port"

# What the store says, and Prometheus' answers once they agree (at most 60 s: a scrape a second).
compare() {
	$bot queue --config "$conf" --json >"$work/queue.json"
	$bot queue --config "$conf" --sources --json >"$work/sources.json"
	python3 - "$prom_port" "$1" <<'PY'
import json, sys, time, urllib.parse, urllib.request
from e2elib import check, done, path
port, mails = sys.argv[1], int(sys.argv[2])

def query(q):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=10) as r:
        answer = json.load(r)
    assert answer["status"] == "success", answer
    return [(s["metric"], float(s["value"][1])) for s in answer["data"]["result"]]

def one(q):
    r = query(q)
    return r[0][1] if len(r) == 1 else None

jobs = [json.loads(l) for l in open(path("queue.json"))]
queued = sum(1 for j in jobs if j["state"] == "queued")
sources = [json.loads(l) for l in open(path("sources.json"))]
serial = [s for s in sources if s["source"] == 'linux "serial"']
check(len(serial) == 1 and serial[0]["last_read"] > 0, "queue --sources: the source was read (%s)" % sources)
last_read = serial[0]["last_read"]
source = 'source="linux \\"serial\\"",type="maildir"'
want = {
    'sum(printkbot_jobs{state="queued"})': queued,
    'printkbot_jobs{kind="series",state="queued"}': queued,
    'printkbot_source_last_read_timestamp_seconds{%s}' % source: last_read,
    'printkbot_source_mails_total{%s}' % source: mails,
    'node_textfile_scrape_error': 0,
}
deadline, got = time.time() + 60, {}
while time.time() < deadline:
    got = {q: one(q) for q in want}
    if got == want:
        break
    time.sleep(0.5)
for q, v in want.items():
    check(got.get(q) == v, "prometheus: %s = %s, as the store says (%s)" % (q, got.get(q), v))
age = one("printkbot_oldest_queued_job_age_seconds")
check(age is not None and age >= 0, "prometheus: the oldest queued job's age (%s s)" % age)
hist = query('printkbot_mail_to_reply_seconds_count')
check(len(hist) == 1 and hist[0][1] == 0, "prometheus: mail to reply, nothing sent yet (%s)" % hist)
print("queued %d, last read %d, %d mails" % (queued, last_read, mails))
done()
PY
}
compare 3 || fail "run 1: Prometheus and the store disagree" "$prom_file" "$work/prometheus.log" "$work/node-exporter.log"

# One more mail, a second later (a new last read): the next scrape has it.
sleep 1
cp tests/data/test/args-change.patch "$work/maildir/new/args-change"
$bot daemon --config "$conf" --once --queue-only 2>"$work/run2.log" || fail "daemon run 2" "$work/run2.log"
grep -q 'source linux "serial": 1 new mail(s)' "$work/run2.log" || fail "run 2 did not read the new mail" "$work/run2.log"
# the counter is the process's: a new run starts it again
compare 1 || fail "run 2: Prometheus and the store disagree" "$prom_file" "$work/prometheus.log"
passed
