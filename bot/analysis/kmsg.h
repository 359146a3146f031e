/*
 * kmsg.h - parse what the guest init (qemu/init.c) wrote to the capture
 * port: /dev/kmsg records and the printk index.
 *
 * Input is the raw byte stream of the second serial port.  Output is a
 * struct pk_capture the caller owns (pk_capture_free()).  A stream cut short
 * (the guest panicked or hung mid-capture) is not an error: the capture
 * holds every frame that was whole and has complete == false.  Parsing is
 * pure: no I/O, no globals, safe on hostile bytes.
 */
#ifndef PK_KMSG_H
#define PK_KMSG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* One /dev/kmsg record (Documentation/ABI/testing/dev-kmsg). */
struct pk_record {
	int level;          /* 0 (emerg) .. 7 (debug) */
	int facility;       /* 0 = kernel */
	uint64_t seq;
	uint64_t ts_usec;   /* timestamp, microseconds since boot */
	bool cont;          /* flag 'c': a continuation fragment */
	char *caller;       /* "T1", "C0"... or NULL when PRINTK_CALLER is off */
	char *text;         /* unescaped (\xNN decoded); may hold any byte but NUL */
	GPtrArray *dict;    /* char* "KEY=value" dictionary lines, unescaped */
};

/* One line of /sys/kernel/debug/printk/index/vmlinux. */
struct pk_index_entry {
	int level;          /* 0..7, or -1: "<c>" (cont set, continues at the previous
	                       level) or "<-1>" (no KERN_ level: the default level) */
	bool cont;          /* KERN_CONT */
	char *file;
	int line;
	char *func;
	char *format;       /* unescaped: "\n" is a real newline */
};

struct pk_capture {
	GPtrArray *records;  /* struct pk_record* */
	GPtrArray *index;    /* struct pk_index_entry* */
	unsigned lost;       /* records the ring buffer dropped before init read them */
	bool complete;       /* the @E trailer arrived and its counts match */
	GString *problems;   /* what was odd: init's own errors, bad frames, bad index lines */
};

void pk_record_free(struct pk_record *rec);
void pk_index_entry_free(struct pk_index_entry *entry);
void pk_capture_free(struct pk_capture *cap);
typedef struct pk_capture pk_capture;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_capture, pk_capture_free)

/* Parse a capture stream.  Always succeeds; see complete and problems. */
struct pk_capture *pk_capture_parse(const char *buf, size_t len);

/*
 * Parse one /dev/kmsg record ("6,12,3456,-,caller=T1;text\n KEY=v\n").
 * Returns NULL (and a reason in *why, caller frees) for a malformed one.
 */
struct pk_record *pk_record_parse(const char *buf, size_t len, char **why);

/*
 * Parse the printk index text into entries, appended to out (which owns
 * them).  Malformed lines are skipped and described in problems.
 */
void pk_index_parse(GPtrArray *out, const char *text, size_t len, GString *problems);

/* "emerg", "alert", ... "debug" for 0..7, "cont" otherwise. */
const char *pk_level_name(int level);

#endif
