/* tg version: the library version and how it was built. */
#include "commands.h"
#include "tg/tg.h"

#include <stdio.h>

int tg_cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("tensorgraph %s\n", TG_VERSION);
    return 0;
}
