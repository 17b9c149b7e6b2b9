/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Server number -> XICS presenter table of the pseries machine: see
 * include/hw/ppc/spapr_icp_table.h.  Changed under the BQL when vCPUs
 * are created or unplugged; read on every delivery, without the BQL
 * by the XICS hypercalls (RCU).
 */

#include "qemu/osdep.h"
#include "hw/ppc/spapr.h"
#include "hw/ppc/xics.h"
#include "hw/ppc/spapr_icp_table.h"

void spapr_icp_table_set(SpaprMachineState *spapr, int server, ICPState *icp)
{
    SpaprIcpTable *t = &spapr->icp_table;
    SpaprIcpArray *old = t->array;
    uint32_t old_size = old ? old->size : 0;

    assert(server >= 0);
    if (server >= old_size) {
        uint32_t size = MAX(spapr_max_server_number(spapr), server + 1);
        SpaprIcpArray *new = g_malloc0(sizeof(*new) +
                                       size * sizeof(new->icp[0]));

        new->size = size;
        if (old) {
            memcpy(new->icp, old->icp, old_size * sizeof(old->icp[0]));
        }
        qatomic_rcu_set(&t->array, new);
        if (old) {
            g_free_rcu(old, rcu);
        }
    }
    qatomic_rcu_set(&t->array->icp[server], icp);
}

ICPState *spapr_icp_table_get(SpaprMachineState *spapr, int server)
{
    SpaprIcpArray *a = qatomic_rcu_read(&spapr->icp_table.array);

    if (!a || server < 0 || server >= a->size) {
        return NULL;
    }
    return qatomic_rcu_read(&a->icp[server]);
}
