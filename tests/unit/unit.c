// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - minimal unit-test runner: runs unit_cases[], prints TAP */

#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

static int case_failures;

/**
 * unit_check() - record the outcome of one expectation
 * @cond:	whether the expectation held
 * @expr:	its source text, printed on failure
 * @file:	source file of the expectation
 * @line:	source line of the expectation
 */
void unit_check(bool cond, const char *expr, const char *file, int line)
{
	if (cond)
		return;
	case_failures++;
	printf("#   failed: %s (%s:%d)\n", expr, file, line);
}

/**
 * main() - run every case and print one TAP line per case
 *
 * Return: 0 if all cases passed, 1 otherwise
 */
int main(void)
{
	int n = 0, failed = 0;

	while (unit_cases[n].name)
		n++;
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		case_failures = 0;
		unit_cases[i].fn();
		if (case_failures)
			failed++;
		printf("%s %d - %s\n", case_failures ? "not ok" : "ok", i + 1,
		       unit_cases[i].name);
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
