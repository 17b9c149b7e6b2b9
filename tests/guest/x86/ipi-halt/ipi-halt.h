/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ipi-halt: what start.S and ipi-halt.c share */
#ifndef IPI_HALT_H
#define IPI_HALT_H

#include <stdint.h>

/* start.S */
extern char tramp_start[], tramp_end[];
void call_handler(void);
void timer_handler(void);
void noise_handler(void);

/* ipi-halt.c, called from start.S */
void bsp_main(void);
void ap_main(void);

/* counted by the handlers; the EOI register's mode */
extern volatile uint32_t calls_taken, timer_ticks, noise_taken, x2apic_mode;

#endif
