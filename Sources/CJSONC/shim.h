#ifndef BEACONMESH_CJSONC_SHIM_H
#define BEACONMESH_CJSONC_SHIM_H
#include <json-c/json.h>
#endif
