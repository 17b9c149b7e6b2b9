/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Server number -> XICS presenter table of the pseries machine: see
 * include/hw/ppc/spapr_icp_table.h.  Changed under the BQL when vCPUs
 * are created or unplugged; read on every delivery.
 */

#include "qemu/osdep.h"
#include "hw/ppc/spapr.h"
#include "hw/ppc/xics.h"
#include "hw/ppc/spapr_icp_table.h"

void spapr_icp_table_set(SpaprMachineState *spapr, int server, ICPState *icp)
{
    SpaprIcpTable *t = &spapr->icp_table;

    assert(server >= 0);
    if (server >= t->size) {
        uint32_t size = MAX(spapr_max_server_number(spapr), server + 1);

        t->icp = g_renew(ICPState *, t->icp, size);
        memset(t->icp + t->size, 0, (size - t->size) * sizeof(*t->icp));
        t->size = size;
    }
    t->icp[server] = icp;
}

ICPState *spapr_icp_table_get(SpaprMachineState *spapr, int server)
{
    SpaprIcpTable *t = &spapr->icp_table;

    if (server < 0 || server >= t->size) {
        return NULL;
    }
    return t->icp[server];
}
