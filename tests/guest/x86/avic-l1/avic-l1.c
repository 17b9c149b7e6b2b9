/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * avic-l1: a freestanding L1 "hypervisor" for the fork's emulated AVIC
 * (target/i386/tcg/system/svm-avic.c).  Booted by multiboot under TCG
 * with a CPU offering svm, npt and avic, it runs the L2 code of start.S
 * with int_ctl's AVIC enable bit set and checks each #VMEXIT: the exit
 * code, EXITINFO1/2 and rIP (after the instruction for trap-style exits
 * and incomplete IPIs, at it for fault-style ones), what landed in the
 * backing pages, V_TPR kept in step with the page's TPR, byte, word
 * and misaligned accesses classed by the register they fall in, and the
 * interrupts the L2 took (a self-IPI through the
 * ICR, and a vector L1 posts in IRR before VMRUN), and an L2 HLT that a
 * vector TPR blocks must not end, V_IRQ is ignored, a single-stepped
 * write's effect comes before the #DB exit, MASKMOVDQU's two stores
 * into one register send one IPI, and a write across two registers (one
 * store, or MASKMOVDQU's two) lands in both and traps for each, the
 * second exit at the next VMRUN, and a REP string store takes each
 * iteration's exit at its own boundary; the second exit waits for its
 * VMCB while another runs, and is dropped when L1 moved L2 elsewhere;
 * a LOCK-prefixed misaligned write traps once (the q35 run has 2 CPUs,
 * so that TCG's code is the parallel one); an FNSAVE over seven trap
 * registers lands and traps for each, one that reaches a fault register
 * faults there, nothing written; an FLDENV over EOI and RRD is a read,
 * no exit; EOI carried by a far CALL to a VMRUN with AVIC off comes as
 * its trap exit, the ISR left to L1; an INT whose
 * pushes land in SVR traps once delivered, rIP at the handler; task
 * switches with the old or new TSS in the page class only the fields
 * they write or read; an EOI under a data watchpoint is done before the
 * #DB.
 * Then a VMRUN with a
 * backing page beyond MAXPHYADDR must fail with SVM_EXIT_ERR.
 *
 * One line per check on the debug console (port 0xe9), "OK ..." or
 * "FAIL ...", then "DONE <failures>" (at once after an unexpected
 * exit code: L2 is lost then); isa-debug-exit (port 0xf4) ends
 * QEMU with status 1 when all passed, 3 otherwise.
 *
 * The host runs in 32-bit protected mode without paging, so NPT walks
 * with the host's (lack of) paging mode: identity, as QEMU implements
 * it; L2 runs flat without paging too.
 */

#include <stdint.h>

#define APIC_BAR        0xfee00000u
#define EXIT_INTR       0x60
#define EXIT_HLT        0x78
#define EXIT_EXCP_DB    0x41
#define VMCB_INTERCEPT_EXC 0x008
#define VMCB_CR4        0x548
#define EXIT_ERR        0xffffffffffffffffull
#define EXIT_AVIC_INCOMPLETE_IPI 0x401
#define EXIT_AVIC_NOACCEL 0x402

#define INT_CTL_V_INTR_MASKING (1u << 24)
#define INT_CTL_AVIC_ENABLE    (1u << 31)
#define INT_CTL_V_IRQ          (1u << 8)

#define PHYS_VALID      (1ull << 63)
#define PHYS_RUNNING    (1ull << 62)

#include "avic-l1.h"
#include "../flat32.h"

static uint8_t vmcb[4096] __attribute__((aligned(4096)));
static uint8_t hsave[4096] __attribute__((aligned(4096)));
static uint8_t vmcb2[4096] __attribute__((aligned(4096)));
static uint32_t backing0[1024] __attribute__((aligned(4096)));
static uint32_t backing1[1024] __attribute__((aligned(4096)));
static uint64_t physical[512] __attribute__((aligned(4096)));
static uint32_t logical[1024] __attribute__((aligned(4096)));
static uint64_t l2_idt[256];
static uint8_t l2_stack[4096] __attribute__((aligned(16)));
static int failures;

static void check(const char *what, uint64_t got, uint64_t want)
{
    puts_dbg(got == want ? "OK " : "FAIL ");
    puts_dbg(what);
    puts_dbg(" got ");
    put_hex(got);
    if (got != want) {
        puts_dbg(" want ");
        put_hex(want);
        failures++;
    }
    puts_dbg("\n");
}

static void put32(unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(vmcb + off) = v; /* VMRUN reads it */
}

static void put64_in(uint8_t *v_mcb, unsigned off, uint64_t v)
{
    *(volatile uint64_t *)(v_mcb + off) = v; /* VMRUN reads it */
}

static uint64_t get64_in(uint8_t *v_mcb, unsigned off)
{
    return *(volatile uint64_t *)(v_mcb + off); /* #VMEXIT wrote it */
}

static void put64(unsigned off, uint64_t v)
{
    *(volatile uint64_t *)(vmcb + off) = v; /* VMRUN reads it */
}

static uint64_t get64(unsigned off)
{
    return *(volatile uint64_t *)(vmcb + off); /* #VMEXIT wrote it */
}

static void put_seg(unsigned off, uint16_t sel, uint16_t attrib)
{
    *(volatile uint16_t *)(vmcb + off) = sel; /* VMRUN reads it */
    *(volatile uint16_t *)(vmcb + off + 2) = attrib; /* ditto */
    put32(off + 4, 0xffffffff);
    put64(off + 8, 0);
}

static void idt_gate(int vec, const void *handler)
{
    l2_idt[vec] = flat32_interrupt_gate(handler);
}

static int irr_bit(const uint32_t *page, int vec)
{
    return (page[(0x200 + (vec / 32) * 16) / 4] >> (vec % 32)) & 1;
}

/* L1's own local APIC (L0's), outside guest mode */
static void apic_l1(unsigned reg, uint32_t v)
{
    *(volatile uint32_t *)(APIC_BAR + reg) = v;     /* MMIO */
}

static int isr_empty(const uint32_t *page)
{
    for (int i = 0; i < 8; i++) {
        if (page[(0x100 + i * 16) / 4]) {
            return 0;
        }
    }
    return 1;
}

/* Run L2 until its next exit; the exit code */
static uint64_t run(void)
{
    svm_run((uint32_t)vmcb);
    return get64(VMCB_EXIT_CODE);
}

static void expect_exit(const char *what, uint64_t code, uint64_t info1,
                        uint64_t info2, void *rip)
{
    puts_dbg("-- ");
    puts_dbg(what);
    puts_dbg("\n");
    uint64_t got = run();

    check("exit code", got, code);
    if (got != code) {
        /* L2 is not where the next steps expect it (no AVIC?): stop */
        puts_dbg("DONE failures\n");
        finish(1);
    }
    check("exit info 1", get64(VMCB_EXIT_INFO1), info1);
    check("exit info 2", get64(VMCB_EXIT_INFO2), info2);
    check("rip", get64(VMCB_RIP), (uint32_t)rip);
}

static void setup(void)
{
    wrmsr(0xc0000080, rdmsr(0xc0000080) | (1u << 12));    /* EFER.SVME */
    wrmsr(0xc0010117, (uint32_t)hsave);                    /* VM_HSAVE_PA */

    /* intercept HLT (bit 24) and VMRUN (bit 32) */
    put64(VMCB_INTERCEPT, (1ull << 24) | (1ull << 32));
    put32(VMCB_ASID, 1);
    put32(VMCB_INT_CTL, INT_CTL_V_INTR_MASKING | INT_CTL_AVIC_ENABLE);
    put64(VMCB_NESTED_CTL, 1);
    put64(VMCB_AVIC_BAR, APIC_BAR);
    put64(VMCB_AVIC_BACKING, (uint32_t)backing0);
    put64(VMCB_AVIC_LOGICAL, (uint32_t)logical);
    put64(VMCB_AVIC_PHYSICAL, (uint32_t)physical | 2);     /* max index 2 */

    /* APIC ID 0 runs (host APIC ID 0), 1 is valid but not running */
    physical[0] = PHYS_VALID | PHYS_RUNNING | (uint32_t)backing0;
    physical[1] = PHYS_VALID | (uint32_t)backing1;
    backing1[0x20 / 4] = 1u << 24;

    put_seg(VMCB_CS, 0x08, 0xc9b);
    put_seg(VMCB_DS, 0x10, 0xc93);
    put_seg(VMCB_ES, 0x10, 0xc93);
    put_seg(VMCB_SS, 0x10, 0xc93);
    put32(VMCB_GDTR + 4, gdt_desc.limit);
    put64(VMCB_GDTR + 8, gdt_desc.base);
    idt_gate(0x40, l2_irq_40);
    idt_gate(0x41, l2_irq_41);
    idt_gate(0x45, l2_irq_45);
    idt_gate(0x47, l2_irq_47);
    put32(VMCB_IDTR + 4, sizeof(l2_idt) - 1);
    put64(VMCB_IDTR + 8, (uint32_t)l2_idt);
    put64(VMCB_EFER, 1u << 12);
    put64(VMCB_CR0, 0x11);
    put64(VMCB_DR7, 0x400);
    put64(VMCB_DR6, 0xffff0ff0);
    put64(VMCB_RFLAGS, 2);
    put64(VMCB_RIP, (uint32_t)l2_entry);
    put64(VMCB_RSP, (uint32_t)(l2_stack + sizeof(l2_stack)));
}

static uint64_t l2_gdt[6] __attribute__((aligned(8)));
static uint32_t tss_a[26];

/*
 * A task switch accesses only some fields of its TSSes; with a TSS in
 * the page, only the registers under those fields are classed: the old
 * TSS's unwritten fields over APR and PPR (faults) and the new TSS's
 * unread ones over APR must not exit.
 */
static void task_switches(void)
{
    uint32_t saved[0x80 / 4];
    uint32_t apic_page = APIC_BAR;
    unsigned i;

    for (i = 0; i < 0x80 / 4; i++) {
        saved[i] = backing0[0x80 / 4 + i];
    }
    l2_gdt[1] = FLAT32_CODE_DESC;
    l2_gdt[2] = FLAT32_DATA_DESC;
    l2_gdt[3] = flat32_system_desc(apic_page + 0x90, 0x67, 0x9);
    l2_gdt[4] = flat32_system_desc((uint32_t)tss_a, 0x67, 0x9);
    l2_gdt[5] = flat32_system_desc(apic_page + 0x84, 0x67, 0x9);
    put32(VMCB_GDTR + 4, sizeof(l2_gdt) - 1);
    put64(VMCB_GDTR + 8, (uint32_t)l2_gdt);
    tss_a[0x20 / 4] = (uint32_t)l2_task_a_target;
    tss_a[0x24 / 4] = 2;
    tss_a[0x38 / 4] = (uint32_t)(l2_stack + sizeof(l2_stack));
    tss_a[0x48 / 4] = 0x10;                     /* ES */
    tss_a[0x4c / 4] = 0x08;                     /* CS */
    tss_a[0x50 / 4] = 0x10;                     /* SS */
    tss_a[0x54 / 4] = 0x10;                     /* DS */

    puts_dbg("-- JMP to a task from an old TSS at APIC + 0x90\n");
    put64(VMCB_RIP, (uint32_t)l2_task_a);
    expect_exit("RRD's trap, in the new task", EXIT_AVIC_NOACCEL,
                0x1000000c0ull, 0, l2_task_a_target);
    expect_exit("LDR's trap", EXIT_AVIC_NOACCEL, 0x1000000d0ull, 0,
                l2_task_a_target);
    expect_exit("DFR's trap", EXIT_AVIC_NOACCEL, 0x1000000e0ull, 0,
                l2_task_a_target);
    check("then the new task's HLT", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_task_a_target);
    check("old EIP saved in EOI", backing0[0xb0 / 4],
          (uint32_t)l2_task_a_next);
    check("old ESI saved in LDR", backing0[0xd0 / 4], 0x5a5a1234);
    check("old SS saved in DFR's low half", backing0[0xe0 / 4] & 0xffff,
          0x10);
    check("the old TSS's busy bit cleared", (l2_gdt[3] >> 41) & 1, 0);
    check("the new TSS's busy bit set", (l2_gdt[4] >> 41) & 1, 1);

    puts_dbg("-- CALL to a task whose TSS is at APIC + 0x84\n");
    backing0[0xa4 / 4] = (uint32_t)l2_task_b_target;   /* EIP */
    backing0[0xa8 / 4] = 2;                             /* EFLAGS */
    backing0[0xac / 4] = 0x600dcafe;                    /* EAX */
    backing0[0xbc / 4] = (uint32_t)(l2_stack + sizeof(l2_stack));
    backing0[0xcc / 4] = 0x10;                          /* ES */
    backing0[0xd0 / 4] = 0x08;                          /* CS */
    backing0[0xd4 / 4] = 0x10;                          /* SS */
    backing0[0xd8 / 4] = 0x10;                          /* DS */
    backing0[0xdc / 4] = 0;                             /* FS */
    backing0[0xe0 / 4] = 0;                             /* GS */
    backing0[0xe4 / 4] = 0;                             /* LDT */
    backing0[0xe8 / 4] = 0;                             /* T */
    put64(VMCB_RIP, (uint32_t)l2_task_b);
    check("the new task's HLT, no exit before", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_task_b_target + 5);
    check("EAX loaded from the page", l2_task_b_eax, 0x600dcafe);
    check("the link in TPR's bytes 4-5", backing0[0x84 / 4] & 0xffff,
          0x20);
    check("NT set (a nested task)", (get64(VMCB_RFLAGS) >> 14) & 1, 1);

    for (i = 0; i < 0x80 / 4; i++) {
        backing0[0x80 / 4 + i] = saved[i];
    }
    put32(VMCB_GDTR + 4, gdt_desc.limit);
    put64(VMCB_GDTR + 8, gdt_desc.base);
    put64(VMCB_CR0, 0x11);                      /* the switch set TS */
    put64(VMCB_RFLAGS, 2);
    put64(VMCB_RSP, (uint32_t)(l2_stack + sizeof(l2_stack)));
    (void)l2_task_a;
    (void)l2_task_b;
}


void l1_main(void)
{
    /* both 8259s masked: the firmware's PIT ticks would end L2 early */
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
    setup();

    expect_exit("SVR write: trap after the write", EXIT_AVIC_NOACCEL,
                0x1000000f0ull, 0, l2_svr_end);
    check("SVR in the backing page", backing0[0xf0 / 4], 0x1ff);
    (void)l2_svr;

    expect_exit("timer count read: fault before the read", EXIT_AVIC_NOACCEL,
                0x390, 0, l2_ccr);
    put64(VMCB_RAX, 0xabcd);                    /* emulate the read */
    put64(VMCB_RIP, get64(VMCB_RIP) + 5);

    expect_exit("ICR write to a vCPU not running", EXIT_AVIC_INCOMPLETE_IPI,
                0x0100000000000041ull, (1ull << 32) | 1, l2_ipi1_end);
    check("emulated timer count seen by L2", l2_ccr_value, 0xabcd);
    check("PPR from the TPR write", l2_ppr_value, 0x20);
    check("TPR from the last write", backing0[0x80 / 4], 0x30);
    check("self-IPI 0x40 taken", l2_irq_seen & 1, 1);
    check("its IRR bit clear", irr_bit(backing0, 0x40), 0);
    check("ISR clear after the accelerated EOI", isr_empty(backing0), 1);
    check("IRR 0x41 set in the target's page", irr_bit(backing1, 0x41), 1);
    check("ICR low in the sender's page", backing0[0x300 / 4], 0x41);
    check("ICR high in the sender's page", backing0[0x310 / 4], 1u << 24);
    check("V_TPR follows the TPR write", get64(VMCB_INT_CTL) & 0xf, 3);
    put32(VMCB_INT_CTL, (uint32_t)get64(VMCB_INT_CTL) & ~0xfu);

    expect_exit("ICR write to an invalid target", EXIT_AVIC_INCOMPLETE_IPI,
                0x0200000000000042ull, (2ull << 32) | 2, l2_ipi2_end);
    check("V_TPR from the page's TPR at VMRUN", get64(VMCB_INT_CTL) & 0xf, 3);

    expect_exit("byte write to SVR: trap after the write",
                EXIT_AVIC_NOACCEL, 0x1000000f0ull, 0, l2_svr_byte_end);
    check("byte read of SVR, from the page", l2_byte_value & 0xff, 0x01);
    check("word read of SVR, from the page", l2_word_value & 0xffff, 0x1ff);
    check("SVR after the byte write", backing0[0xf0 / 4], 0x1fe);
    (void)l2_svr_byte;

    expect_exit("word write to ICR low: the IPI, incomplete",
                EXIT_AVIC_INCOMPLETE_IPI, 0x0100000000000043ull,
                (1ull << 32) | 1, l2_icr_word_end);
    check("IRR 0x43 set in the target's page", irr_bit(backing1, 0x43), 1);

    expect_exit("byte read of the timer count: fault", EXIT_AVIC_NOACCEL,
                0x390, 0, l2_ccr_byte);
    put64(VMCB_RIP, get64(VMCB_RIP) + 5);

    expect_exit("dword read across the timer's counts: fault at the second",
                EXIT_AVIC_NOACCEL, 0x390, 0, l2_across);
    check("dword read across DFR and SVR, from the page", l2_across_value,
          0x01fe0000);
    put64(VMCB_RIP, (uint32_t)l2_byte);

    puts_dbg("-- HLT\n");
    check("exit code", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_hlt);
    put64(VMCB_RIP, get64(VMCB_RIP) + 1);
    backing0[(0x200 + 2 * 16) / 4] |= 1u << (0x45 - 64);   /* post 0x45 */

    puts_dbg("-- VMRUN with 0x45 in IRR\n");
    check("exit code", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_done);
    check("0x45 delivered at VMRUN", (l2_irq_seen >> 5) & 1, 1);
    check("ISR clear again", isr_empty(backing0), 1);

    puts_dbg("-- V_IRQ with AVIC enabled: ignored\n");
    backing0[0x80 / 4] = 0x30;                  /* TPR class 3 */
    put32(VMCB_INT_CTL, INT_CTL_V_INTR_MASKING | INT_CTL_AVIC_ENABLE |
          INT_CTL_V_IRQ | (15u << 16));         /* V_TPR 0, priority 15 */
    put32(VMCB_INT_CTL + 4, 0x47);              /* V_INTR_VECTOR */
    put64(VMCB_RIP, (uint32_t)l2_virq);
    check("exit code", run(), EXIT_HLT);
    check("V_TPR from the page at VMRUN", get64(VMCB_INT_CTL) & 0xf, 3);
    check("V_IRQ 0x47 not taken (AVIC ignores V_IRQ)",
          (l2_irq_seen >> 7) & 1, 0);
    put32(VMCB_INT_CTL, INT_CTL_V_INTR_MASKING | INT_CTL_AVIC_ENABLE);
    backing0[0x80 / 4] = 0;

    puts_dbg("-- single-stepped self-IPI write, #DB intercepted\n");
    put32(VMCB_INTERCEPT_EXC, 1u << 1);         /* #DB */
    put64(VMCB_RIP, (uint32_t)l2_tf);
    check("exit code", run(), EXIT_EXCP_DB);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_tf_end);
    check("IRR 0x48 set before the #DB exit", irr_bit(backing0, 0x48), 1);
    put32(VMCB_INTERCEPT_EXC, 0);
    put64(VMCB_RFLAGS, get64(VMCB_RFLAGS) & ~0x100ull);    /* TF */

    puts_dbg("-- MASKMOVDQU: two stores into ICR low, one IPI\n");
    put64(VMCB_CR4, 1u << 9);                   /* OSFXSR: SSE in L2 */
    put64(VMCB_RIP, (uint32_t)l2_maskmov);
    check("exit code", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_maskmov_end);
    check("ICR low after both stores", backing0[0x300 / 4], 0x00040049);
    check("IRR 0x49 set", irr_bit(backing0, 0x49), 1);

    puts_dbg("-- a store across LDR and DFR: both land, two trap exits\n");
    backing0[0xd0 / 4] = 0x00000001;            /* LDR */
    backing0[0xe0 / 4] = 0xf0000000;            /* DFR */
    backing0[0xe8 / 4] = 0;                     /* DFR, reserved */
    backing0[0xf0 / 4] = 0x100;                 /* SVR */
    put64(VMCB_RIP, (uint32_t)l2_cross);
    expect_exit("LDR's trap", EXIT_AVIC_NOACCEL, 0x1000000d0ull, 0,
                l2_cross_end);
    check("LDR bytes 2-3 written", backing0[0xd0 / 4], 0x12340001);
    check("DFR bytes 0-1 written", backing0[0xe0 / 4], 0xf000ffff);
    expect_exit("DFR's trap, at the next VMRUN", EXIT_AVIC_NOACCEL,
                0x1000000e0ull, 0, l2_cross_end);
    expect_exit("MASKMOVDQU into DFR and SVR: DFR's trap",
                EXIT_AVIC_NOACCEL, 0x1000000e0ull, 0, l2_cross_mask_end);
    check("DFR byte 8 written", backing0[0xe8 / 4], 0xaa);
    check("SVR byte 0 written", backing0[0xf0 / 4], 0x1ff);
    expect_exit("SVR's trap, at the next VMRUN", EXIT_AVIC_NOACCEL,
                0x1000000f0ull, 0, l2_cross_mask_end);
    check("then L2's HLT", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_cross_mask_end);
    (void)l2_cross;

    puts_dbg("-- REP STOSL, DF=1, from DFR into LDR: an exit per iteration\n");
    backing0[0xdc / 4] = 0;                     /* LDR, reserved */
    put64(VMCB_RIP, (uint32_t)l2_rep_start);
    expect_exit("DFR's iteration: trap, rIP at the REP", EXIT_AVIC_NOACCEL,
                0x1000000e0ull, 0, l2_rep);
    check("DFR written", backing0[0xe0 / 4], 0x5a5a5a5a);
    check("LDR not yet written", backing0[0xdc / 4], 0);
    expect_exit("LDR's iteration: trap, rIP past the REP", EXIT_AVIC_NOACCEL,
                0x1000000d0ull, 0, l2_rep_end);
    check("LDR written", backing0[0xdc / 4], 0x5a5a5a5a);
    check("then L2's HLT", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_rep_end + 1);
    (void)l2_rep;

    puts_dbg("-- LOCK OR into SVR, misaligned: one trap, rIP past it\n");
    backing0[0xf0 / 4] = 0x1ff;
    put64(VMCB_RIP, (uint32_t)l2_lock_svr);
    expect_exit("SVR's trap", EXIT_AVIC_NOACCEL, 0x1000000f0ull, 0,
                l2_lock_svr_end);
    check("SVR's byte 3 or'ed", backing0[0xf0 / 4], 0x010001ff);
    check("then L2's HLT", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_lock_svr_end);
    (void)l2_lock_svr;

    puts_dbg("-- FNSAVE over the LVTs and TMICT: lands, a trap each\n");
    backing0[0x320 / 4] = 0xdead0000;
    put64(VMCB_RIP, (uint32_t)l2_fnsave);
    for (uint32_t r = 0x320; r <= 0x380; r += 0x10) {
        expect_exit("its trap, rIP past the FNSAVE", EXIT_AVIC_NOACCEL,
                    0x100000000ull | r, 0, l2_fnsave_end);
    }
    check("LVT timer written (FCW, zero-extended)",
          backing0[0x320 / 4] >> 16, 0);
    check("then L2's HLT", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_fnsave_end);

    puts_dbg("-- FNSAVE from LVT error into the current count: a fault\n");
    backing0[0x370 / 4] = 0xdead0000;
    put64(VMCB_RIP, (uint32_t)l2_fnsave_fault);
    expect_exit("the current count's fault (not LVT error's), rIP at it",
                EXIT_AVIC_NOACCEL, 0x100000390ull, 0, l2_fnsave_fault);
    check("LVT error not written", backing0[0x370 / 4], 0xdead0000);

    puts_dbg("-- FLDENV from EOI and RRD: a read, no exit\n");
    put64(VMCB_RIP, (uint32_t)l2_fldenv);
    check("L2's HLT first", run(), EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_fldenv_end);

    puts_dbg("-- far CALL from RRD into EOI, AVIC off at the next VMRUN\n");
    backing0[(0x100 + 2 * 16) / 4] = 1u << (0x50 - 64);     /* ISR 0x50 */
    put64(VMCB_RIP, (uint32_t)l2_farcall);
    expect_exit("RRD's trap", EXIT_AVIC_NOACCEL, 0x1000000c0ull, 0,
                l2_farcall_target);
    put32(VMCB_INT_CTL, INT_CTL_V_INTR_MASKING);            /* AVIC off */
    expect_exit("EOI's trap, not the EOI itself", EXIT_AVIC_NOACCEL,
                0x1000000b0ull, 0, l2_farcall_target);
    check("ISR 0x50 still set (KVM does the EOI)",
          backing0[(0x100 + 2 * 16) / 4], 1u << (0x50 - 64));
    backing0[(0x100 + 2 * 16) / 4] = 0;
    put32(VMCB_INT_CTL, INT_CTL_V_INTR_MASKING | INT_CTL_AVIC_ENABLE);
    put64(VMCB_RSP, (uint32_t)(l2_stack + sizeof(l2_stack)));
    (void)l2_farcall;

    puts_dbg("-- INT 0x41 pushing into SVR: a trap once it is delivered\n");
    backing0[0xf0 / 4] = 0x1ff;
    backing0[0xf4 / 4] = 0;
    put64(VMCB_RIP, (uint32_t)l2_int);
    expect_exit("SVR's trap, rIP at the handler", EXIT_AVIC_NOACCEL,
                0x1000000f0ull, 0, l2_irq_41);
    check("return EIP pushed into SVR's bytes 4-7", backing0[0xf4 / 4],
          (uint32_t)l2_int_end);
    check("SVR itself untouched", backing0[0xf0 / 4], 0x1ff);
    put64(VMCB_RIP, (uint32_t)l2_just_hlt);
    put64(VMCB_RSP, (uint32_t)(l2_stack + sizeof(l2_stack)));
    check("then L2's HLT", run(), EXIT_HLT);
    (void)l2_int;

    puts_dbg("-- the store across LDR and DFR, then another VMCB runs\n");
    put64(VMCB_RIP, (uint32_t)l2_cross);
    expect_exit("LDR's trap", EXIT_AVIC_NOACCEL, 0x1000000d0ull, 0,
                l2_cross_end);
    for (unsigned i = 0; i < sizeof(vmcb); i++) {
        vmcb2[i] = vmcb[i];
    }
    put64_in(vmcb2, VMCB_RIP, (uint32_t)l2_just_hlt);
    svm_run((uint32_t)vmcb2);
    check("the other VMCB: its HLT, no carried trap",
          get64_in(vmcb2, VMCB_EXIT_CODE), EXIT_HLT);
    expect_exit("DFR's trap, at the next VMRUN of its own VMCB",
                EXIT_AVIC_NOACCEL, 0x1000000e0ull, 0, l2_cross_end);

    puts_dbg("-- the store again, and L1 moves L2 elsewhere\n");
    put64(VMCB_RIP, (uint32_t)l2_cross);
    expect_exit("LDR's trap", EXIT_AVIC_NOACCEL, 0x1000000d0ull, 0,
                l2_cross_end);
    put64(VMCB_RIP, (uint32_t)l2_just_hlt);
    check("DFR's trap dropped: the VMCB no longer holds its exit", run(),
          EXIT_HLT);
    check("rip", get64(VMCB_RIP), (uint32_t)l2_just_hlt);

    task_switches();

    puts_dbg("-- EOI under a data watchpoint: the EOI, then #DB\n");
    backing0[(0x100 + 2 * 16) / 4] = 1u << (0x50 - 64);     /* ISR 0x50 */
    put32(VMCB_INTERCEPT_EXC, 1u << 1);                     /* #DB */
    put64(VMCB_RIP, (uint32_t)l2_dbw);
    check("exit code: #DB", run(), 0x41);
    check("rip: after the store", get64(VMCB_RIP), (uint32_t)l2_dbw_end);
    check("the EOI done: ISR 0x50 clear", isr_empty(backing0), 1);
    check("DR6.B0", get64(VMCB_DR6) & 1, 1);
    put32(VMCB_INTERCEPT_EXC, 0);
    put64(VMCB_DR7, 0x400);
    backing0[(0x100 + 2 * 16) / 4] = 0;
    (void)l2_dbw;

    puts_dbg("-- HLT with a blocked vector and its request pending\n");
    apic_l1(0xf0, 0x1ff);                       /* L1's own APIC */
    apic_l1(0x3e0, 0xb);                        /* timer: divide by 1 */
    apic_l1(0x320, 0x50);                       /* one-shot, vector 0x50 */
    put64(VMCB_INTERCEPT, 1ull | (1ull << 32)); /* INTR, VMRUN; no HLT */
    put64(VMCB_RIP, (uint32_t)l2_tpr_halt);
    apic_l1(0x380, 500000000);                  /* 0.5 s: L2 gets there */
    __asm__ volatile("sti" : : : "memory");     /* host IF: INTR exits */
    check("exit code", run(), EXIT_INTR);
    __asm__ volatile("cli" : : : "memory");
    check("L2 reached its HLT before the timer", l2_halting, 1);
    check("halted until the interrupt (no wake-up)", l2_woke, 0);
    check("IRR 0x46 still set (TPR blocks it)", irr_bit(backing0, 0x46), 1);
    apic_l1(0x320, 1u << 16);                   /* timer masked */

    puts_dbg("-- VMRUN with the backing page beyond MAXPHYADDR\n");
    put64(VMCB_AVIC_BACKING, 1ull << 51);
    put64(VMCB_RIP, (uint32_t)l2_just_hlt);
    check("exit code", run(), EXIT_ERR);
    check("rIP: L2's, not the VMRUN's", get64(VMCB_RIP),
          (uint32_t)l2_just_hlt);

    puts_dbg(failures ? "DONE failures\n" : "DONE 0\n");
    outb(0xf4, failures ? 1 : 0);
}
