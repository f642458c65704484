/*
 * fuzz_siteconf: the plugin's plugstack.conf arguments (np_site_config_parse), one argument per
 * input line, and each argument as a user's --numaplace= request (np_policy_request_parse).
 * Invariants: the default policy is always allowed; any refused argument closes high; the allowed
 * list prints; a refused config fails closed for high sensitivity.
 */
#include "fuzz_common.h"
#include "numaplace/siteconf.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 64 };
    struct np_site_config cfg;
    char *text = fuzz_strndup(data, size), *save = NULL, *arg;
    char *argv[MAX_ARGS + 1];
    char names[512];
    int argc = 0, rc;

    for (arg = strtok_r(text, "\n", &save); arg && argc < MAX_ARGS;
         arg = strtok_r(NULL, "\n", &save))
        argv[argc++] = arg;
    argv[argc] = NULL;
    FUZZ_ASSERT(np_site_config_init(&cfg) == 0);
    rc = np_site_config_parse(&cfg, argc, argv, NULL);
    np_site_config_allowed_names(&cfg, names, sizeof(names));
    FUZZ_ASSERT(memchr(names, '\0', sizeof(names)) != NULL);
    FUZZ_ASSERT(rc >= 0);
    FUZZ_ASSERT(np_site_config_allows(&cfg, cfg.default_policy));
    FUZZ_ASSERT(rc == 0 || cfg.high_closed);
    if (cfg.high_closed)
        FUZZ_ASSERT(!np_site_config_may_claim_high_names(&cfg, "someone",
                                                         (const char *const[]){"users", NULL}));
    (void)np_site_config_may_claim_high_names(&cfg, "root", (const char *const[]){NULL});
    np_site_config_fini(&cfg);
    for (int i = 0; i < argc; i++) {
        struct np_policy_request req;
        struct np_err err = {0};
        if (np_policy_request_parse(argv[i], &req, &err) != 0)
            FUZZ_ASSERT(err.code < 0 && err.msg[0] != '\0');
    }
    free(text);
    return 0;
}
