#ifndef BEACONMESH_CMOSQUITTO_SHIM_H
#define BEACONMESH_CMOSQUITTO_SHIM_H
#include <dlfcn.h>
#include <mosquitto.h>
#include <sys/prctl.h>

/// Names the calling thread (at most 15 bytes show), as `top -H` and /proc/PID/task/TID/comm show it: the network
/// thread that runs libmosquitto's loop. (prctl is variadic, which Swift cannot call.)
static inline int beaconmesh_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

/// How many decrypted bytes OpenSSL holds for `ssl` (`mosquitto_ssl_get`) that were not read yet: SSL_pending, or 0
/// when `ssl` is NULL (no TLS). SSL_pending is found at run time in the libssl that libmosquitto loads, so building
/// needs no OpenSSL headers or link of its own.
static inline int beaconmesh_tls_pending(void *ssl) {
    typedef int (*pending_function)(const void *);
    static pending_function pending = NULL;
    if (ssl == NULL) return 0;
    pending_function found = __atomic_load_n(&pending, __ATOMIC_RELAXED);
    if (found == NULL) {
        found = (pending_function)dlsym(RTLD_DEFAULT, "SSL_pending");
        if (found == NULL) return 0;
        __atomic_store_n(&pending, found, __ATOMIC_RELAXED);
    }
    return found(ssl);
}
#endif
