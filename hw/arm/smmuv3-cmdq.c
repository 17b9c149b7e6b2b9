/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The emulated SMMUv3's command queue without the BQL (see
 * smmuv3-cmdq.h).
 *
 * A guest's driver writes CMDQ_PROD after queuing commands and polls
 * CMDQ_CONS until its CMD_SYNC is consumed.  Both registers live in a
 * lockless MMIO region over the SMMU's own (priority 1), so these
 * accesses neither take nor wait for the BQL:
 *
 * - a CMDQ_PROD write stores PROD (release), then tries to become the
 *   queue's owner; the owner reads commands from guest RAM in batches,
 *   runs each batch under s->mutex (the lock translations take), and
 *   publishes CONS (release) after each batch.  A writer that finds an
 *   owner returns at once: the owner, after letting go, looks at PROD
 *   again (a full barrier on both sides), so no published command is
 *   stranded.
 * - a CMDQ_CONS read is one atomic load.
 *
 * Lock order: BQL, then ownership, then s->mutex.  The owner never
 * waits for the BQL: interrupts (CMD_SYNC with CS=IRQ, GERROR.CMDQ_ERR)
 * are raised after it lets go, under the BQL, a CMD_SYNC's only once
 * CONS has passed it.  CONS moves only under s->mutex with CMDQEN set,
 * and CR0 is written under s->mutex: once CR0ACK shows CMDQEN=0, CONS
 * stays.  A command error stops the queue from the moment the owner
 * finds it until GERRORN acknowledges GERROR.CMDQ_ERR, so no thread
 * runs the failing command again before it is reported.
 * A batch that needs the BQL (IOMMU UNMAP notifiers, vhost's, are
 * registered, the list changed under s->mutex; or a CFGI_STE/CFGI_CD,
 * which looks up devices that hotplug adds under the BQL) is left to an
 * owner that holds it: an owner without it lets go, takes the BQL and
 * drains again.
 * One kick runs at most 256 commands; the rest is drained from a bottom
 * half, so a guest cannot hold a vCPU thread (or the BQL) in the drain
 * for long.  The queue is drained whole when the VM stops (vCPUs
 * paused, before any device is saved, so the interrupts it raises
 * reach the interrupt controller's saved state), and again in pre_save
 * (a VM saved without running): stock QEMU saves a drained queue too.
 * A destination drains what is left (a queue held by an error, then
 * acknowledged) once it runs.
 * CMDQ_CONS is written (queue disabled) under s->mutex, like CR0.  Each
 * change of CR0.CMDQEN moves a generation count: a batch read before
 * the queue was disabled and enabled again (its base, CONS or commands
 * rewritten meanwhile) is read again, never run.
 *
 * A command queue outside RAM or ROM (MMIO, a RAM device) is read as
 * stock QEMU reads it, through the memory API, by an owner that holds
 * the BQL (one without lets go and takes it first).
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qemu/stats64.h"
#include "qemu/timer.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "hw/arm/smmuv3.h"
#include "system/irq-stats.h"
#include "system/qtest.h"
#include "system/runstate.h"
#include "smmuv3-internal.h"
#include "smmuv3-cmdq.h"
#include "trace.h"

/* Commands read and run at once, and between two CONS updates */
#define CMDQ_BATCH 32
/* Commands one kick runs before a bottom half goes on */
#define CMDQ_BUDGET 256

typedef enum SMMUv3CmdqStat {
    CMDQ_STAT_COMMANDS,
    CMDQ_STAT_SYNCS,
    CMDQ_STAT_TLBI,
    CMDQ_STAT_CFGI,
    CMDQ_STAT_TLBI_MERGED,
    CMDQ_STAT_BATCHES,
    CMDQ_STAT_DRAINS,
    CMDQ_STAT_HANDOFFS,
    CMDQ_STAT_BQL_DRAINS,
    CMDQ_STAT_ERRORS,
    CMDQ_STAT_DRAIN_NS,
    CMDQ_STAT__MAX
} SMMUv3CmdqStat;

static const IrqStatDef cmdq_stat_defs[CMDQ_STAT__MAX] = {
    /* Commands run (all types), */
    [CMDQ_STAT_COMMANDS] = { "smmu-cmdq-commands", STATS_TYPE_CUMULATIVE },
    /* of which CMD_SYNC, */
    [CMDQ_STAT_SYNCS] = { "smmu-cmdq-syncs", STATS_TYPE_CUMULATIVE },
    /* TLB invalidations (TLBI_*), */
    [CMDQ_STAT_TLBI] = { "smmu-cmdq-tlbi", STATS_TYPE_CUMULATIVE },
    /* configuration invalidations (CFGI_*); */
    [CMDQ_STAT_CFGI] = { "smmu-cmdq-cfgi", STATS_TYPE_CUMULATIVE },
    /* range TLBIs folded into the one before them (merged); */
    [CMDQ_STAT_TLBI_MERGED] = { "smmu-cmdq-tlbi-merged",
                                STATS_TYPE_CUMULATIVE },
    /* batches run under one s->mutex hold, */
    [CMDQ_STAT_BATCHES] = { "smmu-cmdq-batches", STATS_TYPE_CUMULATIVE },
    /* times a thread became the owner and drained the queue, */
    [CMDQ_STAT_DRAINS] = { "smmu-cmdq-drains", STATS_TYPE_CUMULATIVE },
    /* PROD writes that left their commands to the owner, */
    [CMDQ_STAT_HANDOFFS] = { "smmu-cmdq-handoffs", STATS_TYPE_CUMULATIVE },
    /* drains under the BQL (IOMMU notifiers registered), */
    [CMDQ_STAT_BQL_DRAINS] = { "smmu-cmdq-bql-drains",
                               STATS_TYPE_CUMULATIVE },
    /* command errors reported (CMDQ_CONS.ERR, GERROR.CMDQ_ERR), */
    [CMDQ_STAT_ERRORS] = { "smmu-cmdq-errors", STATS_TYPE_CUMULATIVE },
    /* nanoseconds owners held the queue: the time commands spend in it. */
    [CMDQ_STAT_DRAIN_NS] = { "smmu-cmdq-drain-ns", STATS_TYPE_CUMULATIVE },
};

/* SMMUState's IOTLB counters, counted in smmu-common.c */
static const IrqStatDef iotlb_stat_defs[SMMU_IOTLB_STAT__MAX] = {
    /* Translations the IOTLB answered, */
    [SMMU_IOTLB_STAT_HITS] = { "smmu-iotlb-hits", STATS_TYPE_CUMULATIVE },
    /* translations that walked the page tables, */
    [SMMU_IOTLB_STAT_MISSES] = { "smmu-iotlb-misses",
                                 STATS_TYPE_CUMULATIVE },
    /* entries evicted to make room (the IOTLB holds 256), */
    [SMMU_IOTLB_STAT_EVICTIONS] = { "smmu-iotlb-evictions",
                                    STATS_TYPE_CUMULATIVE },
    /* entries visited by invalidations that scan the whole IOTLB, */
    [SMMU_IOTLB_STAT_SCANNED] = { "smmu-iotlb-scanned",
                                  STATS_TYPE_CUMULATIVE },
    /* keys looked up by range invalidations that need no scan, */
    [SMMU_IOTLB_STAT_LOOKED_UP] = { "smmu-iotlb-looked-up",
                                    STATS_TYPE_CUMULATIVE },
    /* entries ASID and VMID invalidations removed through their lists. */
    [SMMU_IOTLB_STAT_LIST_REMOVED] = { "smmu-iotlb-list-removed",
                                       STATS_TYPE_CUMULATIVE },
};

struct SMMUv3Cmdq {
    MemoryRegion iomem;
    QEMUBH *bh;                 /* drains what one ownership left */
    bool owned;                 /* a thread drains the queue */
    bool want_bql;              /* a batch waits for an owner with the BQL */
    bool batch_sync_irq;        /* owner's: a CMD_SYNC of this batch */
    bool sync_irq;              /* a CMD_SYNC asked for its interrupt */
    uint32_t enable_gen;        /* CR0.CMDQEN changes (under s->mutex) */
    uint32_t error;             /* SMMUCmdError holding the queue, or 0 */
    uint32_t error_unreported;  /* the same, until GERROR shows it */
    uint32_t error_reported;    /* the same, once GERROR shows it (BQL) */
    Stat64 stats[CMDQ_STAT__MAX];
    IrqStatsGroup *stats_group;
    IrqStatsGroup *iotlb_stats_group;
};

/* This thread owns a queue (a stop or reset inside a drain waits not) */
static __thread bool cmdq_owning;

static void cmdq_stat(SMMUv3Cmdq *c, SMMUv3CmdqStat stat, uint64_t n)
{
    stat64_add(&c->stats[stat], n);
}

void smmuv3_cmdq_count(SMMUv3State *s, SMMUCommandType type)
{
    SMMUv3Cmdq *c = s->cmdq_lockless;

    cmdq_stat(c, CMDQ_STAT_COMMANDS, 1);
    switch (type) {
    case SMMU_CMD_SYNC:
        cmdq_stat(c, CMDQ_STAT_SYNCS, 1);
        break;
    case SMMU_CMD_TLBI_NH_ALL:
    case SMMU_CMD_TLBI_NH_ASID:
    case SMMU_CMD_TLBI_NH_VA:
    case SMMU_CMD_TLBI_NH_VAA:
    case SMMU_CMD_TLBI_S12_VMALL:
    case SMMU_CMD_TLBI_S2_IPA:
    case SMMU_CMD_TLBI_NSNH_ALL:
        /* not the EL2/EL3 ones: no stage of this SMMU uses their TLBs */
        cmdq_stat(c, CMDQ_STAT_TLBI, 1);
        break;
    case SMMU_CMD_CFGI_STE:
    case SMMU_CMD_CFGI_STE_RANGE:
    case SMMU_CMD_CFGI_CD:
    case SMMU_CMD_CFGI_CD_ALL:
        cmdq_stat(c, CMDQ_STAT_CFGI, 1);
        break;
    default:
        break;
    }
}

void smmuv3_cmdq_count_merged(SMMUv3State *s)
{
    cmdq_stat(s->cmdq_lockless, CMDQ_STAT_TLBI_MERGED, 1);
}

void smmuv3_cmdq_sync_irq(SMMUv3State *s)
{
    /* Raised once CONS has passed it (cmdq_drain()) */
    s->cmdq_lockless->batch_sync_irq = true;
}

/*
 * Copy up to @n commands at @addr out of guest RAM, as many as lie in
 * one RAM (or ROM device) region: 0 if the first does not.  Never
 * dispatches to MMIO: the owner may not take the BQL (cmdq_fetch_mmio()).
 */
static unsigned cmdq_fetch(hwaddr addr, Cmd *cmds, unsigned n)
{
    hwaddr len = n * sizeof(Cmd), xlat, l = len;
    MemoryRegion *mr;
    unsigned i, j;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(&address_space_memory, addr, &xlat, &l,
                                 false, MEMTXATTRS_UNSPECIFIED);
    if (!(memory_region_is_ram(mr) || memory_region_is_romd(mr)) ||
        memory_region_is_ram_device(mr)) {
        return 0;
    }
    n = MIN(n, l / sizeof(Cmd));
    memcpy(cmds, (uint8_t *)memory_region_get_ram_ptr(mr) + xlat,
           n * sizeof(Cmd));
    for (i = 0; i < n; i++) {
        for (j = 0; j < ARRAY_SIZE(cmds[i].word); j++) {
            le32_to_cpus(&cmds[i].word[j]);
        }
    }
    return n;
}

/*
 * One command at @addr outside RAM (MMIO), read through the memory API
 * (smmu_table_read()) as stock QEMU reads the queue: under the BQL,
 * before s->mutex.
 * 0 if the read fails (an abort on the fetch).
 */
static unsigned cmdq_fetch_mmio(SMMUv3State *s, hwaddr addr, Cmd *cmd)
{
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;
    MemTxResult res;
    unsigned j;

    assert(bql_locked());
    /*
     * Stock drains inside the SMMU's MMIO write: a queue in the SMMU's
     * own registers is re-entrant IO there, refused.  The flag is the
     * BQL's (the lockless region does not use it).
     */
    guard->engaged_in_io = true;
    res = smmu_table_read(addr, cmd, sizeof(*cmd));
    guard->engaged_in_io = engaged;
    if (res != MEMTX_OK) {
        return 0;
    }
    for (j = 0; j < ARRAY_SIZE(cmd->word); j++) {
        le32_to_cpus(&cmd->word[j]);
    }
    return 1;
}

/* Whether running @cmds needs the BQL (see the top of the file). */
static bool cmdq_batch_needs_bql(SMMUv3State *s, const Cmd *cmds,
                                 unsigned n)
{
    unsigned i;

    if (!QLIST_EMPTY(&ARM_SMMU(s)->devices_with_notifiers)) {
        return true;
    }
    for (i = 0; i < n; i++) {
        switch (CMD_TYPE(&cmds[i])) {
        case SMMU_CMD_CFGI_STE:
        case SMMU_CMD_CFGI_STE_RANGE:   /* reads buses' numbers */
        case SMMU_CMD_CFGI_CD:
        case SMMU_CMD_CFGI_CD_ALL:
            return true;
        default:
            break;
        }
    }
    return false;
}

/*
 * Whether there are commands to run: PROD and CONS differ, the queue
 * enabled, no error.
 */
static bool cmdq_has_work(SMMUv3State *s)
{
    SMMUQueue *q = &s->cmdq;
    uint32_t mask = WRAP_INDEX_MASK(q);
    uint32_t pending = qatomic_read(&s->gerror) ^ qatomic_read(&s->gerrorn);

    return smmuv3_cmdq_enabled(s) &&
           !FIELD_EX32(pending, GERROR, CMDQ_ERR) &&
           !qatomic_read(&s->cmdq_lockless->error) &&
           ((qatomic_load_acquire(&q->prod) ^ qatomic_read(&q->cons)) & mask);
}

/*
 * The owner: run batches until the queue is empty, disabled or in error,
 * a batch needs the BQL it does not hold, or the *@budget of the kick is
 * spent.  Returns false when stopped by the budget.
 */
static bool cmdq_drain(SMMUv3State *s, SMMUv3Cmdq *c, unsigned *budget)
{
    SMMUQueue *q = &s->cmdq;
    Cmd cmds[CMDQ_BATCH];

    cmdq_stat(c, CMDQ_STAT_DRAINS, 1);
    while (cmdq_has_work(s)) {
        uint32_t prod, cons, size, idx, ahead, gen;
        uint8_t log2size;
        SMMUCmdError error = SMMU_CERROR_NONE;
        unsigned n, done = 0;

        if (!*budget) {
            return false;
        }
        /* Before the reads: what a disable and re-enable rewrote */
        gen = qatomic_load_acquire(&c->enable_gen);
        prod = qatomic_load_acquire(&q->prod);
        cons = qatomic_read(&q->cons);
        log2size = qatomic_read(&q->log2size);
        size = 1U << log2size;
        idx = cons & (size - 1);
        ahead = (prod - cons) & ((size << 1) - 1);
        if (!ahead) {
            continue;           /* PROD moved back meanwhile: look again */
        }
        /* PROD more than a queue ahead: only the index counts */
        n = MIN(MIN(ahead, size), MIN(CMDQ_BATCH, *budget));
        n = MIN(n, size - idx);     /* up to the end of the ring */
        n = cmdq_fetch(Q_BASE(q) + idx * q->entry_size, cmds, n);
        if (!n) {
            if (!bql_locked()) {
                /* Not RAM: read by an owner with the BQL */
                qatomic_set(&c->want_bql, true);
                return true;
            }
            n = cmdq_fetch_mmio(s, Q_BASE(q) + idx * q->entry_size, cmds);
        }
        if (!n) {
            error = SMMU_CERROR_ABT;
        }
        qemu_mutex_lock(&s->mutex);
        if (!smmuv3_cmdq_enabled(s) ||
            qatomic_read(&c->enable_gen) != gen) {
            /*
             * Disabled meanwhile (CR0 is written under s->mutex), or
             * disabled and enabled again: what was read may be stale
             */
            qemu_mutex_unlock(&s->mutex);
            continue;
        }
        if (n) {
            if (!bql_locked() && cmdq_batch_needs_bql(s, cmds, n)) {
                qemu_mutex_unlock(&s->mutex);
                qatomic_set(&c->want_bql, true);
                return true;
            }
            trace_smmuv3_cmdq_consume(prod & (size - 1), idx,
                                      !!(prod & size), !!(cons & size));
            done = smmuv3_cmdq_run(s, cmds, n, &error);
            cmdq_stat(c, CMDQ_STAT_BATCHES, 1);
            *budget -= MIN(*budget, done + !!error);
            /* CONS past what completed, wrap bit and ERR kept */
            cons = deposit32(cons, 0, log2size + 1, cons + done);
            qatomic_store_release(&q->cons, cons);
            trace_smmuv3_cmdq_consume_out(prod & (size - 1),
                                          cons & (size - 1),
                                          !!(prod & size), !!(cons & size));
            if (c->batch_sync_irq) {
                c->batch_sync_irq = false;
                qatomic_set(&c->sync_irq, true);
            }
        }
        if (error) {
            /* Holds the queue before anyone can look at CONS again */
            qatomic_set(&c->error_unreported, error);
            qatomic_set(&c->error, error);
        }
        qemu_mutex_unlock(&s->mutex);
        if (error) {
            break;
        }
    }
    return true;
}

/* After letting go: what the owner could not raise itself, under the BQL */
static void cmdq_report(SMMUv3State *s, SMMUv3Cmdq *c)
{
    uint32_t error;

    if (!qatomic_read(&c->sync_irq) &&
        !qatomic_read(&c->error_unreported)) {
        return;
    }
    BQL_LOCK_GUARD();
    if (qatomic_xchg(&c->sync_irq, false)) {
        smmuv3_trigger_irq(s, SMMU_IRQ_CMD_SYNC, 0);
    }
    error = qatomic_xchg(&c->error_unreported, 0);
    if (error) {
        uint32_t cons = qatomic_read(&s->cmdq.cons), old;

        /* No owner runs commands while an error is pending */
        do {
            old = cons;
            cons = qatomic_cmpxchg(&s->cmdq.cons, old,
                                   FIELD_DP32(old, CMDQ_CONS, ERR, error));
        } while (cons != old);
        cmdq_stat(c, CMDQ_STAT_ERRORS, 1);
        smmuv3_trigger_irq(s, SMMU_IRQ_GERROR, R_GERROR_CMDQ_ERR_MASK);
        /* c->error still holds the queue, until GERRORN acks it */
        c->error_reported = error;
    }
}

void smmuv3_cmdq_gerrorn_written(SMMUv3State *s)
{
    SMMUv3Cmdq *c = s->cmdq_lockless;
    uint32_t pending = qatomic_read(&s->gerror) ^ qatomic_read(&s->gerrorn);

    /*
     * Under the BQL, as cmdq_report() is: an error reported is acked.
     * Not one the owner found but did not report yet (GERRORN written
     * for another error meanwhile): it holds the queue until its own.
     */
    if (!FIELD_EX32(pending, GERROR, CMDQ_ERR) && c->error_reported) {
        c->error_reported = 0;
        qatomic_set(&c->error, 0);
    }
    smmuv3_cmdq_kick(s);
}

/* Drain with @budget commands (then a bottom half goes on), report */
static void cmdq_kick_budget(SMMUv3State *s, unsigned budget)
{
    SMMUv3Cmdq *c = s->cmdq_lockless;
    bool bql = false;

    /* Against the owner's release then re-check: store PROD, then load */
    smp_mb();
    while (cmdq_has_work(s)) {
        int64_t owned_since;
        bool more;

        if (qatomic_xchg(&c->owned, true)) {
            cmdq_stat(c, CMDQ_STAT_HANDOFFS, 1);
            break;
        }
        cmdq_owning = true;
        owned_since = get_clock();
        if (bql_locked()) {
            cmdq_stat(c, CMDQ_STAT_BQL_DRAINS, 1);
        }
        more = !cmdq_drain(s, c, &budget);
        cmdq_stat(c, CMDQ_STAT_DRAIN_NS, get_clock() - owned_since);
        cmdq_owning = false;
        qatomic_store_release(&c->owned, false);
        smp_mb();               /* then look at PROD again */
        if (more) {
            qemu_bh_schedule(c->bh);
            break;
        }
        if (qatomic_xchg(&c->want_bql, false) && !bql_locked()) {
            bql_lock();         /* not owning: the lock order holds */
            bql = true;
        }
    }
    if (bql) {
        bql_unlock();
    }
    cmdq_report(s, c);
}

void smmuv3_cmdq_kick(SMMUv3State *s)
{
    cmdq_kick_budget(s, CMDQ_BUDGET);
}

static void cmdq_bh(void *opaque)
{
    smmuv3_cmdq_kick(opaque);
}

MemTxResult smmuv3_cmdq_read(SMMUv3State *s, hwaddr offset,
                             uint64_t *data, unsigned size)
{
    uint64_t prod = qatomic_read(&s->cmdq.prod);
    uint64_t cons = qatomic_load_acquire(&s->cmdq.cons);

    switch (offset) {
    case 0:
        *data = size == 8 ? prod | cons << 32 : prod;
        break;
    case 4:
        *data = cons;
        break;
    default:
        *data = 0;
        return MEMTX_DECODE_ERROR;
    }
    return MEMTX_OK;
}

void smmuv3_cmdq_cr0_write(SMMUv3State *s, uint32_t data)
{
    SMMUv3Cmdq *c = s->cmdq_lockless;

    /* Under s->mutex: no batch runs once CMDQEN=0 is acknowledged */
    qemu_mutex_lock(&s->mutex);
    if ((qatomic_read(&s->cr[0]) ^ data) & R_CR0_CMDQEN_MASK) {
        qatomic_store_release(&c->enable_gen, c->enable_gen + 1);
    }
    qatomic_set(&s->cr[0], data);
    s->cr0ack = data & ~SMMU_CR0_RESERVED;
    qemu_mutex_unlock(&s->mutex);
    /* in case the command queue has been enabled */
    smmuv3_cmdq_kick(s);
}

MemTxResult smmuv3_cmdq_write(SMMUv3State *s, hwaddr offset,
                              uint64_t data, unsigned size)
{
    if (offset == 0) {
        qatomic_store_release(&s->cmdq.prod, (uint32_t)data);
        if (size == 4) {
            smmuv3_cmdq_kick(s);
            return MEMTX_OK;
        }
        data >>= 32;            /* a 64-bit write: CONS too */
        if (smmuv3_cmdq_enabled(s)) {
            /* Its CONS half is stale or the same: nothing to say */
            smmuv3_cmdq_kick(s);
            return MEMTX_OK;
        }
    }
    /*
     * CONS: software may move it only while the queue is disabled.
     * Under s->mutex, as batches publish CONS (only while enabled).
     */
    qemu_mutex_lock(&s->mutex);
    if (smmuv3_cmdq_enabled(s)) {
        qemu_mutex_unlock(&s->mutex);
        qemu_log_mask(LOG_GUEST_ERROR, "smmuv3: CMDQ_CONS written while "
                      "CR0.CMDQEN is set: ignored\n");
        return MEMTX_OK;
    }
    qatomic_store_release(&s->cmdq.cons, (uint32_t)data);
    qemu_mutex_unlock(&s->mutex);
    return MEMTX_OK;
}

static MemTxResult cmdq_mmio_read(void *opaque, hwaddr offset,
                                  uint64_t *data, unsigned size,
                                  MemTxAttrs attrs)
{
    return smmuv3_cmdq_read(opaque, offset, data, size);
}

static MemTxResult cmdq_mmio_write(void *opaque, hwaddr offset,
                                   uint64_t data, unsigned size,
                                   MemTxAttrs attrs)
{
    return smmuv3_cmdq_write(opaque, offset, data, size);
}

static const MemoryRegionOps cmdq_mmio_ops = {
    .read_with_attrs = cmdq_mmio_read,
    .write_with_attrs = cmdq_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

/*
 * Wait until no other thread owns the queue.  With vCPUs stopped, only
 * a thread that a vCPU stop does not wait for can (a device's DMA into
 * CMDQ_PROD from an iothread, a qtest stress thread).  An owner never
 * waits for the BQL (it lets go first, and walks and fetches outside
 * RAM need the BQL only of a thread that holds it), so this ends.
 */
static void cmdq_wait_owner(SMMUv3Cmdq *c)
{
    while (!cmdq_owning && qatomic_load_acquire(&c->owned)) {
        g_usleep(10);
    }
}

/* vCPUs stopped, the BQL held: drain the queue whole. */
static void cmdq_drain_stopped(SMMUv3State *s)
{
    SMMUv3Cmdq *c = s->cmdq_lockless;

    if (cmdq_owning) {
        return;                 /* the drain under way goes on */
    }
    do {
        cmdq_wait_owner(c);
        cmdq_kick_budget(s, UINT_MAX);
    } while (cmdq_has_work(s));
}

static void cmdq_vm_state_change(void *opaque, bool running, RunState state)
{
    if (running) {
        /* Every other handler ran (vhost started): drain what is left */
        smmuv3_cmdq_kick(opaque);
    } else {
        /*
         * vCPUs paused, the BQL held, before every other handler (vhost
         * stops, the in-kernel GIC saves its pending tables) and before
         * any device is saved: run what a bottom half or an owner left,
         * so that its invalidations reach vhost and its interrupts the
         * interrupt controller's saved state (the SMMU is saved after
         * it: MIG_PRI_IOMMU)
         */
        cmdq_drain_stopped(opaque);
    }
}

void smmuv3_cmdq_init(SMMUv3State *s, MemoryRegion *iomem)
{
    SMMUv3Cmdq *c = g_new0(SMMUv3Cmdq, 1);

    s->cmdq_lockless = c;
    c->bh = qemu_bh_new_guarded(cmdq_bh, s, &DEVICE(s)->mem_reentrancy_guard);
    memory_region_init_io(&c->iomem, OBJECT(s), &cmdq_mmio_ops, s,
                          "smmuv3-cmdq", 8);
    memory_region_enable_lockless_io(&c->iomem);
    /* First when the VM stops, last when it runs */
    qemu_add_vm_change_state_handler_prio(cmdq_vm_state_change, s, INT_MAX);
    memory_region_add_subregion_overlap(iomem, A_CMDQ_PROD, &c->iomem, 1);
    c->stats_group = irq_stats_register(OBJECT(s), STATS_TARGET_IRQ_DEVICE,
                                        cmdq_stat_defs, c->stats,
                                        CMDQ_STAT__MAX);
    c->iotlb_stats_group = irq_stats_register(OBJECT(s),
                                              STATS_TARGET_IRQ_DEVICE,
                                              iotlb_stat_defs,
                                              ARM_SMMU(s)->iotlb_stats,
                                              SMMU_IOTLB_STAT__MAX);
    if (qtest_enabled()) {
        smmuv3_cmdq_stress_register(s);
    }
}

void smmuv3_cmdq_reset(SMMUv3State *s)
{
    SMMUv3Cmdq *c = s->cmdq_lockless;

    if (c) {
        /*
         * Against an owner that vCPUs do not stop (an iothread's DMA):
         * once it let go, the queue is emptied and disabled under
         * s->mutex, and a batch it read before is not run.
         */
        cmdq_wait_owner(c);
        qemu_mutex_lock(&s->mutex);
        qatomic_store_release(&c->enable_gen, c->enable_gen + 1);
        qatomic_set(&s->cr[0], 0);
        s->cr0ack = 0;
        qatomic_set(&s->cmdq.prod, 0);
        qatomic_set(&s->cmdq.cons, 0);
        qemu_mutex_unlock(&s->mutex);
        qatomic_set(&c->sync_irq, false);
        qatomic_set(&c->error, 0);
        qatomic_set(&c->error_unreported, 0);
        c->error_reported = 0;
    }
}

void smmuv3_cmdq_pre_save(SMMUv3State *s)
{
    /*
     * vCPUs stopped, the BQL held.  The stop drained the queue
     * (cmdq_vm_state_change()), and a stream (stock's or the fork's)
     * carries a drained queue or one held by an error, so nothing is
     * left here unless CMDQ_PROD was written while the VM was stopped
     * (a debugger's store, a device's DMA from an iothread, which the
     * stop does not wait for): drained here, as stock QEMU
     * drains in the PROD write, so that a stock destination finds
     * nothing it would leave undrained.  An interrupt this raises comes
     * after the interrupt controller's state is saved.
     */
    cmdq_drain_stopped(s);
}

