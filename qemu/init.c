/*
 * init.c - the whole userspace of a printkbot guest.
 *
 * It mounts what the kernel needs to show us its log, then copies two
 * things to the second serial port (/dev/ttyS1, in raw mode; another
 * device, printkbot.capture=hvc0 or =ttyAMA0 on the command line, where the
 * machine has no such port free), framed so the
 * host can parse them without ambiguity:
 *
 *   @PKB 1\n                     stream header, protocol version
 *   @K <len>\n<len bytes>\n      one /dev/kmsg record, exactly as read(2)
 *                                returned it (prefix;text\n + dict lines)
 *   @L <count>\n                 records overwritten before we read them
 *   @I <len>\n<len bytes>\n      a chunk of the printk index file
 *   @X <len>\n<len bytes>\n      an error message from init itself
 *   @E <records> <index bytes>\n end of stream: counts for a cross-check
 *
 * Lengths make the frames self-delimiting, so no byte of the payload needs
 * escaping; the @E counts let the host tell a complete capture from one cut
 * short by a crash, or by a log or index longer than its cap (KMSG_CAP,
 * INDEX_CAP: then an @X frame says so and no @E follows).  Then it
 * reboots: QEMU runs with -no-reboot and exits.
 *
 * With printkbot.index_reads=1 on the kernel command line it first reads
 * the printk index again with plain read(2)s of several sizes and logs,
 * through /dev/kmsg, how many entries each size returned (see
 * log_index_reads()): tests/e2e/060-printk-index-fix.sh shows with it
 * what kernel/0001-printk-index-*.patch fixes.  Without the switch the
 * stream is the same as it always was.
 *
 * With printkbot.settle=1 (the host passes it when qemu/devices attached
 * hardware) it first waits until the log has been quiet for SETTLE_QUIET_MS,
 * at most SETTLE_MAX_MS: USB enumeration and other asynchronous probes
 * print after init has started, so a capture taken at once would hold
 * them in one boot and not in the next.
 *
 * Built static (no libc in the initramfs), by `printkbot setup`.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define INDEX_PATH "/sys/kernel/debug/printk/index/vmlinux"

/*
 * A kernel under test may log or index without end (a patch looping on
 * printk, an index iterator that never stops).  Past these the copy stops,
 * says so in an @X frame and sends no @E, so the host sees a capture cut
 * short and why.  The lab's kernel logs ~30 KiB and indexes ~130 KiB; the
 * index is read with a seek before each read (see copy_index()), which
 * costs time quadratic in its length, so its cap is tight.
 */
#define KMSG_CAP (32ul << 20)
#define SETTLE_QUIET_MS 3000
#define SETTLE_MAX_MS 20000
#define INDEX_CAP (1ul << 20)

#define INDEX_FRAME 65536ul   /* the largest @I frame */

static int cut;   /* a copy stopped at its cap: no @E trailer */

static int out = -1;

static void write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(out, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void frame(char type, const char *payload, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "@%c %zu\n", type, len);

	write_all(head, (size_t)n);
	write_all(payload, len);
	write_all("\n", 1);
}

static void report(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "%s: %s", what, strerror(errno));

	frame('X', msg, (size_t)n);
}

/* A copy reached its cap: say so, and leave the stream without its trailer. */
static void report_cut(const char *what, unsigned long cap)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "%s is longer than %lu bytes: cut there", what, cap);

	frame('X', msg, (size_t)n);
	cut = 1;
}

static int cmdline_has(const char *word);
static int cmdline_value(const char *key, char *value, size_t size);

/*
 * The capture port: ttyS1, the second 16550 of x86's q35, unless the host
 * names another with printkbot.capture=NAME: hvc0, a virtio console, where
 * the machine has one UART only (arm64's virt); a board's UART that is not
 * the one under test (raspi3b's PL011, ttyAMA0, qemu/boards).  A name is a
 * device of /dev, no path: anything else keeps ttyS1.
 */
static void open_capture_port(void)
{
	char name[32], path[48];
	struct termios t;

	if (!cmdline_value("printkbot.capture=", name, sizeof(name)) || !name[0] || strchr(name, '/') ||
	    name[0] == '.')
		strcpy(name, "ttyS1");
	snprintf(path, sizeof(path), "/dev/%s", name);
	out = open(path, O_WRONLY | O_NOCTTY);
	if (out < 0) {
		out = open("/dev/console", O_WRONLY | O_NOCTTY);
		return;
	}
	/* raw: no \n -> \r\n translation, so lengths stay exact */
	if (tcgetattr(out, &t) == 0) {
		cfmakeraw(&t);
		cfsetospeed(&t, B115200);
		tcsetattr(out, TCSANOW, &t);
	}
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Wait for a quiet log (see the top); the records are read again by copy_kmsg(). */
static void settle_kmsg(void)
{
	static char buf[16384];
	long long start = now_ms();
	struct pollfd p = { .events = POLLIN };

	p.fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (p.fd < 0) {
		report("open /dev/kmsg");
		return;
	}
	while (now_ms() - start < SETTLE_MAX_MS) {
		int n = poll(&p, 1, SETTLE_QUIET_MS);

		if (n == 0)
			break;              /* quiet long enough */
		if (n < 0 && errno != EINTR)
			break;
		/* drain what came (EPIPE: the ring wrapped; reading on resumes) */
		for (;;) {
			ssize_t r = read(p.fd, buf, sizeof(buf));

			if (r <= 0 && !(r < 0 && (errno == EPIPE || errno == EINTR)))
				break;
		}
	}
	close(p.fd);
}

static unsigned long copy_kmsg(void)
{
	static char buf[16384]; /* > the kernel's CONSOLE_EXT_LOG_MAX of 8 KiB */
	unsigned long records = 0, lost = 0, bytes = 0;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		report("open /dev/kmsg");
		return 0;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0 && bytes + (unsigned long)n > KMSG_CAP) {
			report_cut("the kernel log", KMSG_CAP);
			break;
		}
		if (n > 0) {
			frame('K', buf, (size_t)n);
			bytes += (unsigned long)n;
			records++;
		} else if (n < 0 && errno == EPIPE) {
			lost++; /* the ring buffer wrapped under us: say so, go on */
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			break; /* EAGAIN: we have read everything logged so far */
		}
	}
	close(fd);
	if (lost) {
		char head[64];
		int n = snprintf(head, sizeof(head), "@L %lu\n", lost);

		write_all(head, (size_t)n);
	}
	return records;
}

/* Append n bytes to a growing buffer; 0, or -1 when memory ran out. */
static int append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n > *cap) {
		size_t want = *cap ? *cap : 65536;
		char *grown;

		while (want < *len + n)
			want *= 2;
		if (!(grown = realloc(*buf, want)))
			return -1;
		*buf = grown;
		*cap = want;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

/* Read once at offset at (-1: where the file is) into buf; the byte count, or <= 0. */
static ssize_t read_at(int fd, off_t at, char *buf, size_t size)
{
	ssize_t n;

	if (at >= 0 && lseek(fd, at, SEEK_SET) != at)
		return -1;
	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * Whether this kernel repeats our last entry after a seek (fixed) or
 * skips it (see below): 1 or 0, -1 when the first len bytes we have
 * cannot tell.  Asked once, at three lines A, B, C where B and C differ:
 * a read at the '\n' ending A gives "\nB" or "\nC".  Deciding by the text
 * at each seek instead would take an entry equal to our last one (an
 * inline function of a header, indexed by two objects linked one after
 * the other) for a repeat, and drop it.
 */
static int probe_repeats(int fd, const char *idx, size_t len)
{
	static char probe[4096];
	const char *end = idx + len, *a_end = memchr(idx, '\n', len);

	while (a_end) {
		const char *b = a_end + 1, *b_end = memchr(b, '\n', (size_t)(end - b)), *c, *c_end;
		size_t blen, clen;
		ssize_t n;

		if (!b_end)
			return -1;
		c = b_end + 1;
		if (!(c_end = memchr(c, '\n', (size_t)(end - c))))
			return -1;
		blen = (size_t)(b_end + 1 - b);
		clen = (size_t)(c_end + 1 - c);
		if (blen == clen && !memcmp(b, c, blen)) {
			a_end = b_end;     /* B equals C: try the next three */
			continue;
		}
		if (lseek(fd, 0, SEEK_SET) != 0)   /* see read_index_exact() */
			return -1;
		n = read_at(fd, a_end - idx, probe, sizeof(probe));
		if (n < 2 || probe[0] != '\n')
			return -1;
		if ((size_t)(n - 1) >= blen && !memcmp(probe + 1, b, blen))
			return 1;
		if ((size_t)(n - 1) >= clen && !memcmp(probe + 1, c, clen))
			return 0;
		return -1;
	}
	return -1;
}

/*
 * The printk index, whole.  The kernel's seq_file iterator for it
 * (kernel/printk/index.c, as of 6.12) restarts one entry too far:
 * pi_start(pos) returns entry[pos], where seq_file expects the entry that
 * next() returned when it set pos, entry[pos - 1].  A read(2) ends when the
 * kernel's page-sized buffer is full, and the entry that did not fit is
 * the one the next read's restart skips: plain reads of a 130 KB index
 * lose about one entry in 60, and which ones depends on the length of
 * everything printed before them, so two kernels that differ in one early
 * message would seem to differ all over.  kernel/0001-printk-index-*.patch
 * in this repository fixes it, but unpatched kernels are the rule, so the
 * bot keeps reading this way.
 *
 * An lseek() is exact (seq_file walks the entries from the start to find
 * the offset, without restarts), and a read from inside entry k returns
 * the rest of entry k, skips entry k + 1 and goes on with k + 2.  So each
 * read after the first starts at the last byte of the line before the
 * last line we have: the skipped entry is the one we have, and what
 * follows is new.  A kernel without the bug repeats our last line there
 * instead, which is dropped.
 *
 * The index goes to *out (malloc()ed, *out_len bytes); 0, or -1 when the
 * file cannot be opened.  A failed read or the cap ends it early, said
 * in an @X frame.
 */
static int read_index_exact(char **out, size_t *out_len)
{
	static char buf[65536];
	int repeats = -1;   /* probe_repeats(), asked at the first seek */
	char *idx = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd = open(INDEX_PATH, O_RDONLY);

	if (fd < 0) {
		report("open " INDEX_PATH);
		return -1;
	}
	n = read_at(fd, -1, buf, sizeof(buf));
	while (n > 0) {
		size_t last, prev_end;
		const char *p = buf;
		size_t plen = (size_t)n;

		if (len + plen > INDEX_CAP) {
			/* keep whole lines only */
			while (len && idx[len - 1] != '\n')
				len--;
			report_cut("the printk index", INDEX_CAP);
			break;
		}
		if (append(&idx, &len, &cap, p, plen) < 0) {
			report("reading the printk index");
			break;
		}
		if (idx[len - 1] != '\n')
			break;                     /* a cut line: nothing sane follows */
		for (last = len - 1; last > 0 && idx[last - 1] != '\n'; last--)
			;                          /* the start of our last line */
		if (last == 0)
			break;
		prev_end = last - 1;               /* the '\n' ending the line before it */
		/*
		 * seq_file seeks (traverse()) only to an offset other than where
		 * it thinks the last read ended, and it counts what it returned,
		 * not the entry it skipped: when our new last line is one byte
		 * shorter than the one before, prev_end is that position and the
		 * read would go on from the skip.  Seeking to 0 first makes it seek.
		 */
		if (lseek(fd, 0, SEEK_SET) != 0)
			break;
		n = read_at(fd, (off_t)prev_end, buf, sizeof(buf));
		if (n <= 1 || buf[0] != '\n')
			break;                     /* the end of the index */
		/* what follows the '\n' is new; a fixed kernel repeats our last line first */
		memmove(buf, buf + 1, (size_t)--n);
		if (repeats < 0)
			repeats = probe_repeats(fd, idx, len);
		if (repeats != 0 && (size_t)n >= len - last && !memcmp(buf, idx + last, len - last)) {
			memmove(buf, buf + (len - last), (size_t)n - (len - last));
			n -= (ssize_t)(len - last);
		}
	}
	close(fd);
	*out = idx;
	*out_len = len;
	return 0;
}

static unsigned long count_entries(const char *text, size_t len);
static int read_index_plain(size_t size, char **out, size_t *out_len);

/*
 * Plain reads lose entries, never add them: when they find more than the
 * exact read, the exact read stopped short (a kernel whose seq_file
 * resumes in a way read_index_exact() does not know).  Say so, so that the
 * host does not compare a partial index as if it were whole.
 */
static void check_index_whole(const char *idx, size_t len)
{
	char *plain = NULL, msg[160];
	size_t plain_len = 0;
	unsigned long exact_n = count_entries(idx, len), plain_n;
	int n;

	if (read_index_plain(INDEX_FRAME, &plain, &plain_len) < 0)
		return;
	plain_n = count_entries(plain, plain_len);
	free(plain);
	if (plain_n <= exact_n)
		return;
	n = snprintf(msg, sizeof(msg), "the printk index: the exact read stopped at %lu entries, "
		     "plain reads found %lu: cut there", exact_n, plain_n);
	frame('X', msg, (size_t)n);
	cut = 1;
}

static unsigned long copy_index(void)
{
	char *idx;
	size_t len;
	unsigned long total = 0;

	if (read_index_exact(&idx, &len) < 0)
		return 0;
	check_index_whole(idx, len);
	for (size_t off = 0; off < len; off += INDEX_FRAME) {
		size_t k = len - off < INDEX_FRAME ? len - off : INDEX_FRAME;

		frame('I', idx + off, k);
		total += (unsigned long)k;
	}
	free(idx);
	return total;
}

/* The kernel command line, NUL-terminated; "" when unreadable. */
static const char *cmdline(void)
{
	static char line[4096];
	int fd = open("/proc/cmdline", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);

	if (fd >= 0)
		close(fd);
	line[n > 0 ? n : 0] = '\0';
	return line;
}

/* The value of the command line's word key (which ends in '='), into value: 1 when there is one. */
static int cmdline_value(const char *key, char *value, size_t size)
{
	const char *line = cmdline(), *p;
	size_t klen = strlen(key), n;

	for (p = line; (p = strstr(p, key)); p += klen) {
		if (p != line && p[-1] != ' ')
			continue;
		p += klen;
		n = strcspn(p, " \n");
		if (n >= size)
			return 0;
		memcpy(value, p, n);
		value[n] = '\0';
		return 1;
	}
	return 0;
}

/* Whether word is one of the kernel command line's words. */
static int cmdline_has(const char *word)
{
	const char *line = cmdline();
	size_t wlen = strlen(word);

	for (const char *p = line; (p = strstr(p, word)); p += wlen)
		if ((p == line || p[-1] == ' ') && strchr(" \n", p[wlen]))
			return 1;
	return 0;
}

/* The index lines that are entries: all but the '#' header. */
static unsigned long count_entries(const char *text, size_t len)
{
	unsigned long entries = 0;
	int at_start = 1;

	for (size_t i = 0; i < len; i++) {
		if (at_start && text[i] != '#')
			entries++;
		at_start = text[i] == '\n';
	}
	return entries;
}

/* The index by read(2)s of size bytes from offset 0 to the end, as cat does. */
static int read_index_plain(size_t size, char **out, size_t *out_len)
{
	char *chunk = malloc(size), *idx = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd = open(INDEX_PATH, O_RDONLY);

	if (fd < 0 || !chunk) {
		if (fd >= 0)
			close(fd);
		free(chunk);
		return -1;
	}
	while ((n = read_at(fd, -1, chunk, size)) > 0 && len + (size_t)n <= INDEX_CAP)
		if (append(&idx, &len, &cap, chunk, (size_t)n) < 0)
			break;
	close(fd);
	free(chunk);
	*out = idx;
	*out_len = len;
	return 0;
}

/* One record into the kernel log: fmt is "<level>text\n". */
static void kmsg_printf(int fd, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1) < 0)
		report("writing to /dev/kmsg");
}

/*
 * printkbot.index_reads=1: read the index exactly, then with plain reads
 * of each size, and log a record per reader through /dev/kmsg (before
 * copy_kmsg(), so the capture carries them), e.g.
 *   printkbot-init: index_reads read=4096 entries=2121 bytes=203796 lost=50 identical=no
 * "lost" counts against the exact reader; "identical" compares the text.
 * Five records: within /dev/kmsg's default rate limit of ten a burst.
 */
static void log_index_reads(void)
{
	static const size_t sizes[] = { 131072, 4096, 1024, 100 };
	char *exact, *plain;
	size_t exact_len, plain_len;
	unsigned long want;
	int kmsg = open("/dev/kmsg", O_WRONLY);

	if (kmsg < 0 || read_index_exact(&exact, &exact_len) < 0) {
		if (kmsg >= 0)
			close(kmsg);
		return;
	}
	want = count_entries(exact, exact_len);
	kmsg_printf(kmsg, "<6>printkbot-init: index_reads lseek entries=%lu bytes=%zu\n",
		    want, exact_len);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned long got;

		if (read_index_plain(sizes[i], &plain, &plain_len) < 0)
			continue;
		got = count_entries(plain, plain_len);
		kmsg_printf(kmsg, "<6>printkbot-init: index_reads read=%zu entries=%lu bytes=%zu lost=%ld identical=%s\n",
			    sizes[i], got, plain_len, (long)want - (long)got,
			    plain_len == exact_len && (!exact_len || !memcmp(plain, exact, exact_len)) ?
			    "yes" : "no");
		free(plain);
	}
	free(exact);
	close(kmsg);
}

int main(void)
{
	unsigned long records, index_bytes;
	char tail[96];
	int n;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);

	open_capture_port();
	write_all("@PKB 1\n", 7);
	if (cmdline_has("printkbot.settle=1"))
		settle_kmsg();
	if (cmdline_has("printkbot.index_reads=1"))
		log_index_reads();
	records = copy_kmsg();
	index_bytes = cut ? 0 : copy_index();
	if (!cut) {
		n = snprintf(tail, sizeof(tail), "@E %lu %lu\n", records, index_bytes);
		write_all(tail, (size_t)n);
	}
	if (out >= 0)
		tcdrain(out);
	sync();
	reboot(RB_AUTOBOOT);
	return 0;
}
