/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Helpers of the fork's qtests to read counters of the "irq" stats
 * provider over QMP (tests/qtest/irq-stats-qtest.c).
 */

#ifndef IRQ_STATS_QTEST_H
#define IRQ_STATS_QTEST_H

#include "libqtest.h"

/*
 * Value of counter @name of provider "irq", target @target, in the
 * result for @qom_path (NULL: the first result that has it).  Fails the
 * test when there is no such counter.
 */
uint64_t irq_stat(QTestState *qts, const char *target, const char *qom_path,
                  const char *name);

/* Canonical QOM path of the vCPU with @cpu_index; g_free() it. */
char *irq_stats_cpu_path(QTestState *qts, int cpu_index);

#endif
