// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - entry point: attach mode, `tapir run` and `tapir api` */

#include <string.h>

#include "apiclient.h"
#include "cli.h"
#include "log.h"
#include "loop.h"
#include "run.h"

/**
 * attach_main() - tapir [OPTION]... PID|PATH TAPNAME
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: exit status
 */
static int attach_main(int argc, char **argv)
{
	static struct opts o;
	struct ctx c;
	int ret;

	ret = cli_parse(argc, argv, CLI_ATTACH, &o);
	if (ret)
		return ret == CLI_EXIT_OK ? 0 : 1;
	ret = loop_prepare(&c, &o) ? 1 : loop_run(&c);
	loop_cleanup(&c);
	return ret;
}

/**
 * main() - dispatch on the subcommand
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: exit status
 */
int main(int argc, char **argv)
{
	/* Now: /proc is still there, and no thread yet. */
	log_init();
	if (argc > 1 && !strcmp(argv[1], "run"))
		return run_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "api"))
		return apiclient_main(argc - 1, argv + 1);
	return attach_main(argc, argv);
}
