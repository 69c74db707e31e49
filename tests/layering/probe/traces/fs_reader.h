#ifndef FS_READER_H
#define FS_READER_H
int fs_reader_next(int x);
#endif
