/* SPDX-License-Identifier: GPL-2.0-or-later */
/* block-access: what start.S and block-access.c share */
#ifndef BLOCK_ACCESS_H
#define BLOCK_ACCESS_H

#include <stdint.h>

/* block-access.c, called from start.S */
void main(void);

/* start.S: the 16-bit task's code and its IRET; the count it keeps */
extern char task16_code[], task16_iret[];
extern volatile uint32_t task16_ran;     /* volatile: the other task */

#endif
