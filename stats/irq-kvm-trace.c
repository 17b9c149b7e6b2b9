/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * KVM tracepoint counters of the "irq" stats provider.
 *
 * KVM has no statistic for AVIC doorbells or GA-log notifications, but
 * it has tracepoints: kvm:kvm_avic_doorbell fires in the thread of the
 * vCPU that rings a doorbell (so a per-thread perf counter on each vCPU
 * thread counts the doorbells this VM's vCPUs rang: "kvm-avic-doorbells",
 * target "irq-vcpu"), kvm:kvm_avic_ga_log fires in the host's GA-log
 * interrupt handler, outside any VM (so it is counted on every host CPU
 * and reported host-wide: "host-kvm-avic-ga-log-notifications", target
 * "host").  Counting starts when the first query opens the counters.
 *
 * Needs KVM, tracefs and permission for perf_event_open (root or
 * CAP_PERFMON; host-wide counting also needs perf_event_paranoid <= 0
 * without it).  Otherwise the counters are absent, never zero, and the
 * reason is in the trace event irq_kvm_trace_unavailable and in HMP
 * "info irq-stats".  Called from stats/irq-stats.c before each query.
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "hw/core/cpu.h"
#include "system/kvm.h"
#include "system/irq-stats.h"
#include "irq-stats-internal.h"
#include "trace.h"
#ifdef CONFIG_LINUX
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

#define KVM_DOORBELL_EVENT "kvm_avic_doorbell"
#define KVM_GA_LOG_EVENT "kvm_avic_ga_log"

static const char *const tracefs_roots[] = {
    "/sys/kernel/tracing",
    "/sys/kernel/debug/tracing",
};

typedef struct VcpuDoorbells {
    CPUState *cpu;
    int cpu_index;
    int thread_id;
    int fd;
    Stat64 count;
    IrqStatsGroup *group;
} VcpuDoorbells;

static const IrqStatDef doorbell_def = {
    "kvm-avic-doorbells", STATS_TYPE_CUMULATIVE
};

static struct {
    bool probed;
    char *doorbell_why;         /* NULL when doorbells are counted */
    char *ga_log_why;           /* NULL when GA-log is counted */
    int doorbell_id;
    GPtrArray *vcpus;           /* VcpuDoorbells */
    GArray *ga_log_fds;         /* int, one per host CPU */
} kt;

static void set_reason(char **slot, const char *which, char *why)
{
    if (!*slot || !g_str_equal(*slot, why)) {
        trace_irq_kvm_trace_unavailable(which, why);
    }
    g_free(*slot);
    *slot = why;
}

#ifdef CONFIG_LINUX
static int tracepoint_id(const char *event, char **why)
{
    for (size_t i = 0; i < ARRAY_SIZE(tracefs_roots); i++) {
        g_autofree char *path = g_strdup_printf("%s/events/kvm/%s/id",
                                                tracefs_roots[i], event);
        g_autofree char *text = NULL;
        g_autoptr(GError) gerr = NULL;
        int64_t id;

        if (!g_file_get_contents(path, &text, NULL, &gerr)) {
            if (g_error_matches(gerr, G_FILE_ERROR, G_FILE_ERROR_ACCES) ||
                g_error_matches(gerr, G_FILE_ERROR, G_FILE_ERROR_PERM)) {
                *why = g_strdup_printf("cannot read %s: %s (needs root)",
                                       path, gerr->message);
                return -1;
            }
            continue;
        }
        id = g_ascii_strtoll(text, NULL, 10);
        if (id > 0 && id < INT_MAX) {
            return id;
        }
    }
    *why = g_strdup_printf("tracepoint kvm:%s not found in tracefs (not "
                           "mounted, or a KVM module without it)", event);
    return -1;
}

/* A counting fd, or -errno with @why set. */
static int open_counter(int id, int tid, int cpu, char **why)
{
    struct perf_event_attr attr = {
        .type = PERF_TYPE_TRACEPOINT,
        .size = sizeof(attr),
        .config = id,
    };
    long fd = syscall(SYS_perf_event_open, &attr, tid, cpu, -1,
                      PERF_FLAG_FD_CLOEXEC);
    int err = errno;

    if (fd < 0) {
        *why = g_strdup_printf("perf_event_open: %s%s", strerror(err),
                               err == EACCES || err == EPERM ?
                               " (needs CAP_PERFMON or a lower "
                               "kernel.perf_event_paranoid)" : "");
        return -err;
    }
    return fd;
}

static uint64_t read_counter(int fd)
{
    uint64_t v = 0;

    if (read(fd, &v, sizeof(v)) != sizeof(v)) {
        return 0;
    }
    return v;
}
#endif

static void probe(void)
{
#ifdef CONFIG_LINUX
    char *why = NULL;
    int ga_id;
#endif

    if (kt.probed) {
        return;
    }
    kt.probed = true;
    kt.vcpus = g_ptr_array_new();
    kt.ga_log_fds = g_array_new(FALSE, FALSE, sizeof(int));
    if (!kvm_enabled()) {
        /* Not a reason worth a trace event each query. */
        kt.doorbell_why = g_strdup("KVM is not in use");
        kt.ga_log_why = g_strdup("KVM is not in use");
        return;
    }
#ifdef CONFIG_LINUX
    kt.doorbell_id = tracepoint_id(KVM_DOORBELL_EVENT, &why);
    if (kt.doorbell_id < 0) {
        set_reason(&kt.doorbell_why, "doorbells", why);
    }
    why = NULL;
    ga_id = tracepoint_id(KVM_GA_LOG_EVENT, &why);
    if (ga_id < 0) {
        set_reason(&kt.ga_log_why, "GA-log notifications", why);
        return;
    }
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF); c++) {
        int fd = open_counter(ga_id, -1, c, &why);

        if (fd < 0) {
            if (fd == -ENODEV || fd == -EINVAL) {
                g_free(why);
                why = NULL;
                continue;       /* offline CPU */
            }
            for (guint i = 0; i < kt.ga_log_fds->len; i++) {
                close(g_array_index(kt.ga_log_fds, int, i));
            }
            g_array_set_size(kt.ga_log_fds, 0);
            set_reason(&kt.ga_log_why, "GA-log notifications", why);
            return;
        }
        g_array_append_val(kt.ga_log_fds, fd);
    }
#else
    kt.doorbell_why = g_strdup("needs a Linux host");
    kt.ga_log_why = g_strdup("needs a Linux host");
#endif
}

static void drop_vcpu(guint i)
{
    VcpuDoorbells *d = g_ptr_array_index(kt.vcpus, i);

    irq_stats_unregister(d->group);
    close(d->fd);
    g_ptr_array_remove_index(kt.vcpus, i);
    g_free(d);
}

/* Open counters of new vCPU threads, drop those of unplugged vCPUs. */
void irq_kvm_trace_refresh(void)
{
    CPUState *cpu;

    probe();
    if (kt.doorbell_id <= 0 || !kvm_enabled()) {
        return;
    }
    for (guint i = 0; i < kt.vcpus->len;) {
        VcpuDoorbells *d = g_ptr_array_index(kt.vcpus, i);
        bool live = false;

        CPU_FOREACH(cpu) {
            if (cpu == d->cpu && cpu->cpu_index == d->cpu_index &&
                cpu->thread_id == d->thread_id) {
                live = true;
            }
        }
        if (live) {
            i++;
        } else {
            drop_vcpu(i);
        }
    }
#ifdef CONFIG_LINUX
    CPU_FOREACH(cpu) {
        VcpuDoorbells *d = NULL;
        char *why = NULL;
        int fd;

        for (guint i = 0; i < kt.vcpus->len; i++) {
            VcpuDoorbells *o = g_ptr_array_index(kt.vcpus, i);
            if (o->cpu == cpu) {
                d = o;
            }
        }
        if (d) {
            stat64_set(&d->count, read_counter(d->fd));
            continue;
        }
        if (!cpu->created || cpu->thread_id <= 0) {
            continue;
        }
        fd = open_counter(kt.doorbell_id, cpu->thread_id, -1, &why);
        if (fd < 0) {
            set_reason(&kt.doorbell_why, "doorbells", why);
            return;
        }
        d = g_new0(VcpuDoorbells, 1);
        d->cpu = cpu;
        d->cpu_index = cpu->cpu_index;
        d->thread_id = cpu->thread_id;
        d->fd = fd;
        d->group = irq_stats_register(OBJECT(cpu), STATS_TARGET_IRQ_VCPU,
                                      &doorbell_def, &d->count, 1);
        g_ptr_array_add(kt.vcpus, d);
    }
    g_free(kt.doorbell_why);
    kt.doorbell_why = NULL;
#endif
}

bool irq_kvm_trace_ga_log(uint64_t *count)
{
    uint64_t sum = 0;

    probe();
    if (kt.ga_log_why || !kt.ga_log_fds->len) {
        return false;
    }
#ifdef CONFIG_LINUX
    for (guint i = 0; i < kt.ga_log_fds->len; i++) {
        sum += read_counter(g_array_index(kt.ga_log_fds, int, i));
    }
#endif
    *count = sum;
    return true;
}

const char *irq_kvm_trace_doorbell_status(void)
{
    probe();
    return kt.doorbell_why;
}

const char *irq_kvm_trace_ga_log_status(void)
{
    probe();
    return kt.ga_log_why;
}
