/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Sources of an XICS source controller (ICS) that may need a resend,
 * kept in a bitmap so that a resend (run on almost every H_EOI and
 * CPPR raise) visits only those instead of all sources.
 *
 * A source is marked when it enters the state a resend acts on: an MSI
 * rejected by its presenter, an LSI that is asserted but no longer sent
 * (rejected, or EOI'd while still asserted).  A visit unmarks it before
 * acting, and a masked LSI is unmarked (unmasking resends it at once).
 * The bitmap is a side array, not migrated: post_load rebuilds it from
 * the sources' status.  Bits are set and cleared atomically.
 * Used by hw/intc/xics.c.
 */

#ifndef HW_INTC_XICS_RESEND_H
#define HW_INTC_XICS_RESEND_H

struct ICSState;
struct ICSIRQState;

void xics_resend_realize(struct ICSState *ics);
void xics_resend_clear_all(struct ICSState *ics);
void xics_resend_mark(struct ICSState *ics, int srcno);
void xics_resend_unmark(struct ICSState *ics, int srcno);
void xics_resend_rebuild(struct ICSState *ics);

/*
 * Call @fn on each marked source, unmarking it first (so @fn may mark
 * it again).  Returns the number of sources visited.
 */
typedef void XicsResendFn(struct ICSState *ics, int srcno);
unsigned xics_resend_each(struct ICSState *ics, XicsResendFn *fn);

#endif
