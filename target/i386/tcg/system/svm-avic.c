/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * AMD AVIC and x2AVIC in nested SVM under TCG.
 *
 * An L1 hypervisor (KVM with kvm_amd avic=1) sets int_ctl's AVIC enable
 * bit and points the VMCB at a virtual APIC backing page, the physical
 * and logical APIC ID tables and the guest-physical APIC BAR.  While L2
 * runs, its APIC lives in the backing page; the rules of that page are
 * svm-avic-apic.c, and this file wires them in:
 *
 * - VMRUN (svm_helper.c) checks the table pointers and evaluates the
 *   page; #VMEXIT drops what was due, or carries the rest of a write
 *   that ended in an exit to the next VMRUN of its VMCB.  The fields
 *   are read from the VMCB when used; a carry migrates in the
 *   cpu/avic_carry subsection (machine.c), sent only while one waits.
 * - Delivery: CPU_INTERRUPT_AVIC means "evaluate the page".  It is taken
 *   like V_IRQ (GIF, IF, interrupt shadow; cpu.c) and moves the vector
 *   from IRR to ISR (x86_cpu_exec_interrupt() in seg_helper.c).
 * - Doorbells, from the doorbell MSR, from IPIs of other vCPUs and from
 *   the emulated AMD IOMMU (x86_cpu_avic_doorbell(), avic-doorbell.c):
 *   set CPU_INTERRUPT_AVIC for a CPU in guest mode, which looks at it
 *   at its next TB boundary (no exit request; a halted one is woken
 *   under the BQL).  The sender sets the IRR bit first, and the vCPU
 *   clears the request before it reads IRR, with full barriers on both
 *   sides, so a bit set concurrently is either seen now or requested
 *   again.  A doorbell for a CPU outside guest mode sets nothing; its
 *   next VMRUN evaluates the page anyway.
 * - xAVIC: an L2 data access whose guest-physical page is the APIC BAR
 *   (found at the end of the nested page walk, after NPT permissions, in
 *   excp_helper.c) is classified per access: faults exit AVIC_NOACCEL
 *   from the TLB fill, which has the return address; reads and plain
 *   writes go to the backing page through a sub-page TLB entry, so every
 *   access comes back here; writes with an effect re-execute their
 *   instruction alone in a TB, and the effect (TPR, EOI, IPI, or the
 *   trap exit) runs as soon as the instruction is done.
 * - x2AVIC: x2APIC MSR accesses L1 does not intercept go to the backing
 *   page (misc_helper.c); WRMSR ends the TB, so effects run right after.
 *
 * Not emulated: see docs/avic.md.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "cpu.h"
#include "exec/cpu_ldst.h"
#include "exec/exec-all.h"
#include "exec/translation-block.h"
#include "tcg/tcg.h"
#include "accel/tcg/cpu-ops.h"
#include "exec/memory.h"
#include "exec/ramblock.h"
#include "tcg/helper-tcg.h"
#include "svm-avic.h"
#include "svm-avic-apic.h"

/* VMCB control area fields of AVIC */
#define VMCB_AVIC_APIC_BAR      0x098
#define VMCB_AVIC_BACKING_PAGE  0x0e0
#define VMCB_AVIC_LOGICAL_TABLE 0x0f0
#define VMCB_AVIC_PHYSICAL_TABLE 0x0f8
#define VMCB_AVIC_ADDR_MASK     0x000ffffffffff000ULL
#define VMCB_AVIC_MAX_INDEX_MASK 0xfffULL

/* A register of a mapped page (L1 memory is little-endian) */
#define PAGE_REG(page, off) le32_to_cpu(qatomic_read(&(page)->regs[(off) / 4]))

#define MSR_AMD64_AVIC_DOORBELL 0xc001011b
#define MSR_X2APIC_FIRST        0x800
#define MSR_X2APIC_LAST         0x8ff

static uint64_t vmcb_avic_field(CPUX86State *env, unsigned offset)
{
    return x86_ldq_phys(env_cpu(env), env->vm_vmcb + offset);
}

/* A 4 KiB page of L1 RAM in host memory, for atomic updates */
typedef struct AvicPage {
    uint32_t *regs;
    MemoryRegion *mr;
    hwaddr xlat;
} AvicPage;

/* Callers are vCPU threads inside cpu_exec(), which holds RCU */
static bool avic_page_map(CPUState *cs, hwaddr pa, AvicPage *page)
{
    AddressSpace *as = cpu_get_address_space(cs, X86ASIdx_MEM);
    hwaddr len = AVIC_BACKING_PAGE_SIZE;

    page->mr = address_space_translate(as, pa & VMCB_AVIC_ADDR_MASK,
                                       &page->xlat, &len, true,
                                       MEMTXATTRS_UNSPECIFIED);
    if (len < AVIC_BACKING_PAGE_SIZE || !memory_region_is_ram(page->mr) ||
        memory_region_is_ram_device(page->mr) || page->mr->readonly) {
        return false;
    }
    page->regs = qemu_map_ram_ptr(page->mr->ram_block, page->xlat);
    return true;
}

/* After a store to the page: migration must send it again */
static void avic_page_written(AvicPage *page)
{
    memory_region_set_dirty(page->mr, page->xlat, AVIC_BACKING_PAGE_SIZE);
}

static bool avic_own_page(CPUX86State *env, AvicPage *page)
{
    return avic_page_map(env_cpu(env),
                         vmcb_avic_field(env, VMCB_AVIC_BACKING_PAGE), page);
}

/* Own request: the next TB boundary takes it */
static void avic_request_self(CPUState *cs)
{
    cpu_set_interrupt(cs, CPU_INTERRUPT_AVIC);
    qatomic_set(&cs->neg.icount_decr.u16.high, -1);
}

/*
 * Clear the request, then read IRR: a doorbell sets IRR before its
 * request, so it is seen here or requests again.
 */
static void avic_evaluate(CPUX86State *env)
{
    CPUState *cs = env_cpu(env);
    AvicPage page;

    cpu_reset_interrupt(cs, CPU_INTERRUPT_AVIC);
    smp_mb(); /* request cleared before IRR read: x86_cpu_avic_doorbell() */
    if (env->avic_post_write ||
        (avic_own_page(env, &page) && avic_apic_pending(page.regs) >= 0)) {
        avic_request_self(cs);
    }
}

static G_NORETURN void avic_exit(CPUX86State *env, uint32_t exit_code,
                                 uint64_t info1, uint64_t info2,
                                 uintptr_t retaddr)
{
    x86_stq_phys(env_cpu(env), env->vm_vmcb +
                 offsetof(struct vmcb, control.exit_info_2), info2);
    cpu_vmexit(env, exit_code, info1, retaddr);
}

/* AVIC_NOACCEL: EXITINFO1 is the register offset and bit 32 for a write */
static G_NORETURN void avic_noaccel_exit(CPUX86State *env, uint32_t offset,
                                         bool write, uint32_t vector,
                                         uintptr_t retaddr)
{
    avic_exit(env, SVM_EXIT_AVIC_NOACCEL,
              (offset & 0xff0) | ((uint64_t)write << 32), vector, retaddr);
}

/* The IPI engine's view of guest memory and of the other CPUs */
static uint64_t ipi_phys_entry(void *opaque, uint32_t index)
{
    CPUX86State *env = opaque;
    uint64_t table = vmcb_avic_field(env, VMCB_AVIC_PHYSICAL_TABLE);

    return x86_ldq_phys(env_cpu(env),
                        (table & VMCB_AVIC_ADDR_MASK) + index * 8ULL);
}

static uint32_t ipi_log_entry(void *opaque, uint32_t index)
{
    CPUX86State *env = opaque;
    uint64_t table = vmcb_avic_field(env, VMCB_AVIC_LOGICAL_TABLE);

    return x86_ldl_phys(env_cpu(env),
                        (table & VMCB_AVIC_ADDR_MASK) + index * 4ULL);
}

static bool ipi_set_irr(void *opaque, uint64_t backing_pa, int vector)
{
    CPUX86State *env = opaque;
    AvicPage page;

    if (!avic_page_map(env_cpu(env), backing_pa, &page)) {
        return false;
    }
    avic_apic_set_irr(page.regs, vector);
    avic_page_written(&page);
    return true;
}

static void ipi_doorbell(void *opaque, uint32_t host_apic_id)
{
    CPUState *cs = cpu_by_arch_id(host_apic_id);

    if (cs) {
        x86_cpu_avic_doorbell(cs);
    }
}

static const AvicIpiOps avic_ipi_ops = {
    .phys_entry = ipi_phys_entry,
    .log_entry = ipi_log_entry,
    .set_irr = ipi_set_irr,
    .doorbell = ipi_doorbell,
};

static AvicIpiResult avic_ipi(CPUX86State *env, AvicPage *page,
                              bool x2apic)
{
    uint32_t id = PAGE_REG(page, AVIC_REG_ID);
    uint64_t table = vmcb_avic_field(env, VMCB_AVIC_PHYSICAL_TABLE);
    AvicIpiResult res;

    res = avic_apic_send_ipi(&avic_ipi_ops, env, page->regs,
                             x2apic ? id : id >> 24,
                             PAGE_REG(page, AVIC_REG_ICR_LO),
                             PAGE_REG(page, AVIC_REG_ICR_HI), x2apic,
                             table & VMCB_AVIC_MAX_INDEX_MASK);
    avic_page_written(page);
    return res;
}

/*
 * V_TPR (CR8) and the backing page's TPR are one register while AVIC
 * is on: KVM reads V_TPR back after each exit and sets it before VMRUN.
 */
static void avic_sync_v_tpr(CPUX86State *env, AvicPage *page)
{
    uint32_t tpr = PAGE_REG(page, AVIC_REG_TPR);

    env->int_ctl = (env->int_ctl & ~V_TPR_MASK) | ((tpr >> 4) & V_TPR_MASK);
}

void svm_avic_cr8_write(CPUX86State *env)
{
    AvicPage page;

    if (!cpu_svm_avic_active(env) || !avic_own_page(env, &page)) {
        return;
    }
    avic_apic_set_tpr(page.regs, (env->int_ctl & V_TPR_MASK) << 4);
    avic_page_written(&page);
    avic_evaluate(env);
}

/*
 * A write effect is still due (its instruction is done, the loop did
 * not take it yet): go back to the loop, which takes it first, then
 * re-execute this instruction.  Not while gdb single-steps with
 * interrupts masked, which masks CPU_INTERRUPT_AVIC too.
 */
static void avic_take_due_effect(CPUX86State *env, uintptr_t retaddr)
{
    CPUState *cs = env_cpu(env);

    if (env->avic_post_write && !(cs->singlestep_enabled & SSTEP_NOIRQ)) {
        cpu_restore_state(cs, retaddr);
        avic_request_self(cs);
        cpu_loop_exit_noexc(cs);
    }
}

/* An exit a register write ends in, after its instruction */
typedef struct AvicExit {
    uint32_t code;
    uint64_t info1, info2;
} AvicExit;

/*
 * The effect of a write that landed in the page at @offset.  True when
 * the instruction must end in an exit, then described in *exit: a
 * trap-style register, a level-triggered EOI (the hypervisor completes
 * it), an incomplete IPI.
 */
static bool avic_write_effect(CPUX86State *env, uint32_t offset,
                              AvicExit *exit)
{
    AvicPage page;
    AvicIpiResult res;
    int vector;

    if (!avic_own_page(env, &page)) {
        return false;
    }
    *exit = (AvicExit) { SVM_EXIT_AVIC_NOACCEL, offset | (1ULL << 32), 0 };
    if (!cpu_svm_avic_active(env) &&
        (offset == AVIC_REG_EOI || offset == AVIC_REG_ICR_LO)) {
        /*
         * Carried to a VMRUN with AVIC off (KVM inhibited it): not run
         * behind the hypervisor's back, but its trap exit, with which
         * KVM runs the write from the page itself
         */
        return true;
    }
    switch (offset) {
    case AVIC_REG_TPR:
        avic_apic_set_tpr(page.regs, PAGE_REG(&page, AVIC_REG_TPR));
        avic_sync_v_tpr(env, &page);
        break;
    case AVIC_REG_EOI:
        if (!avic_apic_eoi(page.regs, &vector)) {
            exit->info2 = MAX(vector, 0);
            return true;
        }
        break;
    case AVIC_REG_ICR_LO:
        res = avic_ipi(env, &page, cpu_svm_x2avic_active(env));
        if (res.incomplete) {
            *exit = (AvicExit) {
                SVM_EXIT_AVIC_INCOMPLETE_IPI,
                PAGE_REG(&page, AVIC_REG_ICR_LO) |
                ((uint64_t)PAGE_REG(&page, AVIC_REG_ICR_HI) << 32),
                ((uint64_t)res.cause << 32) | res.index };
            return true;
        }
        break;
    case AVIC_REG_SELF_IPI:
        vector = PAGE_REG(&page, AVIC_REG_SELF_IPI) & 0xff;
        if (vector >= 16) {
            avic_apic_set_irr(page.regs, vector);
        }
        break;
    default:
        return true;
    }
    avic_page_written(&page);
    return false;
}

/*
 * The loop takes due effects, the instruction being done: @offset's,
 * then those of the registers in @more (bit offset >> 4) in order (a
 * write across two registers, or an instruction's stores to several).
 * The first that ends in an exit ends the walk: the registers after it
 * are carried to the next VMRUN of this VMCB (svm_avic_vmexit()), each
 * then its own trap-style exit, rIP past the instruction as for the
 * first.
 */
static void avic_after_writes(CPUX86State *env, uint32_t offset,
                              uint64_t more)
{
    AvicExit exit;

    for (;;) {
        more &= ~(1ULL << (offset >> 4));
        if (avic_write_effect(env, offset, &exit)) {
            env->avic_post_more = more;
            env->avic_post_carried = !!more;
            avic_exit(env, exit.code, exit.info1, exit.info2, 0);
        }
        if (!more) {
            return;
        }
        offset = ctz64(more) << 4;
    }
}

/*
 * WRMSR: an accelerated write's effect right away, so that nothing can
 * come between (a #VMEXIT drops what is due; an INIT and a single-step
 * #DB wait for it).  False when it must end in an exit after the
 * instruction: the exit is recorded for the loop, and
 * the effect is not run again there (an IPI must reach its running
 * targets once, and a second pass could find another cause or index).
 */
static bool avic_accel_write_now(CPUX86State *env, uint32_t offset)
{
    AvicExit exit;

    if (avic_write_effect(env, offset, &exit)) {
        env->avic_post_exit_code = exit.code;
        env->avic_post_exit_info1 = exit.info1;
        env->avic_post_exit_info2 = exit.info2;
        return false;
    }
    avic_evaluate(env);
    return true;
}

/* Forget due write effects, a recorded exit and the replay */
static void avic_drop_due(CPUX86State *env)
{
    env->avic_post_write = 0;
    env->avic_post_more = 0;
    env->avic_post_carried = false;
    env->avic_post_exit_code = 0;
    env->avic_replay = false;
}

/*
 * Carried effects.  A write with effects in several registers may end
 * in an exit before all of them ran; the rest are due right after the
 * next VMRUN of that VMCB, which L1 may do on another of its CPUs.  The
 * #VMEXIT records them in its CPU's env (migrated with it), with the
 * exit code, EXITINFO1 and rIP it left in the VMCB; a VMRUN of that VMCB
 * on any CPU takes them if the VMCB still holds that exit, and drops
 * them otherwise (the VMCB ran since, or its page is another's now).
 * One record per CPU: a CPU's second carry before the first VMCB runs
 * again replaces the first (L1 re-enters after handling the exit).
 * An ascending store never carries TPR, EOI or ICR low (the register
 * before each faults on a write), a descending one can (PUSHA with its
 * stack in the page): taken at a VMRUN with AVIC off, EOI and ICR low
 * become their trap exits (avic_write_effect()), TPR sets V_TPR.
 */
static QemuSpin avic_carry_lock;    /* taking and replacing records */

static void avic_carry_record(CPUX86State *env, uint64_t carry)
{
    CPUState *cs = env_cpu(env);
    hwaddr vmcb = env->vm_vmcb;
    uint64_t exit_code, exit_info1, rip;

    /* The #VMEXIT just wrote them: read before the lock, held briefly */
    exit_code = x86_ldq_phys(cs,
                             vmcb + offsetof(struct vmcb, control.exit_code));
    exit_info1 = x86_ldq_phys(cs, vmcb + offsetof(struct vmcb,
                                                  control.exit_info_1));
    rip = x86_ldq_phys(cs, vmcb + offsetof(struct vmcb, save.rip));

    qemu_spin_lock(&avic_carry_lock);
    env->avic_carry_vmcb = vmcb;
    env->avic_carry_exit_code = exit_code;
    env->avic_carry_exit_info1 = exit_info1;
    env->avic_carry_rip = rip;
    env->avic_carry = carry;
    qemu_spin_unlock(&avic_carry_lock);
}

/* Does the VMCB at @vmcb still hold the exit a carry was recorded with? */
static bool avic_vmcb_holds_exit(CPUState *cs, hwaddr vmcb,
                                 uint64_t exit_code, uint64_t exit_info1,
                                 uint64_t rip)
{
    return x86_ldq_phys(cs, vmcb + offsetof(struct vmcb,
                                            control.exit_code)) == exit_code &&
           x86_ldq_phys(cs, vmcb + offsetof(struct vmcb,
                                            control.exit_info_1)) ==
           exit_info1 &&
           x86_ldq_phys(cs, vmcb + offsetof(struct vmcb, save.rip)) == rip;
}

bool svm_avic_carry_due(CPUX86State *env)
{
    return env->avic_carry &&
           avic_vmcb_holds_exit(env_cpu(env), env->avic_carry_vmcb,
                                env->avic_carry_exit_code,
                                env->avic_carry_exit_info1,
                                env->avic_carry_rip);
}

/* At VMRUN (L2's state loaded): the effects carried for this VMCB */
static uint64_t avic_carry_take(CPUX86State *env)
{
    CPUState *cs = env_cpu(env), *other;
    uint64_t carry = 0, exit_code = 0, exit_info1 = 0, rip = 0;

    if (!(env->features[FEAT_SVM] & CPUID_SVM_AVIC)) {
        return 0;   /* only an AVIC CPU carries, and all share the model */
    }
    /* Uncontended but for VMRUNs at once; a scan of a few CPUs */
    qemu_spin_lock(&avic_carry_lock);
    CPU_FOREACH(other) {
        CPUX86State *o = cpu_env(other);

        if (o->avic_carry && o->avic_carry_vmcb == env->vm_vmcb) {
            carry = o->avic_carry;
            exit_code = o->avic_carry_exit_code;
            exit_info1 = o->avic_carry_exit_info1;
            rip = o->avic_carry_rip;
            o->avic_carry = 0;
            break;
        }
    }
    qemu_spin_unlock(&avic_carry_lock);
    if (!carry ||
        !avic_vmcb_holds_exit(cs, env->vm_vmcb, exit_code, exit_info1, rip)) {
        return 0;
    }
    return carry;
}

void svm_avic_exec_interrupt(CPUX86State *env)
{
    AvicPage page;
    int vector;

    if (env->avic_post_write) {
        uint32_t offset = env->avic_post_write & 0xfff;
        uint64_t more = env->avic_post_more;
        AvicExit exit = { env->avic_post_exit_code, env->avic_post_exit_info1,
                          env->avic_post_exit_info2 };

        avic_drop_due(env);
        if (exit.code) {
            /* an x2AVIC write whose effect already ran (WRMSR) */
            avic_exit(env, exit.code, exit.info1, exit.info2, 0);
        }
        avic_after_writes(env, offset, more);
        if (cpu_svm_avic_active(env)) {
            avic_evaluate(env);
        } else {
            /* carried to a VMRUN with AVIC off: nothing to deliver */
            cpu_reset_interrupt(env_cpu(env), CPU_INTERRUPT_AVIC);
        }
        /* back to the loop after the next TB: other requests wait */
        qatomic_set(&env_cpu(env)->neg.icount_decr.u16.high, -1);
        return;
    }

    cpu_reset_interrupt(env_cpu(env), CPU_INTERRUPT_AVIC);
    smp_mb(); /* request cleared before IRR read: x86_cpu_avic_doorbell() */
    if (!avic_own_page(env, &page)) {
        return;
    }
    vector = avic_apic_pending(page.regs);
    if (vector < 0 || !avic_apic_accept(page.regs, vector)) {
        return;
    }
    avic_page_written(&page);
    if (avic_apic_pending(page.regs) >= 0) {
        /* a higher class may interrupt the handler once IF is set */
        avic_request_self(env_cpu(env));
    }
    qemu_log_mask(CPU_LOG_INT, "Servicing AVIC INT=0x%02x\n", vector);
    do_interrupt_x86_hardirq(env, vector, 1);
}

void svm_avic_take_due(CPUX86State *env)
{
    if (env->avic_post_write) {
        svm_avic_exec_interrupt(env);
    }
}

bool svm_avic_has_work(CPUX86State *env)
{
    AvicPage page;

    RCU_READ_LOCK_GUARD();  /* also called outside cpu_exec() */
    return env->avic_post_write ||
           (cpu_svm_avic_active(env) && avic_own_page(env, &page) &&
            avic_apic_pending(page.regs) >= 0);
}

void svm_avic_vmrun(CPUX86State *env)
{
    uint64_t limit = 1ULL << env_archcpu(env)->phys_bits;
    static const unsigned pointers[] = {
        VMCB_AVIC_BACKING_PAGE, VMCB_AVIC_LOGICAL_TABLE,
        VMCB_AVIC_PHYSICAL_TABLE, VMCB_AVIC_APIC_BAR,
    };

    AvicPage page;
    uint64_t carry;

    avic_drop_due(env);
    carry = avic_carry_take(env);
    if (carry) {
        /*
         * Effects an exit left due: before L2's next instruction.  Also
         * with AVIC off now (KVM inhibits it after an LDR or DFR write):
         * the writes landed, and KVM tells the exits apart by offset.
         */
        env->avic_post_write = AVIC_POST_WRITE | (ctz64(carry) << 4);
        env->avic_post_more = carry;
        env->avic_post_carried = true;
        avic_request_self(env_cpu(env));
    }
    if (!cpu_svm_avic_active(env)) {
        if (!carry) {
            /* doorbells rung meanwhile are moot: the next VMRUN looks */
            cpu_reset_interrupt(env_cpu(env), CPU_INTERRUPT_AVIC);
        }
        return;
    }
    for (unsigned i = 0; i < ARRAY_SIZE(pointers); i++) {
        uint64_t pa = vmcb_avic_field(env, pointers[i]) & VMCB_AVIC_ADDR_MASK;

        if (pa >= limit) {
            /*
             * No state to restore: L2's is loaded, and #VMEXIT saves
             * its rIP (unwinding to the VMRUN would save L1's)
             */
            cpu_vmexit(env, SVM_EXIT_ERR, 0, 0);
        }
    }
    if (avic_own_page(env, &page)) {
        avic_sync_v_tpr(env, &page);
    }
    avic_evaluate(env);
}

void svm_avic_vmexit(CPUX86State *env)
{
    if (env->avic_post_carried) {
        /*
         * Carried effects not run yet: the rest of a write that ended
         * in this exit, or all of a carry an exit took first (during
         * event delivery at VMRUN).  The next VMRUN of this VMCB.
         */
        uint64_t carry = env->avic_post_more;

        if (env->avic_post_write) {
            carry |= 1ULL << ((env->avic_post_write & 0xfff) >> 4);
        }
        avic_carry_record(env, carry);
    }
    avic_drop_due(env);
    cpu_reset_interrupt(env_cpu(env), CPU_INTERRUPT_AVIC);
}

/* Is the access at @retaddr in a one-instruction TB (the replay)? */
static bool avic_in_replay_tb(uintptr_t retaddr)
{
    TranslationBlock *tb = retaddr ? tcg_tb_lookup(retaddr) : NULL;

    return tb && (tb_cflags(tb) & (CF_COUNT_MASK | CF_REP_ONCE)) ==
                 (1 | CF_REP_ONCE);
}

bool svm_avic_is_apic_bar(CPUX86State *env, hwaddr gpa)
{
    return cpu_svm_avic_active(env) && !cpu_svm_x2avic_active(env) &&
           !((gpa ^ vmcb_avic_field(env, VMCB_AVIC_APIC_BAR)) &
             VMCB_AVIC_ADDR_MASK);
}

void svm_avic_apic_bar_fill(CPUX86State *env, vaddr addr, int size,
                            MMUAccessType access_type, hwaddr *paddr,
                            uintptr_t retaddr)
{
    CPUState *cs = env_cpu(env);
    uint32_t offset = addr & (AVIC_BACKING_PAGE_SIZE - 1);
    uint32_t reg = offset & ~0xfu;
    uint32_t last = MIN(offset + MAX(size, 1) - 1,
                        AVIC_BACKING_PAGE_SIZE - 1) &
                    ~0xfu;
    uint64_t also = 0;
    bool write = access_type == MMU_DATA_STORE;
    AvicAccess access = AVIC_ACCESS_ALLOW;

    /*
     * An access within one register's 16 bytes, of any size, is classed
     * by that register: KVM tells a trap from a fault by the offset in
     * EXITINFO1 alone, so a sub-dword access at a trap offset must be
     * done and trap (a fault there would be re-executed forever).  One
     * over several registers (a misaligned dword, FNSAVE, FXSAVE, a
     * TSS): a register that faults exits at that register (the first
     * first), never at a trap offset; otherwise a read is served from
     * the page, and a write lands in all, the effects (traps) of each
     * register that has one due in order (@also).
     */
    for (uint32_t r = reg; r <= last; r += 16) {
        AvicAccess a = avic_apic_access(r, write, false);

        if (a == AVIC_ACCESS_FAULT || a == AVIC_ACCESS_GP) {
            reg = r;
            access = AVIC_ACCESS_FAULT;
            also = 0;
            break;
        }
        if (a == AVIC_ACCESS_ALLOW) {
            continue;
        }
        if (access == AVIC_ACCESS_ALLOW) {
            reg = r;            /* the first with an effect */
            access = a;
        } else {
            assert(r < 64 << 4);    /* offsets above 0x3f0 fault */
            also |= 1ULL << (r >> 4);
        }
    }
    if (access == AVIC_ACCESS_FAULT || access == AVIC_ACCESS_GP) {
        avic_noaccel_exit(env, reg, write, 0, retaddr);
    }
    if (write && access != AVIC_ACCESS_ALLOW) {
        if (!retaddr) {
            /*
             * An event's delivery pushing onto a stack in the page:
             * nothing to replay.  The stores land, their effects come
             * once it is delivered, rIP at the handler (a fault-style
             * exit at a trap offset, where KVM takes the write as done,
             * would have it deliver the event again, forever).
             */
        } else if (!env->avic_replay || !avic_in_replay_tb(retaddr)) {
            /* Again, alone in a TB, so the effect comes right after it */
            avic_take_due_effect(env, retaddr);
            env->avic_replay = true;
            cpu_restore_state(cs, retaddr);
            /*
             * One REP iteration: each takes its effect at its own
             * boundary, in order, before a later one can fault.  Not
             * CF_PARALLEL: a LOCK-prefixed access would take the
             * exclusive path (a misaligned one), whose TB is no replay
             * TB, and record the effect again each time.  The operand
             * is this vCPU's backing page: only its IRR is written by
             * others, and a write to IRR faults.
             */
            cs->cflags_next_tb = (cs->tcg_cflags & ~CF_PARALLEL) |
                CF_NOIRQ | CF_REP_ONCE | 1 |
                (cs->singlestep_enabled ? CF_SINGLE_STEP |
                 CF_NO_GOTO_TB | CF_NO_GOTO_PTR : 0);
            cpu_loop_exit_noexc(cs);
        }
        if (!cs->watchpoint_hit &&
            (cpu_watchpoint_address_matches(cs, addr, size) & BP_MEM_WRITE)) {
            /*
             * A watchpoint restarts this store before it happens: the
             * re-run (alone in a TB, watchpoint_hit set) commits it.
             */
            *paddr = (vmcb_avic_field(env, VMCB_AVIC_BACKING_PAGE) &
                      VMCB_AVIC_ADDR_MASK) | offset;
            return;
        }
        if (!env->avic_post_write) {
            env->avic_post_write = AVIC_POST_WRITE | reg;
            avic_request_self(cs);
        } else if ((env->avic_post_write & 0xfff) != reg) {
            /*
             * Another store of the replayed instruction (MASKMOVDQU
             * stores byte by byte, a 32-byte store is two) to another
             * register: its effect is due too, after the first's.
             */
            QEMU_BUILD_BUG_ON(AVIC_REG_TIMER_DCR >= 64 << 4);
            assert(reg < 64 << 4);  /* offsets above 0x3f0 fault */
            env->avic_post_more |= 1ULL << (reg >> 4);
        }
        env->avic_post_more |= also;
    }
    *paddr = (vmcb_avic_field(env, VMCB_AVIC_BACKING_PAGE) &
              VMCB_AVIC_ADDR_MASK) | offset;
}

/*
 * An x2APIC MSR access of an L2 in x2AVIC mode: its register's offset
 * and access class, after the fault exit or #GP that class asks for.
 * False when the MSR is none of them.
 */
static bool avic_x2apic_msr(CPUX86State *env, uint32_t msr, bool write,
                            uintptr_t retaddr, uint32_t *offset,
                            AvicAccess *access)
{
    if (msr < MSR_X2APIC_FIRST || msr > MSR_X2APIC_LAST ||
        !cpu_svm_x2avic_active(env)) {
        return false;
    }
    *offset = (msr - MSR_X2APIC_FIRST) << 4;
    *access = avic_apic_access(*offset, write, true);
    if (*access == AVIC_ACCESS_FAULT) {
        avic_noaccel_exit(env, *offset, write, 0, retaddr);
    }
    if (*access == AVIC_ACCESS_GP) {
        raise_exception_err_ra(env, EXCP0D_GPF, 0, retaddr);
    }
    return true;
}

bool svm_avic_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val,
                    uintptr_t retaddr)
{
    uint32_t offset;
    AvicAccess access;
    AvicPage page;

    if (msr == MSR_AMD64_AVIC_DOORBELL) {
        if (!(env->features[FEAT_SVM] & CPUID_SVM_AVIC)) {
            return false;
        }
        ipi_doorbell(env, (uint32_t)val);
        return true;
    }
    if (!avic_x2apic_msr(env, msr, true, retaddr, &offset, &access)) {
        return false;
    }
    /*
     * Only the ICR is a 64-bit x2APIC register; SELF_IPI's bits 31:8 are
     * reserved (#GP, as KVM's own x2APIC has it)
     */
    if ((offset != AVIC_REG_ICR_LO && (val >> 32)) ||
        (offset == AVIC_REG_SELF_IPI && (val & ~0xffULL))) {
        raise_exception_err_ra(env, EXCP0D_GPF, 0, retaddr);
    }
    if (!avic_own_page(env, &page)) {
        return true;
    }
    if (access != AVIC_ACCESS_ALLOW) {
        avic_take_due_effect(env, retaddr);
    }
    if (offset == AVIC_REG_ICR_LO) {
        qatomic_set(&page.regs[AVIC_REG_ICR_HI / 4], cpu_to_le32(val >> 32));
    }
    qatomic_set(&page.regs[offset / 4], cpu_to_le32(val));
    avic_page_written(&page);
    if (access == AVIC_ACCESS_ACCEL && avic_accel_write_now(env, offset)) {
        return true;
    }
    if (access != AVIC_ACCESS_ALLOW) {
        if (access != AVIC_ACCESS_ACCEL) {
            /* its effect runs from the loop; no exit recorded before */
            env->avic_post_exit_code = 0;
        }
        env->avic_post_write = AVIC_POST_WRITE | offset;
        avic_request_self(env_cpu(env));
    }
    return true;
}

bool svm_avic_rdmsr(CPUX86State *env, uint32_t msr, uint64_t *val,
                    uintptr_t retaddr)
{
    uint32_t offset;
    AvicAccess access;
    AvicPage page;

    if (!avic_x2apic_msr(env, msr, false, retaddr, &offset, &access)) {
        return false;
    }
    *val = 0;
    if (avic_own_page(env, &page)) {
        *val = PAGE_REG(&page, offset);
        if (offset == AVIC_REG_ICR_LO) {
            *val |= (uint64_t)PAGE_REG(&page, AVIC_REG_ICR_HI) << 32;
        }
    }
    return true;
}
