/* SPDX-License-Identifier: GPL-2.0-or-later */
/* block-access: what start.S and block-access.c share */
#ifndef BLOCK_ACCESS_H
#define BLOCK_ACCESS_H

/* block-access.c, called from start.S */
void main(void);

#endif
