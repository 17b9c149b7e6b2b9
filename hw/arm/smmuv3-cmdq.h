/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The emulated SMMUv3's command queue served without the BQL.
 * CMDQ_PROD and CMDQ_CONS are a lockless MMIO region of their own over
 * the SMMU's registers (the rest keep the BQL); a write of CMDQ_PROD
 * publishes it and drains the queue unless another thread is draining
 * it already, which then sees the new PROD before it lets go.
 * smmuv3.c calls in at realize, reset, and where CR0, GERRORN or
 * CMDQ_PROD change; it runs the commands (smmuv3_cmdq_run()).  The
 * logic and its lock order are in smmuv3-cmdq.c.
 */

#ifndef HW_ARM_SMMUV3_CMDQ_H
#define HW_ARM_SMMUV3_CMDQ_H

#include "hw/arm/smmuv3.h"
#include "smmuv3-internal.h"

typedef struct SMMUv3Cmdq SMMUv3Cmdq;

/* Realize: the lockless CMDQ_PROD/CONS region in @iomem, the counters. */
void smmuv3_cmdq_init(SMMUv3State *s, MemoryRegion *iomem);

/* Reset: forget a pending error report and CMD_SYNC interrupt. */
void smmuv3_cmdq_reset(SMMUv3State *s);

/* Migration: drain the queue whole (the BQL held, vCPUs stopped). */
void smmuv3_cmdq_pre_save(SMMUv3State *s);

/* Drain the queue, unless another thread does (any thread, any lock). */
void smmuv3_cmdq_kick(SMMUv3State *s);

/* GERRORN was written (BQL): an acknowledged error lets the queue go. */
void smmuv3_cmdq_gerrorn_written(SMMUv3State *s);

/* A CR0 write (under the BQL): stored, CR0ACK set, the queue kicked */
void smmuv3_cmdq_cr0_write(SMMUv3State *s, uint32_t data);

/* CMDQ_PROD (@offset 0) and CMDQ_CONS (4), of page 0 or its alias */
MemTxResult smmuv3_cmdq_read(SMMUv3State *s, hwaddr offset,
                             uint64_t *data, unsigned size);
MemTxResult smmuv3_cmdq_write(SMMUv3State *s, hwaddr offset,
                              uint64_t data, unsigned size);

/*
 * From smmuv3_cmdq_run(): a command of @type ran; a range TLBI was
 * merged into the one before it; a CMD_SYNC's IRQ.
 */
void smmuv3_cmdq_count(SMMUv3State *s, SMMUCommandType type);
void smmuv3_cmdq_count_merged(SMMUv3State *s);
void smmuv3_cmdq_sync_irq(SMMUv3State *s);

/* Under qtest: the "smmuv3-cmdq-stress" verb (smmuv3-cmdq-stress.c) */
void smmuv3_cmdq_stress_register(SMMUv3State *s);

/* In smmuv3.c */
unsigned smmuv3_cmdq_run(SMMUv3State *s, const Cmd *cmds, unsigned n,
                         SMMUCmdError *error);
void smmuv3_trigger_irq(SMMUv3State *s, SMMUIrq irq, uint32_t gerror_mask);

#endif
