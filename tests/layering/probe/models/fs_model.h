#ifndef FS_MODEL_H
#define FS_MODEL_H
int fs_model_step(int x);
#endif
