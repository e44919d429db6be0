// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - entry point: attach mode, `tapir run`, `tapir api` and pasta */

#include <stdbool.h>
#include <string.h>

#include "driver/front/apiclient.h"
#include "driver/front/cli.h"
#include "driver/sandbox/fds.h"
#include "driver/core/log.h"
#include "driver/front/loop.h"
#include "driver/front/pasta.h"
#include "driver/front/run.h"
#include "driver/sandbox/runas.h"

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
	if (cli_check_fds(&o))
		return 1;
	fds_close_inherited(&o, -1);
	runas_default(&o, false);
	ret = loop_prepare(&c, &o) ? 1 : loop_run(&c);
	loop_cleanup(&c);
	return ret;
}

/**
 * called_pasta() - were we run by the name "pasta" (a link or a copy)
 * @argv0:	argv[0]
 *
 * Return: true if its last path component is "pasta"
 */
static bool called_pasta(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	return argv0 && !strcmp(slash ? slash + 1 : argv0, "pasta");
}

/**
 * main() - dispatch on the name and the subcommand
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: exit status
 */
int main(int argc, char **argv)
{
	/* Now: /proc is still there, and no thread yet. */
	log_init();
	if (called_pasta(argv[0]))
		return pasta_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "pasta"))
		return pasta_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "run"))
		return run_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "api"))
		return apiclient_main(argc - 1, argv + 1);
	return attach_main(argc, argv);
}
