// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fuzzing: a command line into cli_parse()
 *
 * Input: one mode byte (bit 0: `tapir run`, else attach mode; bit 1: the
 * arguments are pasta port specs, all of one option, for
 * pasta_ports_parse() instead; bit 2, without bit 1: a pasta command
 * line, for pasta_cli_parse()), then the arguments, separated by NUL
 * bytes. cli_parse() returns rather than
 * exits; its one error line is formatted but not written (log_silent),
 * and --help and --version print to /dev/null (fuzz_sandbox()).
 */

#include <stdlib.h>
#include <string.h>

#include "driver/front/cli.h"
#include "driver/front/pasta_cli.h"
#include "driver/front/pasta_ports.h"
#include "tests/fuzz/fuzzenv.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/**
 * LLVMFuzzerInitialize() - libFuzzer: once, before any input
 * @argc:	unused
 * @argv:	unused
 *
 * Return: 0
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_sandbox();
	return 0;
}

/**
 * parse_specs() - every argument as a spec of one pasta port option
 * @argc:	argument count, argv[0] included
 * @argv:	arguments
 */
static void parse_specs(int argc, char **argv)
{
	static struct pasta_ports pp;
	char why[128];

	memset(&pp, 0, sizeof(pp));
	for (int i = 1; i < argc; i++)
		if (pasta_ports_parse(&pp, argv[i], why, sizeof(why)))
			break;
}

/**
 * LLVMFuzzerTestOneInput() - libFuzzer: one input
 * @data:	mode byte and NUL-separated arguments
 * @size:	bytes at @data
 *
 * Return: 0
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pasta_opts po;
	static struct opts o;
	enum cli_mode mode;
	char *argv[MAX_ARGS + 2], *text, *p;
	int argc = 0;

	if (size < 1)
		return 0;
	mode = (data[0] & 1) ? CLI_RUN : CLI_ATTACH;
	/* Each argument exactly sized, so reads past one are caught. */
	text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	argv[argc++] = mode == CLI_RUN ? "run" : "tapir";
	for (p = text; p < text + size - 1 && argc <= MAX_ARGS;
	     p += strlen(p) + 1) {
		size_t n = strlen(p) + 1;

		argv[argc] = malloc(n);
		if (!argv[argc])
			abort();
		memcpy(argv[argc++], p, n);
	}
	argv[argc] = NULL;
	if (data[0] & 2)
		parse_specs(argc, argv);
	else if (data[0] & 4)
		pasta_cli_parse(argc, argv, &po);
	else
		cli_parse(argc, argv, mode, &o);
	for (int i = 1; i < argc; i++)
		free(argv[i]);
	free(text);
	return 0;
}
