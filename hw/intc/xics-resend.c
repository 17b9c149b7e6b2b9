/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Resend bitmap of the XICS source controller: see
 * include/hw/intc/xics-resend.h.  Hooked in hw/intc/xics.c (reject,
 * EOI, set-xive, reset, post_load and resend).
 */

#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "qemu/bitops.h"
#include "qemu/host-utils.h"
#include "hw/ppc/xics.h"
#include "hw/intc/xics-resend.h"

void xics_resend_realize(ICSState *ics)
{
    ics->resend_map = bitmap_new(ics->nr_irqs);
}

void xics_resend_clear_all(ICSState *ics)
{
    if (ics->resend_map) {
        bitmap_zero(ics->resend_map, ics->nr_irqs);
    }
}

void xics_resend_mark(ICSState *ics, int srcno)
{
    assert(srcno >= 0 && srcno < ics->nr_irqs);
    set_bit_atomic(srcno, ics->resend_map);
}

void xics_resend_unmark(ICSState *ics, int srcno)
{
    assert(srcno >= 0 && srcno < ics->nr_irqs);
    clear_bit_atomic(srcno, ics->resend_map);
}

/* Would a resend act on this source?  (The scan of all sources would.) */
static bool needs_resend(const ICSIRQState *irq)
{
    if (irq->flags & XICS_FLAGS_IRQ_LSI) {
        return irq->priority != 0xff &&
               (irq->status & XICS_STATUS_ASSERTED) &&
               !(irq->status & XICS_STATUS_SENT);
    }
    return irq->status & XICS_STATUS_REJECTED;
}

void xics_resend_rebuild(ICSState *ics)
{
    xics_resend_clear_all(ics);
    for (uint32_t i = 0; i < ics->nr_irqs; i++) {
        if (needs_resend(&ics->irqs[i])) {
            xics_resend_mark(ics, i);
        }
    }
}

unsigned xics_resend_each(ICSState *ics, XicsResendFn *fn)
{
    unsigned visited = 0;

    /*
     * Other threads mark sources while we scan (set_bit_atomic): read
     * each word atomically, and claim a bit by clearing it atomically
     * before acting, so a source marked again meanwhile is not lost.
     */
    for (uint32_t w = 0; w < BITS_TO_LONGS(ics->nr_irqs); w++) {
        unsigned long word = qatomic_read(&ics->resend_map[w]);

        while (word) {
            unsigned bit = ctzl(word);
            uint32_t srcno = w * BITS_PER_LONG + bit;

            word &= word - 1;
            if (srcno >= ics->nr_irqs) {
                break;
            }
            clear_bit_atomic(srcno, ics->resend_map);
            fn(ics, srcno);
            visited++;
        }
    }
    return visited;
}
