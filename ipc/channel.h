/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - framing and SCM_RIGHTS fd passing on the helper's socketpair
 */
#ifndef TAPIR_IPC_CHANNEL_H
#define TAPIR_IPC_CHANNEL_H

#include <stddef.h>

/* Largest message body accepted on the channel, in bytes. */
#define IPC_MAX_BODY 65536

int ipc_send(int sock, const char *body, size_t len, const int *fds,
             unsigned int nfds);
int ipc_recv(int sock, char **body, size_t *len, int *fds, unsigned int maxfds,
             unsigned int *nfds);

#endif /* TAPIR_IPC_CHANNEL_H */
