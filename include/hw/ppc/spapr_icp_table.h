/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * O(1) server number -> XICS presenter (ICP) lookup of the pseries
 * machine, instead of a walk over all vCPUs on every interrupt
 * delivery, H_IPI, H_IPOLL and set-xive.  Sized from the machine's
 * maximum server number, filled and cleared as the XICS presenters of
 * vCPUs are created and destroyed (so CPU hotplug keeps it right).
 * Hooked in hw/intc/xics_spapr.c and hw/ppc/spapr.c (icp_get).
 */

#ifndef HW_PPC_SPAPR_ICP_TABLE_H
#define HW_PPC_SPAPR_ICP_TABLE_H

#include "qemu/rcu.h"

/*
 * Read without the BQL by the XICS hypercalls, inside RCU read-side
 * sections: the array is replaced (never resized in place) and freed
 * after a grace period; entries are published with qatomic_rcu_set.
 */
typedef struct SpaprIcpArray {
    struct rcu_head rcu;
    uint32_t size;
    struct ICPState *icp[];
} SpaprIcpArray;

typedef struct SpaprIcpTable {
    SpaprIcpArray *array;
} SpaprIcpTable;

struct SpaprMachineState;

void spapr_icp_table_set(struct SpaprMachineState *spapr, int server,
                         struct ICPState *icp);
/* NULL for a server number with no presenter, including bad ones. */
struct ICPState *spapr_icp_table_get(struct SpaprMachineState *spapr,
                                     int server);

#endif
