/*
 * init.c - the whole userspace of a printkbot guest.
 *
 * It mounts what the kernel needs to show us its log, then copies two
 * things to the second serial port (/dev/ttyS1, in raw mode), framed so the
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
 * short by a crash.  Then it reboots: QEMU runs with -no-reboot and exits.
 *
 * Built static (no libc in the initramfs), by `printkbot setup`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define INDEX_PATH "/sys/kernel/debug/printk/index/vmlinux"

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

static void open_capture_port(void)
{
	struct termios t;

	out = open("/dev/ttyS1", O_WRONLY | O_NOCTTY);
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

static unsigned long copy_kmsg(void)
{
	static char buf[16384]; /* > the kernel's CONSOLE_EXT_LOG_MAX of 8 KiB */
	unsigned long records = 0, lost = 0;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		report("open /dev/kmsg");
		return 0;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			frame('K', buf, (size_t)n);
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

static unsigned long copy_index(void)
{
	static char buf[65536];
	unsigned long total = 0;
	int fd = open(INDEX_PATH, O_RDONLY);

	if (fd < 0) {
		report("open " INDEX_PATH);
		return 0;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		frame('I', buf, (size_t)n);
		total += (unsigned long)n;
	}
	close(fd);
	return total;
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
	records = copy_kmsg();
	index_bytes = copy_index();
	n = snprintf(tail, sizeof(tail), "@E %lu %lu\n", records, index_bytes);
	write_all(tail, (size_t)n);
	if (out >= 0)
		tcdrain(out);
	sync();
	reboot(RB_AUTOBOOT);
	return 0;
}
