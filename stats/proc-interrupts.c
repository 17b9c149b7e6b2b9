/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Parser of /proc/interrupts for the host-wide interrupt-delivery
 * counters (see include/system/proc-interrupts.h).
 *
 * Format: a header of "CPU<n>" columns, then one row per interrupt:
 * "<label>:", up to one count per CPU column, then a description.
 * Numbered rows end with the action name(s) the driver requested; the
 * AMD IOMMU driver names its lines "AMD-Vi<N>-Evt", "AMD-Vi<N>-PPR" and
 * "AMD-Vi<N>-GA" when it uses x2APIC interrupt capability (IntCapXT),
 * and one line "AMD-Vi" per IOMMU in MSI mode, where event-log, PPR and
 * GA-log interrupts share the vector: that line is reported as shared,
 * never as GA-log interrupts.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/proc-interrupts.h"

/* The x86 rows the fork reports, in report order. */
static const struct {
    const char *label;
    const char *name;
} posted_rows[] = {
    { "PIN", "host-posted-intr-notifications" },
    { "NPI", "host-nested-posted-intr-notifications" },
    { "PIW", "host-posted-intr-wakeups" },
    { "PMN", "host-posted-msi-notifications" },
};

typedef struct ParseState {
    bool has_posted[ARRAY_SIZE(posted_rows)];
    uint64_t posted[ARRAY_SIZE(posted_rows)];
    GArray *ga_by_iommu;        /* uint64_t per IOMMU index */
    GArray *ga_seen;            /* gboolean per IOMMU index */
    bool has_shared;
    uint64_t shared;
} ParseState;

/* The largest IOMMU index accepted in "AMD-Vi<N>-GA". */
#define MAX_IOMMU_INDEX 255

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool parse_count(const char *tok, uint64_t *out)
{
    const char *p;

    if (!*tok) {
        return false;
    }
    for (p = tok; *p; p++) {
        if (!g_ascii_isdigit(*p)) {
            return false;
        }
    }
    errno = 0;
    *out = g_ascii_strtoull(tok, NULL, 10);
    if (errno == ERANGE) {
        *out = UINT64_MAX;
    }
    return true;
}

/* "AMD-Vi<N>-GA" -> N; -1 if @tok is not such a name. */
static int amdvi_ga_index(const char *tok)
{
    const char *p = tok + strlen("AMD-Vi");
    int n = 0;

    if (!g_str_has_prefix(tok, "AMD-Vi") || !g_ascii_isdigit(*p)) {
        return -1;
    }
    while (g_ascii_isdigit(*p)) {
        n = n * 10 + (*p - '0');
        if (n > MAX_IOMMU_INDEX) {
            return -1;
        }
        p++;
    }
    return g_str_equal(p, "-GA") ? n : -1;
}

static void parse_row(ParseState *st, char **tok, int ncpus)
{
    size_t len = strlen(tok[0]);
    g_autofree char *label = NULL;
    uint64_t sum = 0, v;
    int i = 1, ncounts = 0;

    if (len < 2 || tok[0][len - 1] != ':') {
        return;                 /* not a row: garbage is ignored */
    }
    label = g_strndup(tok[0], len - 1);
    while (tok[i] && ncounts < ncpus && parse_count(tok[i], &v)) {
        sum = add_sat(sum, v);
        ncounts++;
        i++;
    }
    if (!ncounts) {
        return;
    }

    for (size_t r = 0; r < ARRAY_SIZE(posted_rows); r++) {
        if (g_str_equal(label, posted_rows[r].label)) {
            st->has_posted[r] = true;
            st->posted[r] = add_sat(st->posted[r], sum);
            return;
        }
    }

    /* Numbered rows: look at the action names after the chip fields. */
    for (; tok[i]; i++) {
        g_autofree char *name = g_strdup(tok[i]);
        size_t n = strlen(name);
        int idx;

        if (n && name[n - 1] == ',') {
            name[n - 1] = '\0';     /* shared handlers: "a, b" */
        }
        idx = amdvi_ga_index(name);
        if (idx >= 0) {
            gboolean yes = TRUE;
            uint64_t *slot;

            if (idx >= st->ga_by_iommu->len) {
                g_array_set_size(st->ga_by_iommu, idx + 1);
                g_array_set_size(st->ga_seen, idx + 1);
            }
            slot = &g_array_index(st->ga_by_iommu, uint64_t, idx);
            *slot = add_sat(*slot, sum);
            g_array_index(st->ga_seen, gboolean, idx) = yes;
        } else if (g_str_equal(name, "AMD-Vi")) {
            st->has_shared = true;
            st->shared = add_sat(st->shared, sum);
        }
    }
}

static void add_counter(GPtrArray *out, char *name, uint64_t value)
{
    HostIrqCounter *c = g_new(HostIrqCounter, 1);

    c->name = name;
    c->value = value;
    g_ptr_array_add(out, c);
}

void host_irq_counter_add(GPtrArray *counters, const char *name,
                          uint64_t value)
{
    add_counter(counters, g_strdup(name), value);
}

static void free_counter(gpointer p)
{
    HostIrqCounter *c = p;

    g_free(c->name);
    g_free(c);
}

GPtrArray *host_irq_counters_new(void)
{
    return g_ptr_array_new_with_free_func(free_counter);
}

GPtrArray *proc_interrupts_parse(const char *text, Error **errp)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    ParseState st = { 0 };
    GPtrArray *out;
    int ncpus = -1;
    bool any_ga = false;
    uint64_t ga_sum = 0;

    st.ga_by_iommu = g_array_new(FALSE, TRUE, sizeof(uint64_t));
    st.ga_seen = g_array_new(FALSE, TRUE, sizeof(gboolean));

    for (char **l = lines; *l; l++) {
        g_auto(GStrv) tok = g_strsplit_set(g_strstrip(*l), " \t", -1);
        g_autoptr(GPtrArray) words = g_ptr_array_new();

        for (char **t = tok; *t; t++) {
            if (**t) {
                g_ptr_array_add(words, *t);
            }
        }
        if (!words->len) {
            continue;
        }
        g_ptr_array_add(words, NULL);
        if (ncpus < 0) {
            /* The first line must be the header of CPU columns. */
            ncpus = 0;
            for (char **w = (char **)words->pdata; *w; w++) {
                if (!g_str_has_prefix(*w, "CPU")) {
                    ncpus = 0;
                    break;
                }
                ncpus++;
            }
            if (!ncpus) {
                break;
            }
            continue;
        }
        parse_row(&st, (char **)words->pdata, ncpus);
    }

    if (ncpus <= 0) {
        g_array_free(st.ga_by_iommu, TRUE);
        g_array_free(st.ga_seen, TRUE);
        error_setg(errp, "no 'CPU0 CPU1 ...' header line");
        return NULL;
    }

    out = host_irq_counters_new();
    for (size_t r = 0; r < ARRAY_SIZE(posted_rows); r++) {
        if (st.has_posted[r]) {
            add_counter(out, g_strdup(posted_rows[r].name), st.posted[r]);
        }
    }
    for (guint i = 0; i < st.ga_by_iommu->len; i++) {
        if (g_array_index(st.ga_seen, gboolean, i)) {
            any_ga = true;
            ga_sum = add_sat(ga_sum,
                             g_array_index(st.ga_by_iommu, uint64_t, i));
        }
    }
    if (any_ga) {
        add_counter(out, g_strdup("host-amdvi-ga-log-interrupts"), ga_sum);
        for (guint i = 0; i < st.ga_by_iommu->len; i++) {
            if (g_array_index(st.ga_seen, gboolean, i)) {
                add_counter(out,
                            g_strdup_printf("host-amdvi%u-ga-log-interrupts",
                                            i),
                            g_array_index(st.ga_by_iommu, uint64_t, i));
            }
        }
    }
    if (st.has_shared) {
        add_counter(out, g_strdup("host-amdvi-shared-interrupts"),
                    st.shared);
    }
    g_array_free(st.ga_by_iommu, TRUE);
    g_array_free(st.ga_seen, TRUE);
    return out;
}
