#ifndef FS_BASE_H
#define FS_BASE_H
int fs_base_twice(int x);
#endif
