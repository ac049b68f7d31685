/* gst-qmetric: gst/qmetric/qmratelimit.c, the rate limit of repeated
 * warnings, on a synthetic clock. */
#include <stdio.h>

#include "qmratelimit.h"
#include "unit.h"

#define S 1000000ll

int main(void)
{
    QmRateLimit r;
    uint64_t held = 99;
    int64_t t = 5 * S;

    /* a burst of 3 passes, each with nothing held back */
    qm_rate_init(&r, 3, 10 * S);
    for (int i = 0; i < 3; i++) {
        CHECK(qm_rate_pass(&r, t, &held) && held == 0, "burst %d", i);
        held = 99;
    }
    /* then one per 10 s: of 56 a second for 25 s, two pass */
    unsigned passed = 0;
    uint64_t held_sum = 0;
    for (int i = 0; i < 56 * 25; i++) {
        int64_t now = t + (int64_t)i * S / 56 + 1;
        if (qm_rate_pass(&r, now, &held)) {
            passed++;
            held_sum += held;
            CHECK(held > 500 && held < 600, "pass %u after %llu held", passed,
                  (unsigned long long)held);
        }
    }
    CHECK(passed == 2, "%u passed in 25 s", passed);
    /* every warning is either posted or counted */
    CHECK(held_sum + r.held == r.held_total && r.held_total + passed ==
          56 * 25, "%llu held", (unsigned long long)r.held_total);
    /* after a quiet spell the next one passes at once and says how many
     * were held back before it */
    uint64_t before = r.held;
    CHECK(qm_rate_pass(&r, t + 60 * S, &held) && held == before,
          "after silence: %llu", (unsigned long long)held);
    CHECK(!qm_rate_pass(&r, t + 60 * S + 1, &held), "limited again");

    /* burst 1 (a warning whose text never changes) */
    qm_rate_init(&r, 1, 10 * S);
    CHECK(qm_rate_pass(&r, t, NULL), "first");
    CHECK(!qm_rate_pass(&r, t + S, NULL), "second within 10 s");
    CHECK(qm_rate_pass(&r, t + 11 * S, &held) && held == 1, "after 11 s");

    printf("%s (%d failed checks)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
