// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - --enable-sandbox: an empty root, no privileges left to gain
 *
 * tapir parses every frame of an untrusted container while holding host
 * sockets as the host user. Once set up it needs no file but the resolver
 * configuration, and no privilege at all, so before it reports ready:
 *
 * - it joins the container's user namespace, where it may build a mount
 *   namespace of its own (unless it is root in its namespace already);
 * - pivot_root() into an empty tmpfs that holds a read-only bind of /etc,
 *   and, when /etc/resolv.conf is a symlink out of /etc, the same chain
 *   of symlinks and a read-only bind of the directory that holds the file
 *   (systemd-resolved's /run/systemd/resolve): not the rest of /run, with
 *   the user's D-Bus, podman's and Docker's sockets. A directory rather
 *   than the file, because resolv.conf is replaced by rename; the old
 *   root is detached;
 * - no directory fd from before survives: from one, openat("../..")
 *   would leave any root;
 * - PR_SET_NO_NEW_PRIVS, and every capability dropped but
 *   CAP_NET_BIND_SERVICE, as slirp4netns does.
 *
 * Files tapir must still remove at exit (the API socket, tapir run's
 * resolv.conf) are the janitor's (janitor.c), forked before.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "driver/sandbox/isolation.h"
#include "driver/core/log.h"
#include "driver/sandbox/runas.h"

/* Where the new root is built, in our own mount namespace only. */
#define NEWROOT "/tmp"
#define RESOLV_CONF "/etc/resolv.conf"
/* Symlinks followed from /etc/resolv.conf at most, as the kernel's 40. */
#define RESOLV_HOPS 40

/**
 * isolation_sanitized() - whether this is a sanitizer build (make
 *			   check-asan, check-tsan), whose runtime needs more
 *
 * LeakSanitizer reads /proc/self/maps and stops the world with a
 * ptrace()ing thread; ThreadSanitizer starts a background thread of its
 * own with the first pthread_create() and has it sleep: test builds keep
 * /proc in the sandbox, and the filter allows what they need (seccomp.c).
 *
 * Return: true under ASan or TSan
 */
bool isolation_sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	return true;
#else
	return false;
#endif
#else
	return false;
#endif
}

/**
 * fail() - print one line for a failed step of the sandbox set-up
 * @err:	errno
 * @step:	what failed
 *
 * Return: -1
 */
static int fail(int err, const char *step)
{
	err_errno(err, "sandbox: %s", step);
	return -1;
}

/**
 * have_sys_admin() - whether we hold CAP_SYS_ADMIN in our user namespace
 *
 * Return: true if so (root in a user namespace of its own, for example)
 */
static bool have_sys_admin(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32));
}

/**
 * userns_fd() - the user namespace to join for the sandbox
 * @o:		options naming the target
 * @why:	what joins it, for the error line ("sandbox")
 *
 * --userns-path if given; else the target's, from /proc/PID/ns/user; for
 * a netns path, the user namespace that owns it (NS_GET_USERNS), which
 * slirp4netns never found (its bug #317).
 *
 * Return: an fd, or -1 after printing one error line
 */
static int userns_fd(const struct opts *o, const char *why)
{
	char path[PATH_MAX + 32];
	int nfd, ufd;

	if (o->userns_path[0])
		snprintf(path, sizeof(path), "%s", o->userns_path);
	else if (o->netns_type == NETNS_PID)
		snprintf(path, sizeof(path), "/proc/%d/ns/user", o->pid);
	else
		path[0] = '\0';
	if (path[0]) {
		ufd = open(path, O_RDONLY | O_CLOEXEC);
		if (ufd < 0)
			err_errno(errno, "%s: open user namespace %s", why,
			          path);
		return ufd;
	}
	nfd = open(o->netns_path, O_RDONLY | O_CLOEXEC);
	if (nfd < 0) {
		err_errno(errno, "%s: open network namespace %s", why,
		          o->netns_path);
		return -1;
	}
	ufd = ioctl(nfd, NS_GET_USERNS);
	if (ufd < 0)
		err_errno(errno, "%s: user namespace owning %s", why,
		          o->netns_path);
	close(nfd);
	return ufd;
}

/**
 * join_userns() - become privileged in the target's user namespace
 * @o:		options naming the target
 * @why:	what needs it, for the error line ("sandbox")
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int join_userns(const struct opts *o, const char *why)
{
	int fd;

	if (have_sys_admin())
		return 0;
	fd = userns_fd(o, why);
	if (fd < 0)
		return -1;
	if (setns(fd, CLONE_NEWUSER)) {
		err_errno(errno, "%s: join the target's user namespace", why);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/**
 * isolation_pid_namespace() - have the next child start a PID namespace
 *			       of its own
 * @o:		options naming the target
 *
 * For pasta's daemon, forked next: as pasta's, it is pid 1 of a namespace
 * that holds only it and its helpers, so that no pid of the host can be
 * named, by kill(), fcntl(F_SETOWN) or any call the kernel grows. That
 * needs CAP_SYS_ADMIN in our user namespace: root in podman's has it; a
 * user joins the target's first, as the sandbox would later anyway. Must
 * run single-threaded.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int isolation_pid_namespace(const struct opts *o)
{
	static const char why[] = "the daemon's PID namespace";

	if (!unshare(CLONE_NEWPID))
		return 0;
	if (errno == EPERM) {
		if (join_userns(o, why))
			return -1;
		if (!unshare(CLONE_NEWPID))
			return 0;
	}
	err_errno(errno, "%s: unshare", why);
	return -1;
}

/**
 * bind_at() - bind @src (and what is mounted below it) at @dst
 * @src:	existing directory or file
 * @dst:	existing mount point of the same kind
 *
 * Return: 0 on success, -errno on failure
 */
static int bind_at(const char *src, const char *dst)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) ||
	    mount(NULL, dst, NULL, MS_SLAVE | MS_REC, NULL))
		return -errno;
	return 0;
}

/**
 * bind_ro() - bind @src (and what is mounted below it) at @dst, read-only
 * @src:	existing directory or file
 * @dst:	existing mount point of the same kind
 *
 * Return: 0 on success, -errno on failure
 */
static int bind_ro(const char *src, const char *dst)
{
	const unsigned long ro = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
	                         MS_NODEV | MS_NOEXEC;

	if (bind_at(src, dst))
		return -errno;
	/* Locked flags (from a less privileged namespace) can refuse the
	 * remount: the bind still serves, as in slirp4netns.
	 */
	if (mount(NULL, dst, NULL, ro, NULL))
		debug_msg("sandbox: read-only %s: %s", dst, strerror(errno));
	return 0;
}

/**
 * make_path() - create @path's directories (and the file itself, empty,
 *		 if @file) below the new root
 * @path:	absolute path, as it will be seen from the new root
 * @file:	create a file at the end rather than a directory
 *
 * Return: 0 on success, -errno on failure
 */
static int make_path(const char *path, bool file)
{
	char p[PATH_MAX];
	int fd;

	if (snprintf(p, sizeof(p), "%s%s", NEWROOT, path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + strlen(NEWROOT) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (!file)
		return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/**
 * in_etc() - whether @path is /etc or below it, bound whole anyway
 * @path:	absolute path without symlinks in its directories
 *
 * Return: true if so
 */
static bool in_etc(const char *path)
{
	return !strncmp(path, "/etc", 4) && (!path[4] || path[4] == '/');
}

/**
 * bind_here() - bind @path at its own path in the new root, read-only
 * @path:	existing directory, or file if @file
 * @file:	@path is a file
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int bind_here(const char *path, bool file)
{
	char dst[PATH_MAX + sizeof(NEWROOT)];
	int ret;

	ret = make_path(path, file);
	snprintf(dst, sizeof(dst), "%s%s", NEWROOT, path);
	if (!ret)
		ret = bind_ro(path, dst);
	if (ret)
		return fail(-ret, "bind the resolver's directory into the new "
		                  "root");
	return 0;
}

/**
 * link_here() - make the symlink @where, saying @what, in the new root too
 * @where:	absolute path of a symlink, no symlink in its directories
 * @what:	its text
 *
 * Return: 0 on success, -errno on failure
 */
static int link_here(const char *where, const char *what)
{
	char dst[PATH_MAX + sizeof(NEWROOT)], parent[PATH_MAX];
	const char *slash = strrchr(where, '/');
	int ret = 0;

	if (in_etc(where))
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - where), where);
	if (parent[0])
		ret = make_path(parent, false);
	snprintf(dst, sizeof(dst), "%s%s", NEWROOT, where);
	if (!ret && symlink(what, dst) && errno != EEXIST)
		ret = -errno;
	return ret;
}

/**
 * resolve_step() - resolve the first component of @todo onto @done
 * @todo:	what is left of the path: the component is taken off it, or
 *		replaced by the text of the symlink it names
 * @done:	the real path reached so far ("" for the root), extended
 * @hops:	symlinks followed so far
 *
 * A symlink met outside /etc is made again in the new root (link_here()).
 * A missing last component is taken as it is: the file may come later.
 *
 * Return: 0 on success, -errno (-ENOENT: a directory on the way is
 *	   missing)
 */
static int resolve_step(char todo[PATH_MAX], char done[PATH_MAX], int *hops)
{
	char *c = todo + strspn(todo, "/"), *end = c + strcspn(c, "/");
	char cand[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
	struct stat st;
	bool last;
	ssize_t n;
	int ret;

	if (*end)
		*end++ = '\0';
	last = !end[strspn(end, "/")];
	if (!strcmp(c, "..")) {
		char *slash = strrchr(done, '/');

		if (slash)
			*slash = '\0';
	} else if (strcmp(c, ".")) {
		if (snprintf(cand, sizeof(cand), "%s/%s", done, c) >=
		    (int)sizeof(cand))
			return -ENAMETOOLONG;
		if (lstat(cand, &st)) {
			if (errno != ENOENT || !last)
				return -errno;
			st.st_mode = S_IFREG;
		}
		if (S_ISLNK(st.st_mode)) {
			n = readlink(cand, link, sizeof(link) - 1);
			if (n < 0)
				return -errno;
			link[n] = '\0';
			if (++*hops > RESOLV_HOPS)
				return -ELOOP;
			if ((ret = link_here(cand, link)))
				return ret;
			if (link[0] == '/')
				done[0] = '\0';
			if (snprintf(next, sizeof(next), "%s/%s", link, end) >=
			    (int)sizeof(next))
				return -ENAMETOOLONG;
			memcpy(todo, next, strlen(next) + 1);
			return 0;
		}
		memcpy(done, cand, strlen(cand) + 1);
	}
	memmove(todo, end, strlen(end) + 1);
	return 0;
}

/**
 * follow_resolver() - walk from /etc/resolv.conf to its file as the kernel
 *		       does, making each symlink met outside /etc again in
 *		       the new root
 * @file:	filled with the file's real path (it may not exist yet)
 *
 * "/etc/resolv.conf -> ../run/systemd/resolve/stub-resolv.conf" (systemd),
 * or through "/var/run -> /run": the same links lead to the same file
 * inside.
 *
 * Return: 0 on success, -errno
 */
static int follow_resolver(char file[PATH_MAX])
{
	char todo[PATH_MAX];
	int hops = 0, ret;

	snprintf(todo, sizeof(todo), "%s", RESOLV_CONF);
	file[0] = '\0';
	while (todo[strspn(todo, "/")])
		if ((ret = resolve_step(todo, file, &hops)))
			return ret;
	return 0;
}

/**
 * bind_resolver() - make /etc/resolv.conf lead to its file inside as it
 *		     does outside, also once replaced by rename
 *
 * The file's directory is bound, not the file: a bound file would stay
 * the old inode after a rename. Only when that directory is the root or a
 * top-level one (/run, /tmp), which holds far more, is the file alone
 * bound, and a rename there is not seen.
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int bind_resolver(void)
{
	char file[PATH_MAX], dir[PATH_MAX];
	int ret = follow_resolver(file);

	if (ret == -ENOENT) {
		debug_msg("sandbox: %s leads nowhere: no resolver",
		          RESOLV_CONF);
		return 0;
	}
	if (ret)
		return fail(-ret, "follow " RESOLV_CONF);
	if (in_etc(file))
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(file, '/') - file),
	         file);
	if (!dir[0] || !strchr(dir + 1, '/'))
		return access(file, F_OK) ? 0 : bind_here(file, true);
	return bind_here(dir, false);
}

/**
 * bind_sanitizer_logs() - in sanitizer builds, the directory of the
 *			   log_path in TSAN_OPTIONS or ASAN_OPTIONS, writable
 *
 * hack/check-tsan.sh has ThreadSanitizer write its reports to a tmpfs at
 * /run/tapir-tsan.XXXXXX, opened only when there is one to write, in the
 * sandbox by then. Test builds only, as /proc is.
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int bind_sanitizer_logs(void)
{
	static const char *const vars[] = {"TSAN_OPTIONS", "ASAN_OPTIONS"};
	char dir[PATH_MAX], dst[PATH_MAX + sizeof(NEWROOT)];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]), *p;
		size_t len;
		int ret;

		if (!v || !(p = strstr(v, "log_path=")))
			continue;
		p += strlen("log_path=");
		len = strcspn(p, " :");
		if (p[0] != '/' || len >= sizeof(dir))
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)len, p);
		*strrchr(dir, '/') = '\0';
		if (!dir[0])
			continue;
		snprintf(dst, sizeof(dst), "%s%s", NEWROOT, dir);
		if ((ret = make_path(dir, false)) || (ret = bind_at(dir, dst)))
			return fail(-ret, "bind the sanitizer's log directory");
	}
	return 0;
}

/**
 * build_root() - an empty tmpfs with read-only /etc and the resolver, at
 *		  NEWROOT
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int build_root(void)
{
	int ret;

	if (unshare(CLONE_NEWNS))
		return fail(errno, "new mount namespace");
	/* Mounts made from here on stay ours; the host's still reach us. */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL))
		return fail(errno, "make / a slave mount");
	if (mount("tapir-root", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV,
	          "size=64k,mode=0755"))
		return fail(errno, "tmpfs for the new root");
	/* /run empty, as slirp4netns users' checks expect it (its own root
	 * binds the host's): the resolver's directory may come below it.
	 */
	if ((ret = make_path("/etc", false)) ||
	    (ret = make_path("/run", false)) ||
	    (ret = make_path("/old", false)))
		return fail(-ret, "directories in the new root");
	if ((ret = bind_ro("/etc", NEWROOT "/etc")))
		return fail(-ret, "bind /etc into the new root");
	if (isolation_sanitized() &&
	    ((ret = make_path("/proc", false)) ||
	     (ret = bind_ro("/proc", NEWROOT "/proc"))))
		return fail(-ret, "bind /proc into the new root (sanitizer "
		                  "build)");
	if (isolation_sanitized() && bind_sanitizer_logs())
		return -1;
	return bind_resolver();
}

/**
 * close_dir_fds() - close every directory fd: none may enter the sandbox
 *
 * tapir's own are the janitor's by now; one inherited from the caller
 * would reach past the new root just as well.
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int close_dir_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return fail(errno, "list /proc/self/fd");
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		struct stat st;

		if (end == e->d_name || *end || fd == dirfd(d) ||
		    fstat((int)fd, &st) || !S_ISDIR(st.st_mode))
			continue;
		debug_msg("sandbox: closing directory fd %ld", fd);
		close((int)fd);
	}
	closedir(d);
	return 0;
}

/**
 * pivot() - make NEWROOT the root and let go of the old one
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int pivot(void)
{
	if (chdir(NEWROOT))
		return fail(errno, "enter the new root");
	if (syscall(SYS_pivot_root, ".", "old")) {
		if (errno == EINVAL)
			return fail(errno,
			            "pivot_root (impossible from an initramfs "
			            "root: run without --enable-sandbox)");
		return fail(errno, "pivot_root");
	}
	if (chdir("/") || umount2("/old", MNT_DETACH) || rmdir("/old"))
		return fail(errno, "detach the old root");
	if (mount(NULL, "/", NULL,
	          MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          NULL))
		debug_msg("sandbox: read-only /: %s", strerror(errno));
	return 0;
}

/**
 * keep_caps() - no new privileges, and no capability but those in @keep
 * @keep:	capability bits to keep (below 32)
 * @o:		options: serve as o->runas_uid if o->runas; NULL for none
 *
 * The bounding set goes first, while CAP_SETPCAP may still be held; the
 * uid then changes with the permitted set kept, and capset() leaves
 * @keep of it.
 *
 * Return: 0 on success, -1 with errno set (or after one error line, when
 *	   the uid could not change: errno EPERM)
 */
static int keep_caps(uint32_t keep, const struct opts *o)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return -1;
	/* Up to the first the kernel doesn't know: EINVAL ends the list.
	 * Dropping needs CAP_SETPCAP: without it there is nothing to drop.
	 */
	for (int cap = 0; cap < 64; cap++) {
		if (cap < 32 && (keep & (1U << cap)))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			if (errno == EINVAL)
				break;
			if (errno != EPERM)
				return -1;
		}
	}
	if (o && runas_switch(o)) {
		errno = EPERM;
		return -1;
	}
	d[0].effective = d[0].permitted = d[0].inheritable = keep;
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/**
 * isolation_serve_as() - no new privileges, no capability but
 *			  CAP_NET_BIND_SERVICE, and o->runas_uid if o->runas
 * @o:		options
 *
 * What --enable-sandbox ends with; alone where tapir, started as root,
 * serves as nobody without it.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int isolation_serve_as(const struct opts *o)
{
	if (keep_caps(1U << CAP_NET_BIND_SERVICE, o))
		return fail(errno, "drop privileges");
	return 0;
}

/**
 * isolation_drop_all() - no new privileges and no capability at all, for
 *			  helpers that joined the container's namespaces
 *
 * Return: 0 on success, -1 with errno set
 */
int isolation_drop_all(void)
{
	return keep_caps(0, NULL);
}

/**
 * isolation_sandbox() - enter the sandbox, for --enable-sandbox
 * @o:		options naming the target
 *
 * Called after everything that needs files or privileges is set up, and
 * before the ready fd is written. Must run single-threaded.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int isolation_sandbox(const struct opts *o)
{
	if (join_userns(o, "sandbox") || build_root() || close_dir_fds() ||
	    pivot() || isolation_serve_as(o))
		return -1;
	debug_msg("sandbox: root is an empty tmpfs with /etc and the "
	          "resolver's directory; no capability but "
	          "CAP_NET_BIND_SERVICE");
	return 0;
}
