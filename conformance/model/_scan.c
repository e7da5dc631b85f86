/* The delimiter scan of exact grammars, in C, on `str` as CPython stores it.
 *
 * scan(needles, tags, anchor, text) -> hold | (((start, end, tag), ...), hold)
 *
 * What Grammar.scan returns (grammar.py), for a grammar whose delimiters are `needles`,
 * ordered longest first: the occurrences that `finditer` of the alternation of the needles
 * takes (the leftmost, the longest of those starting there, the first of equals; then the
 * next one from its end), with `tags[i]` for `needles[i]` (the grammar passes whether the
 * delimiter closes), and where the held-back suffix after the last one begins: the longest
 * suffix that is a proper prefix of a needle. `anchor` is a piece every needle contains,
 * such as `hink` in the default grammar.
 *
 * Every occurrence of a needle holds the anchor's first character and, `d` places after it,
 * the anchor's last one. The scan compares a whole vector of positions against both at
 * once (GCC and Clang vector extensions: SSE2 on x86-64, NEON on ARM), 16 bytes of text a
 * comparison, and looks at single positions only in the rare vectors where both are found.
 * Other compilers (MSVC) get a plain loop over positions, in portable C, to the same results
 * (CONFORMANCE_SCAN_PORTABLE selects it anywhere: tests/test_c_scan.py builds it with GCC).
 * Characters are read in the text's own width (1, 2 or 4 bytes): nothing is converted or
 * copied.
 *
 * hatch_build.py compiles this module when a C compiler is present; without it the
 * grammar scans with its regular expressions, to the same results (grammar.py).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(CONFORMANCE_SCAN_PORTABLE)
#define VECTORS 1
#else
#define VECTORS 0
#endif

/* Enough for any grammar a person writes (presets have up to ten delimiters of at most
 * twelve characters); grammar.py scans a larger one with its regular expressions. */
#define MAX_NEEDLES 64
#define MAX_CHARS 2048
/* Vectors of positions tested a round: one test of all tells whether any holds the anchor. */
#define ROUND 4

typedef struct {
    Py_ssize_t count;
    Py_ssize_t length[MAX_NEEDLES];
    Py_ssize_t offset[MAX_NEEDLES]; /* where each needle's characters start in `chars` */
    Py_ssize_t anchor[MAX_NEEDLES]; /* where the anchor's first character is in it */
    Py_UCS4 first, last;            /* the anchor's first and last characters */
    Py_ssize_t distance;            /* from the anchor's first character to its last */
    Py_UCS4 chars[MAX_CHARS];
} Needles;

/* One occurrence: where it starts, and which needle. */
typedef struct {
    Py_ssize_t start;
    Py_ssize_t needle;
} Found;

typedef struct {
    Found *items;
    Py_ssize_t size, capacity;
    Found local[64]; /* most texts have a handful of delimiters: no allocation */
} FoundList;

static int
load_needles(PyObject *needles, PyObject *anchor, Needles *set)
{
    Py_ssize_t count = PyTuple_GET_SIZE(needles);
    Py_ssize_t span = PyUnicode_GET_LENGTH(anchor);
    if (count < 1 || count > MAX_NEEDLES || span < 1) {
        PyErr_Format(PyExc_ValueError, "scan takes 1 to %d needles and an anchor",
                     MAX_NEEDLES);
        return -1;
    }
    set->count = count;
    set->first = PyUnicode_READ_CHAR(anchor, 0);
    set->last = PyUnicode_READ_CHAR(anchor, span - 1);
    set->distance = span - 1;
    Py_ssize_t used = 0;
    Py_ssize_t previous = PY_SSIZE_T_MAX;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *needle = PyTuple_GET_ITEM(needles, i);
        if (!PyUnicode_Check(needle)) {
            PyErr_SetString(PyExc_TypeError, "scan's needles must be str");
            return -1;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(needle);
        if (length > previous || length > MAX_CHARS - used) {
            PyErr_Format(PyExc_ValueError,
                         "scan's needles go longest first and hold %d characters at most",
                         MAX_CHARS);
            return -1;
        }
        Py_UCS4 *chars = set->chars + used;
        if (PyUnicode_AsUCS4(needle, chars, length, 0) == NULL) {
            return -1;
        }
        set->anchor[i] = -1;
        for (Py_ssize_t at = 0; at + set->distance < length; at++) {
            if (chars[at] == set->first && chars[at + set->distance] == set->last) {
                set->anchor[i] = at;
                break;
            }
        }
        if (set->anchor[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "scan's anchor must be in every needle");
            return -1;
        }
        set->length[i] = length;
        set->offset[i] = used;
        used += length;
        previous = length;
    }
    return 0;
}

static int
add_found(FoundList *list, Py_ssize_t start, Py_ssize_t needle)
{
    if (list->size == list->capacity) {
        Py_ssize_t capacity = list->capacity * 2;
        Found *items = PyMem_Malloc(capacity * sizeof(Found));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(items, list->items, list->size * sizeof(Found));
        if (list->items != list->local) {
            PyMem_Free(list->items);
        }
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->size].start = start;
    list->items[list->size].needle = needle;
    list->size++;
    return 0;
}

/* Leftmost first; at one start, the longest needle first (needles go longest first), so
 * the first of equals. */
static int
compare_found(const void *left, const void *right)
{
    const Found *a = left, *b = right;
    if (a->start != b->start) {
        return a->start < b->start ? -1 : 1;
    }
    return a->needle < b->needle ? -1 : a->needle > b->needle;
}

/* Every needle whose anchor lies at `at`. */
#define DEFINE_CHECK(NAME, CHAR)                                                            \
    static int NAME(const CHAR *text, Py_ssize_t size, Py_ssize_t at, const Needles *set,   \
                    FoundList *found)                                                       \
    {                                                                                       \
        for (Py_ssize_t i = 0; i < set->count; i++) {                                       \
            Py_ssize_t start = at - set->anchor[i];                                         \
            Py_ssize_t length = set->length[i];                                             \
            if (start < 0 || length > size - start) {                                       \
                continue;                                                                   \
            }                                                                               \
            const Py_UCS4 *chars = set->chars + set->offset[i];                             \
            Py_ssize_t same = 0;                                                            \
            while (same < length && text[start + same] == chars[same]) {                    \
                same++;                                                                     \
            }                                                                               \
            if (same == length && add_found(found, start, i) < 0) {                         \
                return -1;                                                                  \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }

#if VECTORS
/* Every occurrence of every needle, by the anchor's positions. Four vectors of positions
 * a round: one test of all four tells whether any holds the anchor, most rounds do not. */
#define DEFINE_FIND(NAME, CHECK, CHAR, LIMIT)                                               \
    typedef CHAR NAME##_vector __attribute__((vector_size(16)));                            \
    typedef uint64_t NAME##_halves __attribute__((vector_size(16)));                        \
    static int NAME(const CHAR *text, Py_ssize_t size, const Needles *set,                  \
                    FoundList *found)                                                       \
    {                                                                                       \
        if (set->first > LIMIT || set->last > LIMIT) {                                      \
            return 0; /* the text cannot hold the anchor */                                 \
        }                                                                                   \
        const CHAR first = (CHAR)set->first, last = (CHAR)set->last;                        \
        const Py_ssize_t distance = set->distance;                                          \
        const Py_ssize_t lanes = sizeof(NAME##_vector) / sizeof(CHAR);                      \
        NAME##_vector firsts, lasts;                                                        \
        for (Py_ssize_t lane = 0; lane < lanes; lane++) {                                   \
            firsts[lane] = first;                                                           \
            lasts[lane] = last;                                                             \
        }                                                                                   \
        Py_ssize_t at = 0;                                                                  \
        for (; at + ROUND * lanes + distance <= size; at += ROUND * lanes) {                \
            NAME##_vector hits[ROUND], any = {0};                                           \
            for (int part = 0; part < ROUND; part++) {                                      \
                NAME##_vector a, b;                                                         \
                memcpy(&a, text + at + part * lanes, sizeof a);                             \
                memcpy(&b, text + at + part * lanes + distance, sizeof b);                  \
                hits[part] = (NAME##_vector)((a == firsts) & (b == lasts));                 \
                any |= hits[part];                                                          \
            }                                                                               \
            NAME##_halves halves = (NAME##_halves)any;                                      \
            if ((halves[0] | halves[1]) == 0) {                                             \
                continue;                                                                   \
            }                                                                               \
            for (int part = 0; part < ROUND; part++) {                                      \
                halves = (NAME##_halves)hits[part];                                         \
                if ((halves[0] | halves[1]) == 0) {                                         \
                    continue;                                                               \
                }                                                                           \
                for (Py_ssize_t lane = 0; lane < lanes; lane++) {                           \
                    if (hits[part][lane] && CHECK(text, size, at + part * lanes + lane, set, \
                                                  found) < 0) {                             \
                        return -1;                                                          \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        for (; at + distance < size; at++) {                                                \
            if (text[at] == first && text[at + distance] == last &&                         \
                CHECK(text, size, at, set, found) < 0) {                                    \
                return -1;                                                                  \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }
#else
/* Every occurrence of every needle, by the anchor's positions, one position at a time. */
#define DEFINE_FIND(NAME, CHECK, CHAR, LIMIT)                                               \
    static int NAME(const CHAR *text, Py_ssize_t size, const Needles *set,                  \
                    FoundList *found)                                                       \
    {                                                                                       \
        if (set->first > LIMIT || set->last > LIMIT) {                                      \
            return 0; /* the text cannot hold the anchor */                                 \
        }                                                                                   \
        const CHAR first = (CHAR)set->first, last = (CHAR)set->last;                        \
        const Py_ssize_t distance = set->distance;                                          \
        for (Py_ssize_t at = 0; at + distance < size; at++) {                               \
            if (text[at] == first && text[at + distance] == last &&                         \
                CHECK(text, size, at, set, found) < 0) {                                    \
                return -1;                                                                  \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }
#endif

DEFINE_CHECK(check_1, Py_UCS1)
DEFINE_CHECK(check_2, Py_UCS2)
DEFINE_CHECK(check_4, Py_UCS4)
DEFINE_FIND(find_1, check_1, Py_UCS1, 0xFF)
DEFINE_FIND(find_2, check_2, Py_UCS2, 0xFFFF)
DEFINE_FIND(find_4, check_4, Py_UCS4, 0x10FFFF)

/* Keeps, in place, the occurrences finditer would take: leftmost-longest, each after the
 * previous one. */
static void
keep_taken(FoundList *found, const Needles *set)
{
    Py_ssize_t kept = 0, clear = 0;
    for (Py_ssize_t i = 0; i < found->size; i++) {
        if (found->items[i].start >= clear) {
            clear = found->items[i].start + set->length[found->items[i].needle];
            found->items[kept++] = found->items[i];
        }
    }
    found->size = kept;
}

/* Where the longest suffix of text[from:] that is a proper prefix of a needle begins (it
 * may still become a delimiter: it is held back); the text's length when there is none. */
static Py_ssize_t
held_back(PyObject *text, Py_ssize_t from, const Needles *set)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    Py_ssize_t hold = size;
    for (Py_ssize_t i = 0; i < set->count; i++) {
        const Py_UCS4 *chars = set->chars + set->offset[i];
        /* Only suffixes longer than the longest found so far can move the hold. */
        for (Py_ssize_t keep = set->length[i] - 1; keep > size - hold; keep--) {
            if (size - keep < from) {
                continue;
            }
            Py_ssize_t same = 0;
            while (same < keep && PyUnicode_READ(kind, data, size - keep + same) == chars[same]) {
                same++;
            }
            if (same == keep) {
                hold = size - keep;
                break;
            }
        }
    }
    return hold;
}

/* What Grammar.scan returns: the hold alone when there is no occurrence, else the
 * occurrences, as (start, end, tag), and the hold after the last one. */
static PyObject *
scan_result(PyObject *text, const FoundList *found, const Needles *set, PyObject *tags)
{
    if (found->size == 0) {
        return PyLong_FromSsize_t(held_back(text, 0, set));
    }
    PyObject *occurrences = PyTuple_New(found->size);
    if (occurrences == NULL) {
        return NULL;
    }
    Py_ssize_t end = 0;
    for (Py_ssize_t i = 0; i < found->size; i++) {
        Py_ssize_t start = found->items[i].start;
        Py_ssize_t needle = found->items[i].needle;
        end = start + set->length[needle];
        PyObject *item = Py_BuildValue("(nnO)", start, end, PyTuple_GET_ITEM(tags, needle));
        if (item == NULL) {
            Py_DECREF(occurrences);
            return NULL;
        }
        PyTuple_SET_ITEM(occurrences, i, item);
    }
    return Py_BuildValue("(Nn)", occurrences, held_back(text, end, set));
}

static PyObject *
scan(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyUnicode_Check(args[2]) || !PyUnicode_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "scan takes needles (a tuple of str), tags (a tuple), an anchor "
                        "(str) and a text (str)");
        return NULL;
    }
    PyObject *needles = args[0], *tags = args[1], *anchor = args[2], *text = args[3];
    if (PyTuple_GET_SIZE(tags) != PyTuple_GET_SIZE(needles)) {
        PyErr_SetString(PyExc_ValueError, "scan takes one tag per needle");
        return NULL;
    }
    Needles set;
    if (load_needles(needles, anchor, &set) < 0) {
        return NULL;
    }
    FoundList found;
    found.items = found.local;
    found.size = 0;
    found.capacity = 64;
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    int status;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        status = find_1(data, size, &set, &found);
        break;
    case PyUnicode_2BYTE_KIND:
        status = find_2(data, size, &set, &found);
        break;
    default:
        status = find_4(data, size, &set, &found);
        break;
    }
    PyObject *result = NULL;
    if (status == 0) {
        /* Found in the order of the anchors: an occurrence whose anchor lies deeper in it
         * can start before one found earlier. */
        qsort(found.items, found.size, sizeof(Found), compare_found);
        keep_taken(&found, &set);
        result = scan_result(text, &found, &set, tags);
    }
    if (found.items != found.local) {
        PyMem_Free(found.items);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(needles, tags, anchor, text) -> hold | (((start, end, tag), ...), hold): "
     "Grammar.scan of the exact grammar whose delimiters are the needles, longest first."},
    {NULL, NULL, 0, NULL},
};

static int
exec_module(PyObject *module)
{
    if (PyModule_AddIntConstant(module, "MAX_NEEDLES", MAX_NEEDLES) < 0 ||
        PyModule_AddIntConstant(module, "VECTORS", VECTORS) < 0) {
        return -1;
    }
    return PyModule_AddIntConstant(module, "MAX_CHARS", MAX_CHARS);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "conformance.model._scan",
    .m_doc = "The delimiter scan of exact grammars, in C (see grammar.py).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModuleDef_Init(&module);
}
