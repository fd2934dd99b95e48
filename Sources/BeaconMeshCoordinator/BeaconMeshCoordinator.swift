// BeaconMeshCoordinator: under construction.
