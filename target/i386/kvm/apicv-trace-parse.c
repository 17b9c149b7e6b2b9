/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The pure parts of the KVM tracepoint reader (apicv-trace.c): field
 * offsets and inhibit names from a tracepoint's tracefs "format", the
 * fields of a raw record, and the records of a perf ring buffer (which
 * may wrap, and may hold PERF_RECORD_LOST).  Unit-tested on fixtures of
 * Linux 6.12 and 6.17+ formats and synthetic rings
 * (tests/unit/test-apicv-trace.c).
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/host-utils.h"
#include "apicv-trace.h"
#include <linux/perf_event.h>

void apicv_trace_parse_format(const char *text, const char *const *names,
                              int n, ApicvTraceFormat *fmt)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    const char *id = strstr(text, "\nID: ");

    fmt->id = id ? atoi(id + strlen("\nID: ")) : -1;
    for (int i = 0; i < n; i++) {
        fmt->f[i].offset = fmt->f[i].size = -1;
    }
    for (char **l = lines; *l; l++) {
        const char *decl = strstr(*l, "field:");
        const char *semi = decl ? strchr(decl, ';') : NULL;
        const char *off = semi ? strstr(semi, "offset:") : NULL;
        const char *size = semi ? strstr(semi, "size:") : NULL;
        const char *p;
        g_autofree char *name = NULL;

        if (!off || !size) {
            continue;
        }
        /* the name is the last word of the declaration */
        for (p = semi; p > decl && !g_ascii_isspace(p[-1]); p--) {
            /* back to the start of the word */
        }
        name = g_strndup(p, semi - p);
        for (int i = 0; i < n; i++) {
            if (g_str_equal(name, names[i])) {
                fmt->f[i].offset = atoi(off + strlen("offset:"));
                fmt->f[i].size = atoi(size + strlen("size:"));
            }
        }
    }
}

void apicv_trace_parse_reason_names(const char *text, char **names)
{
    const char *p = strstr(text, "__print_flags");
    int index = 0;

    while (p && (p = strchr(p, '{'))) {
        const char *comma = strchr(p, ',');
        const char *q1 = comma ? strchr(comma, '"') : NULL;
        const char *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
        const char *shift, *end;
        uint64_t v;
        int bit = index++;

        if (!q2) {
            break;
        }
        shift = g_strstr_len(p, comma - p, "<<");
        if (shift) {
            shift += 2;
            while (*shift == ' ' || *shift == '(') {
                shift++;
            }
            if (g_ascii_isdigit(*shift)) {
                bit = atoi(shift);
            }
        } else if (!qemu_strtou64(p + 1, &end, 0, &v) && end <= comma &&
                   v && !(v & (v - 1))) {
            bit = ctz64(v);
        }
        if (bit >= 0 && bit < 64 && !names[bit]) {
            names[bit] = g_strndup(q1 + 1, q2 - q1 - 1);
        }
        p = q2;
    }
}

bool apicv_trace_field(const uint8_t *raw, uint32_t len, ApicvTraceField f,
                       uint64_t *value)
{
    uint64_t v = 0;

    if (f.offset < 0 || f.size <= 0 || f.size > 8 ||
        f.offset + f.size > len) {
        return false;
    }
    /* little-endian host: the low bytes come first */
    memcpy(&v, raw + f.offset, f.size);
    *value = v;
    return true;
}

uint64_t apicv_trace_ring_records(const uint8_t *data, uint64_t size,
                                  uint64_t tail, uint64_t head,
                                  ApicvTraceRecordFn *fn, void *opaque)
{
    g_autofree uint8_t *rec = NULL;

    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        uint32_t rawlen;
        uint64_t lost, time;

        /* a record can wrap around the end of the ring */
        for (size_t i = 0; i < sizeof(h); i++) {
            ((uint8_t *)&h)[i] = data[(tail + i) % size];
        }
        if (h.size < sizeof(h) || tail + h.size > head) {
            break;
        }
        rec = g_realloc(rec, h.size);
        for (size_t i = 0; i < h.size; i++) {
            rec[i] = data[(tail + i) % size];
        }
        if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 12) {
            memcpy(&time, rec + sizeof(h), 8);
            memcpy(&rawlen, rec + sizeof(h) + 8, 4);
            if (sizeof(h) + 12 + rawlen <= h.size) {
                fn(opaque, rec + sizeof(h) + 12, rawlen, time, 0);
            }
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
            memcpy(&lost, rec + sizeof(h) + 8, 8);
            fn(opaque, NULL, 0, 0, lost);
        }
        tail += h.size;
    }
    return tail;
}
