/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * inject-race: an interrupt that VMRUN injects (EVENTINJ, type INTR)
 * is delivered to L2 once, however often QEMU's main loop kicks the
 * vCPU meanwhile, under MTTCG (two vCPUs, the second left waiting for
 * its SIPI, so TCG translates for a multi-vCPU guest as for Linux L1s).
 *
 * QEMU 10.0 delivers the injected vector inside VMRUN but leaves it
 * in the vCPU's exception_index.  The next time the CPU loop leaves
 * the translated code for an exit request with nothing it can take (an
 * interrupt raised from another thread while L2 runs with IF clear; an
 * AVIC doorbell in the nested test bed), it delivers that stale index again,
 * as an exception, regardless of IF: L2 re-enters its interrupt
 * handler, as Linux L2s did inside a spinlock (a hang) or on a nested
 * page fault (a failed VMRUN).
 *
 * CPU 0 is an L1 hypervisor with an L2 that shares its flat memory:
 * each round VMRUN injects vector 0x50; L2's handler spins a while with
 * IF clear, returns, L2 takes any pending timer interrupt and leaves by
 * VMMCALL.  The kicks come from the PIT (channel 0 at about 12 kHz,
 * through the 8259 and LVT0 as ExtINT): QEMU raises them from its main
 * loop thread, so each one is an exit request to the vCPU thread (an
 * IPI from another vCPU is not: it comes as an APIC poll request, which
 * the CPU loop takes, and that resets exception_index).  L1 runs with
 * IF clear: the ticks are taken in L2 only.  Results go to the debug
 * console (port 0xe9): "ROUNDS <n> INJECTED <m> NESTED <k> TICKS <t>
 * WINDOW <w>" and "DONE <failures>" (failures: handler re-entries plus
 * deliveries beyond one per round; w: handlers during which the PIT
 * raised IRQ 0, i.e. kicks that could have shown the bug); "FAIL ..."
 * ends the run early if VMRUN exits for another reason, an injection is
 * lost or no tick came while a handler ran.
 * isa-debug-exit (port 0xf4): QEMU exits with 1 if every injection was
 * delivered once, with 3 otherwise.
 */

#include "inject-race.h"
#include "../flat32.h"

#define APIC_BASE       0xfee00000u
#define APIC_SVR        0xf0
#define APIC_LVT0       0x350
#define INJECT_VECTOR   0x50
#define PIC_VECTOR_BASE 0x70            /* IRQ 0, the PIT: 0x70 */
#define PIT_DIVISOR     100             /* 1.193182 MHz / 100 */
#define ROUNDS          20000

#define EXIT_VMMCALL    0x81
#define EVENTINJ_VALID  (1u << 31)      /* type 0: external interrupt */

extern uint8_t l2_stack_top[];

static uint8_t vmcb[4096] __attribute__((aligned(4096)));
static uint8_t hsave[4096] __attribute__((aligned(4096)));
static uint64_t l2_idt[256];

static void apic_write(uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(APIC_BASE + reg) = v;     /* MMIO */
}

static void put32(unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(vmcb + off) = v; /* VMRUN reads it */
}

static void put64(unsigned off, uint64_t v)
{
    *(volatile uint64_t *)(vmcb + off) = v; /* VMRUN reads it */
}

static void put_seg(unsigned off, uint16_t sel, uint16_t attrib)
{
    *(volatile uint16_t *)(vmcb + off) = sel; /* VMRUN reads it */
    *(volatile uint16_t *)(vmcb + off + 2) = attrib; /* ditto */
    put32(off + 4, 0xffffffff);
    put64(off + 8, 0);
}

static void l2_gate(int vec, void (*handler)(void))
{
    l2_idt[vec] = flat32_interrupt_gate(handler);
}

/* the 8259s: vectors 0x70-0x7f, only IRQ 0 unmasked; the PIT's channel
 * 0 as a rate generator; LVT0 passes the 8259's output as ExtINT */
static void start_ticks(void)
{
    outb(0x20, 0x11);
    outb(0x21, PIC_VECTOR_BASE);
    outb(0x21, 0x04);
    outb(0x21, 0x01);
    outb(0xa0, 0x11);
    outb(0xa1, PIC_VECTOR_BASE + 8);
    outb(0xa1, 0x02);
    outb(0xa1, 0x01);
    outb(0x21, 0xfe);
    outb(0xa1, 0xff);
    outb(0x43, 0x34);
    outb(0x40, PIT_DIVISOR & 0xff);
    outb(0x40, PIT_DIVISOR >> 8);
    apic_write(APIC_LVT0, 0x700);
}

static void setup_l2(void)
{
    wrmsr(0xc0000080, rdmsr(0xc0000080) | (1u << 12));    /* EFER.SVME */
    wrmsr(0xc0010117, (uint32_t)hsave);                    /* VM_HSAVE_PA */

    /* intercept VMRUN (bit 32) and VMMCALL (bit 33), nothing else:
     * L2 takes the ticks itself, when its own IF allows */
    put64(VMCB_INTERCEPT, (1ull << 32) | (1ull << 33));
    put32(VMCB_ASID, 1);
    put32(VMCB_INT_CTL, 0);
    put_seg(VMCB_CS, 0x08, 0xc9b);
    put_seg(VMCB_DS, 0x10, 0xc93);
    put_seg(VMCB_ES, 0x10, 0xc93);
    put_seg(VMCB_SS, 0x10, 0xc93);
    put32(VMCB_GDTR + 4, gdt_desc.limit);
    put64(VMCB_GDTR + 8, gdt_desc.base);
    l2_gate(INJECT_VECTOR, l2_injected);
    l2_gate(PIC_VECTOR_BASE, l2_tick);
    put32(VMCB_IDTR + 4, sizeof(l2_idt) - 1);
    put64(VMCB_IDTR + 8, (uint32_t)l2_idt);
    put64(VMCB_EFER, 1u << 12);
    put64(VMCB_CR0, 0x11);
    put64(VMCB_DR7, 0x400);
    put64(VMCB_DR6, 0xffff0ff0);
}

void bsp_main(void)
{
    uint32_t injected, nested, ticks, window, failures;

    apic_write(APIC_SVR, 0x1ff);
    setup_l2();
    start_ticks();

    for (uint32_t i = 0; i < ROUNDS; i++) {
        uint64_t code;

        put64(VMCB_RIP, (uint32_t)l2_entry);
        put64(VMCB_RSP, (uint32_t)l2_stack_top);
        put64(VMCB_RFLAGS, 0x202);                         /* IF set */
        put32(VMCB_EVENT_INJ, EVENTINJ_VALID | INJECT_VECTOR);
        svm_run((uint32_t)vmcb);
        code = *(volatile uint64_t *)(vmcb + VMCB_EXIT_CODE);
        if (code != EXIT_VMMCALL) {
            puts_dbg("FAIL round ");
            put_dec(i);
            puts_dbg(": exit code ");
            put_dec((uint32_t)code);
            puts_dbg("\n");
            finish(1);
        }
    }
    outb(0x21, 0xff);

    injected = injected_count;
    nested = injected_nested;
    ticks = tick_count;
    window = window_ticks;
    failures = nested + (injected > ROUNDS ? injected - ROUNDS : 0);
    puts_dbg("ROUNDS ");
    put_dec(ROUNDS);
    puts_dbg(" INJECTED ");
    put_dec(injected);
    puts_dbg(" NESTED ");
    put_dec(nested);
    puts_dbg(" TICKS ");
    put_dec(ticks);
    puts_dbg(" WINDOW ");
    put_dec(window);
    puts_dbg("\nDONE ");
    put_dec(failures);
    puts_dbg("\n");
    if (injected < ROUNDS) {
        puts_dbg("FAIL an injected interrupt was not delivered\n");
        finish(1);
    }
    if (!ticks || !window) {
        puts_dbg("FAIL no timer tick came while a handler ran\n");
        finish(1);
    }
    finish(failures ? 1 : 0);
}
