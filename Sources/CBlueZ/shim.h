#ifndef BEACONMESH_CBLUEZ_SHIM_H
#define BEACONMESH_CBLUEZ_SHIM_H
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/* htobs/btohs are function-like macros that Swift cannot import. */
static inline uint16_t beaconmesh_htobs(uint16_t value) { return htobs(value); }
static inline uint16_t beaconmesh_btohs(uint16_t value) { return btohs(value); }

#endif
