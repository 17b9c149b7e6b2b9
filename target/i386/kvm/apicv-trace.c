/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What KVM really did with APIC virtualization and device posting for
 * this VM, read from two KVM tracepoints beside the prediction of
 * apicv-probe.c:
 *
 * - kvm:kvm_apicv_inhibit_changed (reason, set, inhibits): every
 *   change of the VM's inhibit mask, with the whole mask after it;
 * - kvm:kvm_pi_irte_update (host_irq, vcpu, gsi, gvec, set): an IRTE
 *   switched to posting into a vCPU (set) or back to remapped delivery.
 *
 * Both fire in the thread that caused them (the main loop for irqchip,
 * PIT and routing ioctls, vCPU threads for the rest), so one sampling
 * perf event per host CPU follows QEMU's main thread and, through
 * inherit, every thread it creates later: opened from kvm_arch_init()
 * (kvm_apicv_kvm_init()), before the irqchip and the vCPUs exist.  The
 * samples' raw tracepoint records are decoded with the field offsets
 * of the tracepoint's tracefs "format", so the layouts of 6.x and 7.x
 * kernels are both read.  Drained on each query-kvm-apicv.
 *
 * Needs tracefs and root (or CAP_PERFMON: raw tracepoint samples);
 * otherwise the observed state says why it is missing.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/cutils.h"
#include "qemu/host-utils.h"
#include "apicv-probe.h"
#include "apicv-trace.h"
#include "trace.h"
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define INHIBIT_EVENT "kvm_apicv_inhibit_changed"
#define IRTE_EVENT "kvm_pi_irte_update"
#define RING_PAGES 16               /* data pages per host CPU */

typedef struct TraceField {
    int offset, size;               /* -1: not in this kernel's layout */
} TraceField;

typedef struct TraceFormat {
    int id;
    TraceField f[6];
} TraceFormat;

enum { INH_REASON, INH_SET, INH_INHIBITS };
enum { IRTE_HOST_IRQ, IRTE_VCPU, IRTE_GSI, IRTE_GVEC, IRTE_SET };

typedef struct TraceRing {
    int fd;                         /* the CPU's first event owns the ring */
    int fd2;                        /* the second event, output redirected */
    void *map;
} TraceRing;

static struct {
    bool started;
    char *why;
    TraceFormat inhibit, irte;
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

static char *read_event_file(const char *event, const char *file)
{
    for (size_t i = 0; i < ARRAY_SIZE(tracefs_roots); i++) {
        g_autofree char *path = g_strdup_printf("%s/events/kvm/%s/%s",
                                                tracefs_roots[i], event, file);
        char *text;

        if (g_file_get_contents(path, &text, NULL, NULL)) {
            return text;
        }
    }
    return NULL;
}

/*
 * "\tfield:unsigned int host_irq;\toffset:8;\tsize:4;\tsigned:0;": the
 * offset and size of each field named in @names.
 */
static void parse_format(const char *text, const char *const *names,
                         int n, TraceFormat *fmt)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

    for (int i = 0; i < n; i++) {
        fmt->f[i].offset = fmt->f[i].size = -1;
    }
    for (char **l = lines; *l; l++) {
        const char *decl = strstr(*l, "field:");
        const char *semi = decl ? strchr(decl, ';') : NULL;
        const char *off = semi ? strstr(semi, "offset:") : NULL;
        const char *size = semi ? strstr(semi, "size:") : NULL;
        const char *p;
        g_autofree char *name = NULL;

        if (!off || !size) {
            continue;
        }
        /* the name is the last word of the declaration */
        for (p = semi; p > decl && !g_ascii_isspace(p[-1]); p--) {
            /* back to the start of the word */
        }
        name = g_strndup(p, semi - p);
        for (int i = 0; i < n; i++) {
            if (g_str_equal(name, names[i])) {
                fmt->f[i].offset = atoi(off + strlen("offset:"));
                fmt->f[i].size = atoi(size + strlen("size:"));
            }
        }
    }
}

/*
 * Names of the inhibit bits where the kernel prints them (Linux 6.11+,
 * 69148ccec679): pairs like { (1UL << (9)), "PIT_REINJ" } in "print
 * fmt".  Where the bit is left symbolic (an enum name), the list is in
 * the enum's order, so its position is the bit.
 */
static void parse_reason_names(const char *text)
{
    const char *p = strstr(text, "__print_flags");
    int index = 0;

    while (p && (p = strchr(p, '{'))) {
        const char *comma = strchr(p, ',');
        const char *q1 = comma ? strchr(comma, '"') : NULL;
        const char *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
        const char *shift;
        uint64_t v;
        int bit = index++;

        if (!q2) {
            break;
        }
        shift = g_strstr_len(p, comma - p, "<<");
        if (shift) {
            shift += 2;
            while (*shift == ' ' || *shift == '(') {
                shift++;
            }
            if (g_ascii_isdigit(*shift)) {
                bit = atoi(shift);
            }
        } else if (!qemu_strtou64(p + 1, NULL, 0, &v) && v && !(v & (v - 1))) {
            bit = ctz64(v);
        }
        if (bit >= 0 && bit < 64 && !at.reason_name[bit]) {
            at.reason_name[bit] = g_strndup(q1 + 1, q2 - q1 - 1);
        }
        p = q2;
    }
}

static bool load_format(const char *event, const char *const *names, int n,
                        TraceFormat *fmt)
{
    g_autofree char *id = read_event_file(event, "id");
    g_autofree char *format = read_event_file(event, "format");

    if (!id || !format) {
        set_why(g_strdup_printf("tracepoint kvm:%s not readable in tracefs "
                                "(not mounted, not root, or a KVM without "
                                "it)", event));
        return false;
    }
    fmt->id = atoi(id);
    parse_format(format, names, n, fmt);
    if (g_str_equal(event, INHIBIT_EVENT)) {
        parse_reason_names(format);
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
        .sample_type = PERF_SAMPLE_RAW,
        .inherit = 1,               /* threads created after this one */
    };
    long fd = syscall(SYS_perf_event_open, &attr, getpid(), cpu, -1,
                      PERF_FLAG_FD_CLOEXEC);

    if (fd >= 0 && group >= 0 &&
        ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, group) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void apicv_trace_start(void)
{
    static const char *const inhibit_fields[] = {
        [INH_REASON] = "reason", [INH_SET] = "set",
        [INH_INHIBITS] = "inhibits",
    };
    /* vcpu_id in 6.x; the 2025 rework kept the names it has here */
    static const char *const irte_fields[] = {
        [IRTE_HOST_IRQ] = "host_irq", [IRTE_VCPU] = "vcpu_id",
        [IRTE_GSI] = "gsi", [IRTE_GVEC] = "gvec", [IRTE_SET] = "set",
    };
    long ncpus = sysconf(_SC_NPROCESSORS_CONF);
    int err = 0;

    at.started = true;
    at.page_size = qemu_real_host_page_size();
    at.rings = g_array_new(false, true, sizeof(TraceRing));
    if (!load_format(INHIBIT_EVENT, inhibit_fields, 3, &at.inhibit) ||
        !load_format(IRTE_EVENT, irte_fields, 5, &at.irte)) {
        return;
    }
    for (int cpu = 0; cpu < ncpus; cpu++) {
        TraceRing r = { .fd = -1, .fd2 = -1, .map = MAP_FAILED };

        r.fd = open_sampler(at.inhibit.id, cpu, -1);
        if (r.fd < 0) {
            err = errno;
            continue;               /* an offline CPU: ENODEV */
        }
        r.map = mmap(NULL, (RING_PAGES + 1) * at.page_size,
                     PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
        r.fd2 = r.map == MAP_FAILED ? -1 :
                open_sampler(at.irte.id, cpu, r.fd);
        if (r.fd2 < 0) {
            err = errno;
            if (r.map != MAP_FAILED) {
                munmap(r.map, (RING_PAGES + 1) * at.page_size);
            }
            close(r.fd);
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
    at.obs.available = true;
}

static uint64_t field(const uint8_t *raw, uint32_t len, TraceField f)
{
    uint64_t v = 0;

    if (f.offset < 0 || f.size <= 0 || f.size > 8 ||
        f.offset + f.size > len) {
        return UINT64_MAX;
    }
    /* little-endian host: the low bytes come first */
    memcpy(&v, raw + f.offset, f.size);
    return v;
}

static void irte_update(const uint8_t *raw, uint32_t len)
{
    uint64_t gsi = field(raw, len, at.irte.f[IRTE_GSI]);
    uint64_t host_irq = field(raw, len, at.irte.f[IRTE_HOST_IRQ]);
    ApicvObservedIrte *e = NULL;

    for (guint i = 0; i < at.obs.irtes->len; i++) {
        ApicvObservedIrte *o = &g_array_index(at.obs.irtes,
                                              ApicvObservedIrte, i);
        if (o->host_irq == host_irq) {
            e = o;
        }
    }
    if (!e) {
        g_array_set_size(at.obs.irtes, at.obs.irtes->len + 1);
        e = &g_array_index(at.obs.irtes, ApicvObservedIrte,
                           at.obs.irtes->len - 1);
    }
    e->host_irq = host_irq;
    e->gsi = gsi == UINT64_MAX ? -1 : (int64_t)(uint32_t)gsi;
    e->vcpu = (int32_t)field(raw, len, at.irte.f[IRTE_VCPU]);
    e->vector = field(raw, len, at.irte.f[IRTE_GVEC]);
    e->posted = field(raw, len, at.irte.f[IRTE_SET]) & 1;
    at.obs.irte_events++;
}

static void sample(const uint8_t *raw, uint32_t len)
{
    uint16_t type;

    if (len < sizeof(type)) {
        return;
    }
    memcpy(&type, raw, sizeof(type));   /* common_type: the event's id */
    if (type == at.inhibit.id) {
        at.obs.inhibits = field(raw, len, at.inhibit.f[INH_INHIBITS]);
        at.obs.has_inhibits = at.obs.inhibits != UINT64_MAX;
        at.obs.inhibit_events++;
        trace_kvm_apicv_trace_inhibit(
            field(raw, len, at.inhibit.f[INH_REASON]),
            field(raw, len, at.inhibit.f[INH_SET]) & 1, at.obs.inhibits);
    } else if (type == at.irte.id) {
        irte_update(raw, len);
    }
}

static void drain(TraceRing *r)
{
    struct perf_event_mmap_page *meta = r->map;
    uint8_t *data = (uint8_t *)r->map + at.page_size;
    uint64_t size = RING_PAGES * at.page_size;
    uint64_t head = qatomic_load_acquire(&meta->data_head);
    uint64_t tail = meta->data_tail;
    g_autofree uint8_t *rec = NULL;

    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        uint32_t rawlen;

        /* a record can wrap around the end of the ring */
        for (size_t i = 0; i < sizeof(h); i++) {
            ((uint8_t *)&h)[i] = data[(tail + i) % size];
        }
        if (h.size < sizeof(h) || tail + h.size > head) {
            break;
        }
        rec = g_realloc(rec, h.size);
        for (size_t i = 0; i < h.size; i++) {
            rec[i] = data[(tail + i) % size];
        }
        if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 4) {
            memcpy(&rawlen, rec + sizeof(h), 4);
            if (sizeof(h) + 4 + rawlen <= h.size) {
                sample(rec + sizeof(h) + 4, rawlen);
            }
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
            uint64_t lost;

            memcpy(&lost, rec + sizeof(h) + 8, 8);
            at.obs.lost_events += lost;
        }
        tail += h.size;
    }
    qatomic_store_release(&meta->data_tail, tail);
}

const ApicvObserved *apicv_trace_poll(const char **why)
{
    if (!at.obs.irtes) {
        at.obs.irtes = g_array_new(false, true, sizeof(ApicvObservedIrte));
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
