#ifndef BEACONMESH_CMOSQUITTO_SHIM_H
#define BEACONMESH_CMOSQUITTO_SHIM_H
#include <dlfcn.h>
#include <mosquitto.h>

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
