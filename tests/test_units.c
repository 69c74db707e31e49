/*
 * Tests of scenarios/fs_units: durations, rates and numbers with units are
 * parsed exactly (checked against an integer reference), junk is refused
 * with a message saying what was expected, and formatting round-trips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fs_test_util.h"
#include "scenarios/fs_units.h"
#include "sim/fs_alloc.h"

static int64_t live0;

static int setup(void **state)
{
    (void)state;
    live0 = fs_alloc_live();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(fs_alloc_live(), live0);
    return 0;
}

static fs_time_t dur(const char *s)
{
    fs_time_t t = -1;
    fs_error_t e;
    int rc = fs_units_parse_duration(s, &t, &e);
    if (rc)
        fail_msg("'%s' did not parse: %s", s, e.msg);
    return t;
}

static void dur_bad(const char *s, const char *want)
{
    fs_time_t t = 12345;
    fs_error_t e;
    fs_error_clear(&e);
    assert_int_equal(fs_units_parse_duration(s, &t, &e), FS_EINVAL);
    assert_int_equal(e.code, FS_EINVAL);
    assert_int_equal(t, 12345); /* untouched */
    if (!strstr(e.msg, want))
        fail_msg("'%s': message '%s' lacks '%s'", s, e.msg, want);
}

static void test_durations_exact(void **state)
{
    (void)state;
    assert_int_equal(dur("90s"), 90 * FS_US_PER_S);
    assert_int_equal(dur("1.5h"), 5400 * FS_US_PER_S);
    assert_int_equal(dur("500ms"), 500000);
    assert_int_equal(dur("250us"), 250);
    assert_int_equal(dur("15m"), 15 * FS_US_PER_MIN);
    assert_int_equal(dur("15min"), 15 * FS_US_PER_MIN);
    assert_int_equal(dur("2h"), 2 * FS_US_PER_H);
    assert_int_equal(dur("30d"), 30 * FS_US_PER_DAY);
    assert_int_equal(dur("1w"), 7 * FS_US_PER_DAY);
    assert_int_equal(dur("1y"), 365 * FS_US_PER_DAY);
    assert_int_equal(dur("1000y"), 365000 * FS_US_PER_DAY);
    assert_int_equal(dur("0"), 0);
    assert_int_equal(dur("0.000"), 0);
    assert_int_equal(dur("0s"), 0);
    assert_int_equal(dur(" 90 s "), 90 * FS_US_PER_S);
    assert_int_equal(dur("+5s"), 5 * FS_US_PER_S);
    assert_int_equal(dur("2e3s"), 2000 * FS_US_PER_S);
    assert_int_equal(dur("2.5E-3s"), 2500);
    assert_int_equal(dur(".5h"), 1800 * FS_US_PER_S);
    assert_int_equal(dur("3.s"), 3 * FS_US_PER_S);
    /* decimal fractions that binary floating point cannot hold */
    assert_int_equal(dur("0.1s"), 100000);
    assert_int_equal(dur("0.3s"), 300000);
    assert_int_equal(dur("1.1d"), 95040 * FS_US_PER_S);
    /* rounding to the nearest microsecond, halves away from zero */
    assert_int_equal(dur("1.0000005s"), 1000001);
    assert_int_equal(dur("1.00000049999999999s"), 1000000);
    assert_int_equal(dur("0.5us"), 1);
    assert_int_equal(dur("0.49us"), 0);
    assert_int_equal(dur("1e-7s"), 0);
    assert_int_equal(dur("1e-99999999s"), 0);
    /* many digits, trailing zeros do not count against the limit */
    assert_int_equal(dur("1.000000000000000000000000000000000000000h"), FS_US_PER_H);
    assert_int_equal(dur("000000000000000000000000000000000000000001s"), FS_US_PER_S);
}

/* Reference: value a / 10^k in unit u (us), rounded half up, computed in
 * integers from (a, k) rather than from text. */
__extension__ typedef unsigned __int128 u128;
static u128 ref_us(uint64_t a, int k, int64_t unit)
{
    u128 num = (u128)a * (u128)unit, den = 1;
    for (int i = 0; i < k; i++)
        den *= 10;
    u128 q = num / den, r = num % den;
    if (2 * r >= den)
        q++;
    return q;
}

static void test_durations_reference(void **state)
{
    (void)state;
    static const struct { const char *name; int64_t us; } units[] = {
        {"us", 1}, {"ms", 1000}, {"s", FS_US_PER_S}, {"m", FS_US_PER_MIN}, {"h", FS_US_PER_H},
        {"d", FS_US_PER_DAY}, {"w", 7 * FS_US_PER_DAY}, {"y", 365 * FS_US_PER_DAY}};
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    int checked = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t a = x % 1000000000000ull >> (x % 30);
        int k = (int)((x >> 40) % 13);
        size_t u = (x >> 50) % (sizeof units / sizeof units[0]);
        char digits[32], text[64];
        snprintf(digits, sizeof digits, "%0*llu", k + 1, (unsigned long long)a);
        size_t nd = strlen(digits);
        snprintf(text, sizeof text, "%.*s.%s%s", (int)(nd - (size_t)k), digits, digits + nd - k,
                 units[u].name);
        u128 want = ref_us(a, k, units[u].us);
        fs_time_t got = -1;
        int rc = fs_units_parse_duration(text, &got, NULL);
        if (want > (u128)FS_TIME_MAX_INPUT) {
            assert_int_equal(rc, FS_EINVAL);
            continue;
        }
        if (rc != 0 || (u128)got != want)
            fail_msg("%s: got %lld (rc %d), want %lld", text, (long long)got, rc, (long long)(int64_t)want);
        checked++;
    }
    assert_true(checked > 15000);
}

static void test_durations_refused(void **state)
{
    (void)state;
    dur_bad("5 parsecs", "unknown unit 'parsecs' in '5 parsecs' (expected a duration such as 90s, 15m, 2h or 30d");
    dur_bad("1e400s", "'1e400s' is beyond the limit of 1000 years");
    dur_bad("1001y", "beyond the limit of 1000 years");
    dur_bad("-3m", "'-3m': a duration cannot be negative");
    dur_bad("nan h", "'nan h' is not a finite duration (expected a duration such as 90s");
    dur_bad("NaN", "not a finite duration");
    dur_bad("inf s", "not a finite duration");
    dur_bad(".inf", "not a finite duration");
    dur_bad("90", "'90' has no unit (expected a duration such as 90s, 15m, 2h or 30d)");
    dur_bad("1.5", "has no unit");
    dur_bad("", "empty value");
    dur_bad("   ", "empty value");
    dur_bad("s", "'s' is not a duration");
    dur_bad("1.2.3s", "unknown unit '.3s'");
    dur_bad("1e s", "unknown unit 'e s'");
    dur_bad("0x10s", "unknown unit 'x10s'");
    dur_bad("5 S", "unknown unit 'S'");
    dur_bad("1234567890123456789012345678901s", "more than 30 significant digits");
    /* the exact limit: 1000 years of 365.25 days */
    fs_time_t t;
    assert_int_equal(fs_units_parse_duration("365250d", &t, NULL), 0);
    assert_int_equal(t, FS_TIME_MAX_INPUT);
    assert_int_equal(fs_units_parse_duration("31557600000000000us", &t, NULL), 0);
    assert_int_equal(t, FS_TIME_MAX_INPUT);
    assert_int_equal(fs_units_parse_duration("31557600000000001us", &t, NULL), FS_EINVAL);
}

static double rate(const char *s)
{
    double r = -1;
    fs_error_t e;
    if (fs_units_parse_rate(s, &r, &e))
        fail_msg("'%s' did not parse: %s", s, e.msg);
    return r;
}

static void rate_bad(const char *s, const char *want)
{
    double r = 7;
    fs_error_t e;
    assert_int_equal(fs_units_parse_rate(s, &r, &e), FS_EINVAL);
    assert_true(r == 7);
    if (!strstr(e.msg, want))
        fail_msg("'%s': message '%s' lacks '%s'", s, e.msg, want);
}

static void test_rates(void **state)
{
    (void)state;
    assert_true(rate("40/h") == 40.0 / 3600.0);
    assert_true(rate("3/min") == 3.0 / 60.0);
    assert_true(rate("3/m") == 3.0 / 60.0);
    assert_true(rate("0.5/s") == 0.5);
    assert_true(rate("10/d") == 10.0 / 86400.0);
    assert_true(rate("1/w") == 1.0 / 604800.0);
    assert_true(rate("2/ms") == 2000.0);
    assert_true(rate("2/us") == 2e6);
    assert_true(rate(" 40 / h ") == 40.0 / 3600.0);
    assert_true(rate("0") == 0.0);
    rate_bad("40", "'40' has no unit (expected a rate such as 40/h, 3/min or 0.5/s)");
    rate_bad("40/parsec", "unknown unit '/parsec' in '40/parsec'");
    rate_bad("40 h", "'40 h' is not a rate");
    rate_bad("-1/h", "a rate cannot be negative");
    rate_bad("nan/h", "'nan/h' is not a finite rate");
    rate_bad("inf/s", "not a finite rate");
    rate_bad("1e400/h", "'1e400/h' is too large a rate");
    rate_bad("/h", "'/h' is not a rate");
    rate_bad("", "empty value");
}

static void test_numbers(void **state)
{
    (void)state;
    double v;
    fs_error_t e;
    assert_int_equal(fs_units_parse_number("0.5", &v, &e), 0);
    assert_true(v == 0.5);
    assert_int_equal(fs_units_parse_number("1e-3", &v, &e), 0);
    assert_true(v == 1e-3);
    assert_int_equal(fs_units_parse_number("-2", &v, &e), 0);
    assert_true(v == -2);
    assert_int_equal(fs_units_parse_number("-0", &v, &e), 0);
    assert_true(v == 0 && !signbit(v));
    static const char *const bad[] = {"nan", ".nan", "-.inf", "inf", "1e400", "abc", "1,5", "0x1p3",
                                      "", "1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(fs_units_parse_number(bad[i], &v, &e), FS_EINVAL);
        assert_int_equal(e.code, FS_EINVAL);
    }
    fs_units_parse_number(".nan", &v, &e);
    assert_string_equal(e.msg, "'.nan' is not a finite number");
    fs_units_parse_number("1e400", &v, &e);
    assert_string_equal(e.msg, "'1e400' is too large (not a finite number)");
}

static void test_format_duration(void **state)
{
    (void)state;
    char b[FS_UNITS_BUF];
    assert_string_equal(fs_units_format_duration(0, b, sizeof b), "0s");
    assert_string_equal(fs_units_format_duration(7 * FS_US_PER_DAY, b, sizeof b), "7d");
    assert_string_equal(fs_units_format_duration(2700 * FS_US_PER_S, b, sizeof b), "45m");
    assert_string_equal(fs_units_format_duration(5400 * FS_US_PER_S, b, sizeof b), "90m");
    assert_string_equal(fs_units_format_duration(36 * FS_US_PER_H, b, sizeof b), "36h");
    assert_string_equal(fs_units_format_duration(2700 * FS_US_PER_S + 1, b, sizeof b), "2700000001us");
    assert_string_equal(fs_units_format_duration(1500000, b, sizeof b), "1500ms");
    assert_string_equal(fs_units_format_duration(FS_TIME_MAX_INPUT, b, sizeof b), "365250d");
    /* parse(format(t)) == t over the whole range */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fs_time_t t = (fs_time_t)(x % (uint64_t)FS_TIME_MAX_INPUT);
        if (i % 3 == 1)
            t -= t % FS_US_PER_MIN;
        fs_units_format_duration(t, b, sizeof b);
        fs_time_t back;
        assert_int_equal(fs_units_parse_duration(b, &back, NULL), 0);
        assert_int_equal(back, t);
    }
}

static void test_format_rate_and_number(void **state)
{
    (void)state;
    char b[FS_UNITS_BUF];
    static const struct { const char *in, *out; } cases[] = {
        {"40/h", "40/h"}, {"60/h", "60/h"}, {"1/min", "60/h"}, {"3/min", "3/min"},
        {"0.5/s", "0.5/s"}, {"10/d", "10/d"}, {"7/h", "7/h"}, {"2/ms", "2000/s"},
        {"123.456/h", "123.456/h"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(fs_units_format_rate(rate(cases[i].in), b, sizeof b), cases[i].out);
    uint64_t x = 1234567;
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double r = (double)(x >> 11) / (double)(1ull << 53) * pow(10, (int)(x % 12) - 6);
        if (r == 0)
            continue;
        double back;
        assert_int_equal(fs_units_parse_rate(fs_units_format_rate(r, b, sizeof b), &back, NULL), 0);
        assert_true(back == r);
        assert_int_equal(fs_units_parse_number(fs_units_format_number(r, b, sizeof b), &back, NULL), 0);
        assert_true(back == r);
    }
    assert_string_equal(fs_units_format_number(0.1, b, sizeof b), "0.1");
    assert_string_equal(fs_units_format_number(1.5, b, sizeof b), "1.5");
    assert_string_equal(fs_units_format_number(1e-5, b, sizeof b), "1e-05");
    assert_string_equal(fs_units_format_number(1.0 / 3, b, sizeof b), "0.3333333333333333");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_durations_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durations_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durations_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_duration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_rate_and_number, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
