// BeaconMeshTesting: under construction.
