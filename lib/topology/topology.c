/* NUMA topology on hwloc (see numaplace/topology.h). */
#include "numaplace/topology.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "numaplace/cpulist.h"

struct np_topology {
    hwloc_topology_t hwloc;
    struct np_numa_node *nodes; /* OS-index order */
    hwloc_cpuset_t *node_cpus;  /* owned cpusets behind nodes[i].cpus */
    unsigned count;
    hwloc_cpuset_t online;
    struct hwloc_distances_s *distances; /* NULL when the topology has none */
};

static int compare_os_index(const void *a, const void *b)
{
    const struct np_numa_node *x = a, *y = b;
    return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* Each kind: its name, the hwloc subtypes meaning it, its rank when only kinds order tiers. */
static const struct {
    const char *name, *subtypes[3];
    unsigned rank;
} kinds[] = {
    [NP_MEMORY_DRAM] = {"dram", {"DRAM"}, 1},
    [NP_MEMORY_HBM] = {"hbm", {"HBM", "SPM", "MCDRAM"}, 0},
    [NP_MEMORY_CXL] = {"cxl", {"CXL-DRAM"}, 2},
    [NP_MEMORY_NVM] = {"nvm", {"NVM", "CXL-NVM"}, 3},
    [NP_MEMORY_GPU] = {"gpu", {"GPUMemory"}, 4},
};
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == NP_MEMORY_KIND_COUNT, "every kind one entry");

static const char *const tier_sources[NP_TIER_SOURCE_COUNT] = {"kernel", "hwloc", "subtype",
                                                               "distance"};

const char *np_memory_kind_name(enum np_memory_kind kind)
{
    return (unsigned)kind < NP_MEMORY_KIND_COUNT ? kinds[kind].name : "unknown";
}

const char *np_tier_source_name(enum np_tier_source source)
{
    return (unsigned)source < NP_TIER_SOURCE_COUNT ? tier_sources[source] : "unknown";
}

static enum np_memory_kind kind_of(const char *subtype)
{
    for (unsigned k = 0; subtype && k < NP_MEMORY_KIND_COUNT; k++)
        for (unsigned s = 0; s < 3 && kinds[k].subtypes[s]; s++)
            if (strcmp(subtype, kinds[k].subtypes[s]) == 0)
                return (enum np_memory_kind)k;
    return NP_MEMORY_DRAM;
}

static int add_range(void *set, unsigned first, unsigned last)
{
    return hwloc_bitmap_set_range(set, first, (int)last) < 0 ? -ENOMEM : 0;
}

/* A Slurm list ("0-3,8"), read as every list from outside is (numaplace/cpulist.h). */
static int parse_list(const char *list, hwloc_bitmap_t set, struct np_err *err)
{
    hwloc_bitmap_zero(set);
    return np_cpu_list_parse(list, "core list", add_range, set, err);
}

/* A list the kernel wrote (a node's cpulist, a tier's nodelist) into @p set; false if unread. */
static bool read_list(const char *path, hwloc_bitmap_t set)
{
    char *line = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "re");
    bool ok = f && getline(&line, &len, f) >= 0;

    if (ok) {
        line[strcspn(line, "\n")] = '\0';
        ok = parse_list(line, set, NULL) == 0;
    }
    if (f)
        fclose(f);
    free(line);
    return ok;
}

/*
 * hwloc gives a memory-only node (HBM, CXL, NVDIMM, GPU) the cpuset of the object it hangs
 * under, so that cpuset is not its CPUs: the kernel's nodeN/cpulist under @p root is. Without a
 * root or that file, the narrowest covering node's (struct np_numa_node, docs/placement.md).
 */
static void find_cpus(hwloc_topology_t t, hwloc_obj_t obj, const char *root, hwloc_bitmap_t cpus)
{
    const int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE),
              w = hwloc_bitmap_weight(obj->cpuset);
    char path[4096];

    snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%u/cpulist", root ? root : "",
             obj->os_index);
    if (root && read_list(path, cpus))
        return;
    hwloc_bitmap_copy(cpus, obj->cpuset);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
        const int ow = hwloc_bitmap_weight(o->cpuset);
        if (o != obj && (ow < w || (ow == w && o->os_index < obj->os_index)))
            hwloc_bitmap_andnot(cpus, cpus, o->cpuset);
    }
}

/* The kernel's tier of each node (memory_tierN's N), UINT_MAX for a node in none. */
static void kernel_tiers(const struct np_topology *topo, const char *root, unsigned *key)
{
    char path[4096];
    DIR *dir;
    struct dirent *e;
    unsigned n;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();

    snprintf(path, sizeof(path), "%s/sys/devices/virtual/memory_tiering", root);
    dir = nodes ? opendir(path) : NULL;
    while (dir && (e = readdir(dir)))
        if (sscanf(e->d_name, "memory_tier%u", &n) == 1) {
            snprintf(path, sizeof(path), "%s/sys/devices/virtual/memory_tiering/%s/nodelist", root,
                     e->d_name);
            if (!read_list(path, nodes))
                continue;
            for (unsigned i = 0; i < topo->count; i++)
                if (hwloc_bitmap_isset(nodes, topo->nodes[i].os_index) && n < key[i])
                    key[i] = n;
        }
    if (dir)
        closedir(dir);
    hwloc_bitmap_free(nodes);
}

/*
 * Each node's tier from the first source that ranks every node with memory: the kernel's
 * memory tiers (live only), hwloc's MemoryTier (kept in tier by build_nodes), the kinds when
 * they differ, else the distance from the nearest node with CPUs. The tiers are the ranks of the
 * distinct values, 0 the smallest.
 */
static int rank_tiers(struct np_topology *topo, const char *root, struct np_err *err)
{
    unsigned *key = topo->count ? malloc(topo->count * sizeof(*key)) : NULL; /* never 0 */
    enum np_tier_source src = NP_TIER_KERNEL;

    if (!key)
        return np_err_set(err, -ENOMEM, "out of memory ranking the memory tiers");
    for (;; src++) {
        bool all = true, any = false, typed = false;
        for (unsigned i = 0; i < topo->count; i++) {
            const struct np_numa_node *node = &topo->nodes[i];
            key[i] = src == NP_TIER_HWLOC     ? node->tier
                     : src == NP_TIER_SUBTYPE ? kinds[node->kind].rank
                                              : UINT_MAX;
            typed |= node->kind != NP_MEMORY_DRAM;
            for (unsigned c = 0; src == NP_TIER_DISTANCE && c < topo->count; c++) {
                const int d = np_topology_distance(topo, topo->nodes[c].os_index, node->os_index);
                if (!topo->nodes[c].cpuless && d >= 0 && (unsigned)d < key[i])
                    key[i] = (unsigned)d;
            }
        }
        if (src == NP_TIER_KERNEL && root)
            kernel_tiers(topo, root, key);
        for (unsigned i = 0; i < topo->count; i++) {
            all &= key[i] != UINT_MAX || topo->nodes[i].memory_bytes == 0;
            any |= key[i] != UINT_MAX;
        }
        if (src == NP_TIER_DISTANCE || (all && any && (src != NP_TIER_SUBTYPE || typed)))
            break;
    }
    for (unsigned i = 0; i < topo->count; i++) {
        topo->nodes[i].tier = 0;
        topo->nodes[i].tier_source = src;
        for (unsigned j = 0; j < topo->count; j++) {
            bool first = key[j] < key[i]; /* a smaller value, counted at its first node */
            for (unsigned k = 0; first && k < j; k++)
                first = key[k] != key[j];
            topo->nodes[i].tier += first;
        }
    }
    free(key);
    return 0;
}

/* Build the node table once, so every later query is a read of plain memory. */
static int build_nodes(struct np_topology *topo, const char *root, struct np_err *err)
{
    const int depth = HWLOC_TYPE_DEPTH_NUMANODE;
    const int n = hwloc_get_nbobjs_by_depth(topo->hwloc, depth);

    /* Every online CPU (offline ones are only in complete_cpuset), not narrowed to the caller's
     * cgroup (INCLUDE_DISALLOWED): a node keeps the CPUs it excludes, and stays a CPU node. */
    topo->online = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo->hwloc));
    if (n <= 0)
        return np_err_set(err, -EINVAL, "topology has no NUMA node");
    topo->nodes = calloc((size_t)n, sizeof(*topo->nodes));
    topo->node_cpus = calloc((size_t)n, sizeof(hwloc_cpuset_t));
    if (!topo->nodes || !topo->node_cpus || !topo->online)
        return np_err_set(err, -ENOMEM, "out of memory building the node table");
    for (int i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(topo->hwloc, depth, (unsigned)i);
        struct np_numa_node *node = &topo->nodes[i];
        const char *tier = hwloc_obj_get_info_by_name(obj, "MemoryTier");

        topo->node_cpus[i] = hwloc_bitmap_alloc();
        if (!topo->node_cpus[i])
            return np_err_set(err, -ENOMEM, "out of memory building the node table");
        find_cpus(topo->hwloc, obj, root, topo->node_cpus[i]);
        /* Online CPUs only: offline ones cannot run a task. */
        hwloc_bitmap_and(topo->node_cpus[i], topo->node_cpus[i], topo->online);
        node->os_index = obj->os_index;
        node->memory_bytes = obj->attr ? obj->attr->numanode.local_memory : 0;
        node->cpuless = hwloc_bitmap_iszero(topo->node_cpus[i]);
        node->subtype = obj->subtype;
        node->kind = kind_of(obj->subtype);
        node->tier = tier ? (unsigned)strtoul(tier, NULL, 10) : UINT_MAX;
        topo->count++;
    }
    /* Keep each node paired with its cpuset while sorting by OS index. */
    for (unsigned i = 0; i < topo->count; i++)
        topo->nodes[i].cpus = topo->node_cpus[i];
    qsort(topo->nodes, topo->count, sizeof(*topo->nodes), compare_os_index);
    /* hwloc's XML import takes two nodes of one OS index; a node mask could not tell them. */
    for (unsigned i = 1; i < topo->count; i++)
        if (topo->nodes[i].os_index == topo->nodes[i - 1].os_index)
            return np_err_set(err, -EINVAL, "topology has NUMA node %u twice",
                              topo->nodes[i].os_index);
    return rank_tiers(topo, root, err);
}

static void load_distances(struct np_topology *topo)
{
    unsigned nr = 1;
    struct hwloc_distances_s *dist[1];

    /* The OS's SLIT (relative latency) is what the model's 10/21/30 figures are. */
    if (hwloc_distances_get_by_type(topo->hwloc, HWLOC_OBJ_NUMANODE, &nr, dist,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
        nr >= 1)
        topo->distances = dist[0];
}

/*
 * numaplace needs none of hwloc's I/O and GPU discovery (PCI, OpenCL, CUDA, ...), which can cost
 * more than the whole load of the CPUs and nodes: they are left out through the topology, never
 * through the environment (slurmstepd and numaplaced have threads reading it). hwloc still
 * dlopen()s the plugin files at init where libhwloc-plugins is installed; a site that wants that
 * skipped too sets HWLOC_PLUGINS_BLACKLIST in slurmd's and numaplaced's environment
 * (docs/building.md).
 */
static const char *const skipped_components[] = {
    "pci", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero",
};

static int init_hwloc(hwloc_topology_t *t)
{
    if (hwloc_topology_init(t) < 0)
        return -1;
    /* An unknown name is not an error: a component this hwloc lacks is not used anyway. */
    for (size_t i = 0; i < sizeof(skipped_components) / sizeof(skipped_components[0]); i++)
        hwloc_topology_set_components(*t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                      skipped_components[i]);
    return 0;
}

/* A filesystem root must be a directory holding a Linux sysfs CPU tree (a captured one). */
static int check_fsroot(const char *root, struct np_err *err)
{
    char path[4096];
    struct stat st;

    if (stat(root, &st) < 0)
        return np_err_set(err, -ENOENT, "cannot discover the topology under '%s': %s", root,
                          strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return np_err_set(err, -ENOENT, "cannot discover the topology under '%s': not a directory",
                          root);
    snprintf(path, sizeof(path), "%s/sys/devices/system/cpu", root);
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return np_err_set(err, -ENOENT,
                          "cannot discover the topology under '%s': no sys/devices/system/cpu "
                          "there (not a Linux filesystem root)",
                          root);
    return 0;
}

/* Whether hwloc's Linux backend built the topology (it records itself in the root's infos). */
static bool loaded_by_linux(hwloc_topology_t t)
{
    const char *backend = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "Backend");

    return backend && strcmp(backend, "Linux") == 0;
}

int np_topology_load(struct np_topology **out, enum np_topology_source_kind kind, const char *arg,
                     struct np_err *err)
{
    struct np_topology *topo;
    const char *root = NULL; /* where the kernel's /sys is, for a live topology */
    int rc = 0;

    *out = NULL;
    topo = calloc(1, sizeof(*topo));
    if (!topo || init_hwloc(&topo->hwloc) < 0) {
        free(topo);
        return np_err_set(err, -ENOMEM, "cannot initialise hwloc");
    }
    /* Memory-side caches and I/O objects are not needed: keep discovery as cheap as possible. An
     * XML's nodes may hang under L3s, though, which are all that tells their CPUs apart there. */
    hwloc_topology_set_io_types_filter(topo->hwloc, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_cache_types_filter(topo->hwloc, kind == NP_TOPOLOGY_XML
                                                           ? HWLOC_TYPE_FILTER_KEEP_STRUCTURE
                                                           : HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo->hwloc, HWLOC_TYPE_FILTER_KEEP_NONE);

    /* The whole machine, not only what the caller's cgroup allows (numaplace/topology.h). */
    hwloc_topology_set_flags(topo->hwloc, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);

    switch (kind) {
    case NP_TOPOLOGY_XML: {
        struct stat st;
        if (!arg || stat(arg, &st) < 0) {
            rc = np_err_set(err, -ENOENT, "cannot load topology XML '%s': %s", arg ? arg : "(null)",
                            strerror(arg ? errno : EINVAL));
            goto fail;
        }
        if (hwloc_topology_set_xml(topo->hwloc, arg) < 0) {
            rc = np_err_set(err, -EINVAL, "cannot load topology XML '%s': not an hwloc XML file",
                            arg);
            goto fail;
        }
        /* A site's cached XML describes this very machine: binding through it is valid. */
        hwloc_topology_set_flags(topo->hwloc, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED |
                                                  HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
        break;
    }
    case NP_TOPOLOGY_SYNTHETIC:
        if (!arg || hwloc_topology_set_synthetic(topo->hwloc, arg) < 0) {
            rc = np_err_set(err, -EINVAL,
                            "invalid synthetic topology '%s' (hwloc syntax, e.g. "
                            "\"pack:2 numa:2 core:4 pu:2\")",
                            arg ? arg : "(null)");
            goto fail;
        }
        break;
    case NP_TOPOLOGY_LIVE:
        /* hwloc 2.x reads a filesystem root only from HWLOC_FSROOT, which the caller sets (this
         * library never changes the environment: enum np_topology_source_kind). */
        root = "";
        if (arg && *arg && strcmp(arg, "/") != 0) {
            const char *fsroot = getenv("HWLOC_FSROOT");

            if ((rc = check_fsroot(arg, err)) < 0)
                goto fail;
            if (!fsroot || strcmp(fsroot, arg) != 0) {
                rc = np_err_set(err, -EINVAL,
                                "cannot discover the topology under '%s': hwloc reads a "
                                "filesystem root from HWLOC_FSROOT only, which names %s%s%s (set "
                                "it to the root before the load)",
                                arg, fsroot ? "'" : "", fsroot ? fsroot : "nothing",
                                fsroot ? "'" : "");
                goto fail;
            }
            if (hwloc_topology_load(topo->hwloc) < 0) {
                rc = np_err_set(err, -EIO, "cannot discover the topology under '%s': %s", arg,
                                strerror(errno));
                goto fail;
            }
            /* hwloc falls back to describing the running machine when the tree is unusable. */
            if (!loaded_by_linux(topo->hwloc)) {
                rc = np_err_set(err, -EIO,
                                "cannot discover the topology under '%s': hwloc's Linux backend "
                                "did not accept the tree",
                                arg);
                goto fail;
            }
            root = arg;
            goto loaded;
        }
        break;
    default:
        rc = np_err_set(err, -EINVAL, "unknown topology source %d", (int)kind);
        goto fail;
    }
    if (hwloc_topology_load(topo->hwloc) < 0) {
        if (kind == NP_TOPOLOGY_XML)
            rc = np_err_set(err, -EINVAL, "cannot load topology XML '%s': not an hwloc XML file",
                            arg);
        else
            rc = np_err_set(err, -EIO, "cannot load the topology%s%s: %s", arg ? " from " : "",
                            arg ? arg : "", strerror(errno));
        goto fail;
    }
loaded:
    load_distances(topo); /* before the nodes: tiers may come from the distances */
    rc = build_nodes(topo, root, err);
    if (rc < 0)
        goto fail;
    *out = topo;
    return 0;
fail:
    np_topology_free(topo);
    return rc;
}

void np_topology_free(struct np_topology *topo)
{
    if (!topo)
        return;
    if (topo->distances)
        hwloc_distances_release(topo->hwloc, topo->distances);
    for (unsigned i = 0; topo->node_cpus && i < topo->count; i++)
        hwloc_bitmap_free(topo->node_cpus[i]);
    free(topo->node_cpus);
    free(topo->nodes);
    hwloc_bitmap_free(topo->online);
    hwloc_topology_destroy(topo->hwloc);
    free(topo);
}

hwloc_topology_t np_topology_hwloc(const struct np_topology *topo)
{
    return topo->hwloc;
}

unsigned np_topology_node_count(const struct np_topology *topo)
{
    return topo->count;
}

const struct np_numa_node *np_topology_node(const struct np_topology *topo, unsigned i)
{
    return i < topo->count ? &topo->nodes[i] : NULL;
}

const struct np_numa_node *np_topology_node_by_os_index(const struct np_topology *topo,
                                                        unsigned os_index)
{
    for (unsigned i = 0; i < topo->count; i++)
        if (topo->nodes[i].os_index == os_index)
            return &topo->nodes[i];
    return NULL;
}

int np_topology_distance(const struct np_topology *topo, unsigned from, unsigned to)
{
    const struct hwloc_distances_s *d = topo->distances;
    int a = -1, b = -1;

    if (!np_topology_node_by_os_index(topo, from) || !np_topology_node_by_os_index(topo, to))
        return -EINVAL;
    if (!d)
        return -ENOENT;
    for (unsigned i = 0; i < d->nbobjs; i++) {
        if (d->objs[i]->os_index == from)
            a = (int)i;
        if (d->objs[i]->os_index == to)
            b = (int)i;
    }
    if (a < 0 || b < 0)
        return -ENOENT;
    return (int)d->values[(unsigned)a * d->nbobjs + (unsigned)b];
}

hwloc_const_cpuset_t np_topology_cpus(const struct np_topology *topo)
{
    return topo->online;
}

int np_topology_cpus_to_nodes(const struct np_topology *topo, hwloc_const_cpuset_t cpus,
                              hwloc_nodeset_t nodes)
{
    int count = 0;

    if (!cpus || !nodes)
        return -EINVAL;
    hwloc_bitmap_zero(nodes);
    for (unsigned i = 0; i < topo->count; i++)
        if (topo->nodes[i].kind != NP_MEMORY_GPU &&
            hwloc_bitmap_intersects(topo->nodes[i].cpus, cpus)) {
            hwloc_bitmap_set(nodes, topo->nodes[i].os_index);
            count++;
        }
    return count;
}

int np_topology_memory_nodes(const struct np_topology *topo, bool include_cpuless,
                             hwloc_nodeset_t nodes)
{
    int count = 0;

    hwloc_bitmap_zero(nodes);
    for (unsigned i = 0; i < topo->count; i++) {
        const struct np_numa_node *node = &topo->nodes[i];
        if (node->memory_bytes == 0 || node->kind == NP_MEMORY_GPU ||
            (node->cpuless && !include_cpuless))
            continue;
        hwloc_bitmap_set(nodes, node->os_index);
        count++;
    }
    return count;
}

int np_topology_cores_to_cpus(const struct np_topology *topo, const char *core_list,
                              hwloc_cpuset_t cpus, struct np_err *err)
{
    hwloc_bitmap_t cores = hwloc_bitmap_alloc();
    const int ncores = hwloc_get_nbobjs_by_type(topo->hwloc, HWLOC_OBJ_CORE);
    int rc;

    if (!cores)
        return np_err_set(err, -ENOMEM, "out of memory");
    rc = parse_list(core_list ? core_list : "", cores, err);
    hwloc_bitmap_zero(cpus);
    if (rc == 0) {
        int core;
        hwloc_bitmap_foreach_begin(core, cores)
        {
            hwloc_obj_t obj = hwloc_get_obj_by_type(topo->hwloc, HWLOC_OBJ_CORE, (unsigned)core);
            if (!obj) {
                rc = np_err_set(err, -ERANGE, "core %d in '%s' is beyond this machine's %d cores",
                                core, core_list, ncores);
                break;
            }
            hwloc_bitmap_or(cpus, cpus, obj->cpuset);
        }
        hwloc_bitmap_foreach_end();
        hwloc_bitmap_and(cpus, cpus, topo->online);
    }
    hwloc_bitmap_free(cores);
    return rc;
}
