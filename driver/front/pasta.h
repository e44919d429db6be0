/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - run as pasta: pasta's options onto tapir's, and pasta's lifecycle
 */
#ifndef TAPIR_PASTA_H
#define TAPIR_PASTA_H

int pasta_main(int argc, char **argv);

#endif /* TAPIR_PASTA_H */
