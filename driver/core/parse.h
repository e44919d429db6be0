/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - numbers from untrusted text: command lines, rules, JSON strings
 */
#ifndef TAPIR_PARSE_H
#define TAPIR_PARSE_H

int parse_uint(const char *s, unsigned long min, unsigned long max,
               unsigned long *out);

#endif /* TAPIR_PARSE_H */
