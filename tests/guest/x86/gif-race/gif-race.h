/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gif-race: what start.S and gif-race.c share */
#ifndef GIF_RACE_H
#define GIF_RACE_H

#include <stdint.h>

/* start.S */
extern char tramp_start[], tramp_end[];
void ipi_handler(void);

/* gif-race.c, called from start.S */
void bsp_main(void);
void ap_main(void);

/* self-IPIs taken so far (incremented by ipi_handler) */
extern volatile uint32_t ipi_count;

#endif
