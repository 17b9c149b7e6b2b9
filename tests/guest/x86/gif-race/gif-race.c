/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * gif-race: CPU 0's global interrupt flag (GIF) against another vCPU's
 * FPU status loads, under MTTCG.
 *
 * IGNNE# is CPU 0's input, but QEMU 10.0 deasserted it on any vCPU's
 * FPU status load with ES clear (FLDENV, FRSTOR, FXRSTOR, XRSTOR), from
 * that vCPU's thread, by rewriting CPU 0's whole flags word: that could
 * store back a GIF value CPU 0 had just changed.  A write to port F0h,
 * which asserts it, also comes from whichever vCPU executes it.
 *
 * CPU 1 runs FLDENV in a loop, with a port F0h write every 16th time.
 * CPU 0, with EFER.SVME set and IF set, repeats: CLGI, a self-IPI
 * (which GIF clear must hold pending), STGI (after which it must be
 * taken).  A self-IPI taken before STGI, or not taken after it, is a
 * GIF transition undone.  Results go to the debug console (port 0xe9):
 * one "FAIL" line per undone transition as it happens (at most 8), then
 * "LOOPS <n> AP <m>" and "DONE <failures>"; a "FAIL" line ends the run
 * early if CPU 1 does not start or an IPI is lost, or after "DONE" if
 * CPU 1 did not loop meanwhile.
 *
 * Then INIT against GIF: CPU 1 sets EFER.SVME, clears GIF and spins;
 * CPU 0 sends it an INIT.  GIF clear must hold the INIT pending: CPU 1
 * must finish its spin and execute STGI, and must take the INIT right
 * after it (it counts nothing after STGI, and a SIPI then starts it
 * again: it was waiting for one).  One line says what happened:
 * "INIT held" (as it must), "INIT taken while GIF was clear" (QEMU
 * 10.0.13 does that) or "INIT lost after STGI".
 *
 * isa-debug-exit (port 0xf4) ends the run: QEMU exits with 1 if all
 * held, with 3 otherwise.
 */

#include "gif-race.h"
#include "../flat32.h"

#define APIC_BASE       0xfee00000u
#define APIC_SVR        0xf0
#define APIC_EOI        0xb0
#define APIC_ICR_LO     0x300
#define APIC_ICR_HI     0x310
#define IPI_VECTOR      0x40
#define MSR_EFER        0xc0000080u
#define EFER_SVME       (1u << 12)
#define TRAMPOLINE      0x8000u
#define ROUNDS          200000
#define INIT_SPINS      1000    /* CPU 1's spin with GIF clear */
#define WAIT_SPINS      20000000

/* volatile: written by the interrupt handler */
volatile uint32_t ipi_count;
static volatile uint32_t ap_up, ap_stop, ap_loops;  /* volatile: CPU 1 */
/* the INIT phase: CPU 1's progress, CPU 0's INIT */
static volatile uint32_t ap_gif_clear, init_sent, ap_stgi, ap_after_stgi;
static uint64_t idt[256];

static void apic_write(uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(APIC_BASE + reg) = v;     /* MMIO */
}

static void set_gate(int vector, void (*handler)(void))
{
    idt[vector] = flat32_interrupt_gate(handler);
}

static void load_idt(void)
{
    flat32_lidt(idt, 256);
}

static void enable_svm(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(MSR_EFER));
    lo |= EFER_SVME;
    __asm__ volatile("wrmsr" : : "a"(lo), "d"(hi), "c"(MSR_EFER));
}

/*
 * CPU 1: FPU status loads with ES clear, until told to stop; then the
 * INIT phase: GIF clear, a spin CPU 0's INIT must not cut short, STGI,
 * and a count that the INIT taken after STGI stops.
 */
void ap_main(void)
{
    uint8_t env[28];

    __asm__ volatile("fninit; fnstenv %0" : "=m"(env));
    ap_up = 1;
    for (uint32_t n = 0; !ap_stop; n++) {
        __asm__ volatile("fldenv %0" : : "m"(env) : "memory");
        if (!(n & 15)) {
            outb(0xf0, 0);
        }
        ap_loops++;
    }

    enable_svm();
    __asm__ volatile("clgi" : : : "memory");
    ap_gif_clear = 1;
    while (!init_sent) {
        __asm__ volatile("pause");
    }
    for (uint32_t spin = 0; spin < INIT_SPINS; spin++) {
        __asm__ volatile("pause");
    }
    ap_stgi = 1;
    __asm__ volatile("stgi; nop" : : : "memory");
    for (;;) {
        ap_after_stgi++;
        __asm__ volatile("pause");
    }
}

static int start_ap(void)
{
    char *dst = (char *)TRAMPOLINE;

    for (char *p = tramp_start; p < tramp_end; p++) {
        *dst++ = *p;
    }
    apic_write(APIC_ICR_HI, 1u << 24);
    apic_write(APIC_ICR_LO, 0x00004500);                  /* INIT */
    for (int tries = 0; tries < 2 && !ap_up; tries++) {
        apic_write(APIC_ICR_HI, 1u << 24);
        apic_write(APIC_ICR_LO, 0x00004600 | (TRAMPOLINE >> 12)); /* SIPI */
        for (uint32_t spin = 0; spin < 1000000 && !ap_up; spin++) {
            __asm__ volatile("pause");
        }
    }
    return ap_up;
}

/* Wait up to WAIT_SPINS pauses for *flag; its value then */
static uint32_t wait_for(volatile uint32_t *flag)
{
    for (uint32_t spin = 0; spin < WAIT_SPINS && !*flag; spin++) {
        __asm__ volatile("pause");
    }
    return *flag;
}

/*
 * The INIT phase (CPU 1 is in it once ap_stop is set): 0 if GIF clear
 * held CPU 0's INIT until STGI and STGI let it in, 1 otherwise.
 */
static int init_against_gif(void)
{
    uint32_t counted;

    if (!wait_for(&ap_gif_clear)) {
        puts_dbg("FAIL CPU 1 did not clear GIF\n");
        finish(1);
    }
    apic_write(APIC_ICR_HI, 1u << 24);
    apic_write(APIC_ICR_LO, 0x00004500);                  /* INIT */
    init_sent = 1;
    if (!wait_for(&ap_stgi)) {
        puts_dbg("INIT taken while GIF was clear\n");
        return 1;
    }
    /*
     * STGI ends its block, so the INIT comes before CPU 1's first count;
     * then a SIPI starts CPU 1 again (ap_main sets ap_up), which only a
     * CPU waiting for SIPI, after an INIT, accepts.
     */
    for (uint32_t spin = 0; spin < 100000; spin++) {
        __asm__ volatile("pause");
    }
    counted = ap_after_stgi;
    ap_up = 0;
    apic_write(APIC_ICR_HI, 1u << 24);
    apic_write(APIC_ICR_LO, 0x00004600 | (TRAMPOLINE >> 12)); /* SIPI */
    if (counted || !wait_for(&ap_up)) {
        puts_dbg("INIT lost after STGI (counted ");
        put_dec(counted);
        puts_dbg(")\n");
        return 1;
    }
    puts_dbg("INIT held\n");
    return 0;
}

void bsp_main(void)
{
    uint32_t failures = 0, ap_before, ap_after;

    outb(0x21, 0xff);           /* both 8259s masked: the APIC only */
    outb(0xa1, 0xff);
    set_gate(IPI_VECTOR, ipi_handler);
    load_idt();
    apic_write(APIC_SVR, 0x1ff);
    if (!start_ap()) {
        puts_dbg("FAIL CPU 1 did not start\n");
        finish(1);
    }
    enable_svm();
    __asm__ volatile("sti");

    ap_before = ap_loops;
    for (uint32_t i = 0; i < ROUNDS; i++) {
        uint32_t held, taken;

        __asm__ volatile("clgi" : : : "memory");
        /*
         * TCG re-executes an MMIO store as the last instruction of its
         * own translation block, and STGI ends its block: a pending
         * interrupt is looked at right after each.
         */
        apic_write(APIC_ICR_LO, 0x00044000 | IPI_VECTOR);  /* self */
        held = ipi_count;
        __asm__ volatile("stgi; nop" : : : "memory");
        taken = ipi_count;
        if (held != i || taken != i + 1) {
            if (++failures <= 8) {
                puts_dbg("FAIL round ");
                put_dec(i);
                puts_dbg(": IPIs before STGI ");
                put_dec(held);
                puts_dbg(", after ");
                put_dec(taken);
                puts_dbg("\n");
            }
            /* GIF set again, wait for the held IPI: resynchronised */
            for (uint32_t spin = 0; (taken = ipi_count) < i + 1; spin++) {
                if (spin == 1000000) {
                    puts_dbg("FAIL the IPI of that round was lost\n");
                    finish(1);
                }
                __asm__ volatile("stgi; nop; pause" : : : "memory");
            }
            i = taken - 1;
        }
    }
    ap_after = ap_loops;
    ap_stop = 1;

    puts_dbg("LOOPS ");
    put_dec(ROUNDS);
    puts_dbg(" AP ");
    put_dec(ap_after - ap_before);
    puts_dbg("\nDONE ");
    put_dec(failures);
    puts_dbg("\n");
    if (ap_after == ap_before) {
        puts_dbg("FAIL CPU 1 did not loop meanwhile\n");
        finish(1);
    }
    finish(init_against_gif() || failures ? 1 : 0);
}
