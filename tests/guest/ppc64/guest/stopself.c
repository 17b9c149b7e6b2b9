/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xics-guest stop-self mode (mode=stopself n=ITERATIONS): a vCPU that
 * masks its interrupts and stops itself with RTAS stop-self must stay
 * stopped while the other vCPUs fire IPIs at it.  stop-self sets the
 * "RTAS stopped" state, halts the vCPU and clears its power-saving exit
 * causes (LPCR), so nothing may wake it until start-cpu.  The hazard:
 * another vCPU thread raising the line without the BQL judges it
 * against the stopping vCPU's old MSR[EE] / LPCR, sets the hard
 * interrupt request after the vCPU has masked and halted, and the
 * vCPU's has-work check takes that for a wake-up: stop-self returns.
 *
 * Every iteration: CPU 0 starts CPU 1 with start-cpu; CPU 1 says it is
 * up (its CPPR is 0xff: IPIs are deliverable), takes one to three IPIs
 * (even iterations with MSR[EE] set, through the handler; odd ones
 * masked, polling H_XIRR), masks and calls stop-self.  CPU 0, and CPUs
 * 2.. at -smp 3 or more, fire H_IPI at CPU 1's server all along, until
 * a varying number of calls after CPU 1 entered stop-self and
 * query-cpu-stopped-state reports it stopped.  Should stop-self ever
 * return, CPU 1 counts it and stops itself again; CPU 0 checks that
 * count after every iteration and at the end, and start-cpu refusing
 * a CPU that is not halted is an error too.  The boot CPU prints
 * "XICS-GUEST STOPSELF ..." (iterations, returns, IPIs) and the verdict.
 */
#include "guest.h"

#define VICTIM          1

/* Shared between the CPUs, hence volatile. */
static volatile uint32_t cur_iter;         /* CPU 0: iteration CPU 1 runs */
static volatile uint32_t victim_up;        /* CPU 1: iteration it is up for */
static volatile uint32_t victim_stopping;  /* CPU 1: ... entered stop-self */
static volatile uint32_t stop_returns;     /* stop-self returned on CPU 1 */
static volatile uint32_t last_return_iter; /* ... last in this iteration */
/* IPIs CPU 1 took with MSR[EE] set and while masked (polled). */
static volatile uint64_t victim_ipis_ee, victim_ipis_polled;
static volatile uint32_t fire_iter;        /* CPU 0: fire at CPU 1 (0: hold) */
static volatile uint32_t fire_seen[MAX_CPUS]; /* fire_iter each CPU last saw */
static volatile int stopself_done;         /* CPU 0: the run is over */
/* Results of CPU 0's loop. */
static uint32_t iters_done;
static uint64_t start_errors, run_ticks;

static void fire(void)
{
    /* Priorities 3..6: some re-present a pending IPI more favoured. */
    uint32_t prio = 3 + (this_cpu->ipis_sent & 3);

    hcall(H_IPI, cpus[VICTIM].server, prio, 0, 0, 0, 0, NULL);
    this_cpu->ipis_sent++;
}

static int stopped_state(uint32_t reg)
{
    uint32_t st[2];

    if (rtas_call("query-cpu-stopped-state", 1, 2, st, reg) != 0) {
        return -1;
    }
    return st[1];
}

/* Take @want IPIs with MSR[EE] clear: accept, reset MFRR, EOI. */
static void take_masked(unsigned long want)
{
    struct cpu *me = this_cpu;
    uint64_t deadline = tb_deadline(30);
    unsigned long taken = 0;

    while (taken < want) {
        unsigned long r[4];
        uint32_t xirr;

        hcall(H_XIRR, 0, 0, 0, 0, 0, 0, r);
        me->xirr_calls++;
        xirr = r[0];
        if (!(xirr & 0xffffff)) {
            me->spurious++;
            if (mftb() > deadline) {
                check(false, "stopself: iteration %u: CPU 1 polled no IPI "
                      "in 30 s", cur_iter);
                return;
            }
            cpu_relax();
            continue;
        }
        me->accepted++;
        check((xirr & 0xffffff) == XICS_IPI,
              "stopself: source 0x%x presented, only IPIs are sent",
              xirr & 0xffffff);
        hcall(H_IPI, me->server, 0xff, 0, 0, 0, 0, NULL);
        hcall(H_EOI, xirr, 0, 0, 0, 0, 0, NULL);
        me->eois++;
        me->ipis++;
        victim_ipis_polled++;
        taken++;
    }
}

/*
 * CPU 1, entered through secondary_main() on every start-cpu: CPPR
 * 0xff and MSR[EE] set already.
 */
static void victim(void)
{
    struct cpu *me = this_cpu;
    uint32_t it = READ_ONCE(cur_iter);
    unsigned long want = 1 + it % 3;
    uint32_t st;

    asm volatile("mtspr 22, %0" :: "r"(opt_dec));
    WRITE_ONCE(victim_up, it);
    sync();
    if (it == 0) {
        /* The first start, from smp_start_secondaries(): just stop. */
        irq_disable();
    } else if (it % 2 == 0) {
        uint64_t before = me->ipis, deadline = tb_deadline(30);

        while (READ_ONCE(me->ipis) - before < want) {
            if (mftb() > deadline) {
                check(false, "stopself: iteration %u: CPU 1 took no IPI "
                      "with MSR[EE] set in 30 s", it);
                break;
            }
            cpu_relax();
        }
        victim_ipis_ee += me->ipis - before;
        /* Mask right after the handler lowered the line. */
        irq_disable();
    } else {
        irq_disable();
        take_masked(want);
    }
    WRITE_ONCE(victim_stopping, it);
    sync();
    rtas_call("stop-self", 0, 1, &st);
    /* Only reached when QEMU let the stopped vCPU run again. */
    for (;;) {
        atomic_inc(&stop_returns);
        WRITE_ONCE(last_return_iter, it);
        sync();
        rtas_call("stop-self", 0, 1, &st);
    }
}

/* CPUs 2..: fire at CPU 1 while CPU 0 says so. */
static void shooter(void)
{
    int me = this_cpu->idx;

    while (!READ_ONCE(stopself_done)) {
        uint32_t f = READ_ONCE(fire_iter);

        if (f) {
            fire();
        } else {
            cpu_relax();
        }
        WRITE_ONCE(fire_seen[me], f);
    }
    WRITE_ONCE(this_cpu->finished, 1);
    irq_disable();
    for (;;) {
        hcall(H_CEDE, 0, 0, 0, 0, 0, 0, NULL);
        irq_disable();
    }
}

static void hold_fire(void)
{
    uint64_t deadline = tb_deadline(30);
    int c;

    WRITE_ONCE(fire_iter, 0);
    sync();
    for (c = 2; c < ncpus; c++) {
        while (READ_ONCE(fire_seen[c]) != 0) {
            if (mftb() > deadline) {
                fail("stopself: CPU %d keeps firing", c);
            }
            cpu_relax();
        }
    }
}

/* Spin for @ticks of timebase (lets a wrongly woken CPU 1 show). */
static void settle(uint64_t ticks)
{
    uint64_t end = mftb() + ticks;

    while (mftb() < end) {
        cpu_relax();
    }
}

/* Wait until query-cpu-stopped-state says CPU 1 is stopped (0). */
static bool wait_stopped(uint32_t it, bool firing)
{
    uint64_t deadline = tb_deadline(30);
    int s, i;

    while ((s = stopped_state(cpus[VICTIM].reg)) != 0) {
        if (mftb() > deadline) {
            check(false, "stopself: iteration %u: CPU 1 not stopped after "
                  "30 s (query-cpu-stopped-state %d)", it, s);
            return false;
        }
        for (i = 0; firing && i < 8; i++) {
            fire();
        }
        cpu_relax();
    }
    return true;
}

/* start-cpu CPU 1 for iteration @it; false if it cannot be started. */
static bool start_victim(uint32_t it)
{
    uint32_t st;
    int tries;

    WRITE_ONCE(cur_iter, it);
    sync();
    for (tries = 0; tries < 100; tries++) {
        if (rtas_call("start-cpu", 3, 1, &st, cpus[VICTIM].reg,
                      (uint32_t)(unsigned long)_secondary_start,
                      (uint32_t)(unsigned long)&cpus[VICTIM]) == 0) {
            return true;
        }
        /* Refused: CPU 1 is not halted, so stop-self did not hold. */
        start_errors++;
        check(false, "stopself: iteration %u: start-cpu refused (status "
              "%d): CPU 1 is running after stop-self", it, (int)st);
        settle(tb_freq / 100);
    }
    return false;
}

static void conductor(void)
{
    uint64_t t0;
    uint32_t it, seen_returns = 0, done = 0;
    unsigned long extra, i;

    if (!rtas_token("stop-self")) {
        fail("stopself: no RTAS token for stop-self");
    }
    if (ncpus < 2) {
        fail("stopself: needs at least 2 CPUs");
    }
    /* CPU 1 stops itself once smp_start_secondaries() started it. */
    wait_stopped(0, false);
    t0 = mftb();
    for (it = 1; it <= opt_n; it++) {
        uint64_t deadline;

        if (!start_victim(it)) {
            break;
        }
        deadline = tb_deadline(30);
        while (READ_ONCE(victim_up) != it) {
            if (mftb() > deadline) {
                fail("stopself: iteration %u: CPU 1 did not come up", it);
            }
            cpu_relax();
        }
        WRITE_ONCE(fire_iter, it);
        sync();
        /* Fire until CPU 1 is in stop-self, then a varying while more. */
        deadline = tb_deadline(30);
        while (READ_ONCE(victim_stopping) != it) {
            fire();
            if (mftb() > deadline) {
                fail("stopself: iteration %u: CPU 1 did not reach "
                     "stop-self", it);
            }
        }
        extra = (it * 37) % 97;
        for (i = 0; i < extra; i++) {
            fire();
        }
        if (!wait_stopped(it, true)) {
            break;
        }
        hold_fire();
        done = it;
        settle(tb_freq / 1000);
        if (READ_ONCE(stop_returns) != seen_returns) {
            seen_returns = READ_ONCE(stop_returns);
            check(false, "stopself: iteration %u: stop-self returned on "
                  "CPU 1 (%u times so far, last in iteration %u)", it,
                  seen_returns, last_return_iter);
            if (seen_returns >= 20) {
                break;
            }
        }
        if (stopped_state(cpus[VICTIM].reg) != 0) {
            check(false, "stopself: iteration %u: CPU 1 no longer reported "
                  "stopped", it);
        }
    }
    hold_fire();
    /* A late wrong wake-up still counts. */
    settle(tb_freq / 20);
    WRITE_ONCE(stopself_done, 1);
    check(READ_ONCE(stop_returns) == seen_returns,
          "stopself: stop-self returned on CPU 1 after the last iteration "
          "(%u times in all, last in iteration %u)", stop_returns,
          last_return_iter);
    check(done == opt_n, "stopself: %u of %lu iterations done", done, opt_n);
    iters_done = done;
    run_ticks = mftb() - t0;
}

void run_stopself(void)
{
    uint64_t sent = 0;
    int c;

    if (this_cpu->idx == VICTIM) {
        victim();
    } else if (this_cpu->idx != 0) {
        shooter();
    }
    conductor();
    for (c = 2; c < ncpus; c++) {
        uint64_t deadline = tb_deadline(30);

        while (!READ_ONCE(cpus[c].finished)) {
            if (mftb() > deadline) {
                fail("stopself: CPU %d does not finish", c);
            }
            cpu_relax();
        }
    }
    for (c = 0; c < ncpus; c++) {
        sent += cpus[c].ipis_sent;
    }
    printf("XICS-GUEST STOPSELF iterations=%u of=%lu cpus=%d returned=%u "
           "start_errors=%lu ipis_sent=%lu ipis_ee=%lu ipis_polled=%lu "
           "ms=%lu\n", iters_done, opt_n, ncpus, stop_returns, start_errors,
           sent, victim_ipis_ee, victim_ipis_polled,
           run_ticks * 1000 / tb_freq);
    print_counts();
    verdict();
}
