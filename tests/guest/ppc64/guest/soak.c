/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest soak mode (mode=soak), for migration: all CPUs exchange
 * IPI messages and raise device interrupts continuously, each checked
 * to arrive exactly once, until "q" arrives on the console ("p" pauses
 * the traffic until nothing is in flight, "P" also leaves one device
 * interrupt presented to the boot CPU and not accepted while paused,
 * "r" resumes).  Before
 * the loop the boot CPU leaves two raised device interrupts pending and
 * masked (one with ibm,int-off, one with ibm,set-xive priority 0xff);
 * after "q" it unmasks them and each must then be delivered once.  The
 * boot CPU prints "XICS-GUEST SOAK round=N" now and then, so the host
 * can see the guest make progress on either side of a migration (every
quarter of a second of guest time).
 */
#include "guest.h"

static volatile int soak_stop;
static volatile int soak_pause;
static volatile int soak_paused_cpus;
static volatile int soak_present;        /* "P": pause with one presented */

static int fmt_num(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0, len;

    do {
        tmp[n++] = '0' + v % 10;
        v /= 10;
    } while (v);
    len = n;
    while (n) {
        *p++ = tmp[--n];
    }
    return len;
}

static void hold_pending(struct dev *d, int how)
{
    int st;

    route(d, 0, 4);
    d->masked = 1;
    sync();
    st = how ? set_xive(d->irq, cpus[0].server, 0xff) : int_off(d->irq);
    check(st == 0, "soak: mask 0x%x: %d", d->irq, st);
    dev_raise(d, dev_bit(d, 7 + how));
}

static void release_pending(struct dev *d, int how)
{
    int st;

    d->masked = 0;
    sync();
    st = how ? set_xive(d->irq, cpus[0].server, 4) : int_on(d->irq);
    check(st == 0, "soak: unmask 0x%x: %d", d->irq, st);
    wait_start();
    while (READ_ONCE(d->outstanding)) {
        wait_check("interrupt held across migration", d->irq,
                   d->outstanding);
    }
}

/* Wait until nothing this CPU sent or raised is in flight. */
static void quiesce(struct storm *s)
{
    int i;

    s->n = 0;
    wait_start();
    while (!storm_step(s)) {
        wait_check("IPI acks", 0, 0);
    }
    for (i = 0; i < load_ndevs; i++) {
        if (i % ncpus == this_cpu->idx) {
            while (READ_ONCE(devs[i].outstanding)) {
                wait_check("device interrupts", devs[i].irq,
                           devs[i].outstanding);
            }
        }
    }
}

/*
 * "p" on the console: every CPU stops sending and raising, waits until
 * all of it arrived and its presenter is empty, and spins (interrupts
 * enabled) until "r"; the boot CPU says "XICS-GUEST SOAK PAUSED" once
 * all are quiet.
 */
static void pause_here(struct storm *s)
{
    quiesce(s);
    atomic_inc(&soak_paused_cpus);
    wait_start();
    while (READ_ONCE(soak_paused_cpus) != ncpus) {
        wait_check("CPUs to pause", soak_paused_cpus, ncpus);
    }
    drain_interrupts();
    irq_enable();
    if (this_cpu->idx == 0) {
        struct dev *d = load_ndevs ? &devs[0] : NULL;
        uint32_t xisr = 0;
        int c;

        if (soak_present && d) {
            /*
             * Leave one interrupt presented to this CPU and not accepted
             * (MSR[EE] off) for as long as the pause lasts: a migration
             * then carries it in the presenter's XIRR.
             */
            irq_disable();
            route(d, 0, 3);
            dev_raise(d, dev_bit(d, 11));
            xisr = ipoll_xirr() & 0xffffff;
            check(xisr == d->irq, "pause: 0x%x presented, expected 0x%x",
                  xisr, d->irq);
        }
        printf("XICS-GUEST SOAK PAUSED presented=0x%x\n", xisr);
        do {
            c = console_getc();
        } while (c != 'r' && c != 'q');
        soak_present = 0;
        irq_enable();
        if (c == 'q') {
            soak_stop = 1;
        }
        soak_paused_cpus = 0;
        sync();
        soak_pause = 0;
    } else {
        while (READ_ONCE(soak_pause)) {
            cpu_relax();
        }
    }
    s->n = ~0UL;
}

void run_soak(void)
{
    struct load l = { ~0UL, 25, 0, 0, 0 };
    struct storm s;
    int held = 0, i;
    uint64_t iter = 0, last = mftb();

    /* The last two devices are held pending; the others carry the load. */
    if (this_cpu->idx == 0 && ndevs >= 3) {
        held = 2;
    }
    load_ndevs = ndevs >= 3 ? ndevs - 2 : ndevs;
    barrier();
    if (this_cpu->idx == 0) {
        for (i = 0; i < held; i++) {
            hold_pending(&devs[ndevs - 2 + i], i);
        }
        printf("XICS-GUEST SOAK RUNNING held=%d load_devs=%d\n", held,
               load_ndevs);
    }
    storm_init(&s, ~0UL);
    load_route_round(&l);
    while (!READ_ONCE(soak_stop)) {
        if (READ_ONCE(soak_pause)) {
            pause_here(&s);
            continue;
        }
        storm_step(&s);
        load_step(&l);
        iter++;
        if (this_cpu->idx == 0 && (iter & 0xff) == 0) {
            int c = console_getc();

            if (c == 'q') {
                soak_stop = 1;
            } else if (c == 'p' || c == 'P') {
                soak_present = c == 'P';
                soak_pause = 1;
            }
            if (mftb() - last > tb_freq / 4) {
                char line[160], *p = line;

                last = mftb();
                for (i = 0; i < ncpus && p < line + sizeof(line) - 24; i++) {
                    p += fmt_num(p, cpus[i].accepted);
                    *p++ = i + 1 < ncpus ? ',' : 0;
                }
                printf("XICS-GUEST SOAK round=%lu accepted=%s\n", iter, line);
            }
        }
    }
    /* Stop sending; wait until everything sent was received. */
    quiesce(&s);
    barrier();
    if (this_cpu->idx == 0) {
        for (i = 0; i < held; i++) {
            release_pending(&devs[ndevs - 2 + i], i);
        }
        printf("XICS-GUEST SOAK released=%d\n", held);
    }
    finish();
    for (i = 0; i < ncpus; i++) {
        int src;

        for (src = 0; src < ncpus; src++) {
            check(ipi_ack[i][src] == ipi_mbox[i][src],
                  "IPI messages %d -> %d: sent %u, received %u", src, i,
                  ipi_mbox[i][src], ipi_ack[i][src]);
        }
    }
    print_counts();
    verdict();
}
