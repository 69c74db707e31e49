#include "fs_source.h"

#include "../sim/fs_alloc.h"

void fs_source_destroy(fs_source_t *s)
{
    if (!s)
        return;
    if (s->ops && s->ops->destroy)
        s->ops->destroy(s->state);
    fs_free(s);
}
