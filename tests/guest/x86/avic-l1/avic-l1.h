/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * avic-l1: what start.S defines for avic-l1.c (the VMRUN wrapper, the
 * L2 code's labels and the data L2 leaves for L1 to check).
 */

#ifndef AVIC_L1_H
#define AVIC_L1_H

#include <stdint.h>

uint32_t svm_run(uint32_t vmcb);
extern char l2_entry[], l2_svr[], l2_svr_end[], l2_ccr[], l2_ipi1_end[];
extern char l2_ipi2_end[], l2_byte[], l2_hlt[], l2_done[];
extern char l2_svr_byte[], l2_svr_byte_end[], l2_icr_word_end[];
extern char l2_ccr_byte[], l2_across[], l2_tpr_halt[], l2_virq[];
extern char l2_tf[], l2_tf_end[], l2_maskmov[], l2_maskmov_end[];
extern char l2_cross[], l2_cross_end[], l2_cross_mask_end[];
extern char l2_rep_start[], l2_rep[], l2_rep_end[];
extern char l2_just_hlt[], l2_lock_svr[], l2_lock_svr_end[], l2_fnsave[];
extern char l2_fnsave_end[], l2_fnsave_fault[], l2_fldenv[], l2_fldenv_end[];
extern char l2_farcall[], l2_farcall_target[], l2_int[], l2_int_end[];
extern char l2_task_a[], l2_task_a_next[], l2_task_a_target[];
extern char l2_task_b[], l2_task_b_target[], l2_dbw[], l2_dbw_end[];
extern char l2_irq_40[], l2_irq_41[], l2_irq_45[], l2_irq_47[];
/* written by L2 behind the compiler's back */
extern volatile uint32_t l2_ccr_value, l2_ppr_value, l2_irq_seen;
extern volatile uint32_t l2_byte_value, l2_word_value, l2_woke;
extern volatile uint32_t l2_across_value, l2_halting, l2_task_b_eax;
extern struct { uint16_t limit; uint32_t base; } __attribute__((packed))
    gdt_desc;
void l1_main(void);

#endif
