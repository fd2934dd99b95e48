// BeaconMeshWire: under construction.
