// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - error and debug messages on stderr */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

bool log_debug_enabled;

/**
 * vprint() - print one "tapir: ..." line on stderr
 * @fmt:	printf format
 * @ap:		arguments
 * @err:	errno to append as ": <strerror>", or 0
 */
static void vprint(const char *fmt, va_list ap, int err)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (err)
		fprintf(stderr, "tapir: %s: %s\n", line, strerror(err));
	else
		fprintf(stderr, "tapir: %s\n", line);
}

/**
 * err_msg() - report an error without an errno
 * @fmt:	printf format naming the failing object
 */
void err_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap, 0);
	va_end(ap);
}

/**
 * err_errno() - report an error with the text of @err appended
 * @err:	errno value (positive)
 * @fmt:	printf format naming the failing object
 */
void err_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap, err);
	va_end(ap);
}

/**
 * info_msg() - report a notable event that is not an error
 * @fmt:	printf format
 */
void info_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap, 0);
	va_end(ap);
}

/**
 * debug_msg() - report detail, only with --debug
 * @fmt:	printf format
 */
void debug_msg(const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_enabled)
		return;
	va_start(ap, fmt);
	vprint(fmt, ap, 0);
	va_end(ap);
}
