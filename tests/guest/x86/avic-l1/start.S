/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * avic-l1: multiboot entry, GDT, the VMRUN wrapper and the L2 guest's
 * code (flat 32-bit protected mode, no paging).  The L2 code touches
 * the APIC BAR page at fixed points the L1 side (avic-l1.c) checks its
 * #VMEXITs against; every access to the page is a 5-byte moffs form
 * (A0/A1/A3 imm32), so a fault exit is skipped by adding 5 to rIP.
 */

#include "../flat32.inc"

#define APIC 0xfee00000

    FLAT32_MULTIBOOT_START l1_stack_top, l1_main

/*
 * uint32_t svm_run(uint32_t vmcb): host GPRs are not kept by VMRUN; L2's
 * (but RAX and RSP, in the VMCB) are kept here from one exit to the
 * next VMRUN, as a hypervisor does (a REP string insn resumes at RCX)
 */
    .globl svm_run
svm_run:
    push %ebp
    push %ebx
    push %esi
    push %edi
    mov 20(%esp), %eax
    mov l2_gprs + 0, %ebx
    mov l2_gprs + 4, %ecx
    mov l2_gprs + 8, %edx
    mov l2_gprs + 12, %esi
    mov l2_gprs + 16, %edi
    mov l2_gprs + 20, %ebp
    vmrun
    mov %ebx, l2_gprs + 0
    mov %ecx, l2_gprs + 4
    mov %edx, l2_gprs + 8
    mov %esi, l2_gprs + 12
    mov %edi, l2_gprs + 16
    mov %ebp, l2_gprs + 20
    pop %edi
    pop %esi
    pop %ebx
    pop %ebp
    ret

    .data
    .balign 4
l2_gprs: .fill 6, 4, 0
    .text

    .globl l2_entry, l2_svr, l2_svr_end, l2_ccr, l2_ipi1_end, l2_ipi2_end
    .globl l2_byte, l2_hlt, l2_done, l2_svr_byte, l2_svr_byte_end
    .globl l2_icr_word_end, l2_ccr_byte, l2_across
l2_entry:
    /* 1: SVR write, trap-style: written, exit after the insn */
    mov $0x1ff, %eax
l2_svr:
    mov %eax, APIC + 0xf0
l2_svr_end:
    /* 2: timer current count read, fault-style: exit before */
l2_ccr:
    mov APIC + 0x390, %eax
    mov %eax, l2_ccr_value
    /* 3: TPR write (accelerated), PPR read (allowed) */
    mov $0x20, %eax
    mov %eax, APIC + 0x80
    mov APIC + 0xa0, %eax
    mov %eax, l2_ppr_value
    xor %eax, %eax
    mov %eax, APIC + 0x80
    /* 4: self-IPI, vector 0x40, delivered right after the write */
    sti
    mov $0x00040040, %eax
    mov %eax, APIC + 0x300
    nop
    /* 5: TPR 0x30 (V_TPR follows); IPI to APIC ID 1, valid but not
     * running: IRR set, exit */
    mov $0x30, %eax
    mov %eax, APIC + 0x80
    mov $0x01000000, %eax
    mov %eax, APIC + 0x310
    mov $0x41, %eax
    mov %eax, APIC + 0x300
l2_ipi1_end:
    /* 6: IPI to APIC ID 2, no valid entry: nothing set, exit */
    mov $0x02000000, %eax
    mov %eax, APIC + 0x310
    mov $0x42, %eax
    mov %eax, APIC + 0x300
l2_ipi2_end:
    xor %eax, %eax
    mov %eax, APIC + 0x80
    /*
     * 7: accesses other than an aligned dword, classed by the register
     * they fall in: byte and word reads of SVR (allowed: no exit)...
     */
    movb APIC + 0xf1, %al
    mov %eax, l2_byte_value
    movw APIC + 0xf0, %ax
    mov %eax, l2_word_value
    /* ... a byte write to SVR (written, then a trap exit) ... */
    movb $0xfe, %al
l2_svr_byte:
    movb %al, APIC + 0xf0
l2_svr_byte_end:
    /* ... a word write to ICR low (the IPI, to ID 1: incomplete) ... */
    mov $0x01000000, %eax
    mov %eax, APIC + 0x310
    movw $0x43, %ax
    movw %ax, APIC + 0x300
l2_icr_word_end:
    /* ... a byte read of the timer count (fault-style) ... */
l2_ccr_byte:
    movb APIC + 0x390, %al
    /* ... a dword read across DFR and SVR (served from the page) ... */
    mov APIC + 0xee, %eax
    mov %eax, l2_across_value
    /* ... and one across the timer's initial and current count (the
     * second half faults: the exit names it) */
l2_across:
    mov APIC + 0x38e, %eax
l2_byte:
    /* 8: L1 posts vector 0x45 in IRR; VMRUN delivers it */
l2_hlt:
    hlt
    nop
l2_done:
    hlt
    jmp l2_done

    /* 9: V_IRQ that the page's TPR blocks: not taken before HLT */
    .globl l2_virq
l2_virq:
    sti
    nop
    nop
    hlt

    /*
     * 10: single-stepped (TF) self-IPI write through the APIC page, L1
     * intercepting #DB: the IPI happens before the #DB exit
     */
    .globl l2_tf, l2_tf_end
l2_tf:
    cli
    mov $0x00040048, %eax
    pushf
    orl $0x100, (%esp)
    popf
    mov %eax, APIC + 0x300
l2_tf_end:
    hlt

    /*
     * 11: MASKMOVDQU storing bytes 0 and 2 of ICR low one by one (a
     * self-IPI of 0x49): two stores of one instruction, one IPI
     */
    .globl l2_maskmov, l2_maskmov_end
l2_maskmov:
    cli
    movdqu maskmov_data, %xmm1
    movdqu maskmov_mask, %xmm2
    mov $(APIC + 0x300), %edi
    maskmovdqu %xmm2, %xmm1
l2_maskmov_end:
    hlt

    /*
     * 11a: one 16-byte store across LDR and DFR (bytes 2-3 of LDR,
     * 0-1 of DFR): lands in both; two trap exits, LDR's then DFR's
     * after the next VMRUN, both with rIP past the store.  11b:
     * MASKMOVDQU storing a byte into DFR (a reserved byte) and one into
     * SVR: the same, DFR's then SVR's.
     */
    .globl l2_cross, l2_cross_end, l2_cross_mask_end
l2_cross:
    movdqu cross_data, %xmm1
    movdqu %xmm1, APIC + 0xd2
l2_cross_end:
    movdqu cross_mask_data, %xmm1
    movdqu cross_mask, %xmm2
    mov $(APIC + 0xe8), %edi
    maskmovdqu %xmm2, %xmm1
l2_cross_mask_end:
    hlt

    /*
     * 11c: REP STOSL with DF=1 and ECX=2 from DFR down into LDR (0xe0,
     * then 0xdc): one exit per iteration, each at its own boundary:
     * DFR's trap with rIP at the REP (an iteration left, LDR not
     * written yet), then LDR's with rIP past it.
     */
    .globl l2_rep_start, l2_rep, l2_rep_end
l2_rep_start:
    std
    mov $2, %ecx
    mov $0x5a5a5a5a, %eax
    mov $(APIC + 0xe0), %edi
l2_rep:
    rep stosl
l2_rep_end:
    cld
    hlt

    /*
     * 11e: a LOCK-prefixed, misaligned read-modify-write of SVR (bytes
     * 2-5): one trap exit with rIP past it, then the HLT (under MTTCG
     * such an access takes TCG's exclusive path)
     */
    .globl l2_lock_svr, l2_lock_svr_end
l2_lock_svr:
    lock orl $0x100, APIC + 0xf2
l2_lock_svr_end:
    hlt

    /*
     * 11f: FNSAVE (108 bytes) at LVT timer: the LVTs and TMICT, all
     * trap registers, in one access: it lands, a trap for each.  Then
     * one at LVT error, which reaches the current count (a fault
     * register): a fault there, nothing written
     */
    .globl l2_fnsave, l2_fnsave_end, l2_fnsave_fault
l2_fnsave:
    fnsave APIC + 0x320
l2_fnsave_end:
    hlt
l2_fnsave_fault:
    fnsave APIC + 0x370
    hlt

    /*
     * 11f': FLDENV (28 bytes) from EOI and RRD: a read, served from the
     * page, no exit (as a write it would EOI and trap at RRD)
     */
    .globl l2_fldenv, l2_fldenv_end
l2_fldenv:
    fldenv APIC + 0xb0
l2_fldenv_end:
    hlt

    /*
     * 11g: a far CALL with the stack at RRD + 4: it pushes CS into RRD
     * (a trap), then the return EIP into EOI, which is carried to the
     * next VMRUN
     */
    .globl l2_farcall, l2_farcall_target
l2_farcall:
    mov $(APIC + 0xc4), %esp
    lcall $0x08, $l2_farcall_target
l2_farcall_target:
    hlt

    /*
     * 11h: INT 0x41 with the stack at the end of SVR: the delivery
     * pushes EFLAGS, CS and EIP into SVR's upper bytes (a trap)
     */
    .globl l2_int, l2_int_end
l2_int:
    mov $(APIC + 0x100), %esp
    int $0x41
l2_int_end:
    hlt

    /*
     * 11i: task switches with a TSS in the page.  A JMP from an old TSS
     * at APIC + 0x90 (only its dynamic fields, EIP to GS at 0xb0-0xed,
     * are written: EOI, RRD, LDR, DFR; APR and PPR hold fields a task
     * switch does not touch); then a CALL to a new TSS at APIC + 0x84
     * (only its fields from CR3 on, at 0xa0-0xeb, are read; its link
     * lands in TPR's bytes 4-5).
     */
    .globl l2_task_a, l2_task_a_next, l2_task_a_target
    .globl l2_task_b, l2_task_b_target, l2_task_b_eax
l2_task_a:
    mov $0x18, %ax
    ltr %ax
    mov $0x5a5a1234, %esi
    ljmp $0x20, $0
l2_task_a_next:
    hlt
l2_task_a_target:
    hlt

l2_task_b:
    lcall $0x28, $0
    hlt
l2_task_b_target:
    mov %eax, l2_task_b_eax
    hlt

    /*
     * 11j: an EOI under a data write watchpoint (DR0 on EOI, 4 bytes):
     * the EOI, then the #DB trap L1 intercepts
     */
    .globl l2_dbw, l2_dbw_end
l2_dbw:
    mov $(APIC + 0xb0), %eax
    mov %eax, %dr0
    mov $0x000d0001, %eax
    mov %eax, %dr7
    xor %eax, %eax
    mov %eax, APIC + 0xb0
l2_dbw_end:
    hlt

    /* 11d: where L1 sends L2 instead of resuming it, or a second VMCB */
    .globl l2_just_hlt
l2_just_hlt:
    hlt

    /*
     * 12: HLT (not intercepted here) with a vector in IRR that TPR
     * blocks and a request to look at it still pending (a doorbell
     * rung while IF was clear): the vCPU must stay halted until L1's timer
     * ends it with an INTR exit; a wake-up would set l2_woke.
     */
    .globl l2_tpr_halt
l2_tpr_halt:
    cli
    mov $0xf0, %eax
    mov %eax, APIC + 0x80
    mov $0x00040046, %eax
    mov %eax, APIC + 0x300
    mov $0xc001011b, %ecx       /* doorbell to itself: the request */
    xor %eax, %eax
    xor %edx, %edx
    wrmsr
    movl $1, l2_halting
    sti
    hlt
    movl $1, l2_woke
1:  jmp 1b

/* one handler per vector: record it, accelerated EOI, return */
    .globl l2_irq_40, l2_irq_41, l2_irq_45, l2_irq_47
.macro L2_IRQ vec
l2_irq_\vec:
    lock orl $(1 << (0x\vec - 0x40)), l2_irq_seen
    movl $0, APIC + 0xb0
    iret
.endm
    L2_IRQ 40
    L2_IRQ 41
    L2_IRQ 45
    L2_IRQ 47

    .data
    FLAT32_GDT
    .globl l2_ccr_value, l2_ppr_value, l2_irq_seen
    .globl l2_byte_value, l2_word_value, l2_woke, l2_across_value
l2_across_value: .long 0
    .align 16
maskmov_data: .byte 0x49, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
maskmov_mask: .byte 0x80, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
cross_data: .byte 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
cross_mask_data: .byte 0xaa, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0
cross_mask: .byte 0x80, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0
l2_woke: .long 0
l2_task_b_eax: .long 0
    .globl l2_halting
l2_halting: .long 0
l2_ccr_value: .long 0
l2_byte_value: .long 0
l2_word_value: .long 0
l2_ppr_value: .long 0
l2_irq_seen:  .long 0

    .bss
    .align 16
    .space 8192
l1_stack_top:

    .section .note.GNU-stack, "", @progbits
