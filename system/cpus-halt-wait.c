/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The BQL-free halt wait of MTTCG vCPUs whose target opts in
 * (CPUState::halt_wait_event, TCGCPUOps::cpu_exec_interrupt_unlocked):
 * qemu_wait_halted_unlocked() waits for the wake-up of a halted vCPU
 * on its halt_event, with adaptive halt polling before it sleeps, and
 * on pauses, when vCPU threads wait for host CPUs, yields the host CPU
 * to a vCPU thread that waits for it with an interrupt to take
 * (directed pause-loop yielding; cpus_interrupt_done() is its other
 * half, called by pseries' H_EOI in hw/ppc/spapr_hcall_unlocked.c).
 * Called by the MTTCG loop (accel/tcg/tcg-accel-ops-mttcg.c) when
 * cpu_exec() returns EXCP_HLT or EXCP_HALTED, or EXCP_INTERRUPT with the
 * vCPU halted; tuned by the TCG accelerator (accel/tcg/tcg-all.c:
 * x-halt-poll-ns, cpus_set_pause_yield()); cpus_pause_yields() tells
 * ppc's translator whether priority nops should leave the TB.  The kick
 * side is qemu_cpu_kick() in system/cpus.c, which sets halt_event.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/main-loop.h"
#include "qemu/plugin.h"
#include "qemu/rcu.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "exec/cpu-common.h"
#include "exec/cpu-interrupt.h"
#include "hw/core/cpu.h"
#include "system/cpus.h"

/*
 * Halt polling, as KVM does for its vCPUs: before a halted vCPU sleeps,
 * it spins for a while watching for a kick (every qemu_cpu_kick() of an
 * MTTCG vCPU sets exit_request).  A wake-up within the window costs no
 * host futex wake-up and scheduling latency, which dominate IPI round
 * trips to idle vCPUs.  The window adapts per vCPU thread, from the
 * length of each whole halt: it grows (doubling, from a tenth of the
 * maximum) when the halt was longer than the window but not longer than
 * the maximum, and drops to nothing when it was longer than the maximum.
 * One deadline per halt, so kicks that bring no work cannot extend it.
 * Each turn yields the host CPU to runnable threads.  The maximum comes
 * from the accelerator (-accel tcg,x-halt-poll-ns=); 0 turns it off.
 */
static int64_t halt_poll_ns_max;
static __thread int64_t halt_poll_ns;

void cpus_set_halt_poll_ns(int64_t max_ns)
{
    qatomic_set(&halt_poll_ns_max, max_ns);
}

/*
 * Pause-loop yielding, as KVM's pause-loop exits do: a vCPU that pauses
 * (ppc's priority nops at the start of a guest spin loop) gives its host
 * CPU to a vCPU that waits for it (directed, below).  Only worth it when
 * vCPU threads wait for host CPUs (set by the accelerator when maxcpus
 * is above the number of host CPUs); otherwise it only delays the
 * spinner.  Set once, when the accelerator initialises the machine,
 * before any vCPU exists or any code is translated: translators may
 * read it.
 */
static bool pause_yield;

void cpus_set_pause_yield(bool on)
{
    qatomic_set(&pause_yield, on);
}

bool cpus_pause_yields(void)
{
    return qatomic_read(&pause_yield);
}

static void qemu_yield_host_cpu(void)
{
#ifdef _WIN32
    SwitchToThread();
#else
    sched_yield();
#endif
}

/*
 * Directed pause-loop yielding.  A host switches between CPU-bound
 * threads at its scheduler tick (1 to 4 ms), so a host CPU handed to a
 * vCPU thread with nothing to do is lost until then.  Yielding at every
 * pause did that: a guest sending IPIs and spinning for their answers
 * gave its host CPU to a vCPU that had answered already and went on
 * with its own (guest user) loop, and waited for the tick, often two.
 * So a yield goes only where it helps:
 * - a pausing vCPU yields when a vCPU last seen on its host CPU has an
 *   interrupt pending: that one waits for this host CPU, and what the
 *   spinner waits for may well be its answer;
 * - a vCPU that has just ended an interrupt (cpus_interrupt_done())
 *   yields when a vCPU last seen on its host CPU is neither halted nor
 *   stopped: that one waits for this host CPU, maybe spinning for this
 *   very answer.
 * KVM's directed yield (kvm_vcpu_on_spin()) hands the CPU to any
 * preempted vCPU with yield_to(), aiming at the holder of the lock the
 * spinner waits for.  User space has no yield_to(), and sched_yield()
 * only helps threads that share the host CPU, hence the host CPU each
 * vCPU thread notes (CPUState::host_cpu_seen, the host CPU number plus
 * one, 0 unknown) when it pauses and when it ends an interrupt.
 * Threads migrate, so these are hints: a stale one costs a needless
 * yield or a useful one not made, never correctness.  A vCPU woken from
 * a halt keeps the hint from before it halted until it pauses or ends
 * an interrupt, though the host may well have placed it elsewhere.
 * The trade-off: a guest spinning on a lock whose holder was preempted
 * on the same host CPU no longer yields to it, unless the holder has an
 * interrupt pending (QEMU cannot see which vCPU holds a guest lock); it
 * spins until the host's tick, as stock QEMU's vCPUs do.  Without a
 * hint (no sched_getcpu(), or it failed) a pause yields as before.
 */
/*
 * Note and return the hint of @cpu's own thread.  Stored only when it
 * changed: other threads read it, and it shares a cache line with
 * interrupt_request, which they write.
 */
static int qemu_note_host_cpu(CPUState *cpu)
{
    int host = 0;

#ifdef CONFIG_LINUX
    host = sched_getcpu() + 1;
    if (qatomic_read(&cpu->host_cpu_seen) != host) {
        qatomic_set(&cpu->host_cpu_seen, host);
    }
#endif
    return host;
}

/*
 * Whether a vCPU other than @self was last seen on @self's host CPU
 * (@host) and, with @irq_pending, has an interrupt pending, otherwise is
 * neither halted nor stopped.  Under cpu_list_lock, since a CPU core's
 * unplug frees its vCPUs right after cpu_list_remove(); but only tried:
 * with vCPUs outnumbering host CPUs its holder may be preempted for a
 * tick, and a busy lock just means no answer (no yield).
 */
static bool qemu_host_cpu_shared_with(CPUState *self, int host,
                                      bool irq_pending)
{
    CPUState *other;
    bool found = false;

    if (qemu_mutex_trylock(&qemu_cpu_list_lock)) {
        return false;
    }
    CPU_FOREACH(other) {
        if (other == self || qatomic_read(&other->host_cpu_seen) != host) {
            continue;
        }
        if (irq_pending ? cpu_test_interrupt(other, CPU_INTERRUPT_HARD) :
                          (!qatomic_read(&other->halted) &&
                           !qatomic_read(&other->stopped))) {
            found = true;
            break;
        }
    }
    qemu_mutex_unlock(&qemu_cpu_list_lock);
    return found;
}

/* A pause of a vCPU that is not halted, with pause_yield set */
static void qemu_pause_yield(CPUState *cpu)
{
    int host = qemu_note_host_cpu(cpu);

    if (!host || qemu_host_cpu_shared_with(cpu, host, true)) {
        qemu_yield_host_cpu();
    }
}

void cpus_interrupt_done(CPUState *cpu)
{
    int host;

    if (!qatomic_read(&pause_yield) || !cpu->halt_wait_event ||
        bql_locked()) {
        return;
    }
    assert(qemu_cpu_is_self(cpu));
    host = qemu_note_host_cpu(cpu);
    if (host && qemu_host_cpu_shared_with(cpu, host, false)) {
        qemu_yield_host_cpu();
    }
}

static bool qemu_halt_poll(CPUState *cpu, int64_t deadline)
{
    while (get_clock() < deadline) {
        if (qatomic_read(&cpu->exit_request)) {
            return true;
        }
        qemu_yield_host_cpu();
    }
    return false;
}

static void qemu_halt_poll_adapt(int64_t halt_ns)
{
    int64_t max = qatomic_read(&halt_poll_ns_max);

    if (halt_ns > max) {
        halt_poll_ns = 0;
    } else if (halt_ns > halt_poll_ns) {
        halt_poll_ns = MIN(MAX(halt_poll_ns * 2, max / 10), max);
    }
}

/*
 * For a vCPU with halt_wait_event, called without the BQL by its own thread
 * once it halted (or paused): wait for the wake-up here, without the
 * BQL, while nothing else needs the thread in qemu_wait_io_event() (no
 * stop or unplug request, no queued work).  A halt (H_CEDE) and its
 * wake-up by an interrupt raised lock-free then cost no BQL round trip.
 * The protocol of halt_event as in qemu_wait_io_event(): every reason to
 * wake up comes with qemu_cpu_kick(), which sets the event.
 *
 * Returns true when the vCPU may run again without the BQL, false for
 * the locked path: also when it found work, or halted cleared by another
 * thread, while some other thread holds the BQL (qemu_bql_free()), so
 * that it never runs on state such a thread is still writing.
 */
bool qemu_wait_halted_unlocked(CPUState *cpu)
{
    int64_t start, poll_end;
    bool slept = false;
    bool run = false;

    assert(cpu->halt_wait_event && !bql_locked());
    if (qatomic_read(&cpu->stop) || qatomic_read(&cpu->unplug) ||
        !cpu_work_list_empty(cpu)) {
        return false;
    }
    if (!qatomic_read(&cpu->halted)) {
        /*
         * Not halted: a pause (ppc's priority nops in guest spin loops
         * end the TB with EXCP_HLT), or another thread woke the vCPU.
         */
        if (qatomic_read(&pause_yield)) {
            qemu_pause_yield(cpu);
        }
        return qemu_bql_free();
    }
    /* Only now: pauses above are frequent and need no clock */
    start = get_clock();
    poll_end = start + halt_poll_ns;
    /* Kicks so far are answered by the checks below, as in the loop */
    qatomic_set(&cpu->exit_request, 0);
    for (;;) {
        qemu_event_reset(&cpu->halt_event);
        if (qatomic_read(&cpu->stop) || qatomic_read(&cpu->unplug) ||
            !cpu_work_list_empty(cpu)) {
            break;
        }
        if (!qatomic_read(&cpu->halted) || cpu_has_work(cpu)) {
            run = qemu_bql_free();
            break;
        }
        if (!slept) {
            slept = true;
            WITH_RCU_READ_LOCK_GUARD() {
                qemu_plugin_vcpu_idle_cb(cpu);
            }
        }
        if (qemu_halt_poll(cpu, poll_end)) {
            qatomic_set(&cpu->exit_request, 0);
            continue;
        }
        qemu_event_wait(&cpu->halt_event);
    }
    if (slept) {
        WITH_RCU_READ_LOCK_GUARD() {
            qemu_plugin_vcpu_resume_cb(cpu);
        }
        qemu_halt_poll_adapt(get_clock() - start);
    }
    return run;
}
