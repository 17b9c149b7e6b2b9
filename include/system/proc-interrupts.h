/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Parser of the host's /proc/interrupts for the host-wide counters of
 * the "irq" stats provider (target "host"): posted-interrupt rows of
 * x86 hosts and the AMD IOMMU GA-log interrupt lines.  Pure function
 * over the file's text, so it is unit-tested on fixtures
 * (tests/unit/test-proc-interrupts.c).  Used by stats/irq-host-stats.c.
 */

#ifndef SYSTEM_PROC_INTERRUPTS_H
#define SYSTEM_PROC_INTERRUPTS_H

typedef struct HostIrqCounter {
    char *name;                 /* stat name, e.g. "host-pin-..." */
    uint64_t value;             /* summed over all CPUs */
} HostIrqCounter;

/*
 * Parse @text (the contents of /proc/interrupts).  Returns an array of
 * HostIrqCounter (freed with g_ptr_array_unref) in a fixed order: the
 * posted-interrupt rows PIN, NPI, PIW, PMN, then the AMD IOMMU GA-log
 * sum and per-IOMMU values, then the shared AMD-Vi MSI line.  Rows the
 * host does not have give no counter (absent, not zero).  Returns NULL
 * and sets @errp when the CPU header line is missing.
 */
GPtrArray *proc_interrupts_parse(const char *text, Error **errp);

/* An empty array of HostIrqCounter, and adding one to such an array. */
GPtrArray *host_irq_counters_new(void);
void host_irq_counter_add(GPtrArray *counters, const char *name,
                          uint64_t value);

#endif
