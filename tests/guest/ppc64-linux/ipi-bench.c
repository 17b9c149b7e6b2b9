/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * ipi-bench: a static ppc64le Linux userspace program, run by the /init of
 * the Linux-guest XICS benchmark (ipi-bench-init.sh, driven from the host
 * by xics-linux-bench.py).  It runs one workload for a given number of
 * seconds, timed with the guest's own clock (CLOCK_MONOTONIC, i.e. the
 * guest timebase), and prints one line
 *     BENCH <workload> <operations per second> ops=N seconds=S cpus=N ipis=N
 * where ipis is how many interrupts the guest's IPI rows of
 * /proc/interrupts ("IPI" with XICS, "IPI-<node>" with XIVE; on x86,
 * where it also runs as the nested AVIC test's L2 load, the function
 * call and rescheduling rows CAL and RES) counted during the workload,
 * on all CPUs.
 *
 *   futex-pingpong  two threads, pinned to CPU 0 and CPU 1 (both on CPU 0
 *                   with one CPU), hand a shared word back and forth with
 *                   FUTEX_WAIT_PRIVATE / FUTEX_WAKE_PRIVATE; the rate is
 *                   round trips.  With cpuidle.off=1 the waiting CPU
 *                   H_CEDEs, so every wake-up is an IPI to an idle vCPU.
 *   membarrier      MEMBARRIER_CMD_PRIVATE_EXPEDITED calls from CPU 0
 *                   while one thread spins on each other CPU: every call
 *                   IPIs all of them and waits for their answers.  With
 *                   one CPU there is nobody to interrupt; the rate is
 *                   still reported.
 *
 * Usage: ipi-bench futex-pingpong|membarrier SECONDS
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "ipi-bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) < 0) {
        die("sched_setaffinity");
    }
}

/*
 * Interrupts counted on the IPI rows of /proc/interrupts, all CPUs: the
 * row named "IPI" (XICS) or "IPI-<node>" (XIVE, one per node), or the
 * rows labelled CAL and RES (x86).
 */
static bool x86_ipi_row(const char *line)
{
    line += strspn(line, " ");
    return !strncmp(line, "CAL:", 4) || !strncmp(line, "RES:", 4);
}

static unsigned long long ipi_count(void)
{
    unsigned long long total = 0, v;
    char line[4096];
    FILE *f = fopen("/proc/interrupts", "r");

    if (!f) {
        return 0;
    }
    while (fgets(line, sizeof(line), f)) {
        size_t len = strcspn(line, "\n");
        char *name, *p;
        int n;

        line[len] = '\0';
        while (len > 0 && line[len - 1] == ' ') {
            line[--len] = '\0';
        }
        name = strrchr(line, ' ');
        p = strchr(line, ':');
        if (!name || !p || p > name ||
            (strcmp(name + 1, "IPI") != 0 &&
             strncmp(name + 1, "IPI-", 4) != 0 && !x86_ipi_row(line))) {
            continue;
        }
        for (p++; sscanf(p, " %llu%n", &v, &n) == 1; p += n) {
            total += v;
        }
    }
    fclose(f);
    return total;
}

static long futex(atomic_int *word, int op, int val)
{
    return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* 1: the main thread (CPU 0) handed over; 0: the partner handed back. */
static atomic_int turn;
static atomic_int stop;

static void *partner(void *arg)
{
    pin(*(int *)arg);
    for (;;) {
        while (atomic_load(&turn) == 0) {
            futex(&turn, FUTEX_WAIT_PRIVATE, 0);
        }
        if (atomic_load(&stop)) {
            return NULL;
        }
        atomic_store(&turn, 0);
        futex(&turn, FUTEX_WAKE_PRIVATE, 1);
    }
}

static unsigned long long futex_pingpong(int ncpu, double secs,
                                         double *elapsed)
{
    int cpu = ncpu > 1 ? 1 : 0;
    unsigned long long rounds = 0;
    double start, t;
    pthread_t th;

    pin(0);
    atomic_store(&turn, 0);
    atomic_store(&stop, 0);
    errno = pthread_create(&th, NULL, partner, &cpu);
    if (errno) {
        die("pthread_create");
    }
    start = now();
    do {
        atomic_store(&turn, 1);
        futex(&turn, FUTEX_WAKE_PRIVATE, 1);
        while (atomic_load(&turn) == 1) {
            futex(&turn, FUTEX_WAIT_PRIVATE, 1);
        }
        rounds++;
        t = now();
    } while (t - start < secs);
    *elapsed = t - start;
    atomic_store(&stop, 1);
    atomic_store(&turn, 1);
    futex(&turn, FUTEX_WAKE_PRIVATE, 1);
    pthread_join(th, NULL);
    return rounds;
}

static atomic_int spinners_running;

static void *spinner(void *arg)
{
    pin((int)(long)arg);
    atomic_fetch_add(&spinners_running, 1);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        /* stay in user mode on this CPU */
    }
    return NULL;
}

static long membarrier(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0, 0);
}

static unsigned long long membarrier_calls(int ncpu, double secs,
                                           double *elapsed)
{
    unsigned long long calls = 0;
    pthread_t *th = calloc(ncpu, sizeof(*th));
    double start, t;
    long supported;
    int i;

    supported = membarrier(MEMBARRIER_CMD_QUERY);
    if (supported < 0) {
        die("membarrier(MEMBARRIER_CMD_QUERY)");
    }
    if (!(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
        fprintf(stderr, "ipi-bench: no MEMBARRIER_CMD_PRIVATE_EXPEDITED\n");
        exit(1);
    }
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) < 0) {
        die("membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)");
    }
    pin(0);
    atomic_store(&stop, 0);
    atomic_store(&spinners_running, 0);
    for (i = 1; i < ncpu; i++) {
        errno = pthread_create(&th[i], NULL, spinner, (void *)(long)i);
        if (errno) {
            die("pthread_create");
        }
    }
    while (atomic_load(&spinners_running) < ncpu - 1) {
        sched_yield();
    }
    start = now();
    do {
        if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) < 0) {
            die("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)");
        }
        calls++;
        t = now();
    } while (t - start < secs);
    *elapsed = t - start;
    atomic_store(&stop, 1);
    for (i = 1; i < ncpu; i++) {
        pthread_join(th[i], NULL);
    }
    free(th);
    return calls;
}

int main(int argc, char **argv)
{
    unsigned long long ops, ipis;
    double secs, elapsed = 0;
    long ncpu;
    char *end;

    if (argc != 3) {
        fprintf(stderr,
                "usage: ipi-bench futex-pingpong|membarrier SECONDS\n");
        return 2;
    }
    secs = strtod(argv[2], &end);
    if (*end || !(secs > 0)) {
        fprintf(stderr, "ipi-bench: bad SECONDS %s\n", argv[2]);
        return 2;
    }
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) {
        ncpu = 1;
    }
    ipis = ipi_count();
    if (!strcmp(argv[1], "futex-pingpong")) {
        ops = futex_pingpong(ncpu, secs, &elapsed);
    } else if (!strcmp(argv[1], "membarrier")) {
        ops = membarrier_calls(ncpu, secs, &elapsed);
    } else {
        fprintf(stderr, "ipi-bench: unknown workload %s\n", argv[1]);
        return 2;
    }
    ipis = ipi_count() - ipis;
    printf("BENCH %s %.1f ops=%llu seconds=%.3f cpus=%ld ipis=%llu\n",
           argv[1], ops / elapsed, ops, elapsed, ncpu, ipis);
    fflush(stdout);
    return 0;
}
