/*
 * test-kdiff.c - the diff stage: normalising, noise, alignment and change
 * kinds, attribution to printk index entries, the index diff, confirming
 * scan findings, and real boots of one kernel that must not differ.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/kdiff.h"

#define DATA PK_SRCDIR "/tests/data/kdiff/"

/* One record of a test boot; a table of them ends with a NULL text. */
struct rec_spec {
	int level;
	const char *text;
	bool cont;
};

/* A capture as pk_capture_parse() would give it: records, then an index in its text form. */
static struct pk_capture *capture_new(const struct rec_spec *recs, const char *index)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);
	guint64 seq = 0;

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	cap->complete = true;
	for (const struct rec_spec *r = recs; r && r->text; r++) {
		struct pk_record *rec = g_new0(struct pk_record, 1);

		rec->level = r->level;
		rec->cont = r->cont;
		rec->seq = seq++;
		rec->ts_usec = seq * 1000;
		rec->caller = g_strdup_printf("T%u", (unsigned)(seq % 3));
		rec->text = g_strdup(r->text);
		rec->dict = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(cap->records, rec);
	}
	if (index)
		pk_index_parse(cap->index, index, strlen(index), cap->problems);
	assert_string_equal(cap->problems->str, "");
	return cap;
}

static struct pk_capture *capture_load(const char *name)
{
	g_autofree char *path = g_strconcat(DATA, name, NULL);
	g_autofree char *buf = NULL;
	gsize len = 0;
	struct pk_capture *cap;

	assert_true(g_file_get_contents(path, &buf, &len, NULL));
	cap = pk_capture_parse(buf, len);
	assert_true(cap->complete);
	assert_true(cap->records->len > 100);
	return cap;
}

static char *data_text(const char *name)
{
	g_autofree char *path = g_strconcat(DATA, name, NULL);
	char *buf = NULL;

	assert_true(g_file_get_contents(path, &buf, NULL, NULL));
	return buf;
}

/* ---------------------------------------------------------------- normalising */

static const struct {
	const char *in, *out;
} norm_cases[] = {
	/* clock and BogoMIPS figures race the host */
	{ "tsc: Detected 2419.200 MHz processor", "tsc: Detected <N> MHz processor" },
	{ "tsc: Refined TSC clocksource calibration: 2419.199 MHz", "tsc: Refined TSC clocksource calibration: <N> MHz" },
	{ "Calibrating delay loop (skipped), value calculated using timer frequency.. 4838.40 BogoMIPS (lpj=9676800)",
	  "Calibrating delay loop (skipped), value calculated using timer frequency.. <N> BogoMIPS (lpj=<N>)" },
	{ "smpboot: Total of 1 processors activated (369.66 BogoMIPS)",
	  "smpboot: Total of 1 processors activated (<N> BogoMIPS)" },
	{ "clocksource: tsc-early: mask: 0xffffffffffffffff max_cycles: 0x256c0731a4e, max_idle_ns: 440795333312 ns",
	  "clocksource: tsc-early: mask: 0x<N> max_cycles: 0x<N>, max_idle_ns: <N> ns" },
	{ "clocksource: jiffies: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: 7645041785100000 ns",
	  "clocksource: jiffies: mask: 0x<N> max_cycles: 0x<N>, max_idle_ns: <N> ns" },
	{ "sched_clock: Marking stable (587821807, 29401770)->(620072952, -2849375)",
	  "sched_clock: Marking stable <N>" },
	/* memory counts move with the kernel image */
	{ "Memory: 239476K/261624K available (4096K kernel code, 680K rwdata, 0K cma-reserved)",
	  "Memory: <N>K/<N>K available (<N>K kernel code, <N>K rwdata, <N>K cma-reserved)" },
	{ "Write protecting the kernel read-only data: 6144k", "Write protecting the kernel read-only data: <N>k" },
	/* addresses and hashed pointers; the shape of a range stays */
	{ "BIOS-e820: [mem 0x0000000000000000-0x000000000009fbff] usable", "BIOS-e820: [mem 0x<N>-0x<N>] usable" },
	{ "e820: remove [mem 0x000a0000-0x000fffff] usable", "e820: remove [mem 0x<N>-0x<N>] usable" },
	{ "Kernel Offset: 0x1e000000 from 0xffffffff81000000", "Kernel Offset: 0x<N> from 0x<N>" },
	{ "kobject: 00000000abcdef12 released", "kobject: <N> released" },
	/* short numbers are the kernel's choice and are compared */
	{ "serial8250: ttyS0 at I/O 0x3f8 (irq = 4, base_baud = 115200) is a 16550A",
	  "serial8250: ttyS0 at I/O 0x3f8 (irq = 4, base_baud = 115200) is a 16550A" },
	{ "last_pfn = 0xffe0 max_arch_pfn = 0x400000000", "last_pfn = 0xffe0 max_arch_pfn = 0x<N>" },
	{ "rcu: RCU calculated value of scheduler-enlistment delay is 25 jiffies.",
	  "rcu: RCU calculated value of scheduler-enlistment delay is 25 jiffies." },
	/* words made of hex letters, and numbers glued to words, are text */
	{ "deadbeef facade percpu s135192 u2097152", "deadbeef facade percpu s135192 u2097152" },
	{ "..... calibration result: 6250000", "..... calibration result: <N>" },
	/* durations */
	{ "PM: suspend of devices complete after 12.345 msecs", "PM: suspend of devices complete after <N> msecs" },
	/* build stamps */
	{ "Linux version 6.12.118+ (printkbot@printkbot) (gcc 12.2.0) #1 SMP 2024-01-01 00:00:00 UTC",
	  "Linux version 6.12.118+ (printkbot@printkbot) (gcc 12.2.0) #<N> SMP <date>" },
	{ "Linux version 6.12.0 (u@h) (gcc 12) #37 SMP PREEMPT_DYNAMIC Mon Jan  1 10:20:30 UTC 2024",
	  "Linux version 6.12.0 (u@h) (gcc 12) #<N> SMP PREEMPT_DYNAMIC <date>" },
	{ "rtc_cmos 00:00: setting system clock to 2025-03-04T05:06:07 UTC (1741064767)",
	  "rtc_cmos 00:00: setting system clock to <date> (<N>)" },
	/* bytes that are not UTF-8 pass through */
	{ "caf\xe9 at 0x12345678", "caf\xe9 at 0x<N>" },
	{ "", "" },
};

static void test_normalise_table(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(norm_cases); i++) {
		g_autofree char *once = pk_kdiff_normalise(norm_cases[i].in);
		g_autofree char *twice = pk_kdiff_normalise(once);

		assert_string_equal(once, norm_cases[i].out);
		assert_string_equal(twice, once); /* stable */
	}
}

/* ---------------------------------------------------------------- noise */

static void test_noise_learn(void **state)
{
	static const struct rec_spec b1[] = {
		{ 6, "Linux version 6.12 #1 SMP 2024-01-01 00:00:00 UTC" },
		{ 4, "tsc: Unable to calibrate against PIT" },
		{ 6, "Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)" },
		{ 6, "same twice" }, { 6, "same twice" },
		{ 6, "once here, twice there" },
		{ 6, "level varies" },
		{ 0 },
	};
	static const struct rec_spec b2[] = {
		{ 6, "Linux version 6.12 #2 SMP 2024-01-01 00:00:00 UTC" },
		{ 6, "tsc: Detected 2596.148 MHz processor" },
		{ 6, "Calibrating delay loop... 5192.30 BogoMIPS (lpj=10384600)" },
		{ 6, "same twice" }, { 6, "same twice" },
		{ 6, "once here, twice there" }, { 6, "once here, twice there" },
		{ 4, "level varies" },
		{ 0 },
	};
	static const char *const want[] = {
		"4,0,-;level varies",
		"4,0,-;tsc: Unable to calibrate against PIT",
		"6,0,-;level varies",
		"6,0,-;once here, twice there",
		"6,0,-;tsc: Detected <N> MHz processor",
		NULL,
	};
	g_autoptr(pk_capture) c1 = capture_new(b1, NULL);
	g_autoptr(pk_capture) c2 = capture_new(b2, NULL);
	const struct pk_capture *boots[] = { c1, c2 };
	struct pk_noise *noise = pk_noise_learn(boots, 2), *again;
	g_auto(GStrv) keys = pk_noise_keys(noise), keys2 = NULL;

	assert_int_equal(g_strv_length(keys), g_strv_length((char **)want));
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(keys[i], want[i]);
	again = pk_noise_from_keys((const char *const *)keys);
	keys2 = pk_noise_keys(again);
	assert_true(g_strv_equal((const char *const *)keys, (const char *const *)keys2));
	{
		/*
		 * the mask leaves out the same records on both sides, and the
		 * timing-dependent delay-loop line on each, learnt or not
		 */
		g_autoptr(pk_kdiff) d = pk_kdiff_captures(c1, c2, again);

		assert_int_equal(d->changes->len, 0);
		assert_int_equal(d->noise_dropped, (3 + 1) + (4 + 1));
		assert_int_equal(d->records_before, 7);
		assert_int_equal(d->records_after, 8);
	}
	{
		/* one boot has nothing to disagree with */
		struct pk_noise *one = pk_noise_learn(boots, 1);
		g_auto(GStrv) none = pk_noise_keys(one);

		assert_null(none[0]);
		pk_noise_free(one);
	}
	{
		/* a mask grows by another's keys (the confirmation boots), once each */
		const char *extra[] = { "6,0,-;new varying", keys[0], NULL };
		struct pk_noise *more = pk_noise_from_keys(extra);

		pk_noise_add(again, more);
		pk_noise_add(again, NULL);
		assert_int_equal(pk_noise_size(again), g_strv_length(keys) + 1);
		assert_int_equal(pk_noise_size(NULL), 0);
		pk_noise_free(more);
	}
	pk_noise_free(again);
	pk_noise_free(noise);
	pk_noise_free(NULL);
}

/* The diff of two boots' records under a mask that names nothing: only timing noise is left out. */
static struct pk_kdiff *diff_unmasked(const struct rec_spec *before, const struct rec_spec *after)
{
	const char *const no_keys[] = { NULL };
	g_autoptr(pk_capture) a = capture_new(before, NULL);
	g_autoptr(pk_capture) b = capture_new(after, NULL);
	struct pk_noise *mask = pk_noise_from_keys(no_keys);
	struct pk_kdiff *d = pk_kdiff_captures(a, b, mask);

	pk_noise_free(mask);
	return d;
}

/*
 * The APIC timer's calibration against the PM timer, off on a loaded host,
 * and a second CPU's direct delay calibration, given up there: timing
 * noise, never a change.
 */
static void test_noise_calibrate_direct(void **state)
{
	static const struct rec_spec quiet[] = {
		{ 6, "smp: Brought up 1 node, 2 CPUs" },
		{ 0 },
	};
	static const struct rec_spec loaded[] = {
		{ 4, "APIC calibration not consistent with PM-Timer: 146ms instead of 100ms" },
		{ 6, "APIC delta adjusted to PM-Timer: 6250023 (9127402)" },
		{ 6, "calibrate_delay_direct() dropping max bogoMips estimate 0 = 20230808" },
		{ 6, "calibrate_delay_direct() failed to get a good estimate for loops_per_jiffy.\n"
		     "Probably due to long platform interrupts. Consider using \"lpj=\" boot option." },
		{ 6, "smp: Brought up 1 node, 2 CPUs" },
		{ 0 },
	};
	g_autoptr(pk_kdiff) d = diff_unmasked(quiet, loaded);

	assert_int_equal(d->changes->len, 0);
	assert_int_equal(d->noise_dropped, 4);
}

/*
 * The PS/2 mouse's registration, late on a busy host: in the after boot
 * and not in the base's, it is timing noise; a USB device's is compared.
 */
static void test_noise_serio_input(void **state)
{
	static const struct rec_spec early[] = {
		{ 6, "input: AT Translated Set 2 keyboard as /devices/platform/i8042/serio0/input/input2" },
		{ 6, "Freeing unused kernel image (initmem) memory: 1000K" },
		{ 0 },
	};
	static const struct rec_spec late[] = {
		{ 6, "input: AT Translated Set 2 keyboard as /devices/platform/i8042/serio0/input/input2" },
		{ 6, "Freeing unused kernel image (initmem) memory: 1000K" },
		{ 6, "input: ImExPS/2 Generic Explorer Mouse as /devices/platform/i8042/serio1/input/input3" },
		{ 6, "input: QEMU QEMU USB Tablet as /devices/pci0000:00/0000:00:1d.0/usb1/1-1/1-1:1.0/input/input4" },
		{ 0 },
	};
	g_autoptr(pk_kdiff) d = diff_unmasked(early, late);

	assert_int_equal(d->changes->len, 1);
	assert_non_null(strstr(((struct pk_change *)g_ptr_array_index(d->changes, 0))->new_text, "USB Tablet"));
	assert_int_equal(d->noise_dropped, 3);
}

/* ---------------------------------------------------------------- change kinds */

struct want_change {
	const char *kind;
	const char *message;
};

struct kdiff_case {
	const char *name;
	const struct rec_spec *before, *after;
	const char *index_before, *index_after;
	struct want_change want[4];     /* ends with a NULL kind */
};

#define E820_MEM "<6> arch/x86/kernel/e820.c:682 e820__setup_pci_gap \"[mem %#010lx-%#010lx] available for PCI devices\\n\"\n"
#define E820_GAP "<6> arch/x86/kernel/e820.c:683 e820__setup_pci_gap \"[gap %#010lx-%#010lx] available for PCI devices\\n\"\n"
#define TOPO_IDX "<7> kernel/sched/topology.c:139 sched_domain_debug \"CPU%d attaching NULL sched-domain.\\n\"\n"
#define SMP_IDX(l) "<" #l "> kernel/smp.c:1012 smp_init \"smp: Brought up %d node, %d CPU\\n\"\n"
#define CALIB_IDX "<6> init/calibrate.c:303 calibrate_delay \"Calibrating delay loop... \"\n" \
		  "<c> init/calibrate.c:308 calibrate_delay \"%lu.%02lu BogoMIPS (lpj=%lu)\\n\"\n"
#define PAIR_IDX(a, b) "<6> kernel/f.c:10 func_a \"" a "\\n\"\n<6> kernel/f.c:20 func_b \"" b "\\n\"\n"

static const struct kdiff_case kdiff_cases[] = {
	{ "identical boots",
	  (const struct rec_spec[]){ { 6, "one" }, { 6, "two" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "one" }, { 6, "two" }, { 0 } },
	  NULL, NULL, { { NULL } } },
	{ "numbers that vary are no change",
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "tsc: Detected 2419.200 MHz processor" },
				     { 6, "Memory: 239476K/261624K available" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "tsc: Detected 2596.148 MHz processor" },
				     { 6, "Memory: 239480K/261624K available" }, { 0 } },
	  NULL, NULL, { { NULL } } },
	{ "text changed, attributed to the after side's entry",
	  (const struct rec_spec[]){ { 6, "x" }, { 6, "[mem 0x10000000-0xafffffff] available for PCI devices" },
				     { 6, "y" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "x" }, { 6, "[gap 0x10000000-0xafffffff] available for PCI devices" },
				     { 6, "y" }, { 0 } },
	  E820_MEM, E820_GAP,
	  { { "text-changed", "arch/x86/kernel/e820.c:683 e820__setup_pci_gap(): text changed: "
			      "`[mem 0x10000000-0xafffffff] available for PCI devices` → "
			      "`[gap 0x10000000-0xafffffff] available for PCI devices`" } } },
	{ "pr_fmt prefix removed",
	  (const struct rec_spec[]){ { 6, "x" }, { 7, "sched: CPU0 attaching NULL sched-domain." }, { 0 } },
	  (const struct rec_spec[]){ { 6, "x" }, { 7, "CPU0 attaching NULL sched-domain." }, { 0 } },
	  NULL, TOPO_IDX,
	  { { "prefix-changed", "kernel/sched/topology.c:139 sched_domain_debug(): prefix changed: "
				"`sched: CPU0 attaching NULL sched-domain.` → `CPU0 attaching NULL sched-domain.`" } } },
	{ "pr_fmt prefix replaced, unattributed",
	  (const struct rec_spec[]){ { 7, "sched: root domain span: 0" }, { 6, "x" }, { 0 } },
	  (const struct rec_spec[]){ { 7, "build_utility: root domain span: 0" }, { 6, "x" }, { 0 } },
	  NULL, NULL,
	  { { "prefix-changed", "prefix changed: `sched: root domain span: 0` → `build_utility: root domain span: 0`" } } },
	{ "level changed: invisible on a console, still a change",
	  (const struct rec_spec[]){ { 6, "x" }, { 6, "smp: Brought up 1 node, 1 CPU" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "x" }, { 4, "smp: Brought up 1 node, 1 CPU" }, { 0 } },
	  SMP_IDX(6), SMP_IDX(4),
	  { { "level-changed", "kernel/smp.c:1012 smp_init(): level changed from info to warn: "
			       "`smp: Brought up 1 node, 1 CPU`" } } },
	{ "line split: a continuation became a record of its own",
	  (const struct rec_spec[]){ { 6, "x" }, { 6, "Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)" },
				     { 6, "y" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "x" }, { 6, "Calibrating delay loop... " },
				     { 4, "5192.30 BogoMIPS (lpj=10384600)" }, { 6, "y" }, { 0 } },
	  CALIB_IDX, CALIB_IDX,
	  { { "line-split", "init/calibrate.c:303 calibrate_delay(): line split: "
			    "`Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)` → "
			    "`Calibrating delay loop... ` + `5192.30 BogoMIPS (lpj=10384600)`" } } },
	{ "lines merged",
	  (const struct rec_spec[]){ { 6, "Calibrating delay loop... " }, { 4, "369.66 BogoMIPS (lpj=739328)" },
				     { 0 } },
	  (const struct rec_spec[]){ { 6, "Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)" }, { 0 } },
	  CALIB_IDX, CALIB_IDX,
	  { { "lines-merged", "init/calibrate.c:303 calibrate_delay(): lines merged: "
			      "`Calibrating delay loop... ` + `369.66 BogoMIPS (lpj=739328)` → "
			      "`Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)`" } } },
	{ "removed and added, in after-boot order",
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "old message gone" }, { 6, "b" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "b" }, { 3, "brand new line" }, { 0 } },
	  NULL, NULL,
	  { { "message-removed", "message removed: `old message gone`" },
	    { "message-added", "message added: `brand new line`" } } },
	{ "records that only moved are no change",
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "Unpacking initramfs..." }, { 6, "b" }, { 6, "c" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "b" }, { 6, "Unpacking initramfs..." }, { 6, "c" }, { 0 } },
	  NULL, NULL, { { NULL } } },
	{ "the same call pairs records whatever their words",
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "alpha one two three" }, { 6, "beta four five six" },
				     { 6, "z" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "gamma four five six seven" }, { 6, "delta one two three" },
				     { 6, "z" }, { 0 } },
	  PAIR_IDX("alpha one two three", "beta four five six"),
	  PAIR_IDX("gamma four five six seven", "delta one two three"),
	  { { "text-changed", "kernel/f.c:10 func_a(): text changed: `alpha one two three` → `gamma four five six seven`" },
	    { "text-changed", "kernel/f.c:20 func_b(): text changed: `beta four five six` → `delta one two three`" } } },
	{ "similar texts pair without an index, a level change noted",
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "eth0: link up at 100 Mbps full duplex" }, { 6, "b" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "a" }, { 4, "eth0: link is up, 100 Mbps, full duplex" }, { 6, "b" }, { 0 } },
	  NULL, NULL,
	  { { "text-changed", "text changed (info → warn): `eth0: link up at 100 Mbps full duplex` → "
			      "`eth0: link is up, 100 Mbps, full duplex`" } } },
	{ "unrelated texts do not pair",
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "completely unrelated words here" }, { 6, "b" }, { 0 } },
	  (const struct rec_spec[]){ { 6, "a" }, { 6, "nothing shared at all" }, { 6, "b" }, { 0 } },
	  NULL, NULL,
	  { { "message-removed", "message removed: `completely unrelated words here`" },
	    { "message-added", "message added: `nothing shared at all`" } } },
	{ "long texts are cut, control bytes escaped",
	  (const struct rec_spec[]){ { 0 } },
	  (const struct rec_spec[]){ { 6, "rcu: \tThis message is much too long to be quoted whole in a one-line change message" },
				     { 0 } },
	  NULL, NULL,
	  { { "message-added", "message added: `rcu: \\tThis message is much too long to be quoted whole in a one-line c…`" } } },
};

static void check_changes(const struct pk_kdiff *d, const struct want_change *want, const char *name)
{
	guint n = 0;

	while (n < 4 && want[n].kind)
		n++;
	if (d->changes->len != n) {
		for (guint i = 0; i < d->changes->len; i++)
			print_message("  got %s\n", ((struct pk_change *)d->changes->pdata[i])->message);
		fail_msg("%s: %u changes, want %u", name, d->changes->len, n);
	}
	for (guint i = 0; i < n; i++) {
		const struct pk_change *c = d->changes->pdata[i];

		assert_string_equal(pk_change_kind_name(c->kind), want[i].kind);
		assert_string_equal(c->message, want[i].message);
	}
}

static void test_kdiff_table(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kdiff_cases); i++) {
		const struct kdiff_case *k = &kdiff_cases[i];
		g_autoptr(pk_capture) before = capture_new(k->before, k->index_before);
		g_autoptr(pk_capture) after = capture_new(k->after, k->index_after);
		g_autoptr(pk_kdiff) d = pk_kdiff_captures(before, after, NULL);

		check_changes(d, k->want, k->name);
	}
}

static const struct kdiff_case *kdiff_case(const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kdiff_cases); i++)
		if (g_str_has_prefix(kdiff_cases[i].name, name))
			return &kdiff_cases[i];
	fail_msg("no case %s", name);
	return NULL;
}

/* The sides of a change: levels, texts (joined with "\n" for a split) and origin. */
static void test_change_fields(void **state)
{
	const struct kdiff_case *split = kdiff_case("line split"), *added = kdiff_case("removed and added");
	g_autoptr(pk_capture) b1 = capture_new(split->before, split->index_before);
	g_autoptr(pk_capture) a1 = capture_new(split->after, split->index_after);
	g_autoptr(pk_capture) b2 = capture_new(added->before, NULL);
	g_autoptr(pk_capture) a2 = capture_new(added->after, NULL);
	g_autoptr(pk_kdiff) d1 = pk_kdiff_captures(b1, a1, NULL);
	g_autoptr(pk_kdiff) d2 = pk_kdiff_captures(b2, a2, NULL);
	const struct pk_change *c = d1->changes->pdata[0];

	assert_int_equal(c->old_level, 6);
	assert_int_equal(c->new_level, 6);
	assert_string_equal(c->old_text, "Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)");
	assert_string_equal(c->new_text, "Calibrating delay loop... \n5192.30 BogoMIPS (lpj=10384600)");
	assert_string_equal(c->origin.file, "init/calibrate.c");
	assert_int_equal(c->origin.line, 303);
	assert_string_equal(c->origin.func, "calibrate_delay");
	assert_string_equal(c->origin.format, "Calibrating delay loop... ");

	c = d2->changes->pdata[0];
	assert_string_equal(pk_change_kind_name(c->kind), "message-removed");
	assert_int_equal(c->new_level, -1);
	assert_null(c->new_text);
	assert_null(c->origin.file);
	c = d2->changes->pdata[1];
	assert_int_equal(c->old_level, -1);
	assert_null(c->old_text);
	assert_int_equal(c->new_level, 3);
	assert_int_equal(d2->records_before, 3);
	assert_int_equal(d2->records_after, 3);
	assert_int_equal(d2->noise_dropped, 0);
}

/* ---------------------------------------------------------------- attribution */

static const char attr_index[] =
	"<6> a.c:1 f_int \"ints %d %u %ld %lu %llu %5d|%-5d|\\n\"\n"
	"<6> a.c:2 f_hex \"hex %x %lx %llx %08x %#x %#010lx %X\\n\"\n"
	"<6> a.c:3 f_str \"str %s [%.*s] %c%*d %%\\n\"\n"
	"<6> a.c:4 f_ptr \"ptr %p %pK %px\\n\"\n"
	"<6> a.c:5 f_sym \"sym %pS %ps at %pa %pap %pad\\n\"\n"
	"<6> a.c:6 f_res \"res %pR %pr\\n\"\n"
	"<6> a.c:7 f_bits \"bits %*pbl %*pb\\n\"\n"
	"<6> a.c:8 f_misc \"misc %pOF %pV %pe\\n\"\n"
	"<6> b.c:10 specific \"smpboot: Total of %d processors activated (%lu.%02lu BogoMIPS)\\n\"\n"
	"<6> b.c:11 generic \"smpboot: Total of %d %s\\n\"\n"
	"<6> b.c:12 open_start \"Calibrating delay loop... \"\n"
	"<c> b.c:13 cont_piece \"%lu.%02lu BogoMIPS (lpj=%lu)\\n\"\n"
	"<6> b.c:14 bare \"device ready\\n\"\n"
	"<6> b.c:15 glued \"%sfoo bar\\n\"\n"
	"<6> b.c:16 anything \"%s\\n\"\n"
	"<6> b.c:17 multi \"first line\\nsecond %d\\n\"\n"
	"<6> b.c:18 quoted \"say \\\"%s\\\"\\tnow\\n\"\n";

static const struct {
	const char *text;
	bool cont;
	const char *want;   /* "file:line", or NULL for no entry */
} attr_cases[] = {
	{ "ints -3 4 -5 6 7    42|7    |", false, "a.c:1" },
	{ "hex ff ffffffff 1234567890abcdef 0000beef 0x1f 0x00001000 ABC", false, "a.c:2" },
	{ "str hello [abc] x   12 %", false, "a.c:3" },
	{ "ptr 00000000abcdef12 (____ptrval____) ffff888003a1b2c0", false, "a.c:4" },
	{ "sym start_kernel+0x1f/0x30 do_one_initcall at 0x0000000001000000 0x00000000fee00000 0x000000007ffe0000",
	  false, "a.c:5" },
	{ "res [mem 0xfed00000-0xfed003ff] [io  0x0060-0x0064]", false, "a.c:6" },
	{ "bits 0-3,7 ff,00000001", false, "a.c:7" },
	{ "misc /soc/uart@1000 nested: text -ENOMEM", false, "a.c:8" },
	{ "hex ff", false, NULL },
	/* the most specific format wins */
	{ "smpboot: Total of 1 processors activated (5192.30 BogoMIPS)", false, "b.c:10" },
	{ "smpboot: Total of 2 cores", false, "b.c:11" },
	/* a format without a newline goes on with pr_cont() text */
	{ "Calibrating delay loop... 369.66 BogoMIPS (lpj=739328)", false, "b.c:12" },
	/* a KERN_CONT entry only prints continuations */
	{ "369.66 BogoMIPS (lpj=739328)", true, "b.c:13" },
	{ "369.66 BogoMIPS (lpj=739328)", false, NULL },
	/* an unknown "prefix: " may come first, but not a "name: value" */
	{ "e1000: device ready", false, "b.c:14" },
	{ "e1000 0000:00:03.0: device ready", false, NULL },
	{ "  device ready", false, NULL },
	{ "barfoo bar", false, "b.c:15" },
	/* "%s\n" would match anything: it attributes nothing */
	{ "nothing matches this", false, NULL },
	{ "first line\nsecond 2", false, "b.c:17" },
	{ "say \"hi\"\tnow", false, "b.c:18" },
};

/* The origin of one record, as the diff against an empty boot attributes it. */
static char *attribute(const char *text, bool cont)
{
	struct rec_spec recs[] = { { 6, text, cont }, { 0 } };
	g_autoptr(pk_capture) empty = capture_new(NULL, NULL);
	g_autoptr(pk_capture) after = capture_new(recs, attr_index);
	g_autoptr(pk_kdiff) d = pk_kdiff_captures(empty, after, NULL);
	const struct pk_change *c;

	assert_int_equal(d->changes->len, 1);
	c = d->changes->pdata[0];
	assert_string_equal(pk_change_kind_name(c->kind), "message-added");
	return c->origin.file ? g_strdup_printf("%s:%d", c->origin.file, c->origin.line) : NULL;
}

static void test_attribution_table(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(attr_cases); i++) {
		g_autofree char *got = attribute(attr_cases[i].text, attr_cases[i].cont);

		if (!attr_cases[i].want && got)
			fail_msg("`%s` attributed to %s, want none", attr_cases[i].text, got);
		if (attr_cases[i].want && !got)
			fail_msg("`%s` not attributed, want %s", attr_cases[i].text, attr_cases[i].want);
		if (got)
			assert_string_equal(got, attr_cases[i].want);
	}
}

/* ---------------------------------------------------------------- index diff */

static const char index_before[] =
	"<6> k/a.c:10 fa \"alpha %d\\n\"\n"
	"<6> k/a.c:20 fa \"beta\\n\"\n"
	"<6> k/a.c:30 fb \"gamma %s\\n\"\n"
	"<4> k/b.c:5 fc \"delta\\n\"\n"
	"<6> k/b.c:50 fd \"gone soon\\n\"\n"
	"<6> k/b.c:70 fe \"far apart\\n\"\n"
	"<c> k/c.c:7 fg \"cont piece\\n\"\n";

/* the patch adds three lines at the top of a.c, and changes the rest */
static const char index_after[] =
	"<6> k/a.c:13 fa \"alpha %d\\n\"\n"
	"<6> k/a.c:23 fa \"beta is better\\n\"\n"
	"<6> k/a.c:33 fb \"gamma %s\\n\"\n"
	"<6> k/b.c:5 fc \"delta\\n\"\n"
	"<6> k/b.c:60 fd2 \"brand new\\n\"\n"
	"<6> k/b.c:170 fe \"much further down\\n\"\n"
	"<6> k/c.c:7 fg \"cont piece\\n\"\n";

static const struct {
	const char *kind, *file;
	int line, old_level, new_level;
	const char *old_format, *new_format;
} index_want[] = {
	{ "text-changed", "k/a.c", 23, 6, 6, "beta\n", "beta is better\n" },
	{ "level-changed", "k/b.c", 5, 4, 6, "delta\n", "delta\n" },
	{ "message-removed", "k/b.c", 50, 6, -1, "gone soon\n", NULL },
	{ "message-added", "k/b.c", 60, -1, 6, NULL, "brand new\n" },
	{ "message-removed", "k/b.c", 70, 6, -1, "far apart\n", NULL },
	{ "message-added", "k/b.c", 170, -1, 6, NULL, "much further down\n" },
	{ "level-changed", "k/c.c", 7, -1, 6, "cont piece\n", "cont piece\n" },
};

static void test_index_diff(void **state)
{
	g_autoptr(pk_capture) before = capture_new(NULL, index_before);
	g_autoptr(pk_capture) after = capture_new(NULL, index_after);
	g_autoptr(pk_kdiff) d = pk_kdiff_captures(before, after, NULL);

	assert_int_equal(d->changes->len, 0);
	assert_int_equal(d->index_changes->len, G_N_ELEMENTS(index_want));
	for (size_t i = 0; i < G_N_ELEMENTS(index_want); i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];

		assert_string_equal(pk_change_kind_name(c->kind), index_want[i].kind);
		assert_string_equal(c->origin.file, index_want[i].file);
		assert_int_equal(c->origin.line, index_want[i].line);
		assert_int_equal(c->old_level, index_want[i].old_level);
		assert_int_equal(c->new_level, index_want[i].new_level);
		if (index_want[i].old_format)
			assert_string_equal(c->old_format, index_want[i].old_format);
		else
			assert_null(c->old_format);
		if (index_want[i].new_format)
			assert_string_equal(c->new_format, index_want[i].new_format);
		else
			assert_null(c->new_format);
	}
}

/* Every line moved, nothing else: no change. */
static void test_index_moved_only(void **state)
{
	g_autoptr(pk_capture) before = capture_new(NULL, index_before);
	g_autoptr(GString) shifted = g_string_new(NULL);
	g_autoptr(pk_capture) after = NULL;
	g_autoptr(pk_kdiff) d = NULL;

	/* the same entries, each 40 lines down and in reverse order */
	for (guint i = before->index->len; i-- > 0;) {
		const struct pk_index_entry *e = before->index->pdata[i];
		g_autofree char *fmt = g_strescape(e->format, NULL);

		if (e->cont)
			g_string_append(shifted, "<c>");
		else
			g_string_append_printf(shifted, "<%d>", e->level);
		g_string_append_printf(shifted, " %s:%d %s \"%s\"\n", e->file, e->line + 40, e->func, fmt);
	}
	after = capture_new(NULL, shifted->str);
	d = pk_kdiff_captures(before, after, NULL);
	assert_int_equal(d->index_changes->len, 0);
}

/* ---------------------------------------------------------------- confirming */

static const char confirm_before[] =
	E820_MEM
	"<6> kernel/foo.c:40 foo_init \"foo: old words\\n\"\n";
static const char confirm_after[] =
	E820_GAP
	"<6> kernel/foo.c:40 foo_init \"foo: new words\\n\"\n"
	"<6> kernel/foo.c:90 foo_exit \"foo: say \\\"bye\\\"\\tnow\\n\"\n";

static const struct {
	struct pk_finding f;
	enum pk_confirmation want;
} confirm_cases[] = {
	/* printed at boot: the line, or the format */
	{ { .file = "arch/x86/kernel/e820.c", .line = 683, .kind = PK_FINDING_TEXT_CHANGED,
	    .old_text = "[mem %#010lx-%#010lx] available for PCI devices\\n",
	    .new_text = "[gap %#010lx-%#010lx] available for PCI devices\\n" }, PK_SEEN_AT_BOOT },
	{ { .file = "arch/x86/kernel/e820.c", .line = 685, .kind = PK_FINDING_LEVEL_CHANGED }, PK_SEEN_AT_BOOT },
	{ { .file = "arch/x86/kernel/e820.c", .line = 900, .kind = PK_FINDING_TEXT_CHANGED,
	    .new_text = "[gap %#010lx-%#010lx] available for PCI devices\\n" }, PK_SEEN_AT_BOOT },
	{ { .file = "arch/x86/kernel/e820.c", .line = 900, .kind = PK_FINDING_TEXT_CHANGED,
	    .old_text = "something else\\n", .new_text = "another thing\\n" }, PK_NOT_CONFIRMED },
	/* only in the index: by line, by format (unescaped, after the pr_fmt prefix) */
	{ { .file = "kernel/foo.c", .line = 41, .kind = PK_FINDING_TEXT_CHANGED }, PK_IN_INDEX_ONLY },
	{ { .file = "kernel/foo.c", .line = 400, .kind = PK_FINDING_TEXT_CHANGED,
	    .old_text = "old words\\n", .new_text = "new words\\n" }, PK_IN_INDEX_ONLY },
	{ { .file = "kernel/foo.c", .line = 300, .kind = PK_FINDING_MESSAGE_ADDED,
	    .new_text = "say \\\"bye\\\"\\tnow\\n" }, PK_IN_INDEX_ONLY },
	{ { .file = "kernel/foo.c", .line = 300, .kind = PK_FINDING_MESSAGE_ADDED,
	    .new_text = "say \\\"bye\\\" now\\n" }, PK_NOT_CONFIRMED },
	/* a pr_fmt() change is about every message of its file */
	{ { .file = "kernel/foo.c", .line = 3, .kind = PK_FINDING_PR_FMT_CHANGED,
	    .old_text = "KBUILD_MODNAME \": \" fmt", .new_text = "\"foo: \" fmt" }, PK_IN_INDEX_ONLY },
	{ { .file = "kernel/bar.c", .line = 40, .kind = PK_FINDING_TEXT_CHANGED,
	    .old_text = "foo: old words\\n" }, PK_NOT_CONFIRMED },
};

static void test_confirm_table(void **state)
{
	static const struct rec_spec before_recs[] = {
		{ 6, "x" }, { 6, "[mem 0x10000000-0xafffffff] available for PCI devices" }, { 0 },
	};
	static const struct rec_spec after_recs[] = {
		{ 6, "x" }, { 6, "[gap 0x10000000-0xafffffff] available for PCI devices" }, { 0 },
	};
	g_autoptr(pk_capture) before = capture_new(before_recs, confirm_before);
	g_autoptr(pk_capture) after = capture_new(after_recs, confirm_after);
	g_autoptr(pk_kdiff) d = pk_kdiff_captures(before, after, NULL);

	assert_int_equal(d->changes->len, 1);
	for (size_t i = 0; i < G_N_ELEMENTS(confirm_cases); i++) {
		enum pk_confirmation got = pk_kdiff_confirm(d, &confirm_cases[i].f);

		if (got != confirm_cases[i].want)
			fail_msg("case %zu (%s:%d): %s, want %s", i, confirm_cases[i].f.file,
				 confirm_cases[i].f.line, pk_confirmation_name(got),
				 pk_confirmation_name(confirm_cases[i].want));
	}
	assert_string_equal(pk_confirmation_name(PK_SEEN_AT_BOOT), "seen-at-boot");
	assert_string_equal(pk_confirmation_name(PK_IN_INDEX_ONLY), "in-index-only");
	assert_string_equal(pk_confirmation_name(PK_NOT_CONFIRMED), "not-confirmed");
}

/* ---------------------------------------------------------------- real boots */

/* Replace the first record whose text is from with to (and level), as a patch would. */
static void patch_record(struct pk_capture *cap, const char *from, const char *to, int level)
{
	for (guint i = 0; i < cap->records->len; i++) {
		struct pk_record *r = cap->records->pdata[i];

		if (strcmp(r->text, from) == 0) {
			g_free(r->text);
			r->text = g_strdup(to);
			r->level = level;
			return;
		}
	}
	fail_msg("no record `%s`", from);
}

static void set_index(struct pk_capture *cap, const char *text)
{
	g_ptr_array_set_size(cap->index, 0);
	pk_index_parse(cap->index, text, strlen(text), cap->problems);
}

/*
 * Three boots of one kernel under TCG (see tests/data/kdiff/README): in one
 * the TSC could not be calibrated against the PIT, the other two are alike
 * but for the figures.  Normalising alone makes the alike ones equal; the
 * mask learnt from two boots makes the third equal to either.
 */
static void test_real_same_kernel(void **state)
{
	g_autoptr(pk_capture) odd = capture_load("boot-uncalibrated.capture");
	g_autoptr(pk_capture) a = capture_load("boot-a.capture");
	g_autoptr(pk_capture) b = capture_load("boot-b.capture");
	g_autofree char *index = data_text("index-excerpt.txt");
	const struct pk_capture *learn[] = { odd, a };
	struct pk_noise *noise = pk_noise_learn(learn, 2), *stored;
	g_auto(GStrv) keys = pk_noise_keys(noise);

	set_index(odd, index);
	set_index(b, index);

	{
		g_autoptr(pk_kdiff) d = pk_kdiff_captures(a, b, NULL);

		check_changes(d, (struct want_change[]){ { NULL } }, "two calibrated boots");
	}
	{
		g_autoptr(pk_kdiff) d = pk_kdiff_captures(odd, b, NULL);

		assert_true(d->changes->len > 0); /* the race shows without a mask */
	}
	stored = pk_noise_from_keys((const char *const *)keys);
	for (int swap = 0; swap < 2; swap++) {
		g_autoptr(pk_kdiff) d = swap ? pk_kdiff_captures(b, odd, stored) : pk_kdiff_captures(odd, b, noise);

		check_changes(d, (struct want_change[]){ { NULL } }, "masked boots");
		assert_int_equal(d->index_changes->len, 0);
		assert_true(d->noise_dropped > 0);
		assert_int_equal(d->records_before + d->records_after, odd->records->len + b->records->len);
	}
	assert_true(g_strv_length(keys) < 20);
	pk_noise_free(stored);
	pk_noise_free(noise);
}

/*
 * A real boot and its real index, patched two ways: rcu's pr_fmt() goes
 * from one message, and smpboot's greeting drops to warn.
 */
static void test_real_patched(void **state)
{
	g_autoptr(pk_capture) before = capture_load("boot-a.capture");
	g_autoptr(pk_capture) after = capture_load("boot-b.capture");
	g_autofree char *index = data_text("index-excerpt.txt");
	g_autoptr(GString) patched = g_string_new(index);
	g_autoptr(pk_kdiff) d = NULL;
	static const struct want_change want[] = {
		{ "prefix-changed", "kernel/rcu/tree_plugin.h:943 rcu_bootup_announce(): prefix changed: "
				    "`rcu: Hierarchical RCU implementation.` → `Hierarchical RCU implementation.`" },
		{ "level-changed", "arch/x86/kernel/smpboot.c:647 impress_friends(): level changed from info to warn: "
				   "`smpboot: Total of 1 processors activated (5192.29 BogoMIPS)`" },
		{ NULL },
	};
	const struct pk_index_change *ic;

	set_index(before, index);
	g_string_replace(patched, "\"rcu: Hierarchical RCU", "\"Hierarchical RCU", 1);
	g_string_replace(patched, "<6> arch/x86/kernel/smpboot.c:647", "<4> arch/x86/kernel/smpboot.c:647", 1);
	set_index(after, patched->str);
	patch_record(after, "rcu: Hierarchical RCU implementation.", "Hierarchical RCU implementation.", 6);
	patch_record(after, "smpboot: Total of 1 processors activated (5192.29 BogoMIPS)",
		     "smpboot: Total of 1 processors activated (5192.29 BogoMIPS)", 4);
	d = pk_kdiff_captures(before, after, NULL);
	check_changes(d, want, "patched real boot");
	assert_int_equal(d->index_changes->len, 2);
	ic = d->index_changes->pdata[0];
	assert_string_equal(pk_change_kind_name(ic->kind), "level-changed");
	assert_string_equal(ic->origin.file, "arch/x86/kernel/smpboot.c");
	ic = d->index_changes->pdata[1];
	assert_string_equal(pk_change_kind_name(ic->kind), "text-changed");
	assert_string_equal(ic->origin.file, "kernel/rcu/tree_plugin.h");
	assert_string_equal(ic->new_format, "Hierarchical RCU implementation.\n");
	{
		struct pk_finding f = { .file = "kernel/rcu/tree_plugin.h", .line = 943,
					.kind = PK_FINDING_TEXT_CHANGED,
					.old_text = "rcu: Hierarchical RCU implementation.\\n",
					.new_text = "Hierarchical RCU implementation.\\n" };

		assert_int_equal(pk_kdiff_confirm(d, &f), PK_SEEN_AT_BOOT);
	}
	/* both boot-log changes are of entries the patch changed: no confirmation boots needed */
	assert_true(pk_kdiff_explained_by_index(d));
	g_clear_pointer(&d, pk_kdiff_free);

	/* a record whose text changed under an unchanged format (a number, or the host's timing) is not */
	patch_record(after, "smpboot: Total of 1 processors activated (5192.29 BogoMIPS)",
		     "smpboot: Total of 2 processors activated (5192.29 BogoMIPS)", 4);
	d = pk_kdiff_captures(before, after, NULL);
	assert_true(d->changes->len >= 2);
	assert_false(pk_kdiff_explained_by_index(d));
	g_clear_pointer(&d, pk_kdiff_free);
	/* nor is a diff with no boot-log change */
	d = pk_kdiff_captures(before, before, NULL);
	assert_false(pk_kdiff_explained_by_index(d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalise_table),
		cmocka_unit_test(test_noise_learn),
		cmocka_unit_test(test_noise_calibrate_direct),
		cmocka_unit_test(test_noise_serio_input),
		cmocka_unit_test(test_kdiff_table),
		cmocka_unit_test(test_change_fields),
		cmocka_unit_test(test_attribution_table),
		cmocka_unit_test(test_index_diff),
		cmocka_unit_test(test_index_moved_only),
		cmocka_unit_test(test_confirm_table),
		cmocka_unit_test(test_real_same_kernel),
		cmocka_unit_test(test_real_patched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
