/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * hw/arm/smmu-iotlb-range.c: the keys a range invalidation looks up
 * select exactly the IOTLB entries that the scan it replaces removes
 * (smmu-common.c's overlap test: the range's base inside the entry, or
 * the entry's base inside the range, for power-of-two aligned ranges
 * as smmuv3.c splits them), over random entries and ranges, including
 * the top of the address space; and two range invalidations merge
 * exactly when they are of one kind and their union is one range.
 */

#include "qemu/osdep.h"
#include "hw/arm/smmu-iotlb-range.h"

typedef struct Entry {
    uint64_t iova;          /* aligned to its block */
    uint64_t mask;          /* block size - 1 */
    uint8_t tg, level;
    bool hit;               /* enumerated by smmu_iotlb_range_blocks() */
} Entry;

#define ENTRIES 512

typedef struct Table {
    Entry e[ENTRIES];
    uint64_t calls;
} Table;

static unsigned shift_of(uint8_t tg, uint8_t level)
{
    unsigned gsz = tg * 2 + 10;

    return (3 - level) * (gsz - 3) + gsz;
}

static void mark(void *opaque, uint64_t base, uint8_t tg, uint8_t level)
{
    Table *t = opaque;

    t->calls++;
    g_assert_cmpuint(base & ((1ULL << shift_of(tg, level)) - 1), ==, 0);
    for (int i = 0; i < ENTRIES; i++) {
        Entry *e = &t->e[i];

        if (e->iova == base && e->tg == tg && e->level == level) {
            e->hit = true;
        }
    }
}

/* The scan's test (smmu_hash_remove_by_asid_vmid_iova) */
static bool scan_removes(const Entry *e, uint64_t iova, uint64_t mask)
{
    return (iova & ~e->mask) == e->iova || (e->iova & ~mask) == iova;
}

static void fill(Table *t, GRand *r, uint64_t window_base, unsigned bits)
{
    for (int i = 0; i < ENTRIES; i++) {
        Entry *e = &t->e[i];
        uint64_t off = ((uint64_t)g_rand_int(r) << 32 | g_rand_int(r)) &
                       ((1ULL << bits) - 1);

        e->tg = g_rand_int_range(r, 1, 4);
        /* mostly pages, some blocks; level 0 blocks rarely */
        e->level = g_rand_int_range(r, 0, 8) < 6 ? 3
                                                  : g_rand_int_range(r, 0, 3);
        e->mask = (1ULL << shift_of(e->tg, e->level)) - 1;
        e->iova = (window_base + off) & ~e->mask;
        e->hit = false;
    }
}

static void check_range(Table *t, uint64_t iova, uint64_t size)
{
    uint64_t n;

    t->calls = 0;
    for (int i = 0; i < ENTRIES; i++) {
        t->e[i].hit = false;
    }
    n = smmu_iotlb_range_blocks(iova, size, mark, t);
    g_assert_cmpuint(n, ==, t->calls);
    g_assert_cmpuint(smmu_iotlb_range_blocks(iova, size, NULL, NULL), ==, n);
    for (int i = 0; i < ENTRIES; i++) {
        Entry *e = &t->e[i];

        if (e->hit != scan_removes(e, iova, size - 1)) {
            g_error("range 0x%" PRIx64 "+0x%" PRIx64 ": entry 0x%" PRIx64
                    " tg %u level %u: lookup %d, scan %d", iova, size,
                    e->iova, e->tg, e->level, e->hit,
                    scan_removes(e, iova, size - 1));
        }
    }
}

/* Random aligned power-of-two ranges of 1-64 pages against random entries */
static void test_random(void)
{
    GRand *r = g_rand_new_with_seed(0x5a17);
    Table *t = g_new0(Table, 1);
    unsigned hits = 0;

    for (int round = 0; round < 200; round++) {
        /* a 1 GiB window below 4 GiB, or near the top of the space */
        uint64_t window = round % 4 == 3 ? ~0ULL << 30 : 0x80000000ULL;

        fill(t, r, window, 30);
        for (int k = 0; k < 20; k++) {
            uint8_t tg = g_rand_int_range(r, 1, 4);
            unsigned gsz = tg * 2 + 10;
            uint64_t size = (1ULL << g_rand_int_range(r, 0, 7)) << gsz;
            uint64_t iova = (window + (((uint64_t)g_rand_int(r) << 32 |
                             g_rand_int(r)) & ((1ULL << 30) - 1))) &
                            ~(size - 1);

            check_range(t, iova, size);
            for (int i = 0; i < ENTRIES; i++) {
                hits += t->e[i].hit;
            }
        }
    }
    /* the ranges did hit entries: the comparison was not vacuous */
    g_assert_cmpuint(hits, >, 1000);
    g_free(t);
    g_rand_free(r);
}

/* A page invalidation finds the page, and the blocks that hold it */
static void test_page_in_blocks(void)
{
    Table *t = g_new0(Table, 1);
    uint64_t page = 0x40201000ULL;

    t->e[0] = (Entry) { page, 0xfff, 1, 3 };               /* the page */
    t->e[1] = (Entry) { 0x40200000ULL, 0x1fffff, 1, 2 };   /* its 2 MiB */
    t->e[2] = (Entry) { 0x40000000ULL, 0x3fffffff, 1, 1 }; /* its 1 GiB */
    t->e[3] = (Entry) { 0x40200000ULL, 0xffff, 3, 3 };     /* its 64 KiB */
    t->e[4] = (Entry) { 0x40202000ULL, 0xfff, 1, 3 };      /* next page */
    for (int i = 5; i < ENTRIES; i++) {
        t->e[i] = (Entry) { 0x100000000ULL, 0xfff, 1, 3 };
    }
    check_range(t, page, 0x1000);
    g_assert_true(t->e[0].hit && t->e[1].hit && t->e[2].hit && t->e[3].hit);
    g_assert_false(t->e[4].hit);
    /* 3 granules x 4 levels, one block each */
    g_assert_cmpuint(smmu_iotlb_range_blocks(page, 0x1000, NULL, NULL), ==,
                     12);
    g_free(t);
}

/* The last page of the address space: no wrap to 0 */
static void test_top(void)
{
    Table *t = g_new0(Table, 1);
    uint64_t page = ~0ULL << 12;

    t->e[0] = (Entry) { page, 0xfff, 1, 3 };
    t->e[1] = (Entry) { 0, 0xfff, 1, 3 };
    for (int i = 2; i < ENTRIES; i++) {
        t->e[i] = (Entry) { 0x100000000ULL, 0xfff, 1, 3 };
    }
    check_range(t, page, 0x1000);
    g_assert_true(t->e[0].hit);
    g_assert_false(t->e[1].hit);
    /* a range past the top stops there (smmuv3.c never sends one) */
    t->e[0].hit = false;
    smmu_iotlb_range_blocks(page, 0x2000, mark, t);
    g_assert_true(t->e[0].hit);
    g_assert_false(t->e[1].hit);
    g_free(t);
}

static SMMURangeInv range_inv(uint64_t start, uint64_t last)
{
    return (SMMURangeInv) { .type = 0x12, .asid = 7, .vmid = -1, .tg = 1,
                            .ttl = 3, .leaf = true, .start = start,
                            .last = last };
}

/*
 * Merging against a model: two ranges of 0..63 merge exactly when their
 * union is one interval, which is then the result.
 */
static void test_merge_random(void)
{
    GRand *r = g_rand_new_with_seed(3);

    for (int i = 0; i < 20000; i++) {
        uint64_t a = g_rand_int_range(r, 0, 64), b = g_rand_int_range(r, 0, 64);
        uint64_t c = g_rand_int_range(r, 0, 64), d = g_rand_int_range(r, 0, 64);
        SMMURangeInv acc = range_inv(MIN(a, b), MAX(a, b));
        SMMURangeInv next = range_inv(MIN(c, d), MAX(c, d));
        SMMURangeInv before = acc;
        uint64_t lo = MIN(acc.start, next.start);
        uint64_t hi = MAX(acc.last, next.last);
        bool interval = true;

        for (uint64_t x = lo; x <= hi; x++) {
            interval &= (x >= acc.start && x <= acc.last) ||
                        (x >= next.start && x <= next.last);
        }
        g_assert_cmpint(smmu_range_inv_merge(&acc, &next), ==, interval);
        if (interval) {
            g_assert_cmpuint(acc.start, ==, lo);
            g_assert_cmpuint(acc.last, ==, hi);
        } else {
            g_assert_true(memcmp(&acc, &before, sizeof(acc)) == 0);
        }
    }
    g_rand_free(r);
}

/* Only invalidations of the same kind merge; nothing wraps at the top */
static void test_merge_kind(void)
{
    SMMURangeInv base = range_inv(0x1000, 0x1fff);
    SMMURangeInv next = range_inv(0x2000, 0x2fff), acc;
    SMMURangeInv other[6];

    for (int i = 0; i < 6; i++) {
        other[i] = next;
    }
    other[0].type = 0x13;
    other[1].asid = 8;
    other[2].vmid = 1;
    other[3].tg = 2;
    other[4].ttl = 2;
    other[5].leaf = false;
    for (int i = 0; i < 6; i++) {
        acc = base;
        g_assert_false(smmu_range_inv_merge(&acc, &other[i]));
    }
    acc = base;
    g_assert_true(smmu_range_inv_merge(&acc, &next));
    g_assert_cmpuint(acc.start, ==, 0x1000);
    g_assert_cmpuint(acc.last, ==, 0x2fff);

    acc = range_inv(UINT64_MAX - 0xfff, UINT64_MAX);
    next = range_inv(0, 0xfff);
    g_assert_false(smmu_range_inv_merge(&acc, &next));
    g_assert_false(smmu_range_inv_merge(&next, &acc));
    acc = range_inv(0x2000, 0x1fff);           /* wrapped: never merged */
    next = range_inv(0x1000, 0x1fff);
    g_assert_false(smmu_range_inv_merge(&next, &acc));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/smmu-iotlb-range/page-in-blocks", test_page_in_blocks);
    g_test_add_func("/smmu-iotlb-range/top", test_top);
    g_test_add_func("/smmu-iotlb-range/random", test_random);
    g_test_add_func("/smmu-iotlb-range/merge-random", test_merge_random);
    g_test_add_func("/smmu-iotlb-range/merge-kind", test_merge_kind);
    return g_test_run();
}
