/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest CPUs: found under /cpus in the device tree ("reg", the
 * XICS server from "ibm,ppc-interrupt-server#s", the timebase
 * frequency); the boot CPU is the one RTAS query-cpu-stopped-state
 * reports running.  Secondaries are started with RTAS start-cpu at
 * _secondary_start with their struct cpu in r3.  A barrier whose
 * waiters cede (H_CEDE) until the last one arrives and wakes them with
 * an IPI, so idle vCPUs do not take host time from busy ones.
 */
#include "guest.h"

struct cpu cpus[MAX_CPUS];
int ncpus;
uint64_t tb_freq;

static uint8_t stacks[MAX_CPUS][STACK_SIZE] __attribute__((aligned(16)));
static void (*secondary_fn)(void);

void smp_init(void)
{
    int cpus_node = of_finddevice("/cpus");
    int ph, n = 0, boot = -1, i;
    struct cpu found[MAX_CPUS];

    if (cpus_node == -1 || cpus_node == 0) {
        fail("no /cpus node");
    }
    for (ph = of_child(cpus_node); ph && ph != -1; ph = of_peer(ph)) {
        char type[16] = "";
        uint32_t servers[8];
        uint32_t st[2];

        of_getprop(ph, "device_type", type, sizeof(type));
        if (strcmp(type, "cpu")) {
            continue;
        }
        if (n == MAX_CPUS) {
            fail("more than %d CPUs", MAX_CPUS);
        }
        memset(&found[n], 0, sizeof(found[n]));
        found[n].reg = of_getprop32(ph, "reg", 0xffffffff);
        if (of_getprop(ph, "ibm,ppc-interrupt-server#s", servers,
                       sizeof(servers)) < 4) {
            fail("cpu node without ibm,ppc-interrupt-server#s");
        }
        found[n].server = be32(servers[0]);
        tb_freq = of_getprop32(ph, "timebase-frequency", 0);
        rtas_call("query-cpu-stopped-state", 1, 2, st, found[n].reg);
        if (st[0] == 0 && st[1] == 2) {
            boot = n;
        }
        n++;
    }
    if (boot < 0) {
        fail("no CPU is running according to query-cpu-stopped-state");
    }
    if (!tb_freq) {
        fail("no timebase-frequency");
    }
    /* The boot CPU becomes index 0; this_cpu already points at cpus[0]. */
    cpus[0].reg = found[boot].reg;
    cpus[0].server = found[boot].server;
    cpus[0].idx = 0;
    for (i = 0, ncpus = 1; i < n; i++) {
        if (i != boot) {
            cpus[ncpus].reg = found[i].reg;
            cpus[ncpus].server = found[i].server;
            cpus[ncpus].idx = ncpus;
            ncpus++;
        }
    }
    cpus[0].online = 1;
}

void secondary_main(void)
{
    set_cppr(0xff);
    this_cpu->online = 1;
    sync();
    irq_enable();
    secondary_fn();
    for (;;) {
        hcall(H_CEDE, 0, 0, 0, 0, 0, 0, NULL);
    }
}

void smp_start_secondaries(void (*fn)(void))
{
    int i;

    secondary_fn = fn;
    for (i = 1; i < ncpus; i++) {
        uint32_t st;
        uint64_t deadline;

        cpus[i].stack_top = (unsigned long)&stacks[i][STACK_SIZE - 64];
        sync();
        if (rtas_call("start-cpu", 3, 1, &st, cpus[i].reg,
                      (uint32_t)(unsigned long)_secondary_start,
                      (uint32_t)(unsigned long)&cpus[i])) {
            fail("start-cpu %u failed: %d", cpus[i].reg, (int)st);
        }
        deadline = tb_deadline(30);
        while (!READ_ONCE(cpus[i].online)) {
            if (mftb() > deadline) {
                fail("cpu %d (reg %u) did not come up", i, cpus[i].reg);
            }
            cpu_relax();
        }
    }
}

uint64_t tb_deadline(uint64_t seconds)
{
    return mftb() + seconds * tb_freq;
}

static volatile int bar_count;
static volatile int bar_gen;
static volatile uint64_t bar_released;   /* timebase of the last release */

/* Wait until this CPU's presenter holds no IPI and no interrupt. */
void drain_interrupts(void)
{
    uint64_t start = mftb(), deadline = tb_deadline(60);
    bool reported = false;

    for (;;) {
        unsigned long r[4];

        irq_disable();
        hcall(H_IPOLL, this_cpu->server, 0, 0, 0, 0, 0, r);
        if (!(r[0] & 0xffffff) && (r[1] & 0xff) == 0xff) {
            return;
        }
        if (!reported && mftb() - start > tb_freq / 5) {
            /* Presented for 200 ms while this CPU enables MSR[EE]. */
            reported = true;
            this_cpu->stalls++;
            printf("XICS-GUEST STALL cpu=%d not taken for 200 ms: xirr=0x%lx "
                   "mfrr=0x%lx accepted=%lu decs=%lu\n", this_cpu->idx,
                   r[0], r[1], this_cpu->accepted, this_cpu->decs);
        }
        irq_enable();
        cpu_relax();
        if (mftb() > deadline) {
            fail("interrupts stay pending: xirr=0x%lx mfrr=0x%lx", r[0],
                 r[1]);
        }
    }
}

/*
 * All CPUs meet here.  Waiters cede until the last one arrives, which
 * wakes each of them with an IPI and then says so in its wake_gen; a
 * waiter leaves once it has that word and no interrupt is pending, so
 * no wake-up IPI spills into the next phase.
 */
void barrier(void)
{
    unsigned long msr = mfmsr();
    int gen;

    irq_disable();
    gen = bar_gen;
    if (atomic_inc(&bar_count) == ncpus) {
        int i;

        bar_count = 0;
        bar_released = mftb();
        sync();
        bar_gen = gen + 1;
        sync();
        for (i = 0; i < ncpus; i++) {
            if (i != this_cpu->idx) {
                send_ipi(i, 0x10);
                WRITE_ONCE(cpus[i].wake_gen, gen + 1);
            }
        }
    } else {
        uint64_t deadline = tb_deadline(60);

        while (READ_ONCE(bar_gen) == gen) {
            /* H_CEDE returns with MSR[EE] set; a pending IPI is taken. */
            if (opt_cede) {
                hcall(H_CEDE, 0, 0, 0, 0, 0, 0, NULL);
            } else {
                irq_enable();
                cpu_relax();
            }
            irq_disable();
            if (mftb() > deadline) {
                fail("barrier: %d of %d CPUs arrived", bar_count, ncpus);
            }
        }
        while (READ_ONCE(this_cpu->wake_gen) != gen + 1) {
            cpu_relax();
        }
        if (mftb() - bar_released > tb_freq / 5) {
            this_cpu->stalls++;
            printf("XICS-GUEST STALL cpu=%d woke %lu ms after the barrier "
                   "released it (decs=%lu)\n", this_cpu->idx,
                   (mftb() - bar_released) * 1000 / tb_freq, this_cpu->decs);
        }
    }
    drain_interrupts();
    if (msr & MSR_EE) {
        irq_enable();
    }
}

/*
 * The last meeting of a run: after it no CPU sends IPIs any more, and
 * once every CPU has drained its presenter the counts are final.
 * Returns on the boot CPU only; the others cede from then on.
 */
void finish(void)
{
    int i;

    barrier();
    irq_disable();
    drain_interrupts();
    WRITE_ONCE(this_cpu->finished, 1);
    if (this_cpu->idx != 0) {
        for (;;) {
            hcall(H_CEDE, 0, 0, 0, 0, 0, 0, NULL);
            irq_disable();
        }
    }
    for (i = 0; i < ncpus; i++) {
        while (!READ_ONCE(cpus[i].finished)) {
            cpu_relax();
        }
    }
}
