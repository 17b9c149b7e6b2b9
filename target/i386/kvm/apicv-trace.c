/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What KVM really did with APIC virtualization and device posting for
 * this VM, read from two KVM tracepoints beside the prediction of
 * apicv-probe.c:
 *
 * - kvm:kvm_apicv_inhibit_changed (reason, set, inhibits): every
 *   change of the VM's inhibit mask, with the whole mask after it
 *   (Linux 5.18+);
 * - kvm:kvm_pi_irte_update (host_irq, vcpu_id, gsi, gvec, set): KVM
 *   set an IRTE up to post into a vCPU (set) or back to remapped
 *   delivery.  On AMD the IRTE really posts only while AVIC is not
 *   inhibited: read it together with the inhibit mask.
 *
 * Both fire in the thread that caused them (the main loop for irqchip,
 * PIT and routing ioctls, vCPU threads for the rest), so one sampling
 * perf event per host CPU follows QEMU's main thread and, through
 * inherit (threads only where the kernel has inherit_thread), every
 * thread it creates later: opened from kvm_arch_init()
 * (kvm_apicv_kvm_init()), before the irqchip and the vCPUs exist.  The
 * samples' raw tracepoint records are decoded with the field offsets
 * of the tracepoint's tracefs "format", so the layouts of 6.x and 7.x
 * kernels are both read.  Drained from the main loop (a timer, each
 * vCPU's creation, each query).
 *
 * Needs tracefs and root (or CAP_PERFMON: raw tracepoint samples);
 * otherwise the observed state says why it is missing.  The parsers of
 * formats, records and the ring are in apicv-trace-parse.c.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "apicv-probe.h"
#include "apicv-trace.h"
#include "trace.h"
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define INHIBIT_EVENT "kvm_apicv_inhibit_changed"
#define IRTE_EVENT "kvm_pi_irte_update"
#define RING_PAGES 4                /* data pages per host CPU */

enum { INH_REASON, INH_SET, INH_INHIBITS, INH__MAX };
enum { IRTE_HOST_IRQ, IRTE_VCPU, IRTE_GSI, IRTE_GVEC, IRTE_SET, IRTE__MAX };

typedef struct TraceRing {
    int fd;                         /* the CPU's first event owns the ring */
    int fd2;                        /* the second event, output redirected */
    void *map;
} TraceRing;

static struct {
    char *why;
    ApicvTraceFormat inhibit, irte;
    char *reason_name[64];          /* bit -> KVM's name, from the format */
    GArray *rings;                  /* TraceRing */
    size_t page_size;
    ApicvObserved obs;
} at;

static const char *const tracefs_roots[] = {
    "/sys/kernel/tracing",
    "/sys/kernel/debug/tracing",
};

static void set_why(char *why)
{
    g_free(at.why);
    at.why = why;
    trace_kvm_apicv_trace_unavailable(why);
}

static char *read_event_format(const char *event)
{
    for (size_t i = 0; i < ARRAY_SIZE(tracefs_roots); i++) {
        g_autofree char *path = g_strdup_printf("%s/events/kvm/%s/format",
                                                tracefs_roots[i], event);
        char *text;

        if (g_file_get_contents(path, &text, NULL, NULL)) {
            return text;
        }
    }
    return NULL;
}

static bool load_format(const char *event, const char *const *names, int n,
                        ApicvTraceFormat *fmt)
{
    g_autofree char *format = read_event_format(event);

    if (!format) {
        set_why(g_strdup_printf("tracepoint kvm:%s not readable in tracefs "
                                "(not mounted, not root, or a KVM without "
                                "it)", event));
        return false;
    }
    apicv_trace_parse_format(format, names, n, fmt);
    if (fmt->id <= 0) {
        set_why(g_strdup_printf("tracepoint kvm:%s: no ID in its format",
                                event));
        return false;
    }
    if (g_str_equal(event, INHIBIT_EVENT)) {
        apicv_trace_parse_reason_names(format, at.reason_name);
    }
    return true;
}

static int open_sampler(int id, int cpu, int group)
{
    struct perf_event_attr attr = {
        .type = PERF_TYPE_TRACEPOINT,
        .size = sizeof(attr),
        .config = id,
        .sample_period = 1,
        /* the time: rings are per CPU, the newest update wins */
        .sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
        .inherit = 1,               /* threads created after this one */
        .inherit_thread = 1,        /* not helper processes (5.13+) */
    };
    long fd = syscall(SYS_perf_event_open, &attr, getpid(), cpu, -1,
                      PERF_FLAG_FD_CLOEXEC);

    if (fd < 0 && errno == EINVAL) {
        attr.inherit_thread = 0;
        fd = syscall(SYS_perf_event_open, &attr, getpid(), cpu, -1,
                     PERF_FLAG_FD_CLOEXEC);
    }
    if (fd >= 0 && group >= 0 &&
        ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, group) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void close_ring(TraceRing *r)
{
    if (r->fd2 >= 0) {
        close(r->fd2);
    }
    if (r->map && r->map != MAP_FAILED) {
        munmap(r->map, (RING_PAGES + 1) * at.page_size);
    }
    if (r->fd >= 0) {
        close(r->fd);
    }
}

void apicv_trace_start(void)
{
    static const char *const inhibit_fields[INH__MAX] = {
        [INH_REASON] = "reason", [INH_SET] = "set",
        [INH_INHIBITS] = "inhibits",
    };
    /* vcpu_id: unsigned before Linux 6.17, signed (-1: none) since */
    static const char *const irte_fields[IRTE__MAX] = {
        [IRTE_HOST_IRQ] = "host_irq", [IRTE_VCPU] = "vcpu_id",
        [IRTE_GSI] = "gsi", [IRTE_GVEC] = "gvec", [IRTE_SET] = "set",
    };
    long ncpus = sysconf(_SC_NPROCESSORS_CONF);
    int err = 0, missed = 0;

    at.page_size = qemu_real_host_page_size();
    at.rings = g_array_new(false, true, sizeof(TraceRing));
    at.obs.irtes = g_array_new(false, true, sizeof(ApicvObservedIrte));
    if (!load_format(INHIBIT_EVENT, inhibit_fields, INH__MAX, &at.inhibit) ||
        !load_format(IRTE_EVENT, irte_fields, IRTE__MAX, &at.irte)) {
        return;
    }
    for (int cpu = 0; cpu < ncpus; cpu++) {
        TraceRing r = { .fd = -1, .fd2 = -1, .map = NULL };

        r.fd = open_sampler(at.inhibit.id, cpu, -1);
        if (r.fd < 0) {
            missed += errno != ENODEV;  /* ENODEV: an offline CPU */
            err = errno;
            continue;
        }
        r.map = mmap(NULL, (RING_PAGES + 1) * at.page_size,
                     PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
        r.fd2 = r.map == MAP_FAILED ? -1 :
                open_sampler(at.irte.id, cpu, r.fd);
        if (r.fd2 < 0) {
            err = errno;
            missed++;
            close_ring(&r);
            continue;
        }
        g_array_append_val(at.rings, r);
    }
    if (!at.rings->len) {
        set_why(g_strdup_printf("perf_event_open of the KVM tracepoints: %s%s",
                                strerror(err), err == EACCES || err == EPERM ?
                                " (raw tracepoint samples need root or "
                                "CAP_PERFMON)" : ""));
        return;
    }
    if (missed) {
        /* events on those CPUs are not seen: say so */
        set_why(g_strdup_printf("%d host CPU(s) not observed: %s", missed,
                                strerror(err)));
    }
    at.obs.available = true;
}

void apicv_trace_stop(void)
{
    for (guint i = 0; at.rings && i < at.rings->len; i++) {
        close_ring(&g_array_index(at.rings, TraceRing, i));
    }
    if (at.rings) {
        g_array_set_size(at.rings, 0);
    }
    at.obs.available = false;
}

static void irte_update(const uint8_t *raw, uint32_t len, uint64_t time)
{
    uint64_t host_irq, gsi, vcpu, vec, set;
    ApicvObservedIrte *e = NULL;

    if (!apicv_trace_field(raw, len, at.irte.f[IRTE_HOST_IRQ], &host_irq) ||
        !apicv_trace_field(raw, len, at.irte.f[IRTE_SET], &set)) {
        return;
    }
    for (guint i = 0; i < at.obs.irtes->len; i++) {
        ApicvObservedIrte *o = &g_array_index(at.obs.irtes,
                                              ApicvObservedIrte, i);
        if (o->host_irq == host_irq) {
            e = o;
        }
    }
    at.obs.irte_events++;
    if (e && e->time > time) {
        return;                 /* another CPU's ring had a newer one */
    }
    if (!e) {
        g_array_set_size(at.obs.irtes, at.obs.irtes->len + 1);
        e = &g_array_index(at.obs.irtes, ApicvObservedIrte,
                           at.obs.irtes->len - 1);
    }
    e->host_irq = host_irq;
    e->time = time;
    e->gsi = apicv_trace_field(raw, len, at.irte.f[IRTE_GSI], &gsi) ?
             (int64_t)(uint32_t)gsi : -1;
    /* a 4-byte vcpu_id: -1 (6.17+) or any id when not set */
    e->vcpu = apicv_trace_field(raw, len, at.irte.f[IRTE_VCPU], &vcpu) ?
              (int32_t)vcpu : -1;
    e->vector = apicv_trace_field(raw, len, at.irte.f[IRTE_GVEC], &vec) ?
                vec : 0;
    e->set = set & 1;
}

static void record(void *opaque, const uint8_t *raw, uint32_t len,
                   uint64_t time, uint64_t lost)
{
    uint64_t inhibits, reason = 0, set = 0;
    uint16_t type;

    if (!raw) {
        /* the state may have changed unseen: unknown until the next one */
        at.obs.lost_events += lost;
        at.obs.has_inhibits = false;
        return;
    }
    if (len < sizeof(type)) {
        return;
    }
    memcpy(&type, raw, sizeof(type));   /* common_type: the event's id */
    if (type == at.inhibit.id) {
        at.obs.inhibit_events++;
        if (!apicv_trace_field(raw, len, at.inhibit.f[INH_INHIBITS],
                               &inhibits)) {
            return;
        }
        if (at.obs.has_inhibits && at.obs.inhibits_time > time) {
            return;             /* another CPU's ring had a newer one */
        }
        at.obs.inhibits = inhibits;
        at.obs.inhibits_time = time;
        at.obs.has_inhibits = true;
        apicv_trace_field(raw, len, at.inhibit.f[INH_REASON], &reason);
        apicv_trace_field(raw, len, at.inhibit.f[INH_SET], &set);
        trace_kvm_apicv_trace_inhibit(reason, set & 1, inhibits);
    } else if (type == at.irte.id) {
        irte_update(raw, len, time);
    }
}

static void drain(TraceRing *r)
{
    struct perf_event_mmap_page *meta = r->map;
    uint64_t head = qatomic_load_acquire(&meta->data_head);
    uint64_t tail = apicv_trace_ring_records(
        (uint8_t *)r->map + at.page_size, RING_PAGES * at.page_size,
        meta->data_tail, head, record, NULL);

    qatomic_store_release(&meta->data_tail, tail);
}

const ApicvObserved *apicv_trace_poll(const char **why)
{
    if (!at.obs.irtes) {
        at.obs.irtes = g_array_new(false, true, sizeof(ApicvObservedIrte));
        set_why(g_strdup("x-apicv-observe=off"));
    }
    for (guint i = 0; at.obs.available && i < at.rings->len; i++) {
        drain(&g_array_index(at.rings, TraceRing, i));
    }
    *why = at.why;
    return &at.obs;
}

const char *apicv_trace_reason_name(int bit, int kernel)
{
    if (bit < 0 || bit >= 64) {
        return NULL;
    }
    return at.reason_name[bit] ? at.reason_name[bit]
                               : apicv_kvm_inhibit_bit_name(kernel, bit);
}
