/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * avic-smp: IPIs between two vCPUs of an L2 under the fork's emulated
 * AVIC (target/i386/tcg/system/svm-avic.c), under MTTCG: every IPI is
 * taken once, never lost, never twice.
 *
 * Both CPUs are L1 hypervisors sharing one physical APIC ID table, as
 * KVM keeps it: entry 0 is CPU 0's L2 vCPU, entry 1 CPU 1's, each with
 * its host APIC ID and IsRunning set around its VMRUN; entry 2 is a
 * vCPU that never runs.  In x2AVIC mode (the CPU offers x2AVIC) the L2s
 * use the x2APIC MSRs, otherwise the APIC page (xAPIC, flat logical
 * mode through the logical table).
 *
 * CPU 0's L2 sends vector 0x60 ROUNDS times, each time after the last
 * one was taken, in turn: to APIC ID 1 (physical), to IDs 1 and 2
 * (logical), to all but itself.  The last two always end in an
 * incomplete-IPI exit (ID 2 is not running), the first one when CPU
 * 1's L2 is not running either.  Its L1 checks each exit (code, ICR,
 * cause TARGET_NOT_RUNNING, index) and runs L2 again, as KVM does.
 *
 * CPU 1's L2 counts the vector and, in turn by that count (in fours,
 * so that each kind of IPI meets each state), spins in guest mode,
 * halts in guest mode (HLT not intercepted: the doorbell wakes it),
 * spins, or leaves by VMMCALL, after which its L1 clears IsRunning,
 * waits, sets it and runs L2 again (IPIs meanwhile go through IRR and
 * the exit, or find it still marked running: a doorbell outside guest
 * mode, which VMRUN must make up for).
 *
 * In x2AVIC mode, then, a SELF_IPI write with a reserved bit set must
 * raise #GP (L1 intercepts it) and set no IRR bit.
 *
 * Results on the debug console (port 0xe9): "MODE x2avic|xavic", then
 * "IPIS <n> TAKEN <m> TWICE <d> EXITS <e>" and "DONE <failures>"; a
 * "FAIL ..." line for each wrong exit and for an IPI not taken within
 * the wait (which ends the run).  isa-debug-exit (port 0xf4): QEMU
 * exits with 1 if all passed, 3 otherwise.
 */

#include "avic-smp.h"
#include "../flat32.h"

#define APIC_BASE       0xfee00000u
#define APIC_SVR        0xf0
#define APIC_ICR_LO     0x300
#define APIC_ICR_HI     0x310
#define TRAMPOLINE      0x8000u
#define VECTOR          0x60
#define ROUNDS          12000
#define WAIT_SPINS      20000000u
#define SETTLE_SPINS    200

#define EXIT_VMMCALL    0x81
#define EXIT_EXCP_GP    0x4d
#define VMCB_INTERCEPT_EXC 0x008
#define EXIT_AVIC_INCOMPLETE_IPI 0x401
#define IPI_FAILURE_TARGET_NOT_RUNNING 1ull

#define INT_CTL_V_INTR_MASKING (1u << 24)
#define INT_CTL_X2APIC_MODE    (1u << 30)
#define INT_CTL_AVIC_ENABLE    (1u << 31)

#define PHYS_VALID      (1ull << 63)
#define PHYS_RUNNING    (1ull << 62)
#define LOG_VALID       (1u << 31)

static uint8_t vmcb[2][4096] __attribute__((aligned(4096)));
static uint8_t hsave[2][4096] __attribute__((aligned(4096)));
static uint32_t backing[3][1024] __attribute__((aligned(4096)));
static uint64_t physical[512] __attribute__((aligned(4096)));
static uint32_t logical[1024] __attribute__((aligned(4096)));
static uint64_t l2_idt[256];
static uint8_t l2_stack[2][4096] __attribute__((aligned(16)));
static uint32_t l2_gprs[2][6];     /* svm_run() keeps them across exits */

volatile uint32_t l2_ipi_count, l2_x2apic;   /* volatile: other CPU, L2 */
/* CPU 1 is up; CPU 0's L2 is done (CPU 1's L1 stops) */
static volatile uint32_t ap_up, sender_done;
/* what CPU 0's L2 saw: IPIs sent, taken twice, one lost */
static volatile uint32_t sent, twice, lost;
/* CPU 1's L1: an exit it did not expect (code), and its count */
static volatile uint32_t ap_bad_exit, ap_bad_exits;

static void pause(void)
{
    __asm__ volatile("pause" : : : "memory");
}

static void apic_write(uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(APIC_BASE + reg) = v;     /* MMIO */
}

static void put32(int cpu, unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(vmcb[cpu] + off) = v; /* VMRUN reads it */
}

static void put64(int cpu, unsigned off, uint64_t v)
{
    *(volatile uint64_t *)(vmcb[cpu] + off) = v; /* VMRUN reads it */
}

static uint64_t get64(int cpu, unsigned off)
{
    return *(volatile uint64_t *)(vmcb[cpu] + off); /* #VMEXIT wrote it */
}

static void put_seg(int cpu, unsigned off, uint16_t sel, uint16_t attrib)
{
    *(volatile uint16_t *)(vmcb[cpu] + off) = sel; /* VMRUN reads it */
    *(volatile uint16_t *)(vmcb[cpu] + off + 2) = attrib; /* ditto */
    put32(cpu, off + 4, 0xffffffff);
    put64(cpu, off + 8, 0);
}

/* CPUID Fn8000_000A EDX bit 18: x2AVIC */
static int cpu_has_x2avic(void)
{
    uint32_t a = 0x8000000a, b, c = 0, d;

    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return (d >> 18) & 1;
}

/*
 * IsRunning of physical entry @id, as KVM sets it around VMRUN: only the
 * entry's high half is stored, so the other CPU never reads it torn.
 */
static void set_running(int id, int running)
{
    volatile uint32_t *hi = (volatile uint32_t *)&physical[id] + 1; /* shared */

    *hi = running ? *hi | (uint32_t)(PHYS_RUNNING >> 32)
                  : *hi & ~(uint32_t)(PHYS_RUNNING >> 32);
    __asm__ volatile("mfence" : : : "memory");
}

/* One IPI of CPU 0's L2, kind @kind */
static void l2_send(uint32_t kind)
{
    static const uint32_t lo[3] = {
        VECTOR,                     /* physical, fixed, edge */
        VECTOR | (1u << 11),        /* logical */
        VECTOR | (3u << 18),        /* all but self */
    };
    uint32_t hi;

    if (l2_x2apic) {
        /* x2APIC: ID 1; cluster 0, members 1 and 2 */
        hi = kind == 0 ? 1 : kind == 1 ? 0x6 : 0;
        wrmsr(0x830, lo[kind] | ((uint64_t)hi << 32));
    } else {
        /* xAPIC: ID 1; flat logical bits 1 and 2 */
        hi = kind == 0 ? 1u << 24 : kind == 1 ? 0x6u << 24 : 0;
        apic_write(APIC_ICR_HI, hi);
        apic_write(APIC_ICR_LO, lo[kind]);
    }
}

/* CPU 0's L2, x2AVIC: a SELF_IPI write with a reserved bit set */
static void l2_self_ipi_reserved(void)
{
    wrmsr(0x83f, 0x141);                /* bit 8: #GP, no IPI */
    l2_vmmcall();
}

/* CPU 0's L2: the IPIs, each after the last one was taken */
static void l2_sender(void)
{
    uint32_t want = 0;

    for (uint32_t i = 0; i < ROUNDS; i++) {
        uint32_t spin, got;

        sent = i + 1;
        l2_send(i % 3);
        want++;
        for (spin = 0; l2_ipi_count < want && spin < WAIT_SPINS; spin++) {
            pause();
        }
        if (l2_ipi_count < want) {
            lost = 1;
            break;
        }
        /* a second delivery of the same IPI comes soon after the first */
        for (spin = 0; spin < SETTLE_SPINS; spin++) {
            pause();
        }
        got = l2_ipi_count;
        if (got > want) {
            twice += got - want;
            want = got;
        }
    }
    l2_vmmcall();
    for (;;) {
        pause();
    }
}

/* CPU 1's L2: by the count, spin, halt or leave, until told to stop */
static void l2_receiver(void)
{
    uint32_t last = 0;

    __asm__ volatile("sti");
    for (;;) {
        uint32_t n = l2_ipi_count;

        if (n == last) {
            pause();
            continue;
        }
        last = n;
        switch (n % 4) {                        /* the IPIs' kinds: % 3 */
        case 0:
        case 3:
            break;                              /* spin in guest mode */
        case 1:
            /* halt in guest mode unless it came already (STI's shadow) */
            __asm__ volatile("cli" : : : "memory");
            if (l2_ipi_count == n) {
                __asm__ volatile("sti; hlt" : : : "memory");
            }
            __asm__ volatile("sti" : : : "memory");
            break;
        case 2:
            l2_vmmcall();                       /* out of guest mode */
            break;
        }
    }
}

static void setup_vmcb(int cpu, void (*l2)(void), int x2)
{
    /* intercept VMRUN and VMMCALL; no HLT, no MSR, no I/O intercepts */
    put64(cpu, VMCB_INTERCEPT, (1ull << 32) | (1ull << 33));
    put32(cpu, VMCB_ASID, 1);
    put32(cpu, VMCB_INT_CTL, INT_CTL_V_INTR_MASKING | INT_CTL_AVIC_ENABLE |
                             (x2 ? INT_CTL_X2APIC_MODE : 0));
    put64(cpu, VMCB_NESTED_CTL, 1);
    put64(cpu, VMCB_AVIC_BAR, APIC_BASE);
    put64(cpu, VMCB_AVIC_BACKING, (uint32_t)backing[cpu]);
    put64(cpu, VMCB_AVIC_LOGICAL, (uint32_t)logical);
    put64(cpu, VMCB_AVIC_PHYSICAL, (uint32_t)physical | 2); /* max ID 2 */
    put_seg(cpu, VMCB_CS, 0x08, 0xc9b);
    put_seg(cpu, VMCB_DS, 0x10, 0xc93);
    put_seg(cpu, VMCB_ES, 0x10, 0xc93);
    put_seg(cpu, VMCB_SS, 0x10, 0xc93);
    put32(cpu, VMCB_GDTR + 4, gdt_desc.limit);
    put64(cpu, VMCB_GDTR + 8, gdt_desc.base);
    put32(cpu, VMCB_IDTR + 4, sizeof(l2_idt) - 1);
    put64(cpu, VMCB_IDTR + 8, (uint32_t)l2_idt);
    put64(cpu, VMCB_EFER, 1u << 12);
    put64(cpu, VMCB_CR0, 0x11);
    put64(cpu, VMCB_DR7, 0x400);
    put64(cpu, VMCB_DR6, 0xffff0ff0);
    put64(cpu, VMCB_RFLAGS, 2);
    put64(cpu, VMCB_RIP, (uint32_t)l2);
    put64(cpu, VMCB_RSP, (uint32_t)(l2_stack[cpu] + sizeof(l2_stack[cpu])));
}

static void enable_svm(int cpu)
{
    wrmsr(0xc0000080, rdmsr(0xc0000080) | (1u << 12));    /* EFER.SVME */
    wrmsr(0xc0010117, (uint32_t)hsave[cpu]);               /* VM_HSAVE_PA */
}

/* Run CPU @cpu's L2 once, IsRunning set meanwhile; the exit code */
static uint64_t run(int cpu)
{
    set_running(cpu, 1);
    svm_run((uint32_t)vmcb[cpu], l2_gprs[cpu]);
    set_running(cpu, 0);
    return get64(cpu, VMCB_EXIT_CODE);
}

/* CPU 1: its L1 runs the receiving L2 until CPU 0 is done */
void ap_main(void)
{
    enable_svm(1);
    ap_up = 1;
    while (!sender_done) {
        uint64_t code = run(1);

        if (code != EXIT_VMMCALL) {
            ap_bad_exit = (uint32_t)code;
            ap_bad_exits++;
        }
        put64(1, VMCB_RIP, get64(1, VMCB_RIP) + 3);   /* after VMMCALL */
        for (int spin = 0; spin < 500; spin++) {
            pause();                    /* not running: IPIs exit */
        }
    }
    for (;;) {
        pause();
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
            pause();
        }
    }
    return ap_up;
}

/*
 * An incomplete-IPI exit of CPU 0's L2 after IPI @i (sent by then):
 * the ICR, cause TARGET_NOT_RUNNING and a not-running target's index.
 * 0 if right.
 */
static int check_incomplete(uint32_t i)
{
    uint32_t kind = i % 3;
    static const uint32_t lo[3] = {
        VECTOR, VECTOR | (1u << 11), VECTOR | (3u << 18),
    };
    uint64_t icr = lo[kind];
    uint64_t hi = kind == 0 ? 1 : kind == 1 ? 0x6 : 0;
    uint64_t info1 = get64(0, VMCB_EXIT_INFO1);
    uint64_t info2 = get64(0, VMCB_EXIT_INFO2);
    uint32_t index = (uint32_t)info2;

    icr |= (l2_x2apic ? hi : hi << 24) << 32;
    if (info1 == icr && info2 >> 32 == IPI_FAILURE_TARGET_NOT_RUNNING &&
        (index == 1 || (index == 2 && kind != 0))) {
        return 0;
    }
    puts_dbg("FAIL IPI ");
    put_dec(i);
    puts_dbg(": exit info 1 ");
    put_hex(info1);
    puts_dbg(" want ");
    put_hex(icr);
    puts_dbg(", info 2 ");
    put_hex(info2);
    puts_dbg("\n");
    return 1;
}

void bsp_main(void)
{
    uint32_t failures = 0, exits = 0, taken;
    int x2 = cpu_has_x2avic();

    outb(0x21, 0xff);           /* both 8259s masked: nothing but IPIs */
    outb(0xa1, 0xff);
    apic_write(APIC_SVR, 0x1ff);
    l2_x2apic = x2;
    puts_dbg(x2 ? "MODE x2avic\n" : "MODE xavic\n");

    /* the L2 vCPUs' APIC pages and tables, as KVM fills them */
    for (int id = 0; id < 3; id++) {
        backing[id][0x20 / 4] = x2 ? (uint32_t)id : (uint32_t)id << 24;
        backing[id][0xd0 / 4] = x2 ? 0 : (1u << id) << 24;   /* LDR */
        backing[id][0xe0 / 4] = 0xffffffff;                  /* DFR flat */
        backing[id][0xf0 / 4] = 0x1ff;                       /* SVR */
        physical[id] = PHYS_VALID | (uint32_t)backing[id] |
                       (id < 2 ? id : 0);                   /* host ID */
        logical[id] = LOG_VALID | id;
    }
    l2_idt[VECTOR] = flat32_interrupt_gate(l2_ipi_handler);
    setup_vmcb(0, l2_sender, x2);
    setup_vmcb(1, l2_receiver, x2);

    if (!start_ap()) {
        puts_dbg("FAIL CPU 1 did not start\n");
        finish(1);
    }
    enable_svm(0);
    for (;;) {
        uint64_t code = run(0);

        if (code == EXIT_AVIC_INCOMPLETE_IPI) {
            exits++;
            failures += check_incomplete(sent - 1);
            /* ID 2 never runs: its IRR bit stays, as in a real page */
            continue;
        }
        if (code != EXIT_VMMCALL) {
            puts_dbg("FAIL CPU 0's L2 exit code ");
            put_hex(code);
            puts_dbg("\n");
            finish(1);
        }
        break;
    }
    sender_done = 1;
    taken = l2_ipi_count;
    puts_dbg("IPIS ");
    put_dec(sent);
    puts_dbg(" TAKEN ");
    put_dec(taken);
    puts_dbg(" TWICE ");
    put_dec(twice);
    puts_dbg(" EXITS ");
    put_dec(exits);
    puts_dbg("\n");
    if (lost) {
        puts_dbg("FAIL IPI ");
        put_dec(sent - 1);
        puts_dbg(" was not taken\n");
        failures++;
    }
    if (taken != sent) {
        puts_dbg("FAIL the count of IPIs taken is not the count sent\n");
        failures++;
    }
    if (x2) {
        /* L1 intercepts #GP (exception 13): exit 0x4d, no IRR bit */
        uint64_t code;

        setup_vmcb(0, l2_self_ipi_reserved, x2);
        put32(0, VMCB_INTERCEPT_EXC, 1u << 13);
        code = run(0);
        if (code != EXIT_EXCP_GP) {
            puts_dbg("FAIL SELF_IPI with bit 8 set: exit code ");
            put_hex(code);
            puts_dbg(", want #GP\n");
            failures++;
        }
        if (backing[0][(0x200 + 0x41 / 32 * 16) / 4] & (1u << (0x41 % 32))) {
            puts_dbg("FAIL SELF_IPI with bit 8 set: IRR 0x41 set\n");
            failures++;
        }
    }
    if (ap_bad_exits) {
        puts_dbg("FAIL CPU 1's L2 exit code ");
        put_hex(ap_bad_exit);
        puts_dbg("\n");
        failures++;
    }
    failures += twice;
    puts_dbg("DONE ");
    put_dec(failures);
    puts_dbg("\n");
    finish(failures ? 1 : 0);
}
