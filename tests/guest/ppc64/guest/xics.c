/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest interrupt handling: the exception vectors (written over
 * the low 4 KiB once the firmware is no longer needed), the dispatch of
 * external interrupts through the XICS presenter hypercalls (H_XIRR,
 * H_EOI, H_IPI, H_CPPR, H_IPOLL), IPI mailboxes, device interrupts, the
 * decrementer (re-armed far in the future), and the RTAS calls that
 * route and mask sources (ibm,set-xive, ibm,int-on, ibm,int-off).
 */
#include "guest.h"

/* ipi_mbox[dst][src]: last message number src sent to dst. */
volatile uint32_t ipi_mbox[MAX_CPUS][MAX_CPUS];
/* ipi_ack[dst][src]: last message number dst consumed from src. */
volatile uint32_t ipi_ack[MAX_CPUS][MAX_CPUS];

static void flush_icache(unsigned long start, unsigned long end)
{
    unsigned long a;

    for (a = start; a < end; a += 32) {
        asm volatile("dcbst 0, %0" :: "r"(a) : "memory");
    }
    asm volatile("sync" ::: "memory");
    for (a = start; a < end; a += 32) {
        asm volatile("icbi 0, %0" :: "r"(a) : "memory");
    }
    asm volatile("sync; isync" ::: "memory");
}

/*
 * Every 32-byte slot from 0x100 to 0xfff gets "mtsprg2 r3; li r3,SLOT;
 * ba exc_common", so any interrupt, even one at a 0x20 offset, arrives
 * in exc_dispatch() with its vector.
 */
void xics_install_vectors(void)
{
    unsigned long target = (unsigned long)exc_common;
    unsigned long v;

    if (target & ~0x03fffffcUL) {
        fail("exc_common at 0x%lx is out of reach of ba", target);
    }
    for (v = 0x100; v < 0x1000; v += 0x20) {
        volatile uint32_t *p = (volatile uint32_t *)v;

        p[0] = 0x7c7243a6;                      /* mtsprg 2, r3 */
        p[1] = 0x38600000 | v;                  /* li r3, v */
        p[2] = 0x48000002 | target;             /* ba exc_common */
    }
    flush_icache(0x100, 0x1000);
}

void set_cppr(uint32_t cppr)
{
    hcall(H_CPPR, cppr, 0, 0, 0, 0, 0, NULL);
}

void send_ipi(int cpu_idx, uint32_t prio)
{
    if (cpu_idx != this_cpu->idx) {
        this_cpu->ipis_sent++;
    }
    cpus[cpu_idx].ipi_prio = prio;
    sync();
    hcall(H_IPI, cpus[cpu_idx].server, prio, 0, 0, 0, 0, NULL);
}

uint32_t ipoll_xirr(void)
{
    unsigned long r[4];

    hcall(H_IPOLL, this_cpu->server, 0, 0, 0, 0, 0, r);
    return r[0];
}

int set_xive(uint32_t irq, uint32_t server, uint32_t prio)
{
    uint32_t st;

    return rtas_call("ibm,set-xive", 3, 1, &st, irq, server, prio);
}

int int_off(uint32_t irq)
{
    uint32_t st;

    return rtas_call("ibm,int-off", 1, 1, &st, irq);
}

int int_on(uint32_t irq)
{
    uint32_t st;

    return rtas_call("ibm,int-on", 1, 1, &st, irq);
}

void ipi_handler(void)
{
    struct cpu *me = this_cpu;
    bool got = false;
    int src;

    hcall(H_IPI, me->server, 0xff, 0, 0, 0, 0, NULL);
    me->ipis++;
    sync();
    for (src = 0; src < ncpus; src++) {
        uint32_t m = ipi_mbox[me->idx][src];
        uint32_t a = ipi_ack[me->idx][src];

        if (m != a) {
            check(m == a + 1, "IPI messages from cpu %d: got %u after %u",
                  src, m, a);
            ipi_ack[me->idx][src] = m;
            me->ipi_msgs++;
            got = true;
        }
    }
    if (!got) {
        me->ipis_empty++;
    }
}

static uint32_t factorial(uint32_t n)
{
    uint32_t r = 1;

    while (n > 1) {
        r *= n--;
    }
    return r;
}

static void dev_handler(struct dev *d)
{
    uint32_t fact = 0;
    uint32_t bits = dev_take(d, &fact);
    uint32_t exp = d->outstanding;

    check(d->target == this_cpu->idx,
          "irq 0x%x arrived on cpu %d, routed to cpu %d", d->irq,
          this_cpu->idx, d->target);
    check(!d->masked, "irq 0x%x arrived while masked", d->irq);
    if (!bits || (bits & ~exp)) {
        d->bad++;
        check(false, "irq 0x%x: device bits 0x%x, raised 0x%x", d->irq,
              bits, exp);
    }
    if ((bits & 1) && d->kind == DEV_EDU) {
        check(fact == factorial(d->fact_n), "edu %u! = %u, read %u",
              d->fact_n, factorial(d->fact_n), fact);
        d->fact_n = 0;
    }
    if (bits & exp) {
        atomic_add(&d->delivered, 1);
    }
    atomic_andnot(&d->outstanding, bits & exp);
    this_cpu->dev_irqs++;
}

static void external_interrupt(void)
{
    struct cpu *me = this_cpu;
    unsigned long r[4];
    uint32_t xirr, xisr, prio = 0xff;

    hcall(H_XIRR, 0, 0, 0, 0, 0, 0, r);
    me->xirr_calls++;
    xirr = r[0];
    xisr = xirr & 0xffffff;
    if (!xisr) {
        me->spurious++;
        return;
    }
    me->accepted++;
    if (xisr == XICS_IPI) {
        prio = me->ipi_prio;
        ipi_handler();
    } else {
        struct dev *d = dev_by_irq(xisr);

        if (d) {
            prio = d->prio;
            dev_handler(d);
        } else {
            check(false, "interrupt from unknown source 0x%x", xisr);
        }
    }
    if (me->log_on && me->log_n < 16) {
        me->log_xisr[me->log_n] = xisr;
        me->log_prio[me->log_n] = prio;
        me->log_n++;
    }
    hcall(H_EOI, xirr, 0, 0, 0, 0, 0, NULL);
    me->eois++;
}

void exc_dispatch(unsigned long vec, unsigned long *frame)
{
    switch (vec) {
    case 0x500:
        external_interrupt();
        break;
    case 0x900:
        /* Keep the decrementer away: by default about 4 s at 512 MHz. */
        asm volatile("mtspr 22, %0" :: "r"(opt_dec));
        this_cpu->decs++;
        break;
    default:
        printf("XICS-GUEST RESULT FAIL cpu=%d unexpected interrupt 0x%lx "
               "srr0=0x%lx srr1=0x%lx lr=0x%lx\n", this_cpu->idx, vec,
               frame[36], frame[37], frame[32]);
        power_off();
    }
}
