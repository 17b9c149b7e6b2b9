/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Helpers of the fork's qtests to read counters of the "irq" stats
 * provider over QMP: see irq-stats-qtest.h.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qnum.h"
#include "irq-stats-qtest.h"

uint64_t irq_stat(QTestState *qts, const char *target, const char *qom_path,
                  const char *name)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-stats', "
                            "'arguments': { 'target': %s, 'providers': "
                            "[ { 'provider': 'irq' } ] } }", target);
    QListEntry *e, *f;
    bool found = false;
    uint64_t v = 0;

    g_assert(qdict_haskey(resp, "return"));
    QLIST_FOREACH_ENTRY(qdict_get_qlist(resp, "return"), e) {
        QDict *r = qobject_to(QDict, qlist_entry_obj(e));
        const char *p = qdict_get_try_str(r, "qom-path");

        if (found || (qom_path && (!p || !g_str_equal(p, qom_path)))) {
            continue;
        }
        QLIST_FOREACH_ENTRY(qdict_get_qlist(r, "stats"), f) {
            QDict *s = qobject_to(QDict, qlist_entry_obj(f));

            if (g_str_equal(qdict_get_str(s, "name"), name)) {
                v = qnum_get_uint(qobject_to(QNum, qdict_get(s, "value")));
                found = true;
            }
        }
    }
    qobject_unref(resp);
    if (!found) {
        g_test_message("no counter %s for %s in target %s", name,
                       qom_path ? qom_path : "any result", target);
        g_assert_not_reached();
    }
    return v;
}

char *irq_stats_cpu_path(QTestState *qts, int cpu_index)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-cpus-fast' }");
    QListEntry *e;
    char *path = NULL;

    QLIST_FOREACH_ENTRY(qdict_get_qlist(resp, "return"), e) {
        QDict *c = qobject_to(QDict, qlist_entry_obj(e));

        if (qdict_get_int(c, "cpu-index") == cpu_index) {
            path = g_strdup(qdict_get_str(c, "qom-path"));
        }
    }
    qobject_unref(resp);
    g_assert_nonnull(path);
    return path;
}
