// glibc's allocator controls (mallopt and its parameters), which the Glibc module does not import.
#include <malloc.h>
