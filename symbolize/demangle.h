/* Symbol demangling: C++ (Itanium ABI, through libstdc++'s __cxa_demangle)
 * and Rust, both its v0 names (_R...) and its legacy ones (the C++ scheme
 * plus a hash and $..$ escapes), through libiberty's rust_demangle. */
#ifndef MT_UNWIND_DEMANGLE_H
#define MT_UNWIND_DEMANGLE_H

/* Demangle name and drop the parameter list ("ns::f<int>(int) const" gives
 * "ns::f<int>"), the way profilers print frames.
 * @return : a malloc'd string, or NULL when name is not a mangled name we
 *           know (the caller keeps name). */
char *mt_unwind_demangle(const char *name);

#endif
