/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * ipi-halt: IPIs of the plain (L0) local APIC under MTTCG, to a vCPU
 * that halts: none is lost, none is taken twice.
 *
 * CPU 0 calls CPU 1 as Linux's smp_call_function_single() does: with
 * interrupts disabled it sends vector 0xfb and spins until CPU 1's
 * handler has counted it, ROUNDS times.  CPU 1 meanwhile goes round
 * idle states, in turn: STI;HLT (Linux's safe_halt), spinning with IF
 * set, spinning with IF clear, and sending IPIs to CPU 0 (vector 0xf0,
 * taken in CPU 0's short STI windows), so that every delivery meets
 * every state and both APICs send at once.  During the first half CPU
 * 1's LAPIC timer runs periodically (vector 0xef: a second source
 * raising the same CPU's interrupt, from QEMU's timer thread); in the
 * second half it is off, so a lost wake-up is not hidden by the next
 * tick.  In x2APIC mode (CPUID has x2APIC) through the MSRs, otherwise
 * through the APIC page.
 *
 * Results on the debug console (port 0xe9): "MODE x2apic|xapic", a
 * "LATE <round>" line for a call not taken within WAIT_SPINS (a
 * diagnosis, not a failure; CPU 0 keeps waiting), "CALLS <n> TAKEN <m>
 * NOISE <s> TAKEN <t> TICKS <k>" (noise IPIs merge while one is
 * pending, so t <= s) and "DONE <failures>".  A lost IPI
 * leaves CPU 0 waiting (the caller's timeout fails the run).
 * isa-debug-exit (port 0xf4): QEMU exits with 1 if all passed, 3
 * otherwise.
 */

#include "ipi-halt.h"
#include "../flat32.h"

#define APIC_BASE       0xfee00000u
#define APIC_EOI        0xb0
#define APIC_SVR        0xf0
#define APIC_ICR_LO     0x300
#define APIC_ICR_HI     0x310
#define APIC_LVT_TIMER  0x320
#define APIC_TIMER_INIT 0x380
#define APIC_TIMER_DIV  0x3e0
#define MSR_APIC_BASE   0x1b
#define TRAMPOLINE      0x8000u
#define CALL_VECTOR     0xfb
#define NOISE_VECTOR    0xf0
#define TIMER_VECTOR    0xef
#define ROUNDS          40000
#define WAIT_SPINS      50000000u
/* the timer's period in APIC bus cycles (QEMU: 1 ns each, divide by 1) */
#define TIMER_PERIOD    100000u

/* volatile: counted by the handlers, read by the other CPU */
volatile uint32_t calls_taken, timer_ticks, noise_taken, x2apic_mode;
static volatile uint32_t ap_up, ap_stop, timer_off, noise_sent; /* other CPU */
/* what CPU 1 did when CPU 0 last found a call late */
static volatile uint32_t ap_phase;
static uint64_t idt[256];

static void pause(void)
{
    __asm__ volatile("pause" : : : "memory");
}

static void apic_write(uint32_t reg, uint32_t v)
{
    if (x2apic_mode) {
        wrmsr(0x800 + (reg >> 4), v);
    } else {
        *(volatile uint32_t *)(APIC_BASE + reg) = v;     /* MMIO */
    }
}

static void send_ipi(uint32_t dest, uint32_t lo)
{
    if (x2apic_mode) {
        wrmsr(0x830, (uint64_t)dest << 32 | lo);
    } else {
        apic_write(APIC_ICR_HI, dest << 24);
        apic_write(APIC_ICR_LO, lo);
    }
}

/* CPUID 1 ECX bit 21: x2APIC */
static int cpu_has_x2apic(void)
{
    uint32_t a = 1, b, c = 0, d;

    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return (c >> 21) & 1;
}

/* this CPU's IDT and APIC (in the mode CPU 0 chose) */
static void cpu_setup(void)
{
    flat32_lidt(idt, 256);
    if (x2apic_mode) {
        wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | (3u << 10));
    }
    apic_write(APIC_SVR, 0x1ff);
}

static void spin(uint32_t n)
{
    for (volatile uint32_t i = 0; i < n; i++) {   /* plain arithmetic */
    }
}

/* CPU 1: the idle states, in turn, until CPU 0 is done */
void ap_main(void)
{
    uint32_t turn = 0;

    cpu_setup();
    apic_write(APIC_TIMER_DIV, 0xb);                    /* divide by 1 */
    apic_write(APIC_LVT_TIMER, TIMER_VECTOR | (1u << 17)); /* periodic */
    apic_write(APIC_TIMER_INIT, TIMER_PERIOD);
    ap_up = 1;
    while (!ap_stop) {
        if (timer_off == 1) {
            apic_write(APIC_TIMER_INIT, 0);
            apic_write(APIC_LVT_TIMER, TIMER_VECTOR | (1u << 16)); /* mask */
            timer_off = 2;
        }
        ap_phase = turn % 6;
        switch (turn % 6) {
        case 0:
        case 3:
            __asm__ volatile("sti; hlt; cli" : : : "memory");
            break;
        case 1:
            __asm__ volatile("sti" : : : "memory");
            spin(100);
            __asm__ volatile("cli" : : : "memory");
            break;
        case 2:
            spin(100);                      /* IF clear */
            __asm__ volatile("sti; nop; cli" : : : "memory");
            break;
        case 4:
            noise_sent++;
            send_ipi(0, NOISE_VECTOR);
            __asm__ volatile("sti; hlt; cli" : : : "memory");
            break;
        case 5:
            __asm__ volatile("sti; pause; pause; cli" : : : "memory");
            break;
        }
        turn++;
    }
    for (;;) {
        __asm__ volatile("sti; hlt" : : : "memory");  /* CPU 0's last call */
    }
}

static int start_ap(void)
{
    char *dst = (char *)TRAMPOLINE;

    for (char *p = tramp_start; p < tramp_end; p++) {
        *dst++ = *p;
    }
    send_ipi(1, 0x00004500);                            /* INIT */
    for (int tries = 0; tries < 2 && !ap_up; tries++) {
        send_ipi(1, 0x00004600 | (TRAMPOLINE >> 12));   /* SIPI */
        for (uint32_t n = 0; n < 1000000 && !ap_up; n++) {
            pause();
        }
    }
    return ap_up;
}

void bsp_main(void)
{
    uint32_t failures = 0;

    outb(0x21, 0xff);           /* both 8259s masked: nothing but the APIC */
    outb(0xa1, 0xff);
    x2apic_mode = cpu_has_x2apic();
    puts_dbg(x2apic_mode ? "MODE x2apic\n" : "MODE xapic\n");
    idt[CALL_VECTOR] = flat32_interrupt_gate(call_handler);
    idt[TIMER_VECTOR] = flat32_interrupt_gate(timer_handler);
    idt[NOISE_VECTOR] = flat32_interrupt_gate(noise_handler);
    cpu_setup();
    if (!start_ap()) {
        puts_dbg("FAIL CPU 1 did not start\n");
        finish(1);
    }

    for (uint32_t round = 0; round < ROUNDS; round++) {
        uint32_t before = calls_taken;
        uint32_t n = 0;

        if (round == ROUNDS / 2) {
            timer_off = 1;
            while (timer_off != 2) {
                pause();
            }
        }
        send_ipi(1, CALL_VECTOR);           /* physical, fixed, edge */
        while (calls_taken == before) {
            if (++n == WAIT_SPINS) {
                puts_dbg("LATE ");
                put_dec(round);
                puts_dbg(" phase ");
                put_dec(ap_phase);
                puts_dbg("\n");
            }
            pause();
        }
        if (round % 16 == 15) {
            __asm__ volatile("sti; nop; cli" : : : "memory");
        }
    }
    ap_stop = 1;
    send_ipi(1, CALL_VECTOR);       /* out of its last HLT */
    while (calls_taken != ROUNDS + 1) {
        pause();
    }
    __asm__ volatile("sti" : : : "memory");
    pause();
    __asm__ volatile("cli" : : : "memory");

    puts_dbg("CALLS ");
    put_dec(ROUNDS);
    puts_dbg(" TAKEN ");
    put_dec(calls_taken - 1);       /* less the last wake-up */
    puts_dbg(" NOISE ");
    put_dec(noise_sent);
    puts_dbg(" TAKEN ");
    put_dec(noise_taken);
    puts_dbg(" TICKS ");
    put_dec(timer_ticks);
    puts_dbg("\n");
    failures += calls_taken - 1 != ROUNDS;
    /* a noise IPI that finds the last one pending merges with it */
    failures += noise_taken == 0 || noise_taken > noise_sent;
    failures += timer_ticks == 0;
    puts_dbg("DONE ");
    put_dec(failures);
    puts_dbg("\n");
    finish(failures ? 1 : 0);
}
