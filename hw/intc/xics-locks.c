/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Locks of the emulated XICS: see include/hw/intc/xics-locks.h.  Hooked
 * in hw/intc/xics.c (ICS realize/finalize, ICP init/finalize/destroy).
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "hw/core/cpu.h"
#include "hw/intc/xics-locks.h"

void xics_locks_ics_realize(ICSState *ics)
{
    ics->src_locks = g_new(QemuMutex, ics->nr_irqs);
    for (uint32_t i = 0; i < ics->nr_irqs; i++) {
        qemu_mutex_init(&ics->src_locks[i]);
    }
}

void xics_locks_ics_finalize(Object *obj)
{
    ICSState *ics = ICS(obj);

    if (!ics->src_locks) {
        return;
    }
    for (uint32_t i = 0; i < ics->nr_irqs; i++) {
        qemu_mutex_destroy(&ics->src_locks[i]);
    }
    g_free(ics->src_locks);
    ics->src_locks = NULL;
}

void xics_locks_icp_init(Object *obj)
{
    qemu_mutex_init(&ICP(obj)->lock);
}

void xics_locks_icp_finalize(Object *obj)
{
    qemu_mutex_destroy(&ICP(obj)->lock);
}

typedef struct XicsRetiredIcp {
    struct rcu_head rcu;
    Object *icp;
    Object *cpu;
} XicsRetiredIcp;

static void xics_retired_icp_free(XicsRetiredIcp *r)
{
    /* RCU callbacks run with the BQL held */
    object_unref(r->icp);
    object_unref(r->cpu);
    g_free(r);
}

void xics_locks_icp_retire(ICPState *icp)
{
    XicsRetiredIcp *r = g_new0(XicsRetiredIcp, 1);

    qemu_mutex_lock(&icp->lock);
    icp->output = NULL;
    qemu_mutex_unlock(&icp->lock);

    r->icp = object_ref(OBJECT(icp));
    r->cpu = object_ref(OBJECT(icp->cs));
    call_rcu(r, xics_retired_icp_free, rcu);
}
