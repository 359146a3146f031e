#!/usr/bin/env bash
# End to end: `printkbot scan` against the kernel tree's own checkpatch.pl,
# and scan's tree-aware mode against the same tree.
#
# 1. Every patch mail of ../shared/corpus (patches/ and the 1,500-mail
#    linux-serial mbox) and the crafted ones of tests/data/scan/checkpatch is
#    decoded once (Python's email package, independent of GMime; format=flowed
#    undone as git mailinfo does) and given to
#    both `checkpatch.pl --no-tree --terse --show-types --showfile` (printk
#    types only) and `printkbot scan --json --tree`.  For every warning of a
#    printk-related type on a printk-family statement, scan must report a
#    finding of the matching kind on the same file and line.
#    SPLIT_STRING, EMBEDDED_FUNCTION_NAME and QUOTED_WHITESPACE_BEFORE_NEWLINE
#    also fire on strings that are no printk format (seq_printf(),
#    MODULE_PARM_DESC()...): those are counted and left out.  The family is
#    checkpatch's $logFunctions, <subsys>_<level>() wrappers included
#    (tests/data/scan/checkpatch/wrapper-calls.patch).
# 2. Scanning the mbox itself (GMime decoding) gives, Message-ID by
#    Message-ID, the same findings as scanning the decoded mails.
# 3. The tree: KBUILD_MODNAME of every object of the lab's last build equals
#    what Kbuild passed the compiler (the .o.cmd files); a pr_fmt() added to
#    kernel/sched/topology.c gives "build_utility: " on every pr_*() call of
#    the file; a call in kernel/rcu/tree_plugin.h carries tree.c's "rcu: ".
#
# Needs the bot's kernel tree ($PRINTKBOT_CACHE/linux, made by
# `printkbot setup`) and perl; skips with a message without them.
# SCAN_CHECKPATCH_EVERY=N checks only every Nth patch of the mbox.
#
# The tree is read with printkbot-base checked out and the lab's lock held
# (lib.sh's lab_locked), whatever a printkbot elsewhere left checked out.
source "$(dirname "$0")/lib.sh"
corpus=../shared/corpus
every=${SCAN_CHECKPATCH_EVERY:-1}
types=PRINTK_WITHOUT_KERN_LEVEL,LOGGING_CONTINUATION,SPLIT_STRING,EMBEDDED_FUNCTION_NAME,QUOTED_WHITESPACE_BEFORE_NEWLINE,PREFER_PR_LEVEL

git -C "$tree" rev-parse -q --verify 'printkbot-base^{commit}' >/dev/null 2>&1 ||
	skip "no kernel tree at $tree (run ./printkbot setup first)"
command -v perl >/dev/null || skip "perl is not installed (checkpatch.pl needs it)"
mkdir "$work/in" "$work/scripts"

# Decode every mail once; both tools read the same files.
xz -dc "$corpus/linux-serial-1500.mbox.xz" > "$work/serial.mbox"
python3 - "$work/in" "$every" "$work/serial.mbox" "$corpus"/patches/*.patch tests/data/scan/checkpatch/*.patch <<'PY'
import email, email.policy, os, re, sys
from e2elib import mbox_messages
out, every, mbox, singles = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
diff_re = re.compile(r'(?m)^(diff --git |--- \S.*\n\+\+\+ )')

def unflow(text, delsp):
    # format=flowed (RFC 3676) undone as git mailinfo does: unstuff, join soft breaks
    out, prev = [], ''
    for line in text.split('\n'):
        if line != '-- ' and line.startswith(' '):
            line = line[1:]
        if line != '-- ' and line.endswith(' '):
            prev += line[:-1] if delsp else line
            continue
        out.append(prev + line)
        prev = ''
    if prev:
        out.append(prev)
    return '\n'.join(out)

def body_with_diff(msg):
    for part in msg.walk():
        if part.is_multipart():
            continue
        name = part.get_filename() or ''
        if not (part.get_content_type().startswith('text/') or name.endswith(('.patch', '.diff'))):
            continue
        try:
            text = part.get_content()
        except Exception:
            text = (part.get_payload(decode=True) or b'').decode('utf-8', 'replace')
        if isinstance(text, bytes):
            text = text.decode('utf-8', 'replace')
        if str(part.get_param('format') or '').lower() == 'flowed':
            text = unflow(text, str(part.get_param('delsp') or '').lower() == 'yes')
        if diff_re.search(text):
            return text
    return None

def write(name, raw):
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    body = body_with_diff(msg)
    if body is None:
        return False
    with open(os.path.join(out, name), 'w', encoding='utf-8') as f:
        f.write('From: %s\nSubject: %s\nMessage-Id: %s\n\n%s' % (
            msg['From'], str(msg['Subject']).replace('\n', ' '), msg['Message-Id'], body))
    return True

n = 0
for i, raw in enumerate(mbox_messages(mbox)):
    msg_has_diff = write('mbox-%04d.patch' % i, raw)
    if msg_has_diff:
        n += 1
        if (n - 1) % every:
            os.unlink(os.path.join(out, 'mbox-%04d.patch' % i))
for path in singles:
    write(os.path.basename(os.path.dirname(path)) + '-' + os.path.basename(path), open(path, 'rb').read())
print('%d mbox mails with a diff, %d inputs' % (n, len(os.listdir(out))))
PY

# The base's checkpatch.pl, with the files it reads beside it, from the
# lab's repository: with --no-tree it needs no checkout.
for f in checkpatch.pl spelling.txt const_structs.checkpatch; do
	lab_git show "printkbot-base:scripts/$f" >"$work/scripts/$f"
done
start=$(date +%s)
ls "$work"/in/*.patch | xargs -P "$(nproc)" -n 1 sh -c \
	'perl "$0" --no-tree --terse --show-types --showfile --types "$1" - < "$2" > "$2.cp" 2>&1 || true' \
	"$work/scripts/checkpatch.pl" "$types"
checkpatch_s=$(($(date +%s) - start))

# Every scan --tree, and what else reads the tree or the last build: run
# under the lab's lock with the base checked out; checked afterwards.
read_tree() {
	local f rc start
	git -C "$tree" checkout -q --detach printkbot-base
	start=$(date +%s)
	for f in "$work"/in/*.patch; do
		rc=0
		$bot scan --json --tree "$tree" "$f" > "$f.scan" 2>/dev/null || rc=$?
		[ "$rc" -le 2 ] || fail "scan exited $rc on $f"
	done
	echo "checkpatch.pl: $checkpatch_s s, scan: $(($(date +%s) - start)) s"
	$bot scan --json --tree "$tree" "$work/serial.mbox" > "$work/mbox.jsonl" 2>/dev/null || true
	read_modnames
	read_pr_fmt
}

# KBUILD_MODNAME as Kbuild gave it to the compiler (the .o.cmd files of the
# objects the last build linked), and as scan --describe reads it from the tree.
read_modnames() {
	local build
	# the lab config's build dir of the base's series (build/<config>-<series>, lab.h)
	build=$PRINTKBOT_CACHE/build/$(sha256sum qemu/kernel.config | cut -c1-12)-$(
		awk '$1 == "VERSION" {v = $3} $1 == "PATCHLEVEL" {print v "." $3; exit}' "$tree/Makefile")
	[ -n "$build" ] && ls "$build"/init/.main.o.cmd >/dev/null 2>&1 || return 0
	python3 - "$build" "$tree" > "$work/modnames" <<'PY'
import os, re, sys
import subprocess
build, tree = sys.argv[1], os.path.realpath(sys.argv[2])
# the objects vmlinux links (ar t of vmlinux.a and the lib.a archives .vmlinux.o.cmd
# names), not every .o.cmd in the dir: a build dir another base built in keeps
# .o.cmd files of sources this tree does not have
libs = [w for w in open(os.path.join(build, '.vmlinux.o.cmd')).readline().split()
        if w.endswith('.a') and w != 'vmlinux.a']
linked = set()
for a in ['vmlinux.a'] + libs:
    names = subprocess.run(['ar', 't', a], cwd=build, capture_output=True, text=True, check=True).stdout
    linked.update(names.split())      # ar prints a thin archive's members relative to the build dir
for obj in sorted(linked):
    cmd = os.path.join(build, os.path.dirname(obj), '.' + os.path.basename(obj) + '.cmd')
    if not os.path.exists(cmd):
        continue
    text = open(cmd, errors='replace').read()
    mod = re.search(r"KBUILD_MODNAME='\"([^\"]+)\"'", text)
    src = re.search(r'^source_\S* := (\S+\.c)$', text, re.M)
    rel = src and os.path.relpath(os.path.realpath(src.group(1)), tree)
    if mod and rel and not rel.startswith('..'):    # not sources generated in the build
        print(rel, mod.group(1))
PY
	cut -d' ' -f1 "$work/modnames" | xargs $bot scan --tree "$tree" --describe --json > "$work/described"
}

# A pr_fmt() added to topology.c, and a call of tree_plugin.h made printk().
read_pr_fmt() {
	python3 - "$tree" "$work" <<'PY'
import re, sys
tree, work = sys.argv[1:3]
def diff(path, old_start, old, new, section=''):
    return ('diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@ %s\n' % (
        path, path, path, path, old_start, len(old), old_start, len(new), section)
        + ''.join(new)) 
lines = open(tree + '/kernel/sched/topology.c').read().split('\n')
body = [' ' + lines[0] + '\n', '+#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt\n'] + [' ' + l + '\n' for l in lines[1:3]]
open(work + '/topology.patch', 'w').write(diff('kernel/sched/topology.c', 1, lines[0:3], body))
# an independent count of the calls pr_fmt() prefixes: pr_*() but pr_cont()
text = re.sub(r'/\*.*?\*/', '', '\n'.join(lines), flags=re.S)
n = len(re.findall(r'\bpr_(emerg|alert|crit|err|warn|warning|notice|info|debug|devel)(_once|_ratelimited)?\s*\(', text))
open(work + '/topology.count', 'w').write(str(n))
plugin = open(tree + '/kernel/rcu/tree_plugin.h').read().split('\n')
i = next(k for k, l in enumerate(plugin) if re.match(r'^\tpr_info\("[^"]*\\n"\);$', l))
conv = plugin[i].replace('pr_info(', 'printk(KERN_INFO ')
body = [' ' + plugin[i - 1] + '\n', '-' + plugin[i] + '\n', '+' + conv + '\n', ' ' + plugin[i + 1] + '\n']
open(work + '/plugin.patch', 'w').write(
    'diff --git a/kernel/rcu/tree_plugin.h b/kernel/rcu/tree_plugin.h\n'
    '--- a/kernel/rcu/tree_plugin.h\n+++ b/kernel/rcu/tree_plugin.h\n'
    '@@ -%d,3 +%d,3 @@\n%s' % (i, i, ''.join(body)))
PY
	$bot scan --json --tree "$tree" "$work/topology.patch" > "$work/topology.json" || true
	$bot scan --json --tree "$tree" "$work/plugin.patch" > "$work/plugin.json" || true
	$bot scan --json --tree "$tree" "$corpus/patches/clocksource-sync-durations-pr_info.patch" \
		> "$work/clocksource.json" || true
}

lab_locked read_tree

python3 - "$work/in" "$work/mbox.jsonl" "$every" <<'PY'
import collections, glob, json, os, re, sys
indir, mbox_jsonl, every = sys.argv[1], sys.argv[2], int(sys.argv[3])
from e2elib import check, done

accept = {
    'PRINTK_WITHOUT_KERN_LEVEL': {'level-missing'},
    'LOGGING_CONTINUATION': {'logging-continuation', 'cont-added'},
    'SPLIT_STRING': {'string-split'},
    'EMBEDDED_FUNCTION_NAME': {'embedded-function-name'},
    'QUOTED_WHITESPACE_BEFORE_NEWLINE': {'whitespace-before-newline'},
    'PREFER_PR_LEVEL': {'prefer-pr-level'},
}
# warnings on any string: only those on a printk-family statement count
any_string = {'SPLIT_STRING', 'EMBEDDED_FUNCTION_NAME', 'QUOTED_WHITESPACE_BEFORE_NEWLINE'}
# checkpatch.pl's $logFunctions but MODULE_*(), TP_printk() and seq_*() (no
# console message), plus dev_err_probe() and dev_warn_probe()
family = re.compile(r'(?<![\w])(printk(_once|_ratelimited|_deferred|_deferred_once)?|_printk'
                    r'|(?:[a-z0-9]+_){1,2}(?:printk|emerg|alert|crit|err|warning|warn|notice|info'
                    r'|debug|dbg|vdbg|devel|cont|WARN)(?:_ratelimited|_once)?'
                    r'|dev_err_probe|dev_warn_probe|panic|WARN(_ONCE|_RATELIMIT|_TAINT|_TAINT_ONCE)?)\s*\(')

def post_images(text):
    """file -> {post-image line: text} for every ' ' and '+' line of the diff."""
    files, cur, new, left = {}, None, 0, 0
    for line in text.split('\n'):
        if left <= 0:
            m = re.match(r'^\+\+\+ (?:b/)?(\S+)', line)
            if m:
                cur = files.setdefault(m.group(1), {})
                continue
            m = re.match(r'^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@', line)
            if m and cur is not None:
                new = int(m.group(1)); left = int(m.group(2) or 1)
            continue
        if line.startswith('-'):
            continue
        if line.startswith('\\'):
            continue
        cur[new] = line[1:]; new += 1; left -= 1
    return files

def statement(lines, n):
    """The statement line n belongs to: back to a line after ';', '{' or '}'."""
    start = n
    while start - 1 in lines:
        prev = lines[start - 1].rstrip()
        if not prev or prev.endswith((';', '{', '}')) or prev.lstrip().startswith('#'):
            break
        start -= 1
    return ' '.join(lines[i] for i in range(start, n + 1))

per_type = collections.defaultdict(collections.Counter)
misses, total_inputs = [], 0
extra = collections.Counter()
for path in sorted(glob.glob(os.path.join(indir, '*.patch'))):
    total_inputs += 1
    text = open(path, encoding='utf-8', errors='replace').read()
    images = post_images(text)
    findings = set()
    for l in open(path + '.scan'):
        for f in json.loads(l)['findings']:
            findings.add((f['file'], f['line'], f['kind']))
    matched = set()
    for line in open(path + '.cp'):
        m = re.match(r'^(\S+):(\d+): (WARNING|ERROR|CHECK):([A-Z_]+):', line)
        if not m or m.group(4) not in accept:
            continue
        file, n, typ = m.group(1), int(m.group(2)), m.group(4)
        c = per_type[typ]
        c['given'] += 1
        if not os.path.basename(path).startswith('checkpatch-'):
            c['corpus'] += 1
        if typ in any_string and not family.search(statement(images.get(file, {}), n)):
            c['not printk'] += 1
            continue
        c['printk'] += 1
        hit = [k for k in accept[typ] if (file, n, k) in findings]
        if hit:
            c['matched'] += 1
            matched.add((file, n, hit[0]))
        else:
            misses.append('%s: %s:%d %s' % (os.path.basename(path), file, n, typ))
    mirror = {k for ks in accept.values() for k in ks if k != 'cont-added'}
    for f in findings:
        if f[2] in mirror and f not in matched:
            extra[f[2]] += 1

print('%d inputs (every %d. mbox patch, corpus/patches, tests/data/scan/checkpatch)' % (total_inputs, every))
print('%-34s %6s %7s %6s %10s %8s' % ('checkpatch type', 'given', '(corpus)', 'printk', 'not printk',
                                      'matched'))
for typ in accept:
    c = per_type[typ]
    print('%-34s %6d %7d %6d %10d %8d' % (typ, c['given'], c['corpus'], c['printk'], c['not printk'],
                                         c['matched']))
print('scan findings of the mirrored kinds checkpatch did not give: %s' % dict(extra))
for miss in misses[:30]:
    print('    missed: ' + miss)
check(not misses, 'scan reports every printk-related checkpatch warning on its line (%d missed)' % len(misses))
check(all(per_type[t]['matched'] > 0 for t in accept),
      'every type was given on a printk statement at least once (the crafted patches)')
check(sum(c['not printk'] for c in per_type.values()) >= 3,
      'warnings on non-printk strings were seen and left out')

# 2. the mbox through GMime vs the decoded mails, Message-ID by Message-ID
by_file = {}
for path in glob.glob(os.path.join(indir, 'mbox-*.patch')):
    for l in open(path + '.scan'):
        o = json.loads(l)
        by_file[o['message_id']] = sorted((f['file'], f['line'], f['kind']) for f in o['findings'])
by_mbox = {}
for l in open(mbox_jsonl):
    o = json.loads(l)
    by_mbox[o['message_id']] = sorted((f['file'], f['line'], f['kind']) for f in o['findings'])
if every == 1:
    check(len(by_mbox) == len(by_file) == 545, 'the mbox and the decoded mails give the same 545 patches '
          '(%d, %d)' % (len(by_mbox), len(by_file)))
differ = [m for m in by_file if by_mbox.get(m) != by_file[m]]
for m in differ[:10]:
    print('    differs: %s\n      mbox: %s\n      file: %s' % (m, by_mbox.get(m), by_file[m]))
check(not differ, 'scanning the mbox gives the findings of the decoded mails (%d differ)' % len(differ))
churn = sum(1 for v in by_mbox.values() if v)
print('mbox: %d patches, %d with findings' % (len(by_mbox), churn))
done()
PY

# 3. The tree.  KBUILD_MODNAME against what Kbuild gave the compiler.
if [ -f "$work/described" ]; then
	python3 - "$work/modnames" "$work/described" <<'PY'
import json, sys
want = dict(l.split() for l in open(sys.argv[1]))
got = {o['path']: o['modname'] for o in map(json.loads, open(sys.argv[2]))}
bad = [(p, got.get(p), m) for p, m in want.items() if got.get(p) != m]
for b in bad[:20]:
    print('    %s: tree says %s, Kbuild said %s' % b)
ok = len(want) > 100 and not bad
print(('ok   ' if ok else 'FAIL ') + 'KBUILD_MODNAME of all %d objects of the last build matches Kbuild (%d differ)'
      % (len(want), len(bad)))
sys.exit(0 if ok else 1)
PY
else
	echo "skip KBUILD_MODNAME check: no build dir with .o.cmd files under $PRINTKBOT_CACHE/build"
fi

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
from e2elib import check, done
def findings(name):
    return json.loads(open('%s/%s.json' % (work, name)).readline())['findings']
want = int(open(work + '/topology.count').read())
f = [x for x in findings('topology') if x['kind'] == 'pr_fmt-added']
check(len(f) == 1 and f[0]['new_prefix'] == 'build_utility: ' and f[0]['old_prefix'] == '',
      'pr_fmt() in kernel/sched/topology.c gives "build_utility: " (%s)' % (f and f[0]['message']))
check(f and f[0]['affected'] == want and f[0]['affected_whole_file'],
      'it moves all %d pr_*() calls of the file (scan: %s)' % (want, f and f[0]['affected']))
f = [x for x in findings('plugin') if x['kind'] == 'prefix-changed']
check(len(f) == 1 and f[0]['old_prefix'] == 'rcu: ' and f[0]['new_prefix'] == '' and not f[0]['silent'],
      'pr_info() -> printk() in tree_plugin.h loses tree.c\'s "rcu: " (%s)' % (f and f[0]['message']))
f = [x for x in findings('clocksource') if x['kind'] == 'level-changed']
check(len(f) == 1 and f[0]['new_prefix'] == 'clocksource: ',
      'the clocksource patch\'s message carries "clocksource: "')
done()
PY
passed
