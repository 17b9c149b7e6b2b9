/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest test phases, run by all CPUs together (each phase ends in
 * a barrier).  Every message and every device interrupt is accounted:
 *  ipi    all-to-all IPI storm; one message in flight per CPU pair, each
 *         consumed exactly once and in sequence
 *  dev    device interrupt load: every CPU raises the LSIs (or MSIs) of
 *         its devices (edu register 0x60 / factorial thread, e1000 ICS),
 *         re-routed with ibm,set-xive between rounds; each raise must be
 *         delivered once, on the CPU it is routed to
 *  mixed  both at once, at different priorities
 *  order  one CPU at a time: all sources and an IPI made pending under
 *         CPPR 0 (each rejected), then CPPR 0xff: delivered exactly once
 *         each, most favoured priority first
 *  mask   ibm,int-off and ibm,set-xive 0xff: a raise is not delivered
 *         while masked, and is delivered once on unmask
 *  cppr   H_CPPR above a presented interrupt rejects it, lowering CPPR
 *         resends it; a more favoured IPI rejects a presented device
 *         interrupt, which comes after it
 * The boot CPU prints the counts and "XICS-GUEST RESULT PASS" or FAIL.
 */
#include "guest.h"

int load_ndevs = MAX_DEVS;             /* devices the load may use */

#define IPI_PRIO        5
#define DEV_PRIO        6

void wait_start(void)
{
    this_cpu->wait_deadline = tb_deadline(60);
}

void wait_check(const char *what, uint32_t a, uint32_t b)
{
    if (mftb() > this_cpu->wait_deadline) {
        fail("timeout waiting for %s (0x%x, 0x%x)", what, a, b);
    }
    cpu_relax();
}

static bool my_dev(int i)
{
    return i < load_ndevs && i % ncpus == this_cpu->idx;
}

void route(struct dev *d, int cpu, uint32_t prio)
{
    int st;

    d->target = cpu;
    d->prio = prio;
    sync();
    st = set_xive(d->irq, cpus[cpu].server, prio);
    check(st == 0, "set-xive 0x%x -> %d prio %u: %d", d->irq, cpu, prio, st);
}

static void wait_delivered(struct dev *d)
{
    wait_start();
    while (READ_ONCE(d->outstanding)) {
        wait_check("device interrupt", d->irq, d->outstanding);
    }
}

/* --- ipi / dev / mixed ------------------------------------------------ */

void storm_init(struct storm *s, unsigned long n)
{
    int dst;

    s->n = n;
    for (dst = 0; dst < ncpus; dst++) {
        s->base[dst] = ipi_mbox[dst][this_cpu->idx];
        s->sent[dst] = 0;
        s->stalled[dst] = 0;
    }
}

/*
 * A message not consumed 200 ms after its IPI: say what the target's
 * presenter holds (H_IPOLL takes any server), once per message.  Not an
 * error by itself (a loaded host can be that slow), but a presented IPI
 * that a running vCPU with MSR[EE] set does not take is worth knowing.
 */
static void stall_report(int dst, uint32_t msg)
{
    static volatile int reports;
    unsigned long r[4];

    this_cpu->stalls++;
    if (atomic_inc(&reports) > 8) {
        return;
    }
    hcall(H_IPOLL, cpus[dst].server, 0, 0, 0, 0, 0, r);
    printf("XICS-GUEST STALL cpu=%d dst=%d msg=%u for 200 ms: dst xirr=0x%lx "
           "mfrr=0x%lx accepted=%lu decs=%lu\n", this_cpu->idx, dst, msg,
           r[0], r[1], cpus[dst].accepted, cpus[dst].decs);
}

/*
 * Send what can be sent now (at most s->n per destination; set n to 0
 * to stop); returns true when all that was sent is acknowledged.
 */
bool storm_step(struct storm *s)
{
    int me = this_cpu->idx, dst;
    bool done = true;

    for (dst = 0; dst < ncpus; dst++) {
        uint32_t next = s->base[dst] + s->sent[dst];

        if (s->sent[dst] < s->n && READ_ONCE(ipi_ack[dst][me]) == next) {
            WRITE_ONCE(ipi_mbox[dst][me], next + 1);
            s->sent[dst]++;
            s->sent_at[dst] = mftb();
            send_ipi(dst, IPI_PRIO);
        } else if (READ_ONCE(ipi_ack[dst][me]) != next &&
                   mftb() - s->sent_at[dst] > tb_freq / 5 &&
                   s->stalled[dst] != next) {
            stall_report(dst, next);
            s->stalled[dst] = next;
        }
        if (s->sent[dst] < s->n ||
            READ_ONCE(ipi_ack[dst][me]) != s->base[dst] + s->sent[dst]) {
            done = false;
        }
    }
    return done;
}

void load_route_round(struct load *l)
{
    int i;

    for (i = 0; i < ndevs; i++) {
        if (my_dev(i)) {
            route(&devs[i], (i + l->round) % ncpus, 1 + (l->round + i) % 7);
        }
    }
}

/* One step of the device load; returns true when all rounds are done. */
bool load_step(struct load *l)
{
    int i;

    if (l->round == l->rounds) {
        return true;
    }
    if (l->waiting) {
        for (i = 0; i < ndevs; i++) {
            if (my_dev(i) && READ_ONCE(devs[i].outstanding)) {
                wait_check("device interrupts", devs[i].irq,
                           devs[i].outstanding);
                return false;
            }
        }
        l->waiting = 0;
        if (++l->k == l->per_round) {
            l->k = 0;
            if (++l->round == l->rounds) {
                return true;
            }
            load_route_round(l);
        }
    }
    wait_start();
    for (i = 0; i < ndevs; i++) {
        struct dev *d = &devs[i];

        if (!my_dev(i)) {
            continue;
        }
        if (d->kind == DEV_EDU && l->k % 4 == 3) {
            dev_start_factorial(d, 1 + l->k % 12);
        } else {
            dev_raise(d, dev_bit(d, l->k + l->round));
        }
    }
    l->waiting = 1;
    return false;
}

static void phase_ipi(void)
{
    struct storm s;

    storm_init(&s, opt_n);
    wait_start();
    while (!storm_step(&s)) {
        wait_check("IPI acks", 0, 0);
    }
}

static void phase_dev(void)
{
    struct load l = { opt_n / 25 + 1, 25, 0, 0, 0 };

    load_route_round(&l);
    while (!load_step(&l)) {
        cpu_relax();
    }
}

static void phase_mixed(void)
{
    struct load l = { opt_n / 25 + 1, 25, 0, 0, 0 };
    struct storm s;
    bool sdone = false, ldone = false;

    storm_init(&s, opt_n);
    load_route_round(&l);
    wait_start();
    while (!sdone || !ldone) {
        if (!sdone) {
            sdone = storm_step(&s);
        }
        if (!ldone) {
            ldone = load_step(&l);
        }
        if (mftb() > this_cpu->wait_deadline + 60 * tb_freq) {
            fail("mixed phase does not finish");
        }
    }
}

/* --- order ------------------------------------------------------------ */

static const uint32_t order_prios[MAX_DEVS] = { 6, 2, 7, 1, 4, 8, 9, 10 };
#define ORDER_IPI_PRIO 3

static void order_on_this_cpu(void)
{
    struct cpu *me = this_cpu;
    uint32_t xirr;
    int i, j;

    irq_disable();
    set_cppr(0);
    for (i = 0; i < ndevs; i++) {
        route(&devs[i], me->idx, order_prios[i]);
    }
    for (i = 0; i < ndevs; i++) {
        dev_raise(&devs[i], dev_bit(&devs[i], i));
        me->forced_rejects++;
    }
    send_ipi(me->idx, ORDER_IPI_PRIO);
    xirr = ipoll_xirr();
    check(!(xirr & 0xffffff), "order: 0x%x presented under CPPR 0", xirr);
    me->log_n = 0;
    me->log_on = 1;
    set_cppr(0xff);
    me->forced_resends += ndevs;
    irq_enable();
    wait_start();
    while (me->log_n < ndevs + 1) {
        wait_check("prioritised interrupts", me->log_n, ndevs + 1);
    }
    for (i = 0; i < ndevs; i++) {
        wait_delivered(&devs[i]);
    }
    irq_disable();
    me->log_on = 0;
    check(me->log_n == ndevs + 1, "order: %d deliveries for %d sources",
          me->log_n, ndevs + 1);
    for (i = 1; i < me->log_n; i++) {
        check(me->log_prio[i - 1] < me->log_prio[i],
              "order: priority %u (0x%x) delivered before %u (0x%x)",
              me->log_prio[i - 1], me->log_xisr[i - 1], me->log_prio[i],
              me->log_xisr[i]);
    }
    for (i = 0; i < me->log_n; i++) {
        for (j = i + 1; j < me->log_n; j++) {
            check(me->log_xisr[i] != me->log_xisr[j],
                  "order: 0x%x delivered twice", me->log_xisr[i]);
        }
    }
    irq_enable();
}

static void phase_order(void)
{
    int c;

    for (c = 0; c < ncpus; c++) {
        if (c == this_cpu->idx && ndevs) {
            order_on_this_cpu();
        }
        barrier();
    }
}

/* --- mask ------------------------------------------------------------- */

/* A self-IPI less favoured than the device: once it is taken, any
 * delivery of the device would have been presented before it. */
static void flush_with_ipi(void)
{
    uint64_t before = this_cpu->ipis;

    send_ipi(this_cpu->idx, DEV_PRIO + 1);
    wait_start();
    while (READ_ONCE(this_cpu->ipis) == before) {
        wait_check("flush IPI", 0, 0);
    }
}

static void mask_one(struct dev *d, int how, uint64_t seq)
{
    struct cpu *me = this_cpu;
    uint32_t xirr;
    int st;

    route(d, me->idx, DEV_PRIO);
    d->masked = 1;
    sync();
    st = how ? set_xive(d->irq, me->server, 0xff) : int_off(d->irq);
    check(st == 0, "mask 0x%x: %d", d->irq, st);
    dev_raise(d, dev_bit(d, seq));
    xirr = ipoll_xirr();
    check((xirr & 0xffffff) != d->irq, "masked 0x%x is presented", d->irq);
    flush_with_ipi();
    check(READ_ONCE(d->outstanding) != 0, "masked 0x%x was delivered",
          d->irq);
    d->masked = 0;
    sync();
    st = how ? set_xive(d->irq, me->server, DEV_PRIO) : int_on(d->irq);
    check(st == 0, "unmask 0x%x: %d", d->irq, st);
    wait_delivered(d);
}

static void phase_mask(void)
{
    int i;

    for (i = 0; i < ndevs; i++) {
        if (my_dev(i)) {
            mask_one(&devs[i], 0, 1);
            mask_one(&devs[i], 1, 2);
        }
    }
}

/* --- cppr ------------------------------------------------------------- */

static void cppr_one(struct dev *d)
{
    struct cpu *me = this_cpu;
    uint32_t xisr;
    uint64_t ipis;

    irq_disable();
    route(d, me->idx, DEV_PRIO);

    /* A raised CPPR rejects the presented LSI; lowering it resends. */
    dev_raise(d, dev_bit(d, 3));
    xisr = ipoll_xirr() & 0xffffff;
    check(xisr == d->irq, "cppr: 0x%x presented, expected 0x%x", xisr,
          d->irq);
    set_cppr(DEV_PRIO - 1);
    me->forced_rejects++;
    xisr = ipoll_xirr() & 0xffffff;
    check(xisr == 0, "cppr: 0x%x still presented under CPPR %u", xisr,
          DEV_PRIO - 1);
    set_cppr(0xff);
    me->forced_resends++;
    xisr = ipoll_xirr() & 0xffffff;
    check(xisr == d->irq, "cppr: 0x%x presented after resend, expected 0x%x",
          xisr, d->irq);
    irq_enable();
    wait_delivered(d);
    irq_disable();

    /* A more favoured IPI rejects the presented LSI, which comes after. */
    dev_raise(d, dev_bit(d, 4));
    me->log_n = 0;
    me->log_on = 1;
    send_ipi(me->idx, DEV_PRIO - 3);
    me->forced_rejects++;
    xisr = ipoll_xirr() & 0xffffff;
    check(xisr == XICS_IPI, "cppr: 0x%x presented, expected the IPI", xisr);
    irq_enable();
    wait_delivered(d);
    wait_start();
    while (me->log_n < 2) {
        wait_check("IPI and LSI", me->log_n, 2);
    }
    irq_disable();
    me->log_on = 0;
    check(me->log_n == 2 && me->log_xisr[0] == XICS_IPI &&
          me->log_xisr[1] == d->irq,
          "cppr: delivered %d: 0x%x 0x%x, expected IPI then 0x%x",
          me->log_n, me->log_xisr[0], me->log_xisr[1], d->irq);

    /* A presented IPI is withdrawn by CPPR and comes back. */
    ipis = me->ipis;
    send_ipi(me->idx, DEV_PRIO);
    check((ipoll_xirr() & 0xffffff) == XICS_IPI, "cppr: IPI not presented");
    set_cppr(DEV_PRIO - 2);
    check((ipoll_xirr() & 0xffffff) == 0, "cppr: IPI presented under CPPR");
    set_cppr(0xff);
    check((ipoll_xirr() & 0xffffff) == XICS_IPI, "cppr: IPI not re-presented");
    irq_enable();
    wait_start();
    while (me->ipis == ipis) {
        wait_check("re-presented IPI", 0, 0);
    }
}

static void phase_cppr(void)
{
    int i;

    for (i = 0; i < ndevs; i++) {
        if (my_dev(i)) {
            cppr_one(&devs[i]);
        }
    }
    if (!ndevs) {
        return;
    }
}

/* --- driver ----------------------------------------------------------- */

static const struct {
    const char *name;
    void (*fn)(void);
    bool needs_devs;
} phases[] = {
    { "ipi", phase_ipi, false },
    { "dev", phase_dev, true },
    { "mixed", phase_mixed, true },
    { "order", phase_order, true },
    { "mask", phase_mask, true },
    { "cppr", phase_cppr, true },
};

const char *opt_phases = "ipi,dev,mixed,order,mask,cppr";

static bool phase_selected(const char *name)
{
    const char *p = opt_phases;
    size_t n = strlen(name);

    while (*p) {
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0 ||
                                      p[n] == ' ')) {
            return true;
        }
        while (*p && *p != ',') {
            p++;
        }
        if (*p == ',') {
            p++;
        }
    }
    return false;
}

void print_counts(void)
{
    uint64_t raised = 0, delivered = 0, msgs = 0;
    int i;

    for (i = 0; i < ncpus; i++) {
        struct cpu *c = &cpus[i];

        printf("XICS-GUEST CPU idx=%d reg=%u server=%u xirr=%lu accepted=%lu "
               "spurious=%lu eois=%lu ipis=%lu msgs=%lu empty=%lu sent=%lu "
               "dev=%lu decs=%lu rejects=%lu resends=%lu stalls=%lu "
               "errors=%lu\n",
               c->idx, c->reg, c->server, c->xirr_calls, c->accepted,
               c->spurious, c->eois, c->ipis, c->ipi_msgs, c->ipis_empty,
               c->ipis_sent, c->dev_irqs, c->decs, c->forced_rejects,
               c->forced_resends, c->stalls, c->errors);
        msgs += c->ipi_msgs;
    }
    for (i = 0; i < ndevs; i++) {
        struct dev *d = &devs[i];

        printf("XICS-GUEST DEVSTAT idx=%d irq=0x%x type=%s raised=%lu "
               "delivered=%lu bad=%lu\n", i, d->irq, d->msi ? "msi" : "lsi",
               d->raised, d->delivered, d->bad);
        raised += d->raised;
        delivered += d->delivered;
        check(d->raised == d->delivered && !d->bad && !d->outstanding,
              "device %d: raised %lu, delivered %lu, bad %lu", i, d->raised,
              d->delivered, d->bad);
    }
    printf("XICS-GUEST TOTAL cpus=%d devs=%d raised=%lu delivered=%lu "
           "msgs=%lu\n", ncpus, ndevs, raised, delivered, msgs);
}

void run_tests(void)
{
    unsigned i;
    int c;

    barrier();
    for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        uint64_t t0;

        if (!phase_selected(phases[i].name) ||
            (phases[i].needs_devs && !ndevs)) {
            continue;
        }
        t0 = mftb();
        phases[i].fn();
        barrier();
        if (this_cpu->idx == 0) {
            printf("XICS-GUEST PHASE %s done in %lu ms\n", phases[i].name,
                   (mftb() - t0) * 1000 / tb_freq);
        }
    }
    finish();
    {
        unsigned long per_pair = 0;

        if (phase_selected("ipi")) {
            per_pair += opt_n;
        }
        if (phase_selected("mixed") && ndevs) {
            per_pair += opt_n;
        }
        for (c = 0; per_pair && c < ncpus; c++) {
            int src;

            for (src = 0; src < ncpus; src++) {
                check(ipi_ack[c][src] == per_pair,
                      "IPI messages %d -> %d: %u of %lu", src, c,
                      ipi_ack[c][src], per_pair);
            }
        }
        print_counts();
        verdict();
    }
}

/* Print "XICS-GUEST RESULT PASS" or FAIL from the errors counted. */
void verdict(void)
{
    uint64_t errors = 0;
    int c;

    for (c = 0; c < ncpus; c++) {
        errors += cpus[c].errors;
    }
    if (errors) {
        printf("XICS-GUEST RESULT FAIL errors=%lu\n", errors);
    } else {
        printf("XICS-GUEST RESULT PASS\n");
    }
}
