/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The "irq" provider of query-stats: a registry of interrupt-delivery
 * counters kept by QEMU's own models, plus host-wide counters.
 *
 * Models register groups of Stat64 counters with their QOM owner
 * (include/system/irq-stats.h).  The provider answers only its own
 * targets: "irq-device" (one result per device, its qom-path),
 * "irq-vcpu" (one result per vCPU, the CPU's canonical path, honouring
 * the vCPU filter) and "host" (stats/irq-host-stats.c).  It returns
 * nothing for "vm" and "vcpu", so what libvirt reads there (exactly one
 * "vm" result, the first result per vCPU path) is what the kvm provider
 * alone returns, and every name it defines is unique across providers
 * because libvirt keys its schema table by name alone.
 *
 * Registered at startup, so it works under TCG, qtest and -M none.  The
 * registry is changed and read under the BQL; counters are bumped with
 * Stat64 atomics from any thread.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "qapi/qapi-visit-stats.h"
#include "system/stats.h"
#include "system/irq-stats.h"
#include "irq-stats-internal.h"
#include "trace.h"

struct IrqStatsGroup {
    Object *owner;              /* not referenced: owner unregisters */
    StatsTarget target;
    const IrqStatDef *defs;
    Stat64 *values;
    unsigned n;
    QTAILQ_ENTRY(IrqStatsGroup) next;
};

static QTAILQ_HEAD(, IrqStatsGroup) irq_stats_groups =
    QTAILQ_HEAD_INITIALIZER(irq_stats_groups);

/*
 * Every name ever registered, with its target and type, in first
 * registration order: the schema's order, which results follow too
 * (HMP's "info stats" walks both in step).
 */
typedef struct IrqStatName {
    const char *name;
    StatsTarget target;
    StatsType type;
} IrqStatName;

static GArray *irq_stat_names;

static int irq_stat_name_index(const char *name)
{
    for (guint i = 0; irq_stat_names && i < irq_stat_names->len; i++) {
        if (g_str_equal(g_array_index(irq_stat_names, IrqStatName,
                                      i).name, name)) {
            return i;
        }
    }
    return -1;
}

IrqStatsGroup *irq_stats_register(Object *owner, StatsTarget target,
                                  const IrqStatDef *defs, Stat64 *values,
                                  unsigned n)
{
    IrqStatsGroup *g = g_new0(IrqStatsGroup, 1);

    assert(bql_locked());
    assert(target == STATS_TARGET_IRQ_DEVICE ||
           target == STATS_TARGET_IRQ_VCPU);
    if (!irq_stat_names) {
        irq_stat_names = g_array_new(FALSE, FALSE, sizeof(IrqStatName));
    }
    for (unsigned i = 0; i < n; i++) {
        int idx = irq_stat_name_index(defs[i].name);

        if (idx < 0) {
            IrqStatName sn = { defs[i].name, target, defs[i].type };

            assert(!irq_host_stat_name_known(defs[i].name));
            g_array_append_val(irq_stat_names, sn);
        } else {
            /* One name, one meaning: same target and type everywhere. */
            IrqStatName *sn = &g_array_index(irq_stat_names, IrqStatName,
                                             idx);
            assert(sn->target == target && sn->type == defs[i].type);
        }
    }
    g->owner = owner;
    g->target = target;
    g->defs = defs;
    g->values = values;
    g->n = n;
    QTAILQ_INSERT_TAIL(&irq_stats_groups, g, next);
    return g;
}

void irq_stats_unregister(IrqStatsGroup *group)
{
    if (!group) {
        return;
    }
    assert(bql_locked());
    QTAILQ_REMOVE(&irq_stats_groups, group, next);
    g_free(group);
}

unsigned irq_stats_group_count(StatsTarget target)
{
    IrqStatsGroup *g;
    unsigned n = 0;

    QTAILQ_FOREACH(g, &irq_stats_groups, next) {
        n += g->target == target;
    }
    return n;
}

static bool irq_stat_name_known(const char *name)
{
    return irq_stat_name_index(name) >= 0 || irq_host_stat_name_known(name);
}

/* An unknown name in an explicit request is an error, not silence. */
static bool check_names(strList *names, Error **errp)
{
    for (strList *l = names; l; l = l->next) {
        if (!irq_stat_name_known(l->value)) {
            error_setg(errp, "query-stats: provider 'irq' has no statistic "
                       "'%s'; query-stats-schemas lists the names",
                       l->value);
            return false;
        }
    }
    return true;
}

StatsList *irq_stats_add_scalar(StatsList *list, const char *name,
                                uint64_t value)
{
    Stats *s = g_new0(Stats, 1);

    s->name = g_strdup(name);
    s->value = g_new0(StatsValue, 1);
    s->value->type = QTYPE_QNUM;
    s->value->u.scalar = value;
    QAPI_LIST_PREPEND(list, s);
    return list;
}

/* Results of one owner: values of its groups, in schema order. */
typedef struct OwnerResult {
    char *path;
    uint64_t *values;           /* indexed like irq_stat_names */
    bool *present;
} OwnerResult;

static void collect_groups(StatsResultList **result, StatsTarget target,
                           strList *names, strList *targets)
{
    g_autoptr(GPtrArray) owners = g_ptr_array_new();
    IrqStatsGroup *g;
    guint nnames = irq_stat_names ? irq_stat_names->len : 0;

    QTAILQ_FOREACH(g, &irq_stats_groups, next) {
        g_autofree char *path = NULL;
        OwnerResult *r = NULL;

        if (g->target != target) {
            continue;
        }
        path = object_get_canonical_path(g->owner);
        if (!path || !apply_str_list_filter(path, targets)) {
            continue;
        }
        for (guint i = 0; i < owners->len; i++) {
            OwnerResult *o = g_ptr_array_index(owners, i);
            if (g_str_equal(o->path, path)) {
                r = o;
                break;
            }
        }
        if (!r) {
            r = g_new0(OwnerResult, 1);
            r->path = g_steal_pointer(&path);
            r->values = g_new0(uint64_t, nnames);
            r->present = g_new0(bool, nnames);
            g_ptr_array_add(owners, r);
        }
        for (unsigned i = 0; i < g->n; i++) {
            int idx = irq_stat_name_index(g->defs[i].name);

            if (!apply_str_list_filter(g->defs[i].name, names)) {
                continue;
            }
            r->values[idx] += stat64_get(&g->values[i]);
            r->present[idx] = true;
        }
    }

    /* Results are prepended by add_stats_entry: walk owners backwards. */
    for (int i = owners->len - 1; i >= 0; i--) {
        OwnerResult *r = g_ptr_array_index(owners, i);
        StatsList *list = NULL;

        for (int k = nnames - 1; k >= 0; k--) {
            if (r->present[k]) {
                list = irq_stats_add_scalar(list,
                    g_array_index(irq_stat_names, IrqStatName, k).name,
                    r->values[k]);
            }
        }
        if (list) {
            add_stats_entry(result, STATS_PROVIDER_IRQ, r->path, list);
        }
        g_free(r->path);
        g_free(r->values);
        g_free(r->present);
        g_free(r);
    }
}

static void irq_stats_cb(StatsResultList **result, StatsTarget target,
                         strList *names, strList *targets, Error **errp)
{
    switch (target) {
    case STATS_TARGET_IRQ_DEVICE:
    case STATS_TARGET_IRQ_VCPU:
        if (!check_names(names, errp)) {
            return;
        }
        if (target == STATS_TARGET_IRQ_VCPU) {
            /* Per-vCPU KVM tracepoint counters follow the vCPU threads. */
            irq_kvm_trace_refresh();
        }
        collect_groups(result, target, names, targets);
        break;
    case STATS_TARGET_HOST:
        if (!check_names(names, errp)) {
            return;
        }
        irq_host_stats_collect(result, names);
        break;
    default:
        /* "vm", "vcpu" and other targets belong to other providers. */
        break;
    }
}

StatsSchemaValueList *irq_stats_add_schema_value(StatsSchemaValueList *list,
                                                 const char *name,
                                                 StatsType type)
{
    StatsSchemaValue *v = g_new0(StatsSchemaValue, 1);

    v->name = g_strdup(name);
    v->type = type;
    QAPI_LIST_PREPEND(list, v);
    return list;
}

static void irq_stats_schemas_cb(StatsSchemaList **result, Error **errp)
{
    StatsTarget targets[] = { STATS_TARGET_IRQ_DEVICE,
                              STATS_TARGET_IRQ_VCPU };

    irq_kvm_trace_refresh();
    irq_host_stats_schema(result);
    for (int t = ARRAY_SIZE(targets) - 1; t >= 0; t--) {
        StatsSchemaValueList *list = NULL;

        for (int k = (irq_stat_names ? irq_stat_names->len : 0) - 1;
             k >= 0; k--) {
            IrqStatName *sn = &g_array_index(irq_stat_names, IrqStatName, k);
            if (sn->target == targets[t]) {
                list = irq_stats_add_schema_value(list, sn->name, sn->type);
            }
        }
        if (list) {
            add_stats_schema(result, STATS_PROVIDER_IRQ, targets[t], list);
        }
    }
}

static void irq_stats_init(void)
{
    add_stats_callbacks(STATS_PROVIDER_IRQ, irq_stats_cb,
                        irq_stats_schemas_cb);
}

type_init(irq_stats_init)
