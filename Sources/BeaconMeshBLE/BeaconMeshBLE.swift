// BeaconMeshBLE: under construction.
