/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * AMD AVIC and x2AVIC in nested SVM under TCG: the hooks the SVM, MMU,
 * MSR and interrupt code call.  svm-avic.c has the design; the backing
 * page rules themselves are svm-avic-apic.c.
 */

#ifndef SVM_AVIC_H
#define SVM_AVIC_H

#include "cpu.h"

/* env->avic_post_write: a register write whose effect is due */
#define AVIC_POST_WRITE     0x8000

/*
 * Migration: a carried effect (cpu/avic_carry) is sent while its VMCB
 * still holds the exit it was recorded with
 */
bool svm_avic_carry_due(CPUX86State *env);

/* VMRUN: check and take the AVIC fields of the VMCB, evaluate the page */
void svm_avic_vmrun(CPUX86State *env);

/* #VMEXIT: forget what was due in guest mode */
void svm_avic_vmexit(CPUX86State *env);

/* helper_write_crN(): CR8 written, V_TPR updated; the page's TPR too */
void svm_avic_cr8_write(CPUX86State *env);

/*
 * x86_cpu_has_work(): CPU_INTERRUPT_AVIC is pending and IF lets it
 * through: is there a write effect due or a vector above PPR?  A halted
 * vCPU wakes only then (a doorbell for a vector TPR blocks leaves HLT
 * alone, as on hardware).
 */
bool svm_avic_has_work(CPUX86State *env);

/*
 * helper_single_step(): a single-step #DB trap is raised by the
 * translated code, before the loop takes CPU_INTERRUPT_AVIC: take a
 * due write effect (or its exit) first, or an intercepted #DB drops it.
 */
void svm_avic_take_due(CPUX86State *env);

/* x86_cpu_exec_interrupt(): CPU_INTERRUPT_AVIC was chosen */
void svm_avic_exec_interrupt(CPUX86State *env);

/*
 * x86_cpu_tlb_fill(): an L2 data access to the guest-physical APIC BAR
 * in xAPIC mode.  Raises the AVIC_NOACCEL fault or re-executes the
 * instruction alone; otherwise returns the backing page address to map
 * for this one access in *paddr.
 */
void svm_avic_apic_bar_fill(CPUX86State *env, vaddr addr, int size,
                            MMUAccessType access_type, hwaddr *paddr,
                            uintptr_t retaddr);

/* Is @gpa (an L2 guest-physical address) on the AVIC APIC BAR page? */
bool svm_avic_is_apic_bar(CPUX86State *env, hwaddr gpa);

/*
 * helper_wrmsr() / helper_rdmsr(): the doorbell MSR, and x2APIC MSRs
 * of an L2 in x2AVIC mode.  True when handled here.
 */
bool svm_avic_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val,
                    uintptr_t retaddr);
bool svm_avic_rdmsr(CPUX86State *env, uint32_t msr, uint64_t *val,
                    uintptr_t retaddr);

#endif
