/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - `tapir api SOCKET JSON`: one request to an API socket
 */
#ifndef TAPIR_APICLIENT_H
#define TAPIR_APICLIENT_H

/* Whole exchange, connect to last byte of the reply. */
#define APICLIENT_TIMEOUT_MS 10000
/* Longest reply accepted. */
#define APICLIENT_MAX_REPLY (4 << 20)

int apiclient_main(int argc, char **argv);

#endif /* TAPIR_APICLIENT_H */
