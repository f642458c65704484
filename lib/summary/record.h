/*
 * record.h - a summary record (a C struct mirroring one JSON object) described once, by a table
 * of its members, from which record.c derives its strict decoder, its encoder, its free, its
 * copy and the names in its messages. Slurm's data_parser describes its records the same way
 * (a table of name, type and offsetof per member), and the JSON stays jansson's.
 *
 * A record's members are its table's rows, indexed by the record's member ids. A summary record
 * lists each member once, X(id, JSON name, storage) (numaplace/summary_model.h), and its enum of
 * ids and its table (NP_RECORD_OF, with the AS_* storage forms below) are both made from that
 * list. The struct's `struct np_keys` at rec->keys_off says which members are present and in
 * which order, so that decoding and encoding again gives the same bytes.
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

/* The storage forms of the member lists (numaplace/summary_model.h): where the struct the
 * includer names T holds a member, as the designated initializers of its struct np_field. */
#define AS_(ty, m)            .type = (ty), .off = offsetof(T, m)
#define AS_STR(m)             AS_(NP_F_STR, m)
#define AS_INT(m)             AS_(NP_F_INT, m)
#define AS_REAL(m)            AS_(NP_F_REAL, m)
#define AS_BOOL(m)            AS_(NP_F_BOOL, m)
#define AS_NUM(m)             AS_(NP_F_NUM, m)
#define AS_STRS(m)            AS_(NP_F_STRS, m)
#define AS_MAP(m)             AS_(NP_F_MAP, m)
#define AS_NUMS(m, n)         AS_(NP_F_NUMS, m), .count_off = offsetof(T, n)
#define AS_NUMS_OR_NULL(m, n) AS_(NP_F_NUMS_OR_NULL, m), .count_off = offsetof(T, n)
#define AS_RECORD(m, r)       AS_(NP_F_RECORD, m), .rec = (r)
#define AS_CUSTOM(m, o)       AS_(NP_F_CUSTOM, m), .ops = (o)
/* A struct np_figure of enum np_figure_kind @p kind; AS_FIGURE_AT: fig[k] of an array of them */
#define AS_FIGURE(m, kind) AS_CUSTOM(m, &np_figure_ops[kind])
#define AS_FIGURE_AT(k)                                                                            \
    .type = NP_F_CUSTOM, .off = offsetof(T, fig) + (k) * sizeof(struct np_figure),                 \
    .ops = &np_figure_ops[NP_FIGURE_PLAIN]
/* An array at T.m whose length is T.n */
#define AS_ARRAY(m, n, el)                                                                         \
    AS_(NP_F_ARRAY, m), .count_off = offsetof(T, n), .elem = (el), .elem_size = sizeof(*((T *)0)->m)
/* An object whose members are elements of type E at T.m (length T.n), named by E.nm_member */
#define AS_OBJECT(m, n, el, E, nm_member)                                                          \
    AS_(NP_F_OBJECT, m), .count_off = offsetof(T, n), .elem = (el), .elem_size = sizeof(E),        \
                         .name_off = offsetof(E, nm_member)
/* A row of a member list; a record of struct T from member list L (its table name##_fields) */
#define NP_ROW(id, nm, storage) [id] = {.name = (nm), storage},
#define NP_RECORD_OF(name, L)                                                                      \
    static const struct np_field name##_fields[] = {L(NP_ROW)};                                    \
    static const struct np_record name##_rec = NP_RECORD(T, name##_fields)

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
