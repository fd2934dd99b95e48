// BeaconMeshScanner: under construction.
