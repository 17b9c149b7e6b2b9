/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest benchmark mode (mode=bench ms=DURATION n=EOIS), timed with
 * the timebase (mftb; its frequency from the device tree):
 *  ipi   all-to-all IPI messages per second, one in flight per pair
 *  dev   device interrupts per second: each CPU raises the LSI of its
 *        own edu (routed to itself) and waits for it, in a loop
 *  eoi   cost of one H_EOI with nothing to EOI (the boot CPU alone,
 *        the others ceded): the presenter resends, which makes the
 *        source controller look for sources to resend; H_IPOLL, which
 *        does not, is the baseline
 * Results: "XICS-GUEST BENCH name=... " lines, printed by the boot CPU.
 */
#include "guest.h"

static volatile uint64_t bench_end;
static volatile uint64_t bench_count[MAX_CPUS];

static uint64_t ms_ticks(unsigned long ms)
{
    return ms * tb_freq / 1000;
}

static void report(const char *name, uint64_t count, uint64_t ticks)
{
    printf("XICS-GUEST BENCH name=%s cpus=%d count=%lu ticks=%lu "
           "per_sec=%lu\n", name, ncpus, count, ticks,
           ticks ? count * tb_freq / ticks : 0);
}

static void bench_ipi(void)
{
    struct storm s;
    uint64_t before = this_cpu->ipi_msgs, t0 = 0, total = 0;
    int i;

    if (this_cpu->idx == 0) {
        bench_end = mftb() + ms_ticks(opt_ms);
    }
    barrier();
    t0 = mftb();
    storm_init(&s, ~0UL);
    wait_start();
    while (mftb() < bench_end) {
        storm_step(&s);
    }
    s.n = 0;
    while (!storm_step(&s)) {
        wait_check("IPI acks", 0, 0);
    }
    bench_count[this_cpu->idx] = this_cpu->ipi_msgs - before;
    barrier();
    if (this_cpu->idx == 0) {
        for (i = 0; i < ncpus; i++) {
            total += bench_count[i];
        }
        report("ipi", total, bench_end - t0);
    }
}

static void bench_dev(void)
{
    int me = this_cpu->idx, i;
    struct dev *d = me < ndevs ? &devs[me] : NULL;
    uint64_t n = 0, t0, total = 0;

    if (d) {
        route(d, me, 5);
    }
    if (me == 0) {
        bench_end = mftb() + ms_ticks(opt_ms);
    }
    barrier();
    t0 = mftb();
    while (mftb() < bench_end) {
        if (!d) {
            hcall(H_CEDE, 0, 0, 0, 0, 0, 0, NULL);
            continue;
        }
        dev_raise(d, dev_bit(d, n));
        wait_start();
        while (READ_ONCE(d->outstanding)) {
            wait_check("device interrupt", d->irq, d->outstanding);
        }
        n++;
    }
    bench_count[me] = n;
    barrier();
    if (me == 0) {
        for (i = 0; i < ncpus; i++) {
            total += bench_count[i];
        }
        report("dev", total, bench_end - t0);
    }
}

static void bench_eoi(void)
{
    unsigned long i, n = opt_n;
    uint64_t t0, t1, t2;

    barrier();
    if (this_cpu->idx == 0) {
        irq_disable();
        t0 = mftb();
        for (i = 0; i < n; i++) {
            hcall(H_IPOLL, this_cpu->server, 0, 0, 0, 0, 0, NULL);
        }
        t1 = mftb();
        for (i = 0; i < n; i++) {
            hcall(H_EOI, 0xff000000, 0, 0, 0, 0, 0, NULL);
        }
        t2 = mftb();
        this_cpu->eois += n;
        irq_enable();
        printf("XICS-GUEST BENCH name=eoi cpus=%d count=%lu ticks=%lu "
               "ns_per_call=%lu ipoll_ns_per_call=%lu\n", ncpus, n, t2 - t1,
               (t2 - t1) * 1000000000UL / tb_freq / n,
               (t1 - t0) * 1000000000UL / tb_freq / n);
    }
    barrier();
}

void run_bench(void)
{
    barrier();
    bench_ipi();
    if (ndevs) {
        bench_dev();
    }
    bench_eoi();
    finish();
    print_counts();
    verdict();
}
