#include "fs_base.h"

int fs_base_twice(int x) { return 2 * x; }
