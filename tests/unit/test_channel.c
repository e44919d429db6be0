// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for message framing and fd passing on the socketpair */

/* memfd_create() gives each test fd its own inode. */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/channel.h"
#include "tests/unit/unit.h"

/**
 * pair() - a connected unix stream socketpair, as tapir uses
 * @sv:	the two ends
 *
 * Return: true on success
 */
static bool pair(int sv[2])
{
	int rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);

	CHECK(rc == 0);
	return rc == 0;
}

/**
 * count_fds() - number of fds open in this process
 *
 * Return: entries of /proc/self/fd (including the one used to list it)
 */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/**
 * new_files() - open @n distinct files to send
 * @fds:	receives the fds
 * @n:		how many
 */
static void new_files(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		fds[i] = memfd_create("tapir-test", MFD_CLOEXEC);
		CHECK(fds[i] >= 0);
	}
}

/**
 * close_all() - close @n fds
 * @fds:	the fds
 * @n:		how many
 */
static void close_all(const int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
}

/**
 * same_file() - whether two fds refer to the same open file's inode
 * @a:	first fd
 * @b:	second fd
 *
 * Return: true if both are valid and name the same device and inode
 */
static bool same_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) || fstat(b, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/**
 * raw_send() - write bytes, optionally with fds, bypassing the framing
 * @sock:	socket
 * @buf:	bytes
 * @len:	number of bytes, > 0
 * @fds:	fds to attach, or NULL
 * @nfds:	number of fds, at most 8
 *
 * Return: true if everything was sent
 */
static bool raw_send(int sock, const void *buf, size_t len, const int *fds,
                     unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds) {
		struct cmsghdr *cmsg;

		memset(&c, 0, sizeof(c));
		msg.msg_control = c.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cmsg), fds, nfds * sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)len;
}

/**
 * raw_header() - write a length header without any body
 * @sock:	socket
 * @len:	length to announce
 *
 * Return: true if written
 */
static bool raw_header(int sock, uint32_t len)
{
	uint32_t be = htonl(len);

	return raw_send(sock, &be, sizeof(be), NULL, 0);
}

/**
 * roundtrip() - send "hello" with @n fds and check what arrives
 * @n:	number of fds, at most 3
 */
static void roundtrip(unsigned int n)
{
	int sv[2], sent[3], got[4] = {-1, -1, -1, -1};
	unsigned int nfds = 99;
	char *body = NULL;
	size_t len = 0;

	if (!pair(sv))
		return;
	new_files(sent, n);
	CHECK(ipc_send(sv[0], "hello", 5, n ? sent : NULL, n) == 0);
	CHECK(ipc_recv(sv[1], &body, &len, got, 4, &nfds) == 0);
	CHECK(body && len == 5 && !strcmp(body, "hello"));
	CHECK(nfds == n);
	for (unsigned int i = 0; i < n && i < nfds; i++) {
		CHECK(got[i] != sent[i]);
		CHECK(same_file(got[i], sent[i]));
		CHECK(fcntl(got[i], F_GETFD) & FD_CLOEXEC);
	}
	if (nfds <= 4)
		close_all(got, nfds);
	close_all(sent, n);
	free(body);
	close(sv[0]);
	close(sv[1]);
}

static void test_roundtrip_0_fds(void)
{
	roundtrip(0);
}

static void test_roundtrip_1_fd(void)
{
	roundtrip(1);
}

static void test_roundtrip_3_fds(void)
{
	roundtrip(3);
}

/**
 * on_alarm() - SIGALRM handler that only interrupts system calls
 * @sig:	signal number
 */
static void on_alarm(int sig)
{
	(void)sig;
}

/**
 * interrupt_often() - deliver SIGALRM every millisecond, without SA_RESTART
 *
 * A blocked sendmsg() then returns a short count, or fails with EINTR if it
 * had sent nothing yet: the two cases ipc_send() must loop over.
 */
static void interrupt_often(void)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval it = {.it_interval = {0, 1000}, .it_value = {0, 1000}};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void test_max_body_short_writes(void)
{
	int sv[2], sent[2], got[2];
	int sndbuf = 4096, status = -1;
	unsigned int nfds = 0;
	char *out, *body = NULL;
	size_t len = 0;
	pid_t pid;

	if (!pair(sv))
		return;
	out = malloc(IPC_MAX_BODY);
	if (!out) {
		CHECK(out != NULL);
		return;
	}
	for (size_t i = 0; i < IPC_MAX_BODY; i++)
		out[i] = (char)('a' + i % 26);
	new_files(sent, 2);
	/* A small send buffer makes sendmsg() return short counts. */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));

	pid = fork();
	if (pid == 0) {
		close(sv[1]);
		interrupt_often();
		_exit(ipc_send(sv[0], out, IPC_MAX_BODY, sent, 2) == 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	close(sv[0]);
	/* Let the sender block on a full buffer and be interrupted there. */
	usleep(50000);
	CHECK(ipc_recv(sv[1], &body, &len, got, 2, &nfds) == 0);
	CHECK(len == IPC_MAX_BODY);
	CHECK(body && !memcmp(body, out, IPC_MAX_BODY) &&
	      body[IPC_MAX_BODY] == '\0');
	CHECK(nfds == 2);
	CHECK(nfds == 2 && same_file(got[0], sent[0]) &&
	      same_file(got[1], sent[1]));
	close_all(got, nfds);
	free(body);
	body = NULL;
	/* Nothing else may follow: the fds were not sent a second time. */
	CHECK(ipc_recv(sv[1], &body, &len, got, 2, &nfds) == -ENODATA);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close_all(sent, 2);
	close(sv[1]);
	free(out);
}

static void test_two_messages(void)
{
	int sv[2], a, b, got[2];
	unsigned int nfds = 0;
	char *body = NULL;
	size_t len = 0;

	if (!pair(sv))
		return;
	new_files(&a, 1);
	new_files(&b, 1);
	CHECK(ipc_send(sv[0], "one", 3, &a, 1) == 0);
	CHECK(ipc_send(sv[0], "two!", 4, &b, 1) == 0);
	CHECK(ipc_recv(sv[1], &body, &len, got, 2, &nfds) == 0);
	CHECK(body && !strcmp(body, "one") && nfds == 1);
	CHECK(nfds == 1 && same_file(got[0], a));
	close_all(got, nfds);
	free(body);
	body = NULL;
	CHECK(ipc_recv(sv[1], &body, &len, got, 2, &nfds) == 0);
	CHECK(body && !strcmp(body, "two!") && len == 4 && nfds == 1);
	CHECK(nfds == 1 && same_file(got[0], b));
	close_all(got, nfds);
	free(body);
	close(a);
	close(b);
	close(sv[0]);
	close(sv[1]);
}

static void test_send_rejects_bad_length(void)
{
	int sv[2], fd = 0;

	if (!pair(sv))
		return;
	CHECK(ipc_send(sv[0], "x", 0, NULL, 0) == -EINVAL);
	CHECK(ipc_send(sv[0], "x", IPC_MAX_BODY + 1, NULL, 0) == -EMSGSIZE);
	CHECK(ipc_send(sv[0], "x", 1, NULL, 1) == -EINVAL);
	CHECK(ipc_send(sv[0], NULL, 1, &fd, 0) == -EINVAL);
	close(sv[0]);
	close(sv[1]);
}

static void test_send_to_closed_peer(void)
{
	int sv[2];

	if (!pair(sv))
		return;
	close(sv[1]);
	/* Must be an error return, not a SIGPIPE that kills tapir. */
	CHECK(ipc_send(sv[0], "x", 1, NULL, 0) == -EPIPE);
	close(sv[0]);
}

/**
 * expect_recv_error() - ipc_recv() must fail with @err and leave nothing
 * @sock:	socket to receive from
 * @err:	expected negative errno
 * @maxfds:	fds the caller makes room for, at most 4
 */
static void expect_recv_error(int sock, int err, unsigned int maxfds)
{
	char *body = (char *)"unchanged";
	int got[4] = {-1, -1, -1, -1};
	unsigned int nfds = 99;
	size_t len = 99;
	int before = count_fds();
	int rc = ipc_recv(sock, &body, &len, got, maxfds, &nfds);

	if (rc != err)
		printf("#   ipc_recv returned %d, wanted %d\n", rc, err);
	CHECK(rc == err);
	CHECK(body == NULL);
	CHECK(nfds == 0);
	CHECK(count_fds() == before);
}

static void test_zero_length_header(void)
{
	int sv[2];

	if (!pair(sv))
		return;
	CHECK(raw_header(sv[0], 0));
	expect_recv_error(sv[1], -EPROTO, 4);
	close(sv[0]);
	close(sv[1]);
}

static void test_oversized_header(void)
{
	int sv[2];

	if (!pair(sv))
		return;
	CHECK(raw_header(sv[0], IPC_MAX_BODY + 1));
	expect_recv_error(sv[1], -EMSGSIZE, 4);
	close(sv[0]);
	close(sv[1]);

	if (!pair(sv))
		return;
	CHECK(raw_header(sv[0], UINT32_MAX));
	expect_recv_error(sv[1], -EMSGSIZE, 4);
	close(sv[0]);
	close(sv[1]);
}

static void test_eof_mid_body(void)
{
	uint32_t hdr = htonl(100);
	int sv[2], fd;

	if (!pair(sv))
		return;
	new_files(&fd, 1);
	/* The fd that came with the header must be closed again. */
	CHECK(raw_send(sv[0], &hdr, sizeof(hdr), &fd, 1));
	CHECK(raw_send(sv[0], "0123456789", 10, NULL, 0));
	close(sv[0]);
	expect_recv_error(sv[1], -EPIPE, 4);
	close(sv[1]);
	close(fd);
}

static void test_eof_mid_header(void)
{
	int sv[2];

	if (!pair(sv))
		return;
	CHECK(raw_send(sv[0], "\0\0", 2, NULL, 0));
	close(sv[0]);
	expect_recv_error(sv[1], -EPIPE, 4);
	close(sv[1]);
}

static void test_eof_before_header(void)
{
	int sv[2];

	if (!pair(sv))
		return;
	close(sv[0]);
	expect_recv_error(sv[1], -ENODATA, 4);
	close(sv[1]);
}

static void test_too_many_fds(void)
{
	int sv[2], sent[3];

	if (!pair(sv))
		return;
	new_files(sent, 3);
	CHECK(ipc_send(sv[0], "x", 1, sent, 3) == 0);
	expect_recv_error(sv[1], -EPROTO, 2);
	close(sv[0]);
	close(sv[1]);

	/* A caller expecting no fds at all. */
	if (pair(sv)) {
		CHECK(ipc_send(sv[0], "x", 1, sent, 1) == 0);
		expect_recv_error(sv[1], -EPROTO, 0);
		close(sv[0]);
		close(sv[1]);
	}
	close_all(sent, 3);
}

static void test_fds_with_body(void)
{
	uint32_t hdr = htonl(4);
	int sv[2], fd;

	if (!pair(sv))
		return;
	new_files(&fd, 1);
	/* Within maxfds, but not on the header: not what ipc_send() does. */
	CHECK(raw_send(sv[0], &hdr, sizeof(hdr), NULL, 0));
	CHECK(raw_send(sv[0], "body", 4, &fd, 1));
	expect_recv_error(sv[1], -EPROTO, 4);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

static void test_eintr_is_retried(void)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	struct itimerval it = {.it_interval = {0, 10000},
	                       .it_value = {0, 10000}};
	struct itimerval off = {{0, 0}, {0, 0}};
	unsigned int nfds = 0;
	char *body = NULL;
	size_t len = 0;
	int sv[2], status = -1;
	pid_t pid;

	if (!pair(sv))
		return;
	/* No SA_RESTART: the blocked recvmsg() sees EINTR repeatedly. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_IGN);
		usleep(200000);
		_exit(ipc_send(sv[0], "late", 4, NULL, 0) == 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK(ipc_recv(sv[1], &body, &len, NULL, 0, &nfds) == 0);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	CHECK(body && !strcmp(body, "late"));
	free(body);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(sv[0]);
	close(sv[1]);
}

const struct unit_case unit_cases[] = {
        {"round-trip with 0 fds", test_roundtrip_0_fds},
        {"round-trip with 1 fd", test_roundtrip_1_fd},
        {"round-trip with 3 fds", test_roundtrip_3_fds},
        {"body of IPC_MAX_BODY with short writes", test_max_body_short_writes},
        {"two messages keep their own fds", test_two_messages},
        {"ipc_send refuses bad lengths", test_send_rejects_bad_length},
        {"ipc_send to a closed peer is -EPIPE", test_send_to_closed_peer},
        {"length 0 header is refused", test_zero_length_header},
        {"length IPC_MAX_BODY+1 header is refused", test_oversized_header},
        {"EOF mid-body is -EPIPE, no fd leak", test_eof_mid_body},
        {"EOF mid-header is -EPIPE", test_eof_mid_header},
        {"EOF before header is -ENODATA", test_eof_before_header},
        {"more fds than maxfds are all closed", test_too_many_fds},
        {"fds arriving with the body are refused", test_fds_with_body},
        {"EINTR is retried", test_eintr_is_retried},
        {NULL, NULL},
};
