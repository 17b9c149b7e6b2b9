/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inject-race: what start.S and inject-race.c share */
#ifndef INJECT_RACE_H
#define INJECT_RACE_H

#include <stdint.h>

/* start.S */
extern struct {
    uint16_t limit;
    uint32_t base;
} __attribute__((packed)) gdt_desc;
void svm_run(uint32_t vmcb);
void l2_entry(void);
void l2_injected(void);
void l2_tick(void);

/* inject-race.c, called from start.S */
void bsp_main(void);

/* counted by the L2 handlers in start.S; window_ticks: injections
 * during whose handler (IF clear) the PIT raised IRQ 0 */
extern volatile uint32_t injected_count, injected_nested, tick_count,
    window_ticks;

#endif
