#include "fs_migname.h"

#include <stdio.h>

/* A decimal 1..32767 without leading zeros at s[*i]; advances *i. */
static uint32_t number(const char *s, size_t len, size_t *i)
{
    uint32_t v = 0;
    size_t start = *i;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        v = v * 10u + (uint32_t)(s[*i] - '0');
        if (v > 32767u)
            return 0;
        (*i)++;
    }
    if (*i == start || s[start] == '0')
        return 0;
    return v;
}

int32_t fs_migname_parse(const char *name, size_t len)
{
    size_t i = 0;
    uint32_t c = number(name, len, &i);
    if (!c || i + 2 > len || name[i] != 'g' || name[i + 1] != '.')
        return 0;
    i += 2;
    uint32_t m = number(name, len, &i);
    if (!m || i + 2 > len || name[i] != 'g' || name[i + 1] != 'b')
        return 0;
    i += 2;
    uint32_t me = 0;
    if (i < len) {
        if (len - i != 3 || name[i] != '+' || name[i + 1] != 'm' || name[i + 2] != 'e')
            return 0;
        me = 1;
    }
    return (int32_t)(c << 16 | m << 1 | me);
}

const char *fs_migname_of(int32_t code, char *buf, size_t n)
{
    uint32_t u = (uint32_t)code;
    snprintf(buf, n, "%ug.%ugb%s", u >> 16, (u >> 1) & 0x7fffu, u & 1u ? "+me" : "");
    return buf;
}
