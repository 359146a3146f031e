# printkbot - build, test and demo.  `make demo` and `make check` are the
# README's two commands; both install the Debian packages first (make deps).

PREFIX   ?= /usr/local
CC       ?= cc
PKGS      = glib-2.0 gio-2.0 gmime-3.0 libgit2 libcurl sqlite3 libpq json-glib-1.0 template-glib-1.0
CFLAGS   ?= -O2 -g
# -Wno-missing-field-initializers: libgit2's *_INIT macros set only the version field
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror=implicit-function-declaration \
	    -Ibot $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
	    -DPK_SRCDIR='"$(CURDIR)"' -DPK_DATADIR='"$(PREFIX)/share/printkbot"' \
	    -DPK_LIBEXECDIR='"$(PREFIX)/libexec/printkbot"' -DPK_VERSION='"$(VERSION)"'
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null)
VERSION   = 0.1.0

# Debian packages the bot and its tests need (make deps installs them).
# b4 0.14 (the workplace's, for the check e2e test) runs on Debian's
# python3-requests, -dkim, -dnspython, -patatt and git-filter-repo;
# python3-jsonschema validates the KCIDB exports against their schema;
# gcc-aarch64-linux-gnu (with its libc) and qemu-system-arm are the arm64
# lab's (setup --arch arm64).
DEB_PKGS  = build-essential pkg-config libglib2.0-dev libgirepository1.0-dev \
	    libgmime-3.0-dev libgit2-dev libcurl4-openssl-dev libsqlite3-dev \
	    libjson-glib-dev libtemplate-glib-1.0-dev libcmocka-dev qemu-system-x86 linux-source-6.12 \
	    flex bison bc libelf-dev libssl-dev cpio xz-utils git ccache perl python3 python3-kconfiglib \
	    bubblewrap scdoc man-db sqlite3 clang libclang-rt-14-dev valgrind libpq-dev postgresql \
	    python3-requests python3-dkim python3-dnspython python3-patatt git-filter-repo python3-jsonschema \
	    gcc-aarch64-linux-gnu qemu-system-arm

# One folder per pipeline stage (doc/development.md, "Where things live"); every
# include names its stage ("store/store.h"), hence -Ibot.
BOT_SRCS  = $(wildcard bot/*/*.c)
BOT_HDRS  = $(wildcard bot/*/*.h)
BOT_OBJS  = $(BOT_SRCS:.c=.o)
UNIT_SRCS = $(wildcard tests/unit/test-*.c)
UNIT_BINS = $(UNIT_SRCS:.c=)

.PHONY: all man deps check check-long unit e2e e2e-long demo install clean bench bench-store bench-site bench-sandbox bench-noise unit-asan fuzz fuzz-long

all: printkbot printkbot-core man

# The man pages (doc/mkman.py says how they stay in step with --help and
# config.example); scdoc makes the roff.
MAN_PAGES = doc/printkbot.1 doc/printkbot.conf.5
man: $(MAN_PAGES)
doc/printkbot.1.scd: doc/printkbot.1.scd.in doc/mkman.py printkbot-core
	python3 doc/mkman.py 1 ./printkbot-core < $< > $@.tmp && mv $@.tmp $@
doc/printkbot.conf.5.scd: doc/printkbot.conf.5.scd.in doc/mkman.py config.example
	python3 doc/mkman.py 5 config.example < $< > $@.tmp && mv $@.tmp $@
doc/%: doc/%.scd
	scdoc < $< > $@.tmp && mv $@.tmp $@

# Made afresh: `ar r` would keep the object of a source file that is gone.
bot/libprintkbot.a: $(BOT_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

bot/%.o: bot/%.c $(BOT_HDRS)
	$(CC) $(CFLAGS) -c -o $@ $<

# The SQL is compiled in as C strings so the installed binary needs no data
# dir (awk, not GResource: a few text files need no bundle or extra tool).
DB_MIGRATIONS = $(sort $(wildcard db/[0-9][0-9][0-9]-*.sql))
bot/store/store-sql.inc: db/embed.awk db/schema.sql $(DB_MIGRATIONS)
	awk -f db/embed.awk db/schema.sql $(DB_MIGRATIONS) > $@.tmp && mv $@.tmp $@
# db.c includes the generated SQL, in every build of it.
bot/store/db.o build/asan/store/db.o build/fuzz/store/db.o: bot/store/store-sql.inc

# util.c bakes the data dir in (PK_DATADIR, from PREFIX): the stamp changes
# only when PREFIX does, so `make install PREFIX=/opt` after a plain `make`
# rebuilds it rather than installing a binary that looks in /usr/local.
PREFIX_STAMP = bot/base/.prefix
$(PREFIX_STAMP): FORCE
	@echo '$(PREFIX)' | cmp -s - $@ 2>/dev/null || echo '$(PREFIX)' > $@
bot/base/util.o bot/front.o build/asan/base/util.o build/fuzz/base/util.o: $(PREFIX_STAMP)
.PHONY: FORCE
FORCE:

# Two programs (bot/front.c says why): printkbot-core is the whole bot;
# printkbot runs `scan` itself and executes printkbot-core for the rest.
# printkbot takes from the archive only what scan uses and links GLib and
# GMime alone, as Debian ships them (shared, pkg-config): ldd lists 19
# objects for it against printkbot-core's 55.  The case that keeps it is
# one `printkbot scan PATCH` per patch (scripts, CI, bench/scan.sh):
# scan of tests/data/test/text-change.patch took a median 14.6 ms of CPU
# (15.7 ms wall) against 40.7 ms (41.9 ms) through printkbot-core, 20
# runs each, alternated, on a busy 2-CPU VM where only the ratio counts:
# 2.7x, nearly all of the difference the dynamic loader's (perf).
FRONT_PKGS = glib-2.0 gmime-3.0
printkbot: bot/front.o bot/libprintkbot.a | printkbot-core
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs $(FRONT_PKGS) 2>/dev/null)

printkbot-core: bot/main.o bot/libprintkbot.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

tests/unit/test-%: tests/unit/test-%.c bot/libprintkbot.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# Sanitizer builds: the same sources again under build/<kind>/, so the
# normal objects are untouched.  build/asan: ASan + UBSan (the compiler
# of the normal build) for `make unit-asan`; build/fuzz: clang with
# libFuzzer's coverage besides, for `make fuzz`.
SAN_FLAGS    = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
ASAN_CFLAGS  = $(filter-out -O2,$(CFLAGS)) $(SAN_FLAGS)
FUZZ_CC      = clang
FUZZ_CFLAGS  = $(filter-out -O2,$(CFLAGS)) $(SAN_FLAGS) -fsanitize=fuzzer-no-link
FUZZ_SECONDS ?= 60
# The long form: FUZZ_RUNS=N runs each target for N executions (libFuzzer's
# -runs=, the seeds' included) instead of FUZZ_SECONDS, and a target that
# stops short of N is a failure: `make fuzz FUZZ_RUNS=1000000`, or `make
# fuzz-long` (about 20 minutes in all at the rates doc/hardening.md gives, scan the slowest).
FUZZ_RUNS    ?=
# Which targets, by name ("mail config"); all of tests/fuzz/ by default.
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
ASAN_OBJS    = $(BOT_SRCS:bot/%.c=build/asan/%.o)
FUZZ_OBJS    = $(BOT_SRCS:bot/%.c=build/fuzz/%.o)
ASAN_UNITS   = $(UNIT_SRCS:tests/unit/%.c=build/asan/%)
FUZZ_BINS    = $(FUZZ_TARGETS:%=build/fuzz/fuzz-%)
# LeakSanitizer on (tests/lsan.supp for what libraries keep); no strstr
# interceptor: it measures the whole haystack on every call, which makes
# g_strsplit() of a 3 MB diff quadratic under ASan (not without it)
SAN_ENV      = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_strstr=0 \
	       LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

build/asan/%.o: bot/%.c $(BOT_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ASAN_CFLAGS) -c -o $@ $<
build/asan/libprintkbot.a: $(ASAN_OBJS)
	rm -f $@ && $(AR) rcs $@ $^
build/asan/test-%: tests/unit/test-%.c build/asan/libprintkbot.a
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# The unit tests again under ASan, UBSan and LeakSanitizer.
unit-asan: $(ASAN_UNITS)
	@fail=0; for t in $(ASAN_UNITS); do echo "== $$t"; $(SAN_ENV) ./$$t || fail=1; done; exit $$fail

build/fuzz/%.o: bot/%.c $(BOT_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<
build/fuzz/libprintkbot.a: $(FUZZ_OBJS)
	rm -f $@ && $(AR) rcs $@ $^
build/fuzz/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz.h build/fuzz/libprintkbot.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libprintkbot.a $(LDLIBS)

# Each libFuzzer target for FUZZ_SECONDS (or FUZZ_RUNS executions), one
# after the other; prints the executions and findings.
fuzz: $(FUZZ_BINS)
	bash tests/fuzz/run.sh $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS),$(FUZZ_SECONDS)) $(FUZZ_BINS)

# Each target for a million executions at least.
fuzz-long:
	$(MAKE) fuzz FUZZ_RUNS=1000000

# Installs only what is missing, so a warm machine skips apt entirely.
# As root it also makes the unprivileged system user that sandboxed builds
# and boots run as (bot/sandbox.h): no home, no shell, no password.
SANDBOX_USER = printkbot-build
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
		| grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi
	@if [ "$$(id -u)" = 0 ] && ! getent passwd $(SANDBOX_USER) >/dev/null; then \
		echo "adding the sandbox user $(SANDBOX_USER)"; \
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin $(SANDBOX_USER); \
	fi

# tests/layering.sh first: no stage of bot/ may include one above it;
# tests/layering.py: no circle between two files of bot/, no call up a
# floor (it reads the objects, which the unit tests' archive made).
unit: $(UNIT_BINS) man
	@bash tests/layering.sh
	@python3 tests/layering.py
	@fail=0; for t in $(UNIT_BINS); do echo "== $$t"; ./$$t || fail=1; done; exit $$fail

# The number orders the scripts and names each one in reports: two that
# share one is a mistake, refused before anything runs.  make check runs
# every script but E2E_LONG, so that CI (a fresh machine: the lab built
# cold, the host busy) stays well inside its time: E2E_LONG are the ones
# that build kernels beyond the lab's base and a patch or two (a second
# base, configs derived per patch, three workers' labs, a branch commit
# by commit, a watched branch, a whole series, the kernel fix), run for
# minutes on data (a 612 MiB mbox, checkpatch.pl over the corpus) or
# install a browser.  make check-long runs those.  `make e2e E2E=020` runs one.
E2E_LONG     = 010 011 025 026 034 036 040 060 064 065 066 070 071 072 080 081
E2E_ALL      = $(sort $(wildcard tests/e2e/[0-9]*.sh))
E2E_LONG_SH  = $(foreach n,$(E2E_LONG),$(filter tests/e2e/$(n)-%,$(E2E_ALL)))
E2E_SHORT_SH = $(filter-out $(E2E_LONG_SH),$(E2E_ALL))
E2E_PICK     = $(if $(E2E),$(foreach n,$(E2E),$(filter tests/e2e/$(n)-%,$(E2E_ALL))),$(E2E_SHORT_SH))
e2e: printkbot
	@bash tests/e2e/run-all.sh $(E2E_PICK)
e2e-long: printkbot
	@bash tests/e2e/run-all.sh $(E2E_LONG_SH)

# The C builds take -j: make check starts on a machine with nothing built.
NPROC = $(shell nproc 2>/dev/null || echo 2)
# 001 (the lab set up and its base built cold) runs beside the unit tests,
# which leave the CPU idle half their time, and then beside the e2e
# scripts that build no kernel and mostly wait: tests/check.sh.
E2E_COLD_SH   = $(filter tests/e2e/001-%,$(E2E_SHORT_SH))
E2E_NO_LAB    = 031 033 037
E2E_BESIDE_SH = $(foreach n,$(E2E_NO_LAB),$(filter tests/e2e/$(n)-%,$(E2E_SHORT_SH)))
check: deps
	$(MAKE) -j$(NPROC) all
	@bash tests/check.sh $(NPROC) "$(UNIT_BINS) $(ASAN_UNITS)" \
		-- $(E2E_COLD_SH) -- $(E2E_BESIDE_SH) \
		-- $(filter-out $(E2E_COLD_SH) $(E2E_BESIDE_SH),$(E2E_SHORT_SH))

check-long: deps
	$(MAKE) -j$(NPROC) all
	$(MAKE) e2e-long

# The bundled example changes a boot message, so `test` exits 1 (console
# changed) by design; only 2 (the bot failed) fails the demo.
demo: deps
	$(MAKE) all
	./printkbot setup
	./printkbot test tests/data/test/text-change.patch || [ $$? -eq 1 ]

bench: printkbot
	bash bench/kernel-lab.sh
	bash bench/test.sh

bench/sandbox: bench/sandbox.c bot/libprintkbot.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The sandbox's cost on a one-file rebuild and a boot, side by side (needs a built lab).
bench-sandbox: bench/sandbox
	./bench/sandbox $(BENCH_ROUNDS)

# False alarms under load (N patches beside HOGS busy loops); see the script.
bench-noise: printkbot
	bash bench/noise.sh

bench-store: printkbot bot/libprintkbot.a
	bash bench/store.sh

bench-site: printkbot bot/libprintkbot.a
	bash bench/site.sh

# The binary reads qemu/ and templates/ from $(PREFIX)/share/printkbot
# (bot/base/util.h, pk_data_dir()).  -p keeps qemu/init.c's time: a newer
# one would make setup build the guest initramfs again.
# The systemd unit and its user go where the administrator's own live
# (systemd reads no /usr/local/lib/systemd); the unit's /usr/local/bin is
# made $(PREFIX)/bin.
UNITDIR     ?= /etc/systemd/system
SYSUSERSDIR ?= /etc/sysusers.d
install: printkbot printkbot-core man
	install -D -m 0755 printkbot $(DESTDIR)$(PREFIX)/bin/printkbot
	install -D -m 0755 printkbot-core $(DESTDIR)$(PREFIX)/libexec/printkbot/printkbot-core
	install -d $(DESTDIR)$(PREFIX)/share/printkbot/templates $(DESTDIR)$(PREFIX)/share/printkbot/qemu
	install -p -m 0644 templates/* $(DESTDIR)$(PREFIX)/share/printkbot/templates
	install -p -m 0644 qemu/* $(DESTDIR)$(PREFIX)/share/printkbot/qemu
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	sed 's|/usr/local/bin/printkbot|$(PREFIX)/bin/printkbot|g' contrib/printkbot.service \
		> $(DESTDIR)$(UNITDIR)/printkbot.service
	install -m 0644 contrib/printkbot.sysusers $(DESTDIR)$(SYSUSERSDIR)/printkbot.conf
	install -D -m 0644 doc/printkbot.1 $(DESTDIR)$(PREFIX)/share/man/man1/printkbot.1
	install -D -m 0644 doc/printkbot.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/printkbot.conf.5
	install -d $(DESTDIR)$(PREFIX)/share/doc/printkbot
	install -m 0644 doc/*.md config.example $(DESTDIR)$(PREFIX)/share/doc/printkbot

clean:
	rm -f printkbot printkbot-core bot/*.o bot/*/*.o bot/*.a bot/store/store-sql.inc $(PREFIX_STAMP) bench/store-fill bench/sandbox $(UNIT_BINS)
	rm -rf build
	rm -f $(MAN_PAGES) doc/*.scd doc/*.tmp
