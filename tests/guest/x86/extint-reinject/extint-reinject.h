/* SPDX-License-Identifier: GPL-2.0-or-later */
/* extint-reinject: what start.S and extint-reinject.c share */
#ifndef EXTINT_REINJECT_H
#define EXTINT_REINJECT_H

#include <stdint.h>

/* start.S */
void irq0_handler(void);
void irq8_handler(void);
void spurious_master(void);
void spurious_slave(void);
/* Wait with IF set, on the stack at @esp, until an interrupt is taken */
void take_one_on(uint32_t esp);

/* extint-reinject.c, called from start.S */
void bsp_main(void);

/* counted by the handlers */
extern volatile uint32_t irq0_taken, irq8_taken, irqs_taken;

#endif
