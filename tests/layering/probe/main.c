#include "models/fs_model.h"

int main(int argc, char **argv)
{
    (void)argv;
    return fs_model_step(argc) == 9 ? 0 : 1;
}
