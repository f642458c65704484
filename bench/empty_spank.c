/*
 * empty_spank.so - a SPANK plugin that registers one option and does nothing: the launch
 * benchmark's floor, what Slurm itself charges a step for loading a plugin with an option
 * (srun, slurmstepd and every task call its hooks), so numaplace's own share can be told apart.
 */
#include <stddef.h>

#include <slurm/spank.h>

SPANK_PLUGIN(empty_spank, 1);

static int take_option(int val, const char *value, int remote)
{
    (void)val;
    (void)value;
    (void)remote;
    return 0;
}

static struct spank_option option[] = {
    {"empty-spank-option", "VALUE", "an option that does nothing", 1, 0, take_option},
    SPANK_OPTIONS_TABLE_END};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_option_register(sp, option) == ESPANK_SUCCESS ? 0 : -1;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    return 0;
}
