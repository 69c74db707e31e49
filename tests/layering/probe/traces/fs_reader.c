#include "fs_reader.h"
#include "../sim/fs_base.h"

int fs_reader_next(int x) { return fs_base_twice(x) + 1; }
