// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: a fast, deterministic byte stream for transfer tests */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/**
 * next() - xorshift64* step
 * @s:		state, never 0
 *
 * Return: next 64 pseudo-random bits
 */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/**
 * main() - pattern BYTES [SEED]: write BYTES pseudo-random bytes to stdout
 * @argc:	argument count
 * @argv:	arguments
 *
 * Not /dev/urandom: that is several times slower than the datapath under
 * test, and a seed makes a failure reproducible.
 *
 * Return: 0 on success, 1 on a write error or bad arguments
 */
int main(int argc, char **argv)
{
	static uint64_t buf[8192];
	unsigned long long left;
	uint64_t s;

	if (argc < 2) {
		fprintf(stderr, "usage: pattern BYTES [SEED]\n");
		return 1;
	}
	left = strtoull(argv[1], NULL, 0);
	s = argc > 2 ? strtoull(argv[2], NULL, 0) | 1 : 0x9e3779b97f4a7c15ULL;
	while (left) {
		size_t n = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		size_t off = 0;

		for (size_t i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
			buf[i] = next(&s);
		while (off < n) {
			ssize_t w = write(1, (char *)buf + off, n - off);

			if (w <= 0)
				return 1;
			off += (size_t)w;
		}
		left -= n;
	}
	return 0;
}
