/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * SMMU IOTLB range invalidation by lookup: which IOTLB keys could hold
 * a translation that overlaps an address range.  smmu-common.c looks
 * each of them up instead of scanning the whole IOTLB when there are
 * fewer of them than entries in the table.
 */

#ifndef HW_ARM_SMMU_IOTLB_RANGE_H
#define HW_ARM_SMMU_IOTLB_RANGE_H

/* One candidate block: its aligned base, granule (TG encoding) and level */
typedef void SMMUIOTLBBlockFn(void *opaque, uint64_t base, uint8_t tg,
                              uint8_t level);

/*
 * Every block, at every granule (4, 16 and 64 KiB) and level (0-3),
 * that overlaps [@iova, @iova + @size - 1], passed to @fn unless it is
 * NULL; returns how many there are.  An IOTLB entry is keyed by the base
 * of its block (aligned to its size), its granule and level, so these
 * are the only keys an entry overlapping the range can have.
 */
uint64_t smmu_iotlb_range_blocks(uint64_t iova, uint64_t size,
                                 SMMUIOTLBBlockFn *fn, void *opaque);

#endif
