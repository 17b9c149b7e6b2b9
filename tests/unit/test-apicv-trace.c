/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests of the pure parts of the KVM tracepoint reader
 * (target/i386/kvm/apicv-trace-parse.c): field offsets from the tracefs
 * formats of kvm_pi_irte_update before Linux 6.17 (unsigned vcpu_id,
 * pi_desc_addr) and since (signed vcpu_id, no pi_desc_addr), inhibit
 * names from kvm_apicv_inhibit_changed's __print_flags list (numeric
 * and symbolic bits), field reads of raw records, and perf ring buffers
 * with records that wrap around the end, a PERF_RECORD_LOST and an
 * incomplete record.
 */

#include "qemu/osdep.h"
#include "target/i386/kvm/apicv-trace.h"
#include <linux/perf_event.h>

/* The fields every tracepoint record starts with */
#define COMMON_FIELDS \
    "format:\n" \
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;" \
    "\tsigned:0;\n" \
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
    "\n"

static const char irte_6_12[] =
    "name: kvm_pi_irte_update\n"
    "ID: 1702\n"
    COMMON_FIELDS
    "\tfield:unsigned int host_irq;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned int vcpu_id;\toffset:12;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned int gsi;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned int gvec;\toffset:20;\tsize:4;\tsigned:0;\n"
    "\tfield:u64 pi_desc_addr;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:bool set;\toffset:32;\tsize:1;\tsigned:0;\n"
    "\n"
    "print fmt: \"PI is %s for irq %u, vcpu %u, gsi: 0x%x, gvec: 0x%x, "
    "pi_desc_addr: 0x%llx\", REC->set ? \"enabled and being updated\" : "
    "\"disabled\", REC->host_irq, REC->vcpu_id, REC->gsi, REC->gvec, "
    "REC->pi_desc_addr\n";

static const char irte_6_17[] =
    "name: kvm_pi_irte_update\n"
    "ID: 1811\n"
    COMMON_FIELDS
    "\tfield:unsigned int host_irq;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:int vcpu_id;\toffset:12;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned int gsi;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned int gvec;\toffset:20;\tsize:4;\tsigned:0;\n"
    "\tfield:bool set;\toffset:24;\tsize:1;\tsigned:0;\n"
    "\n"
    "print fmt: \"PI is %s for irq %u, vcpu %d, gsi: 0x%x, gvec: 0x%x\", "
    "REC->set ? \"enabled and being updated\" : \"disabled\", "
    "REC->host_irq, REC->vcpu_id, REC->gsi, REC->gvec\n";

/* 6.11+: names; bits as numbers (an enum the kernel substituted) */
static const char inhibit_numeric[] =
    "name: kvm_apicv_inhibit_changed\n"
    "ID: 1650\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int reason;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:bool set;\toffset:12;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned long inhibits;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\n"
    "print fmt: \"%s reason=%u, inhibits=0x%lx%s%s\", REC->set ? \"set\" : "
    "\"cleared\", REC->reason, REC->inhibits, REC->inhibits ? \" \" : \"\", "
    "REC->inhibits ? __print_flags(REC->inhibits, \"|\", "
    "{ (1UL << (0)), \"DISABLED\" }, { (1UL << (1)), \"HYPERV\" }, "
    "{ (1UL << (9)), \"PIT_REINJ\" }, { 0x1000, \"PHYSICAL_ID_TOO_BIG\" }) "
    ": \"\"\n";

/* the same with the bits left symbolic: their order is the enum's */
static const char inhibit_symbolic[] =
    "print fmt: \"%s\", __print_flags(REC->inhibits, \"|\", "
    "{ (1UL << (APICV_INHIBIT_REASON_DISABLED)), \"DISABLED\" }, "
    "{ (1UL << (APICV_INHIBIT_REASON_HYPERV)), \"HYPERV\" }, "
    "{ (1UL << (APICV_INHIBIT_REASON_ABSENT)), \"ABSENT\" })\n";

static const char *const irte_names[] = {
    "host_irq", "vcpu_id", "gsi", "gvec", "set",
};

static void test_format(void)
{
    static const char *const inhibit_names[] = {
        "reason", "set", "inhibits",
    };
    ApicvTraceFormat f;

    apicv_trace_parse_format(irte_6_12, irte_names, 5, &f);
    g_assert_cmpint(f.id, ==, 1702);
    g_assert_cmpint(f.f[0].offset, ==, 8);
    g_assert_cmpint(f.f[1].offset, ==, 12);
    g_assert_cmpint(f.f[4].offset, ==, 32);
    g_assert_cmpint(f.f[4].size, ==, 1);

    apicv_trace_parse_format(irte_6_17, irte_names, 5, &f);
    g_assert_cmpint(f.id, ==, 1811);
    g_assert_cmpint(f.f[4].offset, ==, 24);     /* no pi_desc_addr */

    apicv_trace_parse_format(inhibit_numeric, inhibit_names, 3, &f);
    g_assert_cmpint(f.f[2].offset, ==, 16);
    g_assert_cmpint(f.f[2].size, ==, 8);

    /* a field this kernel lacks, and no ID */
    apicv_trace_parse_format(inhibit_symbolic, irte_names, 5, &f);
    g_assert_cmpint(f.id, ==, -1);
    g_assert_cmpint(f.f[0].offset, ==, -1);
}

static void test_reason_names(void)
{
    char *names[64] = { NULL };

    apicv_trace_parse_reason_names(inhibit_numeric, names);
    g_assert_cmpstr(names[0], ==, "DISABLED");
    g_assert_cmpstr(names[9], ==, "PIT_REINJ");
    g_assert_cmpstr(names[12], ==, "PHYSICAL_ID_TOO_BIG");
    g_assert_null(names[2]);
    for (int i = 0; i < 64; i++) {
        g_free(names[i]);
        names[i] = NULL;
    }
    apicv_trace_parse_reason_names(inhibit_symbolic, names);
    g_assert_cmpstr(names[2], ==, "ABSENT");
    g_assert_cmpstr(names[1], ==, "HYPERV");
    for (int i = 0; i < 64; i++) {
        g_free(names[i]);
    }
    /* 6.10 and older print no names */
    memset(names, 0, sizeof(names));
    apicv_trace_parse_reason_names(irte_6_12, names);
    for (int i = 0; i < 64; i++) {
        g_assert_null(names[i]);
    }
}

static void test_fields(void)
{
    ApicvTraceFormat f;
    uint8_t raw[28] = { 0 };
    uint32_t v32;
    uint64_t v;

    /* 6.17+: vcpu_id -1 when not posting */
    apicv_trace_parse_format(irte_6_17, irte_names, 5, &f);
    v32 = 40;
    memcpy(raw + 8, &v32, 4);
    v32 = -1;
    memcpy(raw + 12, &v32, 4);
    g_assert_true(apicv_trace_field(raw, sizeof(raw), f.f[0], &v));
    g_assert_cmpuint(v, ==, 40);
    g_assert_true(apicv_trace_field(raw, sizeof(raw), f.f[1], &v));
    g_assert_cmpint((int32_t)v, ==, -1);
    /* a record too short for the field: not read */
    g_assert_false(apicv_trace_field(raw, 20, f.f[4], &v));
    /* a field absent from the layout */
    apicv_trace_parse_format(inhibit_symbolic, irte_names, 5, &f);
    g_assert_false(apicv_trace_field(raw, sizeof(raw), f.f[0], &v));
}

typedef struct Seen {
    int samples;
    uint64_t lost;
    uint32_t last_len;
    uint64_t last_time;
    uint8_t last[32];
} Seen;

static void record(void *opaque, const uint8_t *raw, uint32_t len,
                   uint64_t time, uint64_t lost)
{
    Seen *seen = opaque;

    if (!raw) {
        seen->lost += lost;
        return;
    }
    seen->samples++;
    seen->last_len = len;
    seen->last_time = time;
    memcpy(seen->last, raw, MIN(len, sizeof(seen->last)));
}

/* Write @len bytes at ring offset @pos (wrapping), return pos + len. */
static uint64_t put(uint8_t *ring, uint64_t size, uint64_t pos,
                    const void *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        ring[(pos + i) % size] = ((const uint8_t *)data)[i];
    }
    return pos + len;
}

/* A PERF_SAMPLE_TIME | PERF_SAMPLE_RAW sample: header, time, size, raw */
static uint64_t put_sample(uint8_t *ring, uint64_t size, uint64_t pos,
                           uint16_t type, uint8_t fill, uint64_t time)
{
    uint8_t raw[20];
    uint32_t rawlen = sizeof(raw);
    struct perf_event_header h = {
        .type = PERF_RECORD_SAMPLE,
        .size = sizeof(h) + 8 + 4 + sizeof(raw),
    };

    memset(raw, fill, sizeof(raw));
    memcpy(raw, &type, 2);
    pos = put(ring, size, pos, &h, sizeof(h));
    pos = put(ring, size, pos, &time, 8);
    pos = put(ring, size, pos, &rawlen, 4);
    return put(ring, size, pos, raw, sizeof(raw));
}

static void test_ring(void)
{
    uint8_t ring[128];
    uint64_t size = sizeof(ring), start = 100, pos, tail;
    struct perf_event_header lh = {
        .type = PERF_RECORD_LOST, .size = sizeof(lh) + 16,
    };
    uint64_t lost[2] = { 7, 5 };        /* id, lost */
    Seen seen = { 0 };

    /* a sample crossing the end of the ring, a lost record, a sample */
    pos = put_sample(ring, size, start, 1650, 0xaa, 1000);
    pos = put(ring, size, pos, &lh, sizeof(lh));
    pos = put(ring, size, pos, lost, sizeof(lost));
    pos = put_sample(ring, size, pos, 1702, 0xbb, 0x123456789);

    tail = apicv_trace_ring_records(ring, size, start, pos, record, &seen);
    g_assert_cmpuint(tail, ==, pos);
    g_assert_cmpint(seen.samples, ==, 2);
    g_assert_cmpuint(seen.lost, ==, 5);
    g_assert_cmpuint(seen.last_len, ==, 20);
    g_assert_cmpuint(seen.last[0] | seen.last[1] << 8, ==, 1702);
    g_assert_cmpuint(seen.last[19], ==, 0xbb);
    g_assert_cmpuint(seen.last_time, ==, 0x123456789);

    /* a record not yet complete (head inside it) is left for later */
    memset(&seen, 0, sizeof(seen));
    tail = apicv_trace_ring_records(ring, size, start, start + 20, record,
                                    &seen);
    g_assert_cmpuint(tail, ==, start);
    g_assert_cmpint(seen.samples, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/apicv-trace/format", test_format);
    g_test_add_func("/apicv-trace/reason-names", test_reason_names);
    g_test_add_func("/apicv-trace/fields", test_fields);
    g_test_add_func("/apicv-trace/ring", test_ring);
    return g_test_run();
}
