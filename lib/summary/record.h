/*
 * record.h - a summary record (a C struct mirroring one JSON object) described once, by a table
 * of its members, from which record.c derives its strict decoder, its encoder, its free, its
 * copy and the names in its messages. Slurm's data_parser describes its records the same way
 * (a table of name, type and offsetof per member), and the JSON stays jansson's.
 *
 * A record's members are its table's rows, indexed by the record's member ids (the enums of
 * numaplace/summary_model.h); the struct's `struct np_keys` at rec->keys_off says which are
 * present and in which order, so that decoding and encoding again gives the same bytes.
 *
 * Decoding is strict: a member the table lacks, or one of another type, is refused with a
 * message naming it (its path: "nodes.n1.steps[0].cpus") and what it should be.
 */
#ifndef NUMAPLACE_SUMMARY_RECORD_H
#define NUMAPLACE_SUMMARY_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "numaplace/common.h"

/** What a member holds in C (and so in JSON). */
enum np_ftype {
    NP_F_STR = 1,      /**< char *: a string (NULL is written as null) */
    NP_F_INT,          /**< json_int_t: an integer */
    NP_F_REAL,         /**< double: any number, written as a real */
    NP_F_BOOL,         /**< bool */
    NP_F_NUM,          /**< struct np_num: a number as written */
    NP_F_NUMS,         /**< struct np_num * at off, its length (size_t) at count_off */
    NP_F_NUMS_OR_NULL, /**< as NP_F_NUMS, elements may be null (a series' gaps) */
    NP_F_STRS,         /**< struct np_strs */
    NP_F_MAP,          /**< struct np_map: an object of numbers */
    NP_F_RECORD,       /**< a struct described by @p rec, embedded */
    NP_F_ARRAY,        /**< an array of @p elem: pointer at off, length (size_t) at count_off */
    NP_F_OBJECT,       /**< an object of @p elem by name, as NP_F_ARRAY, each element's name a
                        * char * at @p name_off */
    NP_F_CUSTOM,       /**< decoded, encoded and freed by @p ops */
};

struct np_field;

/** A member whose JSON takes a form of its own. */
struct np_field_ops {
    int (*decode)(const json_t *j, void *field, const char *what, struct np_err *err);
    json_t *(*encode)(const void *field); /**< new reference, NULL out of memory */
    void (*free)(void *field);            /**< frees and zeroes */
};

/** A record: its members, indexed by member id, and where its struct keeps their order. */
struct np_record {
    const struct np_field *fields;
    unsigned n;
    size_t keys_off;  /**< of its struct np_keys */
    const char *root; /**< its name in messages when it is the whole document ("summary") */
    /** NULL: the members written are those in its keys. Else also those built in C, which
     * keeps no keys: the decoded ones in their order, then the others it says are present in
     * table order (np_rec_required_or_set, or the record's own test). */
    bool (*present)(const struct np_record *rec, const void *obj, unsigned id);
    /** What the types cannot say (ranges, names that must agree), after decoding; may be NULL.
     * @return 0, or -EINVAL / -ENOMEM with @p err */
    int (*check)(void *obj, const char *what, struct np_err *err);
};

/** One member: its JSON name and type, and where its C struct holds it. */
struct np_field {
    const char *name;
    enum np_ftype type;
    bool required; /**< decoding refuses an object without it */
    size_t off, count_off;
    const struct np_record *rec;    /**< NP_F_RECORD */
    const struct np_field *elem;    /**< NP_F_ARRAY, NP_F_OBJECT: an element (off within it) */
    size_t elem_size, name_off;     /**< their element's size and, for NP_F_OBJECT, its name */
    const struct np_field_ops *ops; /**< NP_F_CUSTOM */
};

/* Table rows: NP_FIELD(struct, member, "name", type) for the scalar types. */
#define NP_FIELD(T, m, nm, ty)                                                                     \
    {                                                                                              \
        .name = (nm), .type = (ty), .off = offsetof(T, m)                                          \
    }
/* A struct np_figure of enum np_figure_kind @p kind. */
#define NP_FIELD_FIGURE(T, m, nm, kind) NP_FIELD_CUSTOM(T, m, nm, &np_figure_ops[kind])
#define NP_FIELD_RECORD(T, m, nm, r)                                                               \
    {                                                                                              \
        .name = (nm), .type = NP_F_RECORD, .off = offsetof(T, m), .rec = (r)                       \
    }
/* An array at T.m whose length is T.cnt (numbers: ty NP_F_NUMS; records: NP_FIELD_ARRAY). */
#define NP_FIELD_NUMS(T, m, cnt, nm, ty)                                                           \
    {                                                                                              \
        .name = (nm), .type = (ty), .off = offsetof(T, m), .count_off = offsetof(T, cnt)           \
    }
#define NP_FIELD_ARRAY(T, m, cnt, nm, el)                                                          \
    {                                                                                              \
        .name = (nm), .type = NP_F_ARRAY, .off = offsetof(T, m), .count_off = offsetof(T, cnt),    \
        .elem = (el), .elem_size = sizeof(*((T *)0)->m)                                            \
    }
/* An object whose members are elements of type E at T.m (length T.cnt), named by E.nm_member. */
#define NP_FIELD_OBJECT(T, m, cnt, nm, el, E, nm_member)                                           \
    {                                                                                              \
        .name = (nm), .type = NP_F_OBJECT, .off = offsetof(T, m), .count_off = offsetof(T, cnt),   \
        .elem = (el), .elem_size = sizeof(E), .name_off = offsetof(E, nm_member)                   \
    }
#define NP_FIELD_CUSTOM(T, m, nm, o)                                                               \
    {                                                                                              \
        .name = (nm), .type = NP_F_CUSTOM, .off = offsetof(T, m), .ops = (o)                       \
    }

#define NP_RECORD(T, table)                                                                        \
    {                                                                                              \
        .fields = (table), .n = sizeof(table) / sizeof((table)[0]), .keys_off = offsetof(T, keys)  \
    }

/** A figure's decoder (of each enum np_figure_kind), encoder and free (figure.c). */
extern const struct np_field_ops np_figure_ops[4];

/**
 * Decode @p j (borrowed) into @p obj (zeroed by the caller), strictly. @p what names @p j in
 * messages and prefixes its members' paths; "" for the whole document (named rec->root, its
 * members' paths their own names). On failure @p obj holds what was decoded so far: np_rec_free it.
 * @return 0, or -EINVAL naming the member and what it should be / -ENOMEM, with @p err
 */
int np_rec_decode(const struct np_record *rec, const json_t *j, void *obj, const char *what,
                  struct np_err *err);
/** The JSON form of @p obj, its members in its keys' order. New reference, NULL out of memory. */
json_t *np_rec_encode(const struct np_record *rec, const void *obj);
/** A record's present test: its required members, and the others but strings left NULL. */
bool np_rec_required_or_set(const struct np_record *rec, const void *obj, unsigned id);

/** Free what @p obj holds and zero it (its keys too). */
void np_rec_free(const struct np_record *rec, void *obj);
/** Drop member @p id of @p obj: free what it holds, zero it, and take it out of the keys. */
void np_rec_drop(const struct np_record *rec, void *obj, unsigned id);
/** A deep copy of @p src into @p dst, through the JSON form (one definition of what it holds).
 * @return 0 or -ENOMEM (what @p dst got freed) */
int np_rec_copy(const struct np_record *rec, void *dst, const void *src);

#endif /* NUMAPLACE_SUMMARY_RECORD_H */
