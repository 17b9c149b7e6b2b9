/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * SMMU IOTLB range invalidation by lookup: which IOTLB keys could hold
 * a translation that overlaps an address range.  smmu-common.c looks
 * each of them up instead of scanning the whole IOTLB when there are
 * fewer of them than entries in the table.  And the folding of
 * consecutive range invalidations of a command batch (smmuv3.c).
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

/*
 * A range invalidation (TLBI_NH_VA, TLBI_NH_VAA or TLBI_S2_IPA with a
 * range): @type the command's opcode, @asid and @vmid as matched (-1:
 * any), @tg the granule (1-3), @ttl and @leaf the hints, [@start, @last]
 * the addresses.
 */
typedef struct SMMURangeInv {
    int type;
    int asid;
    int vmid;
    uint8_t tg;
    uint8_t ttl;
    bool leaf;
    uint64_t start;
    uint64_t last;
} SMMURangeInv;

/*
 * Fold @next into @acc when both are of the same kind (type, ASID, VMID,
 * granule, hints) and their ranges overlap or touch: running @acc then
 * removes exactly what running both would.  False, @acc unchanged,
 * otherwise.
 */
bool smmu_range_inv_merge(SMMURangeInv *acc, const SMMURangeInv *next);

#endif
