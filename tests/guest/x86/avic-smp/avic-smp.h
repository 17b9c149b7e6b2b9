/* SPDX-License-Identifier: GPL-2.0-or-later */
/* avic-smp: what start.S and avic-smp.c share */
#ifndef AVIC_SMP_H
#define AVIC_SMP_H

#include <stdint.h>

/* start.S */
extern char tramp_start[], tramp_end[];
extern struct {
    uint16_t limit;
    uint32_t base;
} __attribute__((packed)) gdt_desc;
void svm_run(uint32_t vmcb, uint32_t *gprs);
void l2_vmmcall(void);
void l2_ipi_handler(void);

/* avic-smp.c, called from start.S */
void bsp_main(void);
void ap_main(void);

/* IPIs L2's handler took, on CPU 1; the EOI register's mode */
extern volatile uint32_t l2_ipi_count, l2_x2apic;

#endif
