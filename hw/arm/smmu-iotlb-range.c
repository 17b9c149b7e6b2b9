/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * SMMU IOTLB range invalidation by lookup (see smmu-iotlb-range.h).
 * Hooked into smmu_iotlb_inv_iova() and smmu_iotlb_inv_ipa() of
 * smmu-common.c, and the merging of consecutive range invalidations
 * into smmuv3_cmdq_run() of smmuv3.c; kept apart, without QEMU state,
 * for its unit test.
 */

#include "qemu/osdep.h"
#include "smmu-iotlb-range.h"

/* log2 of the block a descriptor at @level maps, granule 2^@gsz bytes */
static unsigned block_shift(unsigned level, unsigned gsz)
{
    return (3 - level) * (gsz - 3) + gsz;
}

uint64_t smmu_iotlb_range_blocks(uint64_t iova, uint64_t size,
                                 SMMUIOTLBBlockFn *fn, void *opaque)
{
    uint64_t last = size ? iova + size - 1 : iova;
    uint64_t count = 0;

    if (last < iova) {
        last = UINT64_MAX;      /* the range wraps: up to the top */
    }
    for (uint8_t tg = 1; tg <= 3; tg++) {
        for (uint8_t level = 0; level <= 3; level++) {
            /* at most 55 (64 KiB granule, level 0) */
            unsigned shift = block_shift(level, tg * 2 + 10);
            uint64_t first_block = iova >> shift, last_block = last >> shift;

            count += last_block - first_block + 1;
            if (!fn) {
                continue;
            }
            for (uint64_t b = first_block; ; b++) {
                fn(opaque, b << shift, tg, level);
                if (b == last_block) {
                    break;
                }
            }
        }
    }
    return count;
}

bool smmu_range_inv_merge(SMMURangeInv *acc, const SMMURangeInv *next)
{
    if (acc->type != next->type || acc->asid != next->asid ||
        acc->vmid != next->vmid || acc->tg != next->tg ||
        acc->ttl != next->ttl || acc->leaf != next->leaf ||
        acc->last < acc->start || next->last < next->start) {
        return false;
    }
    /* overlapping or touching (next->start == acc->last + 1, no wrap) */
    if ((next->start > acc->last &&
         (acc->last == UINT64_MAX || next->start != acc->last + 1)) ||
        (acc->start > next->last &&
         (next->last == UINT64_MAX || acc->start != next->last + 1))) {
        return false;
    }
    acc->start = MIN(acc->start, next->start);
    acc->last = MAX(acc->last, next->last);
    return true;
}
