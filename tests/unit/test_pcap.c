// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for --pcap: a capture that can't be written says so,
 * and a live capture reaches its file within a second
 *
 * /dev/full fails every write with ENOSPC, as a full disk does; the
 * capture's 1 MiB buffer decides when a write is attempted.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <event2/event.h>

#include "driver/core/pcap.h"
#include "tests/unit/unit.h"

/**
 * lines() - count the lines a capture of stderr holds now
 * @fd:		read end from unit_capture_stderr()
 * @buf:	filled with what was read, NUL-terminated
 * @len:	size of @buf
 *
 * Return: the number of newlines read
 */
static int lines(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);
	int count = 0;

	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf; (p = strchr(p, '\n')); p++)
		count++;
	return count;
}

/* A write failing mid-run stops the capture with one line, not one per
 * frame, and nothing is written after.
 */
static void body_full_while_running(void)
{
	static const char line[] = "tapir: write capture file /dev/full: "
	                           "capture stopped: No space left on device\n";
	static char frame[1500];
	struct opts o = {0};
	struct ctx c = {0};
	char buf[4096];
	int err;

	err = unit_capture_stderr();
	CHECK(err >= 0);
	c.o = &o;
	c.base = event_base_new();
	CHECK(c.base != NULL);
	strcpy(o.pcap, "/dev/full");
	CHECK(!pcap_open(&c, o.pcap));
	/* 3 MiB of frames: the buffer fills, and is written, several times. */
	for (int i = 0; i < 2000; i++)
		pcap_frame(&c, frame, sizeof(frame));
	CHECK(c.pcap == NULL);
	pcap_close(&c);
	event_base_free(c.base);
	CHECK(lines(err, buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, line));
}

/* The last frames are written at exit: a failure there is said too. */
static void body_full_at_close(void)
{
	static const char line[] = "tapir: write capture file /dev/full: "
	                           "No space left on device\n";
	static char frame[60];
	struct opts o = {0};
	struct ctx c = {0};
	char buf[4096];
	int err;

	err = unit_capture_stderr();
	CHECK(err >= 0);
	c.o = &o;
	c.base = event_base_new();
	CHECK(c.base != NULL);
	strcpy(o.pcap, "/dev/full");
	CHECK(!pcap_open(&c, o.pcap));
	pcap_frame(&c, frame, sizeof(frame));
	CHECK(c.pcap != NULL);
	pcap_close(&c);
	event_base_free(c.base);
	CHECK(c.pcap == NULL);
	CHECK(lines(err, buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, line));
}

/* A frame far from filling the buffer still reaches the file within a
 * second, for `tcpdump -r` on a live capture; the file stays open.
 */
static void body_flushed_live(void)
{
	static char frame[60];
	char dir[] = "/tmp/tapir-pcap.XXXXXX";
	struct opts o = {0};
	struct ctx c = {0};
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	c.o = &o;
	c.base = event_base_new();
	CHECK(c.base != NULL);
	snprintf(o.pcap, sizeof(o.pcap), "%s/live.pcap", dir);
	CHECK(!pcap_open(&c, o.pcap));
	pcap_frame(&c, frame, sizeof(frame));
	CHECK(!stat(o.pcap, &st) && st.st_size == 0);
	/* The one event due is the flush timer, a second away. */
	CHECK(!event_base_loop(c.base, EVLOOP_ONCE));
	CHECK(!stat(o.pcap, &st));
	CHECK(st.st_size == 24 + 16 + (off_t)sizeof(frame));
	CHECK(c.pcap != NULL);
	pcap_close(&c);
	event_base_free(c.base);
	unlink(o.pcap);
	rmdir(dir);
}

static void test_flushed_live(void)
{
	CHECK(unit_netns_run(body_flushed_live));
}

static void test_full_while_running(void)
{
	CHECK(unit_netns_run(body_full_while_running));
}

static void test_full_at_close(void)
{
	CHECK(unit_netns_run(body_full_at_close));
}

const struct unit_case unit_cases[] = {
        {"a full disk stops the capture with one line",
         test_full_while_running},
        {"a full disk at exit is reported", test_full_at_close},
        {"a live capture reaches its file within a second", test_flushed_live},
        {NULL, NULL},
};
