/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - command line: slirp4netns-compatible options plus tapir's own
 */
#ifndef TAPIR_CLI_H
#define TAPIR_CLI_H

#include <stdio.h>

#include "driver/core/opts.h"

/* Returned by cli_parse() when --help or --version was handled. */
#define CLI_EXIT_OK 1

int cli_parse(int argc, char **argv, enum cli_mode mode, struct opts *o);
int cli_check_fds(const struct opts *o);
void cli_usage(FILE *f, enum cli_mode mode);
int cli_parse_cidr(const char *s, struct in_addr *net, unsigned int *prefix,
                   char *why, size_t whylen);
int cli_parse_mac(const char *s, uint8_t mac[6]);
int cli_resolve_outbound(const char *s, int family, void *out);
int cli_parse_publish(const char *s, struct publish *p, char *why,
                      size_t whylen);
void cli_opts_defaults(struct opts *o, enum cli_mode mode);
/* Options given on the command line, which their variables don't set. */
#define CLI_GIVEN_QUEUES 1U
#define CLI_GIVEN_MAX_FLOWS 2U
int cli_env_defaults(struct opts *o, unsigned int given);
void cli_derive_addresses(struct opts *o);
void cli_default_guest6(struct opts *o);
unsigned int cli_auto_queues(long online);
void cli_getopt_error(int c, const char *arg, const char *help);

#endif /* TAPIR_CLI_H */
