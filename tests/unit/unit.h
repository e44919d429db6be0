/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - minimal unit-test runner: TAP output, counted by tests/run.sh
 */
#ifndef TAPIR_UNIT_H
#define TAPIR_UNIT_H

#include <stdbool.h>

/**
 * struct unit_case - one named test function
 * @name:	shown in the TAP line
 * @fn:		runs the test; failures are reported through unit_check()
 */
struct unit_case {
	const char *name;
	void (*fn)(void);
};

/* Each test_*.c defines this array, terminated by an entry with NULL name. */
extern const struct unit_case unit_cases[];

void unit_check(bool cond, const char *expr, const char *file, int line);
bool unit_netns_run(void (*body)(void));
int unit_fail_syscall(long nr, long arg0, int err);
int unit_capture_stderr(void);
bool unit_write_file(const char *path, const char *text);

/* Records a failed expectation and keeps going, so one run shows them all. */
#define CHECK(cond) unit_check((cond), #cond, __FILE__, __LINE__)

#endif /* TAPIR_UNIT_H */
