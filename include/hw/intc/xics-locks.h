/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Locks of the emulated XICS (hw/intc/xics.c), so that the XICS
 * hypercalls can run without the BQL.
 *
 * - one QemuMutex per source, in a side array of the source controller
 *   (ICSState::src_locks), not in the migrated (and memset on reset)
 *   ICSIRQState array;
 * - one QemuMutex per presenter (ICPState::lock).
 *
 * Order: source lock -> presenter lock.  The BQL, when held, comes
 * first; it is never taken with either lock held.  The rules for the
 * callers are in the comment at the top of the ICP part of xics.c.
 */

#ifndef HW_INTC_XICS_LOCKS_H
#define HW_INTC_XICS_LOCKS_H

#include "qemu/thread.h"
#include "hw/ppc/xics.h"

static inline void ics_src_lock(ICSState *ics, int srcno)
{
    qemu_mutex_lock(&ics->src_locks[srcno]);
}

static inline void ics_src_unlock(ICSState *ics, int srcno)
{
    qemu_mutex_unlock(&ics->src_locks[srcno]);
}

void xics_locks_ics_realize(ICSState *ics);
void xics_locks_ics_finalize(Object *obj);
void xics_locks_icp_init(Object *obj);
void xics_locks_icp_finalize(Object *obj);

/*
 * Before a presenter is destroyed (CPU unplug): cut it from its CPU's
 * interrupt line, and keep it and its CPU allocated until every
 * hypercall that may have looked it up without the BQL is done (an RCU
 * grace period: the lookups run in RCU read-side sections).
 */
void xics_locks_icp_retire(ICPState *icp);

#endif
