#ifndef BEACONMESH_CMOSQUITTO_SHIM_H
#define BEACONMESH_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
