/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The "xics-stress" qtest verb of the pseries machine (ic-mode=xics):
 * a multi-threaded stress test of the emulated XICS and its per-source
 * and per-presenter locks, run inside QEMU so that it calls the real
 * code paths (hw/intc/xics.c) the way the BQL-free hypercalls do.
 *
 *   xics-stress THREADS ROUNDS SEED
 *   -> OK raised=N delivered=N ipis-sent=N ipis-taken=N moves=N
 *   -> FAIL <what went wrong>
 *
 * Thread i plays the guest of vCPU i: it raises its own MSIs and LSIs
 * (routed to any vCPU, random priorities), sends IPIs (H_IPI) to random
 * vCPUs, raises and restores its CPPR (forcing rejects and resends), and
 * takes what its own presenter offers: H_XIRR, then for a source the
 * device-side ack (an LSI is lowered), then H_EOI.  Another thread
 * moves sources between servers (ibm,set-xive) meanwhile.  None of
 * them holds the BQL: the verb's own thread keeps it for the whole run,
 * so a path that took it would hang the test.  Every raise must be
 * taken exactly once, every IPI sent must be taken, and nothing may be
 * left pending once the threads drain.  Run under ThreadSanitizer by
 * `make check-tsan`.  Hooked in hw/ppc/spapr_qtest_hcall.c.
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/thread.h"
#include "qemu/atomic.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "hw/core/cpu.h"
#include "hw/ppc/spapr.h"
#include "hw/ppc/spapr_cpu_core.h"
#include "hw/ppc/spapr_irq.h"
#include "hw/ppc/xics.h"
#include "hw/ppc/spapr_qtest.h"
#include "system/qtest.h"

#define STRESS_MAX_THREADS  8
#define STRESS_SRC_PER_THR  8
#define STRESS_DRAIN_SPINS  2000000

typedef struct Stress Stress;

typedef struct StressThread {
    Stress *s;
    QemuThread thread;
    int index;
    ICPState *icp;
    uint32_t rng;
    uint64_t raised, delivered, ipis_sent, ipis_taken;
} StressThread;

struct Stress {
    ICSState *ics;
    int nthreads;
    int nsrc;
    uint32_t first_srcno;
    unsigned rounds;
    int servers[STRESS_MAX_THREADS];
    ICPState *icps[STRESS_MAX_THREADS];
    bool lsi[STRESS_MAX_THREADS * STRESS_SRC_PER_THR];
    uint8_t priority[STRESS_MAX_THREADS * STRESS_SRC_PER_THR];
    int in_flight[STRESS_MAX_THREADS * STRESS_SRC_PER_THR];
    int ipi_pending[STRESS_MAX_THREADS];
    int producers_done;
    int stop;
    int failed;
    char error[128];
    uint64_t moves;
    uint32_t move_rng;
    StressThread thr[STRESS_MAX_THREADS];
};

static uint32_t stress_rand(uint32_t *state)
{
    /* xorshift32: reproducible from the seed */
    uint32_t x = *state;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static void G_GNUC_PRINTF(2, 3) stress_fail(Stress *s, const char *fmt, ...)
{
    va_list ap;

    if (qatomic_xchg(&s->failed, 1)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof(s->error), fmt, ap);
    va_end(ap);
}

/* Take whatever the presenter offers; true if something was taken. */
static bool stress_take(StressThread *t)
{
    Stress *s = t->s;
    uint32_t xirr, nr;

    /* As the hypercalls run: in an RCU read-side section, no BQL */
    RCU_READ_LOCK_GUARD();
    xirr = icp_accept(t->icp);
    nr = xirr & 0xffffff;

    if (!nr) {
        return false;
    }
    if (nr == XICS_IPI) {
        icp_set_mfrr(t->icp, 0xff);
        if (!qatomic_xchg(&s->ipi_pending[t->index], 0)) {
            stress_fail(s, "vCPU %d took an IPI nobody sent", t->index);
        }
        t->ipis_taken++;
    } else {
        int k = nr - s->ics->offset - s->first_srcno;

        if (k < 0 || k >= s->nsrc) {
            stress_fail(s, "vCPU %d took unknown source 0x%x", t->index, nr);
        } else {
            if (s->lsi[k]) {
                /* the device's ack: lower the line before the EOI */
                ics_set_irq(s->ics, s->first_srcno + k, 0);
            }
            if (!qatomic_xchg(&s->in_flight[k], 0)) {
                stress_fail(s, "source 0x%x taken twice", nr);
            }
            t->delivered++;
        }
    }
    icp_eoi(t->icp, xirr);
    return true;
}

static void stress_produce(StressThread *t)
{
    Stress *s = t->s;
    uint32_t r = stress_rand(&t->rng);
    int k = t->index + s->nthreads * (r % STRESS_SRC_PER_THR);

    RCU_READ_LOCK_GUARD();

    switch ((r >> 8) % 8) {
    case 0 ... 4:               /* a device interrupt */
        if (!qatomic_xchg(&s->in_flight[k], 1)) {
            t->raised++;
            ics_set_irq(s->ics, s->first_srcno + k, 1);
            if (!s->lsi[k]) {
                ics_set_irq(s->ics, s->first_srcno + k, 0);
            }
        }
        break;
    case 5 ... 6: {             /* H_IPI */
        int j = (r >> 16) % s->nthreads;

        if (!qatomic_xchg(&s->ipi_pending[j], 1)) {
            t->ipis_sent++;
            icp_set_mfrr(s->icps[j], 3 + (r >> 24) % 10);
        }
        break;
    }
    default:                    /* H_CPPR down and up again: rejects */
        icp_set_cppr(t->icp, 2 + (r >> 16) % 12);
        icp_ipoll(s->icps[(r >> 24) % s->nthreads], NULL);
        icp_set_cppr(t->icp, 0xff);
        break;
    }
}

static bool stress_all_taken(Stress *s)
{
    for (int k = 0; k < s->nsrc; k++) {
        if (qatomic_read(&s->in_flight[k])) {
            return false;
        }
    }
    for (int i = 0; i < s->nthreads; i++) {
        if (qatomic_read(&s->ipi_pending[i])) {
            return false;
        }
    }
    return true;
}

static void *stress_vcpu_thread(void *opaque)
{
    StressThread *t = opaque;
    Stress *s = t->s;
    unsigned idle = 0;

    rcu_register_thread();
    for (unsigned i = 0; i < s->rounds && !qatomic_read(&s->failed); i++) {
        stress_produce(t);
        stress_take(t);
    }
    qatomic_inc(&s->producers_done);

    /* Drain: take until nothing is in flight anywhere, or give up. */
    while (!qatomic_read(&s->failed)) {
        if (stress_take(t)) {
            idle = 0;
            continue;
        }
        if (qatomic_read(&s->producers_done) == s->nthreads &&
            stress_all_taken(s)) {
            break;
        }
        if (++idle > STRESS_DRAIN_SPINS) {
            stress_fail(s, "interrupts lost: vCPU %d waited in vain",
                        t->index);
            break;
        }
        sched_yield();
    }
    rcu_unregister_thread();
    return NULL;
}

/* ibm,set-xive from another thread: move sources between servers. */
static void *stress_mover_thread(void *opaque)
{
    Stress *s = opaque;

    rcu_register_thread();
    while (qatomic_read(&s->producers_done) < s->nthreads &&
           !qatomic_read(&s->failed)) {
        uint32_t r = stress_rand(&s->move_rng);
        int k = r % s->nsrc;

        ics_write_xive(s->ics, s->first_srcno + k,
                       s->servers[(r >> 8) % s->nthreads], s->priority[k],
                       s->priority[k]);
        s->moves++;
        sched_yield();
    }
    rcu_unregister_thread();
    return NULL;
}

/* A run of free sources in the MSI range, claimed for the test. */
static int stress_claim_sources(SpaprMachineState *spapr, Stress *s,
                                uint32_t seed, Error **errp)
{
    ICSState *ics = spapr->ics;
    uint32_t start, k;

    for (start = SPAPR_IRQ_MSI - ics->offset;
         start + s->nsrc <= ics->nr_irqs; start += s->nsrc) {
        for (k = 0; k < s->nsrc && ics_irq_free(ics, start + k); k++) {
            /* look for nsrc free ones in a row */
        }
        if (k == s->nsrc) {
            break;
        }
    }
    if (start + s->nsrc > ics->nr_irqs) {
        error_setg(errp, "no %d free sources", s->nsrc);
        return -1;
    }
    s->first_srcno = start;
    for (k = 0; k < s->nsrc; k++) {
        s->lsi[k] = (k % 3) == 2;
        s->priority[k] = 4 + (seed + k * 7) % 8;
        if (spapr_irq_claim(spapr, ics->offset + start + k, s->lsi[k],
                            errp) < 0) {
            if (k) {
                spapr_irq_free(spapr, ics->offset + start, k);
            }
            return -1;
        }
        ics_write_xive(ics, start + k, s->servers[k % s->nthreads],
                       s->priority[k], s->priority[k]);
    }
    return 0;
}

static bool spapr_qtest_xics_stress_run(CharBackend *chr, unsigned nthreads,
                                        unsigned rounds, uint32_t seed)
{
    SpaprMachineState *spapr = SPAPR_MACHINE(qdev_get_machine());
    g_autofree Stress *s = g_new0(Stress, 1);
    QemuThread mover;
    Error *err = NULL;
    uint64_t raised = 0, delivered = 0, sent = 0, taken = 0;
    unsigned i;

    if (!spapr->ics || spapr->active_intc != SPAPR_INTC(spapr->ics)) {
        qtest_sendf(chr, "FAIL the emulated XICS is not in use "
                    "(-M pseries,ic-mode=xics)\n");
        return true;
    }
    if (nthreads < 1 || nthreads > STRESS_MAX_THREADS ||
        nthreads > spapr_max_server_number(spapr)) {
        qtest_sendf(chr, "FAIL THREADS must be 1..%d and at most -smp\n",
                    STRESS_MAX_THREADS);
        return true;
    }
    s->ics = spapr->ics;
    s->nthreads = nthreads;
    s->nsrc = nthreads * STRESS_SRC_PER_THR;
    s->rounds = rounds;
    s->move_rng = seed | 1;
    for (i = 0; i < nthreads; i++) {
        CPUState *cs = qemu_get_cpu(i);

        if (!cs) {
            qtest_sendf(chr, "FAIL no vCPU %u (THREADS is at most -smp)\n", i);
            return true;
        }
        s->servers[i] = spapr_get_vcpu_id(POWERPC_CPU(cs));
        s->icps[i] = spapr_cpu_state(POWERPC_CPU(cs))->icp;
        icp_set_cppr(s->icps[i], 0xff);
    }
    if (stress_claim_sources(spapr, s, seed, &err) < 0) {
        qtest_sendf(chr, "FAIL %s\n", error_get_pretty(err));
        error_free(err);
        return true;
    }

    for (i = 0; i < nthreads; i++) {
        StressThread *t = &s->thr[i];

        t->s = s;
        t->index = i;
        t->icp = s->icps[i];
        t->rng = (seed + 0x9e3779b9u * (i + 1)) | 1;
        qemu_thread_create(&t->thread, "xics-stress", stress_vcpu_thread, t,
                           QEMU_THREAD_JOINABLE);
    }
    qemu_thread_create(&mover, "xics-stress-mv", stress_mover_thread, s,
                       QEMU_THREAD_JOINABLE);
    for (i = 0; i < nthreads; i++) {
        qemu_thread_join(&s->thr[i].thread);
        raised += s->thr[i].raised;
        delivered += s->thr[i].delivered;
        sent += s->thr[i].ipis_sent;
        taken += s->thr[i].ipis_taken;
    }
    qemu_thread_join(&mover);

    spapr_irq_free(spapr, s->ics->offset + s->first_srcno, s->nsrc);

    if (!s->failed && (raised != delivered || sent != taken)) {
        stress_fail(s, "raised %" PRIu64 " but took %" PRIu64
                    ", sent %" PRIu64 " IPIs but took %" PRIu64,
                    raised, delivered, sent, taken);
    }
    if (s->failed) {
        qtest_sendf(chr, "FAIL %s\n", s->error);
    } else {
        qtest_sendf(chr, "OK raised=%" PRIu64 " delivered=%" PRIu64
                    " ipis-sent=%" PRIu64 " ipis-taken=%" PRIu64
                    " moves=%" PRIu64 "\n",
                    raised, delivered, sent, taken, s->moves);
    }
    return true;
}

bool spapr_qtest_xics_stress(CharBackend *chr, gchar **words)
{
    unsigned long nthreads, rounds, seed;

    if (!words[1] || qemu_strtoul(words[1], NULL, 0, &nthreads) ||
        !words[2] || qemu_strtoul(words[2], NULL, 0, &rounds) ||
        !words[3] || qemu_strtoul(words[3], NULL, 0, &seed)) {
        qtest_sendf(chr, "FAIL usage: xics-stress THREADS ROUNDS SEED\n");
        return true;
    }
    return spapr_qtest_xics_stress_run(chr, nthreads, rounds, seed);
}
