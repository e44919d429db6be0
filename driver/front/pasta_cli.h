/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's command line, as podman, rootlesskit and Docker write it
 */
#ifndef TAPIR_PASTA_CLI_H
#define TAPIR_PASTA_CLI_H

#include <stdio.h>

#include "driver/core/opts.h"

int pasta_cli_parse(int argc, char **argv, struct pasta_opts *po);
void pasta_cli_usage(FILE *f);

#endif /* TAPIR_PASTA_CLI_H */
