/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * avic-smp: multiboot entry of CPU 0, the real-mode trampoline that
 * brings CPU 1 into flat 32-bit protected mode (copied to 0x8000, SIPI
 * vector 0x08), the VMRUN wrapper, and the L2 code that must be
 * assembly: its IPI handler (count, EOI, IRET) and VMMCALL.  The rest
 * is in avic-smp.c.
 */

#include "../flat32.inc"

#define APIC 0xfee00000

    FLAT32_MULTIBOOT_START bsp_stack_top, bsp_main

    FLAT32_AP_START

/*
 * void svm_run(uint32_t vmcb, uint32_t *gprs): VMRUN with L2's general
 * registers other than EAX and ESP (which the VMCB holds) loaded from
 * gprs[] (ECX, EBX, EDX, ESI, EDI, EBP) and stored back after #VMEXIT,
 * so that L2's C code keeps them across exits; L1's own are kept.
 */
    .globl svm_run
svm_run:
    push %ebp
    push %ebx
    push %esi
    push %edi
    mov 20(%esp), %eax
    mov 24(%esp), %ecx
    push %ecx
    mov 4(%ecx), %ebx
    mov 8(%ecx), %edx
    mov 12(%ecx), %esi
    mov 16(%ecx), %edi
    mov 20(%ecx), %ebp
    mov (%ecx), %ecx
    vmrun
    push %ecx
    mov 4(%esp), %ecx
    popl (%ecx)
    mov %ebx, 4(%ecx)
    mov %edx, 8(%ecx)
    mov %esi, 12(%ecx)
    mov %edi, 16(%ecx)
    mov %ebp, 20(%ecx)
    add $4, %esp
    pop %edi
    pop %esi
    pop %ebx
    pop %ebp
    ret

/* void l2_vmmcall(void): leave L2; L1 resumes after the instruction */
    .globl l2_vmmcall
l2_vmmcall:
    vmmcall
    ret

/*
 * L2's IPI handler (vector 0x60): count it, then EOI through the
 * register of the mode (x2APIC MSR 0x80b, or the APIC page's 0xb0),
 * both accelerated by AVIC.
 */
    .globl l2_ipi_handler
l2_ipi_handler:
    lock incl l2_ipi_count
    cmpl $0, l2_x2apic
    je 4f
    push %eax
    push %ecx
    push %edx
    mov $0x80b, %ecx
    xor %eax, %eax
    xor %edx, %edx
    wrmsr
    pop %edx
    pop %ecx
    pop %eax
    iret
4:  movl $0, APIC + 0xb0
    iret


    .data
    FLAT32_GDT

    .bss
    .align 16
    .space 8192
bsp_stack_top:
    .space 8192
ap_stack_top:

    .section .note.GNU-stack, "", @progbits
