#ifndef BEACONMESH_CMOSQUITTO_SHIM_H
#define BEACONMESH_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <sys/prctl.h>

/// Names the calling thread (at most 15 bytes show), as `top -H` and /proc/PID/task/TID/comm show it: the network
/// thread that runs libmosquitto's loop. (prctl is variadic, which Swift cannot call.)
static inline int beaconmesh_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}
#endif
