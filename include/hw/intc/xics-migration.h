/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Migration of the pseries emulated XICS with a running guest:
 * hw/intc/xics-migration.c.
 */

#ifndef HW_INTC_XICS_MIGRATION_H
#define HW_INTC_XICS_MIGRATION_H

/* From ics_spapr_realize(): watch the VM's run state. */
void xics_migration_spapr_init(void);

#endif
