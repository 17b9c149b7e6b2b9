/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Host-wide interrupt-delivery counters of the "irq" stats provider,
 * target "host": the posted-interrupt rows and AMD IOMMU GA-log lines
 * of the host's /proc/interrupts (parsed by stats/proc-interrupts.c),
 * and the KVM GA-log notifications counted by stats/irq-kvm-trace.c.
 * They count what every VM and the host caused, not this VM alone, so
 * they have a target of their own and no qom-path.  A row the host
 * lacks is an absent counter, never a zero.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/stats.h"
#include "system/proc-interrupts.h"
#include "irq-stats-internal.h"
#include "trace.h"

#define PROC_INTERRUPTS "/proc/interrupts"

/* Names the host parser can produce; per-IOMMU names match a pattern. */
static const char *const host_names[] = {
    "host-posted-intr-notifications",
    "host-nested-posted-intr-notifications",
    "host-posted-intr-wakeups",
    "host-posted-msi-notifications",
    "host-amdvi-ga-log-interrupts",
    "host-amdvi-shared-interrupts",
    "host-kvm-avic-ga-log-notifications",
};

/* Why the last read of /proc/interrupts failed; NULL if it worked. */
static char *host_status;
static unsigned host_count;

bool irq_host_stat_name_known(const char *name)
{
    const char *p;

    for (size_t i = 0; i < ARRAY_SIZE(host_names); i++) {
        if (g_str_equal(name, host_names[i])) {
            return true;
        }
    }
    /* "host-amdvi<N>-ga-log-interrupts" */
    if (!g_str_has_prefix(name, "host-amdvi")) {
        return false;
    }
    p = name + strlen("host-amdvi");
    if (!g_ascii_isdigit(*p)) {
        return false;
    }
    while (g_ascii_isdigit(*p)) {
        p++;
    }
    return g_str_equal(p, "-ga-log-interrupts");
}

static void set_status(const char *why)
{
    g_free(host_status);
    host_status = why ? g_strdup(why) : NULL;
    if (why) {
        trace_irq_host_stats_unavailable(PROC_INTERRUPTS, why);
    }
}

/* /proc/interrupts counters, then the host-wide KVM GA-log count. */
static GPtrArray *read_host_counters(void)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) gerr = NULL;
    Error *err = NULL;
    GPtrArray *counters = NULL;
    uint64_t ga_log;

    if (!g_file_get_contents(PROC_INTERRUPTS, &text, NULL, &gerr)) {
        set_status(gerr->message);
    } else {
        counters = proc_interrupts_parse(text, &err);
        set_status(counters ? NULL : error_get_pretty(err));
        error_free(err);
    }
    host_count = counters ? counters->len : 0;
    if (irq_kvm_trace_ga_log(&ga_log)) {
        if (!counters) {
            counters = host_irq_counters_new();
        }
        host_irq_counter_add(counters, "host-kvm-avic-ga-log-notifications",
                             ga_log);
    }
    return counters;
}

const char *irq_host_stats_status(unsigned *n)
{
    *n = host_count;
    return host_status;
}

void irq_host_stats_collect(StatsResultList **result, strList *names)
{
    g_autoptr(GPtrArray) counters = read_host_counters();
    StatsList *list = NULL;

    if (!counters) {
        return;
    }
    for (int i = counters->len - 1; i >= 0; i--) {
        HostIrqCounter *c = g_ptr_array_index(counters, i);

        if (apply_str_list_filter(c->name, names)) {
            list = irq_stats_add_scalar(list, c->name, c->value);
        }
    }
    if (list) {
        add_stats_entry(result, STATS_PROVIDER_IRQ, NULL, list);
    }
}

void irq_host_stats_schema(StatsSchemaList **result)
{
    g_autoptr(GPtrArray) counters = read_host_counters();
    StatsSchemaValueList *list = NULL;

    if (!counters) {
        return;
    }
    for (int i = counters->len - 1; i >= 0; i--) {
        HostIrqCounter *c = g_ptr_array_index(counters, i);

        list = irq_stats_add_schema_value(list, c->name,
                                          STATS_TYPE_CUMULATIVE);
    }
    if (list) {
        add_stats_schema(result, STATS_PROVIDER_IRQ, STATS_TARGET_HOST, list);
    }
}
