// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - numbers from untrusted text: command lines, rules, JSON strings */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "driver/core/parse.h"

/**
 * parse_uint() - parse a whole decimal string within bounds
 * @s:		input
 * @min:	lowest accepted value
 * @max:	highest accepted value
 * @out:	result
 *
 * Return: 0 on success, -1 if @s is empty, has junk or is out of range
 */
int parse_uint(const char *s, unsigned long min, unsigned long max,
               unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
