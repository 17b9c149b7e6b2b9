/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The rules of AMD AVIC's virtual APIC backing page, as pure logic:
 * which register accesses the CPU accelerates, traps or faults, the
 * interrupt the backing page holds for the guest (IRR against PPR),
 * accepting it, an accelerated EOI, and the IPI an ICR write sends
 * through the physical and logical APIC ID tables.  Nothing here knows
 * CPUs or guest memory: callers hand in the backing page mapped to host
 * memory and reach the tables and other vCPUs' pages through
 * AvicIpiOps.  The nested SVM emulation (TCG) is the caller; the unit
 * test is tests/unit/test-svm-avic-apic.c.
 *
 * Facts from AMD's APM vol. 2 (AVIC) as Linux's arch/x86/kvm/svm/avic.c
 * relies on them; see docs/avic.md for what is emulated and what not.
 */

#ifndef SVM_AVIC_APIC_H
#define SVM_AVIC_APIC_H

/* Register offsets in the 4 KiB backing page (xAPIC layout) */
#define AVIC_REG_ID         0x020
#define AVIC_REG_VERSION    0x030
#define AVIC_REG_TPR        0x080
#define AVIC_REG_APR        0x090
#define AVIC_REG_PPR        0x0a0
#define AVIC_REG_EOI        0x0b0
#define AVIC_REG_RRD        0x0c0
#define AVIC_REG_LDR        0x0d0
#define AVIC_REG_DFR        0x0e0
#define AVIC_REG_SVR        0x0f0
#define AVIC_REG_ISR        0x100
#define AVIC_REG_TMR        0x180
#define AVIC_REG_IRR        0x200
#define AVIC_REG_ESR        0x280
#define AVIC_REG_ICR_LO     0x300
#define AVIC_REG_ICR_HI     0x310
#define AVIC_REG_LVT_TIMER  0x320
#define AVIC_REG_LVT_ERROR  0x370
#define AVIC_REG_TIMER_ICR  0x380
#define AVIC_REG_TIMER_CCR  0x390
#define AVIC_REG_TIMER_DCR  0x3e0
#define AVIC_REG_SELF_IPI   0x3f0   /* x2APIC only (MSR 0x83f) */

#define AVIC_BACKING_PAGE_SIZE 4096

/* Physical APIC ID table entry */
#define AVIC_PHYS_HOST_ID_MASK      0xfffULL
#define AVIC_PHYS_BACKING_MASK      0x000ffffffffff000ULL
#define AVIC_PHYS_IS_RUNNING        (1ULL << 62)
#define AVIC_PHYS_VALID             (1ULL << 63)

/* Logical APIC ID table entry (xAPIC mode only) */
#define AVIC_LOG_GUEST_ID_MASK      0xffU
#define AVIC_LOG_VALID              (1U << 31)

/* Largest physical APIC ID table index: xAPIC, x2APIC */
#define AVIC_MAX_INDEX_XAPIC        0xfe
#define AVIC_MAX_INDEX_X2APIC       0x1ff

/* AVIC_INCOMPLETE_IPI (#VMEXIT 0x401) failure causes, EXITINFO2[63:32] */
typedef enum AvicIpiFailure {
    AVIC_IPI_FAILURE_INVALID_INT_TYPE = 0,
    AVIC_IPI_FAILURE_TARGET_NOT_RUNNING = 1,
    AVIC_IPI_FAILURE_INVALID_TARGET = 2,
    AVIC_IPI_FAILURE_INVALID_BACKING_PAGE = 3,
    AVIC_IPI_FAILURE_INVALID_IPI_VECTOR = 4,
} AvicIpiFailure;

/* What the CPU does with one access to the virtual APIC */
typedef enum AvicAccess {
    AVIC_ACCESS_ALLOW,      /* served from the backing page, no exit */
    AVIC_ACCESS_ACCEL,      /* written, plus the register's side effect */
    AVIC_ACCESS_TRAP,       /* written, then AVIC_NOACCEL after the insn */
    AVIC_ACCESS_FAULT,      /* not done: AVIC_NOACCEL before the insn */
    AVIC_ACCESS_GP,         /* x2APIC: not done, #GP as x2APIC MSRs do */
} AvicAccess;

/*
 * Access rule for an access to the register at @offset, read or write,
 * in xAPIC or x2APIC mode.  The register is @offset & 0xff0, as Linux
 * decodes AVIC_NOACCEL's offset (every byte of a register is that
 * register); callers class each register an access covers, whatever
 * its size, and pass offsets below 4 KiB.  Linux takes NOACCEL at the
 * offsets of is_avic_unaccelerated_access_trap() as a trap after a
 * write, so
 * those never FAULT here, and a read never TRAPs: in x2APIC mode, the
 * architecturally invalid accesses to them are GP instead.  An EOI
 * write is ACCEL here; avic_apic_eoi() tells whether it traps instead
 * (level-triggered vector).
 */
AvicAccess avic_apic_access(uint32_t offset, bool write, bool x2apic);

/* The processor priority the backing page's TPR and ISR give */
uint32_t avic_apic_ppr(const uint32_t *page);

/*
 * The vector the backing page holds for the guest: the highest IRR bit
 * whose priority class is above PPR's, or -1.
 */
int avic_apic_pending(const uint32_t *page);

/*
 * The guest takes @vector: IRR bit to ISR, PPR updated.  False (and no
 * change) when the IRR bit was no longer set.
 */
bool avic_apic_accept(uint32_t *page, int vector);

/*
 * EOI written: without a level-triggered (TMR) in-service vector, the
 * highest ISR bit is cleared and PPR updated (accelerated: returns
 * true).  Otherwise nothing changes and the write must trap (false);
 * *vector is the in-service vector in both cases (-1 when none).
 */
bool avic_apic_eoi(uint32_t *page, int *vector);

/* TPR written: store it and update PPR */
void avic_apic_set_tpr(uint32_t *page, uint32_t tpr);

/* Set IRR bit @vector of a backing page, atomically (other vCPUs, IOMMU) */
void avic_apic_set_irr(uint32_t *page, int vector);

typedef struct AvicIpiOps {
    /* Entry @index of the physical APIC ID table (index <= max index) */
    uint64_t (*phys_entry)(void *opaque, uint32_t index);
    /* Entry @index (0..59: cluster * 4 + bit) of the logical table */
    uint32_t (*log_entry)(void *opaque, uint32_t index);
    /* Set IRR @vector in the backing page at @backing_pa; false if bad */
    bool (*set_irr)(void *opaque, uint64_t backing_pa, int vector);
    /* Doorbell to the physical CPU with APIC ID @host_apic_id */
    void (*doorbell)(void *opaque, uint32_t host_apic_id);
} AvicIpiOps;

typedef struct AvicIpiResult {
    bool incomplete;            /* AVIC_INCOMPLETE_IPI exit needed */
    AvicIpiFailure cause;
    uint32_t index;             /* EXITINFO2[31:0] */
    bool self;                  /* own IRR set: evaluate again */
} AvicIpiResult;

/*
 * The IPI a guest's ICR write sends, with @icr_lo and @icr_hi as written
 * (x2APIC: @icr_hi is the 32-bit destination), from the vCPU with APIC
 * ID @self_id whose backing page is @self_page (for self-IPIs and, in
 * xAPIC mode, its DFR), with @max_index from the VMCB.  The ICR lands
 * in @self_page as two 32-bit halves at 0x300 and 0x310, in x2APIC mode
 * too (AMD's layout, which KVM reads back: x2apic_icr_is_split).  When
 * every target is valid, each gets its IRR bit and, when running, a
 * doorbell; when one is not, nobody gets anything (the hypervisor
 * emulates the whole IPI).  The result says whether the write must end
 * in AVIC_INCOMPLETE_IPI, and why.
 */
AvicIpiResult avic_apic_send_ipi(const AvicIpiOps *ops, void *opaque,
                                 uint32_t *self_page, uint32_t self_id,
                                 uint32_t icr_lo, uint32_t icr_hi,
                                 bool x2apic, uint32_t max_index);

#endif
